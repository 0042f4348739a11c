import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

extension Export {
    /// `storyteller export html PROJECT --out DIR|FILE.html`: the slideshow page.
    struct HTML: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "html",
            abstract: "Write a slideshow of the boards to open in a browser: one .html file, or a directory.",
            discussion: """
                The page plays the shots at their durations (2 s for a shot without one) with their captions, \
                dialogue and sounds: ← → change shots, space plays and pauses, Home and End jump to the first \
                and last, the timeline below shows where you are and takes clicks. It needs no network: with \
                --out FILE.html pictures and sounds are inside the one file; with --out DIR they are files \
                beside DIR/index.html (panels/, sounds/). A link ending in #3 opens the third shot, paused.

                Examples:
                  storyteller export html "Night Train" --out night-train.html
                  storyteller export html "Night Train" --out night-train/ --width 1920
                  storyteller export html "Night Train" --tag "client review" --out review.html
                """)
        @Argument(help: Help.project) var project: String?
        @Option(help: "A .html file (everything in it) or a directory (index.html and the files beside it).") var out: String
        @Option(help: "The panels' width in pixels (160 to 4096; default 1280).") var width: Int?
        @Option(help: "Only the shots carrying this tag (in any case).") var tag: String?
        @OptionGroup var options: ClientOptions

        /// Whether the page goes in one file.
        var isSingleFile: Bool { out.lowercased().hasSuffix(".html") || out.lowercased().hasSuffix(".htm") }

        func validate() throws {
            if let width, !API.Slideshow.widths.contains(width) {
                throw ValidationError(
                    "--width must be \(API.Slideshow.widths.lowerBound) to \(API.Slideshow.widths.upperBound) pixels, not \(width)")
            }
            var isDirectory: ObjCBool = false
            if isSingleFile {
                let directory = URL(fileURLWithPath: out).deletingLastPathComponent().path
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw ValidationError("the directory of --out does not exist: \(directory)")
                }
            } else if FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw ValidationError("--out \(out) is a file; name a .html file or a directory")
            }
        }

        func run() throws {
            let id = try Names(options).project(project)
            var query = ""
            if let width { query = "&width=\(width)" }
            if let tag { query += "&tag=" + segment(tag) }
            let target = "/v1/projects/\(segment(id))/exports/html"
            let summary: FileWritten
            if isSingleFile {
                let bytes = try download(target + "?form=file" + query, to: out)
                summary = FileWritten(out: out, bytes: bytes, form: "file")
                if !options.json { print("wrote \(out) (\(bytes) bytes): open it in a browser") }
            } else {
                let directory = try options.call(API.SlideshowDirectory.self, "GET", target + "?form=directory" + query, timeoutSeconds: 120)
                let (files, bytes) = try write(directory)
                summary = FileWritten(out: out, bytes: bytes, form: "directory", files: files)
                if !options.json {
                    print("wrote \((out as NSString).appendingPathComponent("index.html")) and \(files - 1) file(s) beside it (\(bytes) bytes)")
                }
            }
            if options.json {
                try printJSON(summary)
            }
        }

        /// Writes the page and every file it names; the count of files and their bytes.
        private func write(_ directory: API.SlideshowDirectory) throws -> (Int, Int) {
            do {
                for sub in ["", "panels", "sounds"] {
                    try FileManager.default.createDirectory(
                        atPath: (out as NSString).appendingPathComponent(sub), withIntermediateDirectories: true)
                }
            } catch {
                printError("cannot make \(out): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            var bytes = 0
            for file in directory.files {
                // The daemon names the files; a name that could reach outside the directory is not written.
                guard API.Slideshow.isFilePath(file.path), file.source.hasPrefix("/v1/") else {
                    printError("the daemon named a file '\(file.path)' that is not a plain name in panels/ or sounds/; not written")
                    throw ExitCode(1)
                }
                bytes += try download(file.source, to: (out as NSString).appendingPathComponent(file.path))
            }
            let index = (out as NSString).appendingPathComponent("index.html")
            do {
                try Data(directory.index.utf8).write(to: URL(fileURLWithPath: index), options: .atomic)
            } catch {
                printError("cannot write \(index): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            return (directory.files.count + 1, bytes + directory.index.utf8.count)
        }

        /// Streams an answer into a file (through a `.part` file renamed at the end); its size.
        private func download(_ target: String, to path: String) throws -> Int {
            let part = path + ".part"
            guard FileManager.default.createFile(atPath: part, contents: nil), let handle = FileHandle(forWritingAtPath: part) else {
                printError("cannot write \(path): \(String(cString: strerror(errno)))")
                throw ExitCode(1)
            }
            var written = 0
            let response: ControlClientResponse
            do {
                defer { try? handle.close() }
                response = try options.client.download(target, timeoutSeconds: 120) { piece in
                    try handle.write(contentsOf: piece)
                    written += piece.count
                }
            } catch let failure as ControlClientFailure {
                unlink(part)
                printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
                throw ExitCode(69)
            } catch {
                unlink(part)
                printError("cannot write \(path): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            guard response.status == 200 else {
                unlink(part)
                printError(UserWords.say(response))
                throw ExitCode(1)
            }
            guard rename(part, path) == 0 else {
                unlink(part)
                printError("cannot write \(path): \(String(cString: strerror(errno)))")
                throw ExitCode(1)
            }
            return written
        }
    }
}
