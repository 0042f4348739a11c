import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// The id of a resolved shot or layer (names resolve to ids, never to "created").
private func objectID(_ reference: API.ObjectReference) -> String {
    if case .id(let id) = reference { return id.description }
    return "\(reference)"
}

/// Configured peers' names by peer id.
private func peerNames(_ names: Names) -> [String: String] {
    var result: [String: String] = [:]
    for peer in (try? names.configuredPeers()) ?? [] { result[peer.id] = peer.name ?? peer.announcedName ?? String(peer.id.prefix(7)) }
    return result
}

/// Sends a file to the daemon with a progress line on a terminal; the answer, or exits with a clear message.
private func uploadFile(_ file: String, _ method: String, _ target: String, options: ClientOptions) throws -> ControlClientResponse {
    let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
        printError("\(file): no such file")
        throw ExitCode(64)
    }
    let progress = isatty(STDERR_FILENO) == 1 ? TransferProgress(verb: "sending", path: file) : nil
    let response: ControlClientResponse
    do {
        response = try options.client.upload(method, target, file: path) { bytes, total in progress?.show(bytes, of: total) }
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
    if options.json { print(String(decoding: response.body, as: UTF8.self)) }
    return response
}

struct Images: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reference images in shots (image layers).", subcommands: [Add.self], defaultSubcommand: Add.self)

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put an image (PNG, JPEG or WebP) in a shot as a new layer; prints the layer and the image's SHA-256.",
            discussion: """
                The file's bytes are checked (a file that is not an image is refused, whatever its name) and kept
                once by the daemon however many shots use it; peers sharing the project fetch it.

                Examples:
                  storyteller images add "Night Train" 1-2 platform.jpg --name Plate
                  storyteller images add 1-2 still.png --fit cover
                  storyteller images add 1-2 plate.png --below ink     # under the drawing, not over it
                """)
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @Argument(help: "The image file (PNG, JPEG or WebP).") var file: String?
        @Option(help: "The layer's name (default: Image).") var name: String?
        @Option(help: "How the picture fits the frame: contain (whole picture, default), cover (fills the frame) or stretch.")
        var fit: String = "contain"
        @Option(help: "Put it under this layer of the shot (its name or id); default: on top of them all.") var below: String?
        @Option(help: "Put it at this position (0 = bottom); default: on top.") var at: Int?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            if below != nil && at != nil { throw ValidationError("give --below or --at, not both") }
            if file == nil { (project, shot, file) = (nil, project, shot) }
            guard shot != nil, file != nil else { throw ValidationError("give the SHOT and the FILE") }
            guard FieldKey.fitModes.contains(fit) else { throw ValidationError("--fit takes \(FieldKey.fitModes.joined(separator: ", "))") }
        }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let shotID = objectID(try names.shot(shot!, in: id))
            var target = "/v1/projects/\(segment(id))/shots/\(segment(shotID))/images?fit=\(fit)"
            if let name { target += "&name=\(segment(name))" }
            if let below { target += "&below=\(segment(objectID(try names.layer(below, in: id, shot: shotID))))" }
            if let at { target += "&at=\(at)" }
            let response = try uploadFile(file!, "POST", target, options: options)
            guard !options.json else { return }
            let layer = try API.decoder.decode(API.Layer.self, from: response.body)
            let image = layer.image
            print(
                "added image layer \(layer.name ?? "Image") to shot \(shot!): \(image.map { "\($0.width ?? 0)×\($0.height ?? 0) \($0.type)" } ?? "")")
            print("  layer \(layer.id)")
            print("  blob  \(image?.blob ?? "-")")
        }
    }
}

struct Sound: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A shot's sound (one per shot: dialogue, a cue).", subcommands: [SetSound.self, Clear.self])

    struct SetSound: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Give a shot a sound (WAV, MP3, M4A, Ogg or FLAC), replacing the one it had.",
            discussion: """
                Examples:
                  storyteller sound set "Night Train" 1-2 whistle.wav
                  storyteller sound set 2-1 line.m4a --offset 0.5
                """)
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @Argument(help: "The sound file (WAV, MP3, M4A/AAC, Ogg/Opus or FLAC).") var file: String?
        @Option(parsing: .unconditional, help: "Seconds into the shot at which the sound starts (default 0).") var offset: Double?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            if file == nil { (project, shot, file) = (nil, project, shot) }
            guard shot != nil, file != nil else { throw ValidationError("give the SHOT and the FILE") }
            if let offset, !(offset.isFinite && (0...86_400).contains(offset)) { throw ValidationError("--offset takes seconds from 0 to 86400") }
        }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let shotID = objectID(try names.shot(shot!, in: id))
            var target = "/v1/projects/\(segment(id))/shots/\(segment(shotID))/sound"
            if let offset { target += "?offset=\(offset)" }
            let response = try uploadFile(file!, "PUT", target, options: options)
            guard !options.json else { return }
            let media = try API.decoder.decode(API.Media.self, from: response.body)
            print(
                "shot \(shot!) has sound: \(media.type), \(String(format: "%.2f", media.duration ?? 0)) s"
                    + (media.offset.map { $0 > 0 ? ", from \($0) s" : "" } ?? ""))
            print("  blob  \(media.blob)")
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a shot's sound away.", discussion: "Example:\n  storyteller sound clear \"Night Train\" 1-2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let shotID = objectID(try names.shot(shot!, in: id))
            let result = try options.call(API.EditResult.self, "DELETE", "/v1/projects/\(segment(id))/shots/\(segment(shotID))/sound")
            if !options.json { print(result.changed ? "cleared the sound of shot \(shot!)" : "shot \(shot!) had no sound") }
        }
    }
}

