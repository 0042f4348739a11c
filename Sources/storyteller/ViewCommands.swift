import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw a shot to a PNG, SVG or PDF file.",
        discussion: """
            The format is the extension of --out. The panel has the shot's aspect ratio; --width sets its width \
            in pixels (a PDF page is that many CSS pixels wide, 0.75 pt each). With --onion N the N shots before \
            (red) and after (green) it in its scene are drawn faintly beneath it.

            Examples:
              storyteller render "Night Train" 1-2 --out 1-2.png
              storyteller render "Night Train" 1-2 --out 1-2.pdf --width 1200 --onion 1
              storyteller render "Night Train" 1-2 --out before.png --at yesterday
            """)
    @Argument(help: Help.project) var project: String?
    @Argument(help: Help.shot) var shot: String?
    @Option(help: "The file to write: .png, .svg or .pdf (the format is taken from the extension).") var out: String
    @Option(help: "The panel's width in pixels (16 to 8192; default 1600).") var width: Int?
    @Option(help: "Also draw N previous and next shots of the scene, faded (onion skin; 0 to 10).") var onion = 0
    @OptionGroup var past: AtOption
    @OptionGroup var options: ClientOptions

    mutating func validate() throws {
        (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT")
        guard API.RenderFormat(fileName: out) != nil else {
            throw ValidationError("--out must name a .png, .svg or .pdf file (the format is taken from its extension), not '\(out)'")
        }
        let directory = URL(fileURLWithPath: out).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("the directory of --out does not exist: \(directory)")
        }
        if let width, !API.RenderFormat.widths.contains(width) {
            throw ValidationError(
                "--width must be \(API.RenderFormat.widths.lowerBound) to \(API.RenderFormat.widths.upperBound) pixels, not \(width)")
        }
        guard API.RenderFormat.onionCounts.contains(onion) else {
            throw ValidationError(
                "--onion must be \(API.RenderFormat.onionCounts.lowerBound) to \(API.RenderFormat.onionCounts.upperBound), not \(onion)")
        }
    }

    func run() throws {
        let format = API.RenderFormat(fileName: out)!
        let names = Names(options)
        let id = try names.project(project)
        try past.lookUpNames(of: id, with: names, options: options)
        let shotID = try names.shot(shot!, in: id).description
        var query = "format=\(format.rawValue)&onion=\(onion)"
        if let width { query += "&width=\(width)" }
        if !past.query.isEmpty { query += "&" + past.query }
        // A large panel takes a while to draw.
        let response: ControlClientResponse = try options.raw(
            "GET", "/v1/projects/\(segment(id))/shots/\(segment(shotID))/render?\(query)", body: nil as Data?, timeoutSeconds: 120)
        do {
            try response.body.write(to: URL(fileURLWithPath: out))
        } catch {
            printError("cannot write \(out): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        if options.json {
            try printJSON(FileWritten(out: out, bytes: response.body.count, format: format.rawValue))
        } else {
            print("wrote \(out) (\(format.rawValue.uppercased()), \(response.body.count) bytes)")
        }
    }
}

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find text in titles, descriptions, captions, notes and layer names.",
        discussion: """
            Values a concurrent edit overwrote are found too, marked "(overwritten)" with the field \
            to give `storyteller conflicts keep` to bring them back.

            Example:
              storyteller search platform
            """)
    @Argument(help: "The text to find (any case).") var query: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        let hits = try options.call([API.SearchHit].self, "GET", "/v1/search?q=\(encoded)")
        guard !options.json else { return }
        printTable(
            ["PROJECT", "WHERE", "FIELD", "TEXT", "OBJECT"],
            hits.map { hit in
                let field = hit.overwritten == true ? "\(hit.field) (overwritten: \(hit.reference ?? "?"))" : hit.field
                return [hit.projectName ?? hit.project, hit.label, field, hit.text, text(hit.object)]
            })
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the daemon's database to FILE while it runs.",
        discussion: """
            The daemon makes the copy and sends it; this command writes it as you, mode 0600 \
            (so it works with the hardened system daemon, which may write neither your home nor /tmp). \
            FILE must not exist; it appears only once complete. Progress is shown on a terminal.

            To restore: stop the daemon, put the file in place of storyteller.sqlite in the state directory, start it.

            Example:
              storyteller backup ~/backups/storyteller-$(date +%F).sqlite
            """)
    @Argument(help: "Where to write the copy (must not exist; its directory must be writable by you).") var file: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let output: BackupFile
        do {
            // Before the daemon copies anything: a destination this user cannot write is said at once.
            output = try BackupFile(path: path)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        let bytes = try output.download("/v1/backup", with: options)
        if options.json {
            try printJSON(Saved(path: path, bytes: bytes))
        } else {
            print("wrote \(path) (\(bytes) bytes)")
        }
    }
}
