import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

extension Export {
    /// `storyteller export pdf`: print sheets.
    struct PDF: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pdf",
            abstract: "Write print-ready storyboard sheets: panels with their labels, text and timing, as a PDF.",
            discussion: """
                Each page has a header (title, scene, shots, running time, aspect ratio, page n of m, date) over \
                a grid of panels in reading order, each with its label, duration and the chosen text under or \
                beside it. Text that does not fit its place goes on in the next one, marked "continued"; \
                nothing is cut off. Panels are vectors; pictures are embedded.

                Defaults: A4 (Letter where the locale's paper is Letter), landscape, 6 panels a page, \
                label, caption, dialogue and duration.

                Examples:
                  storyteller export pdf "Night Train" --out boards.pdf
                  storyteller export pdf "Night Train" --scene 2 --paper A3 --per-page 12 --out scene2.pdf
                  storyteller export pdf "Night Train" --tag "client review" --out review.pdf
                  storyteller export pdf "Night Train" --grid 3x1 --text beside --fields label,caption,notes --out notes.pdf
                  storyteller export pdf "Night Train" --at 2026-11-24T17:00 --out review2.pdf
                """)
        @Argument(help: Help.project) var project: String?
        @Option(help: "Only this scene: its number (2), title, or id prefix.") var scene: String?
        @Option(help: "Only the shots carrying this tag (in any case).") var tag: String?
        @Option(help: "The PDF file to write (replaced when the export is complete).") var out: String
        @Option(help: "A4, A3, Letter, Legal or Tabloid.") var paper: String?
        @Option(help: "portrait or landscape (default landscape).") var orientation: String?
        @Option(name: .customLong("per-page"), help: "Panels a page: 1, 2, 3, 4, 6, 8, 9 or 12 (default 6).")
        var perPage: String?
        @Option(
            help: ArgumentHelp(
                "Panels down and across a page, such as 2x3 (instead of --per-page).", valueName: "rowsxcols"))
        var grid: String?
        @Option(help: "Where each panel's text goes: below or beside.") var text: String?
        @Option(help: "What is printed with each panel, in order: label, caption, dialogue, action, notes, duration.")
        var fields: String?
        @Option(
            help: ArgumentHelp(
                "Only these pages, such as 2-5, 3 or 4- (numbered as in the whole sheet).", valueName: "from-to"))
        var pages: String?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            guard out.lowercased().hasSuffix(".pdf") else {
                throw ValidationError("--out must name a .pdf file, not '\(out)'")
            }
            let (exists, directory) = ExportFile.directoryExists(of: out)
            guard exists else { throw ValidationError("the directory of --out does not exist: \(directory)") }
            _ = try sheetOptions()
        }

        /// The options checked as the daemon checks them, in the command line's words.
        func sheetOptions() throws -> API.PrintSheetOptions {
            let given: [String: String?] = [
                "paper": paper ?? Self.localPaper, "orientation": orientation, "per-page": perPage, "grid": grid,
                "text": text,
                "fields": fields, "pages": pages,
            ]
            do {
                return try API.PrintSheetOptions(query: { given[$0] ?? nil }, naming: { "--" + $0 })
            } catch {
                throw ValidationError(error.message)
            }
        }

        /// Letter where the locale's paper is (the United States, Canada, Mexico and a few more), else A4.
        static var localPaper: String {
            let environment = ProcessInfo.processInfo.environment
            let locale = environment["LC_PAPER"] ?? environment["LC_ALL"] ?? environment["LANG"] ?? ""
            let letter = ["_US", "_CA", "_MX", "_PH", "_CL", "_CO", "_VE", "_PR"]
            return letter.contains { locale.contains($0) } ? "Letter" : "A4"
        }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            try past.lookUpNames(of: id, with: names, options: options)
            var query = try sheetOptions().query
            if !past.query.isEmpty { query += "&" + past.query }
            if let scene { query += "&scene=" + segment(try names.scene(scene, in: id).description) }
            if let tag { query += "&tag=" + segment(tag) }
            let path = ExportFile.absolute(out)
            let file: ExportFile
            do {
                file = try ExportFile(path: path)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            let progress = isatty(STDERR_FILENO) == 1 ? SheetProgress(path: out) : nil
            let response: ControlClientResponse
            var tail: [UInt8] = []
            do {
                response = try options.client.download(
                    "/v1/projects/\(segment(id))/exports/pdf?\(query)",
                    into: { bytes in
                        try file.write(bytes)
                        tail = Array((tail + bytes).suffix(32))
                    }, progress: { bytes, _ in progress?.show(bytes) })
            } catch let failure as ControlClientFailure {
                progress?.end()
                file.discard()
                printError(
                    failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
                throw ExitCode(69)
            } catch {
                progress?.end()
                file.discard()
                printError("\(error)")
                throw ExitCode(1)
            }
            progress?.end()
            guard response.status == 200 else {
                file.discard()
                printError(UserWords.say(response))
                throw ExitCode(1)
            }
            // A chunked answer cut short by the daemon looks complete to the client; a PDF ends with %%EOF.
            guard String(decoding: tail, as: UTF8.self).contains("%%EOF") else {
                file.discard()
                printError("the daemon stopped before the end of the PDF; nothing was written to \(out) (see its log)")
                throw ExitCode(1)
            }
            do {
                try file.finish()
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            let pageCount = response.headers["storyteller-page-count"].flatMap { Int($0) }
            if options.json {
                try printJSON(FileWritten(out: out, bytes: file.written, pages: pageCount))
            } else {
                let pagesText = pageCount.map { $0 == 1 ? "1 page, " : "\($0) pages, " } ?? ""
                print("wrote \(out) (\(pagesText)\(TransferProgress.size(file.written)))")
            }
        }
    }
}

/// `storyteller export pdf`'s progress on a terminal: the bytes received as the pages come.
final class SheetProgress {
    private let path: String
    private var lastShown = Date.distantPast
    private var isShowing = false

    init(path: String) { self.path = path }

    func show(_ bytes: Int) {
        let now = Date()
        guard now.timeIntervalSince(lastShown) >= 0.1 else { return }
        lastShown = now
        FileHandle.standardError.write(Data("\r\u{1B}[Kprinting \(path): \(TransferProgress.size(bytes)) so far".utf8))
        isShowing = true
    }

    func end() {
        if isShowing { FileHandle.standardError.write(Data("\n".utf8)) }
        isShowing = false
    }
}
