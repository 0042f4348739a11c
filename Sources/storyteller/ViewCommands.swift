import ArgumentParser
import Foundation
import StoryAPI

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw a shot to an SVG file.", discussion: "Example:\n  storyteller render \"Night Train\" 1-2 --out 1-2.svg --onion 1")
    @Argument(help: Help.project) var project: String?
    @Argument(help: Help.shot) var shot: String?
    @Option(help: "The SVG file to write.") var out: String
    @Option(help: "Also draw N previous and next shots, faded (onion skin; 0 to 10).") var onion = 0
    @OptionGroup var options: ClientOptions

    mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }

    func run() throws {
        let names = Names(options)
        let id = try names.project(project)
        let shotID = try names.shot(shot!, in: id).description
        let response: ControlClientResponse = try options.raw(
            "GET", "/v1/projects/\(segment(id))/shots/\(segment(shotID))/render?onion=\(onion)")
        do {
            try response.body.write(to: URL(fileURLWithPath: out))
        } catch {
            printError("cannot write \(out): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        if options.json {
            print(#"{"bytes":\#(response.body.count),"out":"\#(out)"}"#)
        } else {
            print("wrote \(out) (\(response.body.count) bytes)")
        }
    }
}

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find text in titles, descriptions, captions, notes and layer names.", discussion: "Example:\n  storyteller search platform")
    @Argument(help: "The text to find (any case).") var query: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        let hits = try options.call([API.SearchHit].self, "GET", "/v1/search?q=\(encoded)")
        guard !options.json else { return }
        printTable(
            ["PROJECT", "WHERE", "FIELD", "TEXT", "OBJECT"],
            hits.map { [$0.projectName ?? $0.project, $0.label, $0.field, $0.text, text($0.object)] })
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
        let progress = isatty(STDERR_FILENO) == 1 ? BackupProgress(path: path) : nil
        progress?.waiting()
        let response: ControlClientResponse
        do {
            response = try options.client.download(
                "/v1/backup", into: { try output.write($0) }, progress: { bytes, total in progress?.show(bytes, of: total) })
        } catch let failure as ControlClientFailure {
            progress?.end()
            output.discard()
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(69)
        } catch {
            progress?.end()
            output.discard()
            printError("\(error)")
            throw ExitCode(1)
        }
        progress?.end()
        guard response.status == 200 else {
            output.discard()
            printError(response.errorMessage.map(UserWords.translate) ?? "the daemon answered \(response.status)")
            throw ExitCode(1)
        }
        let bytes: Int
        do {
            bytes = try output.finish()
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        if options.json {
            let answer: [String: Any] = ["path": path, "bytes": bytes]
            print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys]), as: UTF8.self))
        } else {
            print("wrote \(path) (\(bytes) bytes)")
        }
    }
}
