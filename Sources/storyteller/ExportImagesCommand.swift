import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

extension Export {
    /// `storyteller export images`: a PNG per shot and a contact sheet.
    struct Images: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "images",
            abstract: "Write a PNG of every shot, named by its label so they sort in order, and a contact sheet.",
            discussion: """
                The files are DIR/01-01.png, DIR/01-02.png … (scene and shot numbers, zero-padded) and \
                DIR/contact-sheet.png, every panel in a grid with its label. DIR is made if it does not exist \
                (its parent must). Files of the same names are replaced, each only once complete.

                Examples:
                  storyteller export images "Night Train" --out boards/
                  storyteller export images "Night Train" --scene 2 --width 1920 --out scene2/
                  storyteller export images "Night Train" --tag night --out night-shots/
                  storyteller export images "Night Train" --at 3f9a1c02 --out review2/
                """)
        @Argument(help: Help.project) var project: String?
        @Option(help: "Only this scene: its number (2), title, or id prefix.") var scene: String?
        @Option(help: "Only the shots carrying this tag (in any case).") var tag: String?
        @Option(help: "The directory to write the files in.") var out: String
        @Option(help: "Each panel's width in pixels (16 to 8192; default 1600).") var width: Int?
        @Option(
            name: .customLong("contact-width"), help: "The contact sheet's width in pixels (320 to 4096; default 1600)."
        )
        var contactWidth: Int?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            if let width, !API.RenderFormat.widths.contains(width) {
                let widths = API.RenderFormat.widths
                throw ValidationError(
                    "--width must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(width)")
            }
            if let contactWidth, !API.ContactSheet.widths.contains(contactWidth) {
                let widths = API.ContactSheet.widths
                throw ValidationError(
                    "--contact-width must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(contactWidth)")
            }
            let directory = ExportFile.absolute(out)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else {
                    throw ValidationError("--out must be a directory; \(out) is a file")
                }
            } else {
                let (exists, parent) = ExportFile.directoryExists(
                    of: directory.hasSuffix("/") ? String(directory.dropLast()) : directory)
                guard exists else {
                    throw ValidationError("the directory --out is to be made in does not exist: \(parent)")
                }
            }
        }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            try past.lookUpNames(of: id, with: names, options: options)
            let structure = try names.structure(of: id)
            var scenes = structure.scenes
            var sceneQuery = ""
            if let scene {
                let chosen = try names.scene(scene, in: id).description
                scenes = scenes.filter { $0.id == chosen }
                sceneQuery = "&scene=" + segment(chosen)
            }
            if let tag {
                // The daemon's rule (`ProjectView.scenes(withShotsTagged:)`): a shot carries the tag in any case.
                let key = Tag.key(tag.trimmingCharacters(in: .whitespaces))
                scenes = scenes.map { scene in
                    var kept = scene
                    kept.shots = scene.shots.filter { $0.tags.contains { Tag.key($0) == key } }
                    return kept
                }.filter { !$0.shots.isEmpty }
                guard !scenes.isEmpty else {
                    printError("no shot to export carries the tag '\(tag)'")
                    throw ExitCode(1)
                }
                sceneQuery += "&tag=" + segment(tag)
            }
            let directory = ExportFile.absolute(out)
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            } catch CocoaError.fileWriteFileExists {
                // Already there: the files go in it.
            } catch {
                var isDirectory: ObjCBool = false
                if !(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
                    && isDirectory.boolValue)
                {
                    printError("cannot make the directory \(out): \(error.localizedDescription)")
                    throw ExitCode(1)
                }
            }
            let shots = scenes.flatMap(\.shots)
            let fileNames = Self.fileNames(shots.map(\.label))
            let progress = isatty(STDERR_FILENO) == 1 ? CountProgress(total: shots.count + 1, into: out) : nil
            var written: [String] = []
            let widthQuery = (width.map { "&width=\($0)" } ?? "") + (past.query.isEmpty ? "" : "&" + past.query)
            for (index, shot) in shots.enumerated() {
                progress?.show(index, doing: "shot \(shot.label)")
                let response: ControlClientResponse
                do {
                    response = try options.raw(
                        "GET", "/v1/projects/\(segment(id))/shots/\(segment(shot.id))/render?format=png\(widthQuery)",
                        body: nil as Data?,
                        timeoutSeconds: 120)
                } catch {
                    progress?.end()
                    throw error
                }
                let file = (directory as NSString).appendingPathComponent(fileNames[index])
                try write(response.body, to: file, progress: progress)
                written.append(file)
            }
            progress?.show(shots.count, doing: "the contact sheet")
            let contactQuery = (contactWidth.map { "&width=\($0)" } ?? "") + (past.query.isEmpty ? "" : "&" + past.query)
            let sheet: ControlClientResponse
            do {
                sheet = try options.raw(
                    "GET", "/v1/projects/\(segment(id))/exports/contact-sheet?\(contactQuery)\(sceneQuery)",
                    body: nil as Data?,
                    timeoutSeconds: 120)
            } catch {
                progress?.end()
                throw error
            }
            let contact = (directory as NSString).appendingPathComponent("contact-sheet.png")
            try write(sheet.body, to: contact, progress: progress)
            progress?.show(shots.count + 1, doing: "done")
            progress?.end()
            if options.json {
                try printJSON(ImagesWritten(out: directory, shots: written, contactSheet: contact))
            } else {
                print("wrote \(shots.count) \(shots.count == 1 ? "shot" : "shots") and contact-sheet.png to \(out)")
            }
        }

        private func write(_ data: Data, to file: String, progress: CountProgress?) throws {
            do {
                try data.write(to: URL(fileURLWithPath: file), options: .atomic)
            } catch {
                progress?.end()
                printError("cannot write \(file): \(error.localizedDescription)")
                throw ExitCode(1)
            }
        }

        /// `01-02.png` for the label `1-2`: every number in a label zero-padded to the widest one's
        /// digits (at least two), so that the names sort in the shots' order; anything but letters,
        /// digits and `-` becomes `-`; a name met twice gets `-2`, `-3`.
        static func fileNames(_ labels: [String]) -> [String] {
            func runs(_ label: String) -> [(isNumber: Bool, text: String)] {
                var runs: [(isNumber: Bool, text: String)] = []
                for character in label {
                    let isNumber = character.isASCII && character.isNumber
                    if let last = runs.last, last.isNumber == isNumber {
                        runs[runs.count - 1].text.append(character)
                    } else {
                        runs.append((isNumber, String(character)))
                    }
                }
                return runs
            }
            let digits = max(2, labels.flatMap(runs).filter(\.isNumber).map(\.text.count).max() ?? 0)
            var seen: [String: Int] = [:]
            return labels.map { label in
                let stem = runs(label).map { run in
                    run.isNumber
                        ? String(repeating: "0", count: max(0, digits - run.text.count)) + run.text
                        : String(run.text.map { $0.isASCII && ($0.isLetter || $0 == "-") ? $0 : "-" })
                }.joined()
                let base = stem.isEmpty ? "shot" : stem
                seen[base, default: 0] += 1
                let count = seen[base] ?? 1
                return (count == 1 ? base : "\(base)-\(count)") + ".png"
            }
        }
    }
}

/// A progress bar on a terminal (standard error) for work counted in steps.
final class CountProgress {
    private let total: Int
    private let destination: String
    private var isShowing = false

    init(total: Int, into destination: String) {
        self.total = max(1, total)
        self.destination = destination
    }

    func show(_ done: Int, doing what: String) {
        let filled = min(20, done * 20 / total)
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(bar) \(done)/\(total) → \(destination): \(what)".utf8))
        isShowing = true
    }

    func end() {
        if isShowing { FileHandle.standardError.write(Data("\n".utf8)) }
        isShowing = false
    }
}