struct Media: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Images and sounds: what a project uses, getting their bytes, transfers.",
        subcommands: [List.self, Get.self, MediaStatus.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every image and sound a project uses: SHA-256, type, size, here or on its way, where it is used, who has it.",
            discussion: "Example:\n  storyteller media list \"Night Train\"")
        @Argument(help: Help.project) var project: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let entries = try options.call([API.MediaEntry].self, "GET", "/v1/projects/\(segment(id))/media")
            guard !options.json else { return }
            guard !entries.isEmpty else { return print("no images or sounds in this project") }
            let peers = peerNames(names)
            printTable(
                ["BLOB", "TYPE", "SIZE", "STATE", "USED BY", "PEERS WITH IT"],
                entries.map { entry in
                    let state = entry.state == "partial" && entry.bytes > 0 ? "\(entry.heldBytes * 100 / entry.bytes)%" : entry.state
                    return [
                        String(entry.blob.prefix(12)), entry.type, TransferProgress.size(Int(entry.bytes)), state,
                        entry.usedBy.isEmpty ? "(history)" : entry.usedBy.joined(separator: ", "),
                        entry.peers.map { peers[$0] ?? String($0.prefix(7)) }.joined(separator: ", "),
                    ]
                })
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an image's or sound's exact bytes to a file.",
            discussion: "Example:\n  storyteller media get \"Night Train\" 3f2a9c --out plate.jpg")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The blob: its SHA-256 or a unique prefix (as `media list` shows).") var blob: String?
        @Option(help: "The file to write (must not exist).") var out: String
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, blob) = try shiftedForCurrentProject(project, blob, "BLOB") }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            var quiet = options
            quiet.json = false
            let entries = try quiet.call([API.MediaEntry].self, "GET", "/v1/projects/\(segment(id))/media")
            let prefix = blob!.lowercased()
            let matches = entries.filter { $0.blob.hasPrefix(prefix) }
            guard matches.count == 1, let entry = matches.first else {
                printError(
                    matches.isEmpty
                        ? "no image or sound \(blob!) in this project (see `storyteller media list`)"
                        : "\(blob!) is ambiguous: \(matches.map { String($0.blob.prefix(12)) }.joined(separator: ", "))")
                throw ExitCode(64)
            }
            let path = out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out
            guard !FileManager.default.fileExists(atPath: path) else {
                printError("\(out) already exists; choose another file")
                throw ExitCode(64)
            }
            guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path) else {
                printError("cannot write \(out)")
                throw ExitCode(1)
            }
            let progress = isatty(STDERR_FILENO) == 1 ? TransferProgress(verb: "receiving", path: out) : nil
            let response: ControlClientResponse
            do {
                response = try options.client.download(
                    "/v1/projects/\(segment(id))/media/\(entry.blob)", into: { try output.write(contentsOf: $0) },
                    progress: { bytes, total in progress?.show(bytes, of: total ?? Int(entry.bytes)) })
            } catch {
                progress?.end()
                try? output.close()
                try? FileManager.default.removeItem(atPath: path)
                printError("\(error)")
                throw ExitCode(1)
            }
            progress?.end()
            try? output.close()
            guard response.status == 200 else {
                try? FileManager.default.removeItem(atPath: path)
                printError(UserWords.say(response))
                throw ExitCode(1)
            }
            if !options.json { print("wrote \(out) (\(entry.type), \(TransferProgress.size(Int(entry.bytes))))") }
        }
    }

    struct MediaStatus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Images and sounds on their way here: progress, rate, from whom; what is still missing.",
            discussion: "Example:\n  storyteller media status")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let status = try options.call(API.MediaStatus.self, "GET", "/v1/media/transfers")
            guard !options.json else { return }
            let peers = peerNames(Names(options))
            print("stored: \(status.stored) blob(s), \(TransferProgress.size(Int(status.storedBytes)))")
            print("missing: \(status.missing) blob(s), \(TransferProgress.size(Int(status.missingBytes)))")
            guard !status.transfers.isEmpty else { return print("no transfers in progress") }
            printTable(
                ["BLOB", "TYPE", "FROM", "DONE", "RATE"],
                status.transfers.map { transfer in
                    [
                        String(transfer.blob.prefix(12)), transfer.type, transfer.peer.map { peers[$0] ?? String($0.prefix(7)) } ?? "-",
                        "\(TransferProgress.size(Int(transfer.heldBytes))) of \(TransferProgress.size(Int(transfer.bytes)))",
                        "\(TransferProgress.size(Int(transfer.rate)))/s",
                    ]
                })
        }
    }
}

/// An upload's or download's progress on a terminal (standard error).
final class TransferProgress {
    private let verb: String
    private let path: String
    private var lastShown = Date.distantPast
    private var isShowing = false

    init(verb: String, path: String) {
        self.verb = verb
        self.path = path
    }

    func show(_ bytes: Int, of total: Int) {
        let now = Date()
        guard bytes == total || now.timeIntervalSince(lastShown) >= 0.1 else { return }
        lastShown = now
        let percent = total > 0 ? bytes * 100 / total : 100
        let filled = percent / 5
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(verb) \(path) \(bar) \(percent) % (\(Self.size(bytes)) of \(Self.size(total)))".utf8))
        isShowing = true
    }

    func end() {
        if isShowing { FileHandle.standardError.write(Data("\n".utf8)) }
        isShowing = false
    }

    static func size(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1 << 20 { return "\(bytes / 1024) KiB" }
        if bytes < 1 << 30 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        return String(format: "%.2f GiB", Double(bytes) / Double(1 << 30))
    }
}
