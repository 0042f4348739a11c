import ArgumentParser
import Foundation
import StoryAPI

/// `storyteller export package`: one `.storyboard` file to hand to a client
/// or archive, which `storyteller import` adds or merges on another machine.
struct ExportPackage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Write a project as one .storyboard file (a zip): board, history, media and thumbnails.",
        discussion: """
            The file holds the project's state and change history (so importing it where the project \
            already is merges both, losing nothing), the images and sounds its shots use, a PNG \
            thumbnail of every shot and a README for people who open it without Storyteller, and a \
            manifest with the SHA-256 of every entry, signed by this daemon. FILE must not exist; it \
            appears only once complete. Progress is shown on a terminal.

            Whoever imports it gets the rights the project gives their machine: share the project \
            with their peer id first (storyteller share) if they should be able to edit it.

            Examples:
              storyteller export package "Night Train" --out night-train.storyboard
              storyteller import night-train.storyboard
            """)
    @Argument(help: "The project (name, library path, id or id prefix; default: the current one).") var project: String?
    @Option(help: "Where to write the package (must not exist; .storyboard is the usual ending).") var out: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let id = try Names(options).project(project)
        let path = out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out
        let output: BackupFile
        do {
            output = try BackupFile(path: path, what: "package")
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        let bytes = try output.download(
            "/v1/projects/\(segment(id))/exports/package", with: options,
            waiting: "the daemon is making the package (drawing a thumbnail of every shot)…")
        if options.json {
            try printJSON(Saved(path: path, bytes: bytes, project: id))
        } else {
            print("wrote \(path) (\(BackupProgress.size(bytes)))")
        }
    }
}
