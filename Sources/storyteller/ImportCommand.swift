import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

/// `storyteller import FILE.storyboard`: a project package, added or merged.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take in a .storyboard package: a new project is added, one already here is merged.",
        discussion: """
            A project this machine does not have is added (into --folder, default the library's root). \
            A package of a project it has is merged into it, as if synced with a peer: edits made on \
            either side are all kept. The daemon checks the whole file first (the signed manifest, the \
            SHA-256 of every entry, every change's signature and author's rights): a cut-off, altered \
            or foreign file is refused and nothing is stored. Progress is shown on a terminal.

            Examples:
              storyteller import night-train.storyboard
              storyteller import night-train.storyboard --folder Films
            """)
    @Argument(help: "The package file (.storyboard).") var file: String
    @Option(help: "The library folder a new project goes into (path or id; default: the root).") var folder: String?
    @OptionGroup var options: ClientOptions

    func run() throws {
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            printError("\(file) is not a file here")
            throw ExitCode(64)
        }
        let target = "/v1/imports" + (folder.map { "?folder=\(segment($0))" } ?? "")
        let progress = isatty(STDERR_FILENO) == 1 ? TransferProgress(verb: "sending", path: file) : nil
        let response: ControlClientResponse
        do {
            response = try options.client.upload("POST", target, file: path) { bytes, total in progress?.show(bytes, of: total) }
        } catch let failure as ControlClientFailure {
            progress?.end()
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(failure.isUnreachable ? 69 : 1)
        }
        progress?.end()
        guard (200..<300).contains(response.status) else {
            printError(UserWords.say(response))
            throw ExitCode(1)
        }
        if options.json { return print(String(decoding: response.body, as: UTF8.self)) }
        guard let answer = try? API.decoder.decode(API.PackageImported.self, from: response.body) else {
            printError("the daemon's answer is not what this storyteller expects (are both the same version?)")
            throw ExitCode(1)
        }
        let title = answer.title ?? answer.project
        let blobs =
            answer.blobsAdded == 0
            ? "no new media"
            : "\(answer.blobsAdded) new media file\(answer.blobsAdded == 1 ? "" : "s") (\(BackupProgress.size(Int(answer.blobBytesAdded))))"
        if answer.outcome == "added" {
            print("added \(title) (\(answer.newChanges) changes, \(blobs))")
        } else {
            print("merged \(title): \(answer.newChanges == 0 ? "nothing new" : "\(answer.newChanges) new changes"), \(blobs)")
        }
        if answer.role == "reader" || answer.role == "none" {
            print("read-only here: the project's owner has not given this machine the right to edit it")
        }
    }
}
