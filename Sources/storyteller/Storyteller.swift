import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

/// `storyteller`: the command line of the Storyteller daemon, over its control socket.
@main
struct Storyteller: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyteller",
        abstract: "Control the local Storyteller daemon (storytellerd).",
        discussion: """
            Exit codes: 0 success, 1 the daemon refused the request (its message is \
            printed), 64 bad arguments, 69 the daemon is not running or not reachable.
            """,
        version: "storyteller \(API.version)",
        subcommands: [
            Status.self, Version.self, ID.self, Peers.self, Share.self, Unshare.self, Tree.self, Folders.self, Projects.self, Scenes.self, Shots.self,
            Layers.self, Strokes.self, Undo.self, Redo.self, Search.self, History.self, Render.self, Watch.self, Backup.self, Demo.self,
        ])
}

extension Storyteller {
    /// Runs the command line with the global options moved where the
    /// commands declare them, so they work before the subcommand too.
    static func main() {
        main(GlobalOptions.movedToTheEnd(Array(CommandLine.arguments.dropFirst())))
    }
}

/// `--socket PATH` and `--json` may be given anywhere (`storyteller --json
/// status`, `storyteller peers --socket S list`): every command that talks to
/// the daemon declares them, so they are moved after the subcommand's own
/// arguments (before a `--`, after which everything is an argument).
enum GlobalOptions {
    static func movedToTheEnd(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var kept: [String] = []
        var moved: [String] = []
        var index = arguments.startIndex
        while index < end {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--socket=") {
                moved.append(argument)
            } else if argument == "--socket", index + 1 < end {
                moved += [argument, arguments[index + 1]]
                index += 1
            } else {
                kept.append(argument)
            }
            index += 1
        }
        return kept + moved + arguments[end...]
    }
}

/// Options every command takes.
struct ClientOptions: ParsableArguments {
    @Option(help: "The daemon's control socket (default: as the daemon's; also STORYTELLER_SOCKET).")
    var socket: String?

    @Flag(help: "Print the daemon's JSON answer instead of text.")
    var json = false

    var client: ControlClient {
        let environment = ProcessInfo.processInfo.environment
        return ControlClient(path: socket ?? environment["STORYTELLER_SOCKET"] ?? ControlClient.defaultSocketPath(environment: environment))
    }

    /// Sends a request and returns the JSON answer, or exits with a clear message.
    func call(_ method: String, _ target: String, body: [String: Any]? = nil, timeoutSeconds: Int = 10) throws -> Any {
        let response = try raw(method, target, body: body, timeoutSeconds: timeoutSeconds)
        if json { print(String(decoding: response.body, as: UTF8.self)) }
        return response.json ?? [:]
    }

    /// Sends a request and decodes the answer as one of the API's types
    /// (printing the JSON as it came with `--json`).
    func call<Answer: Decodable>(_ answer: Answer.Type, _ method: String, _ target: String, timeoutSeconds: Int = 10) throws -> Answer {
        try decoded(answer, raw(method, target, body: nil as Data?, timeoutSeconds: timeoutSeconds), target)
    }

    /// Sends one of the API's request types and decodes the answer.
    func call<Answer: Decodable, Body: Encodable>(
        _ answer: Answer.Type, _ method: String, _ target: String, body: Body, timeoutSeconds: Int = 10
    ) throws -> Answer {
        try decoded(answer, raw(method, target, body: try API.encoder.encode(body), timeoutSeconds: timeoutSeconds), target)
    }

    private func decoded<Answer: Decodable>(_ answer: Answer.Type, _ response: ControlClientResponse, _ target: String) throws -> Answer {
        if json { print(String(decoding: response.body, as: UTF8.self)) }
        do {
            return try API.decoder.decode(answer, from: response.body)
        } catch {
            printError("the daemon's answer to \(target) is not what this storyteller expects (are both the same version?): \(error)")
            throw ExitCode(1)
        }
    }

    /// Sends a request; the successful response, or exits with a clear message.
    func raw(_ method: String, _ target: String, body: [String: Any]? = nil, timeoutSeconds: Int = 10) throws -> ControlClientResponse {
        try raw(method, target, body: try body.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }, timeoutSeconds: timeoutSeconds)
    }

    /// Sends a request with an encoded body (the API's types); the successful response, or exits with a clear message.
    func raw(_ method: String, _ target: String, body data: Data?, timeoutSeconds: Int = 10) throws -> ControlClientResponse {
        let response: ControlClient.Response
        do {
            response = try client.request(method, target, body: data, timeoutSeconds: timeoutSeconds)
        } catch let failure as ControlClient.Failure {
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(69)
        }
        guard (200..<300).contains(response.status) else {
            printError(response.errorMessage.map(UserWords.translate) ?? "the daemon answered \(response.status)")
            throw ExitCode(1)
        }
        return response
    }
}

typealias ControlClientResponse = ControlClient.Response
typealias ControlClientFailure = ControlClient.Failure

func printError(_ message: String) {
    FileHandle.standardError.write(Data("storyteller: \(message)\n".utf8))
}

/// Percent-encodes one path segment.
func segment(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.@"))) ?? text
}

/// Prints rows as a table with a header, columns padded to their widths.
func printTable(_ header: [String], _ rows: [[String]]) {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    let useColour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
    print(useColour ? "\u{1B}[1m" + line(header) + "\u{1B}[0m" : line(header))
    for row in rows { print(line(row)) }
}

func text(_ value: Any?) -> String {
    switch value {
    case let string as String: string
    case let number as NSNumber: number.stringValue
    case nil, is NSNull: "-"
    default: "\(value!)"
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The daemon's identity, documents and connected peers.")
    @OptionGroup var options: ClientOptions

    func run() throws {
        let status = try options.call(API.Status.self, "GET", "/v1/status")
        guard !options.json else { return }
        print("peer id:          \(status.peerID)")
        print("name:             \(status.name)")
        print("documents:        \(status.documents)")
        print("peers connected:  \(status.peersConnected)")
        print("bytes sent/recv:  \(status.bytesSent) / \(status.bytesReceived)")
        print("up:               \(status.uptimeSeconds) s")
        let documents = status.sync.filter { $0.kind == "project" }
        guard !documents.isEmpty else { return }
        print("")
        printTable(
            ["PROJECT", "NAME", "CHANGES", "SYNC"],
            documents.map { document in
                let peers = document.peers.map { peer -> String in
                    let state = peer.behind.map { $0 == 0 ? "in sync" : "\($0) behind" } ?? "never synced"
                    return "\(peer.peer.prefix(7)) \(state)\(peer.connected ? "" : " (offline)")"
                }
                return [document.id, text(document.name), "\(document.changes)", peers.isEmpty ? "not shared" : peers.joined(separator: ", ")]
            })
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The versions of this CLI and of the daemon it talks to (a warning when they differ).")
    @OptionGroup var options: ClientOptions

    func run() throws {
        let daemon: API.VersionInfo?
        do {
            let response = try options.client.request("GET", "/v1/version")
            daemon = response.status == 200 ? try? API.decoder.decode(API.VersionInfo.self, from: response.body) : nil
        } catch let failure as ControlClientFailure where failure.isUnreachable {
            daemon = nil
        }
        if options.json {
            var answer: [String: Any] = ["cli": API.version]
            if let daemon { answer["daemon"] = daemon.version; answer["api"] = daemon.api }
            print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys]), as: UTF8.self))
        } else {
            print("storyteller   \(API.version)")
            print("storytellerd  \(daemon.map { "\($0.version) (API \($0.api))" } ?? "not running at \(options.client.path)")")
        }
        if let daemon, daemon.version != API.version {
            printError("the daemon is \(daemon.version) and this CLI \(API.version): install the same version of both")
        }
    }
}

struct ID: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "id", abstract: "This daemon's peer id (give it to the other machines).")
    @OptionGroup var options: ClientOptions

    func run() throws {
        let identity = try options.call(API.Identity.self, "GET", "/v1/identity")
        if !options.json { print(identity.peerID) }
    }
}

struct Peers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Configured and pending peers.",
        subcommands: [List.self, Add.self, Remove.self, Pending.self, Accept.self, Pause.self, Resume.self],
        defaultSubcommand: List.self)

    static func printPeers(_ peers: [API.Peer]) {
        printTable(
            ["ID", "NAME", "ADDRESS", "STATE", "CONNECTED"],
            peers.map {
                let connected = $0.connected ? "yes" : ($0.paused ? "no (paused)" : "no")
                return [$0.id, text($0.name), text($0.address ?? $0.lastAddress), $0.state, connected]
            })
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Configured peers and whether they are connected.")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let peers = try options.call([API.Peer].self, "GET", "/v1/peers")
            if !options.json { Peers.printPeers(peers) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Trust a peer id and dial it at an address.")
        @Argument(help: "The peer's id (storyteller id on that machine).") var id: String
        @Option(help: "Where to reach it, HOST:PORT.") var address: String?
        @Option(help: "A name for it.") var name: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let peer = try options.call(API.Peer.self, "POST", "/v1/peers", body: API.AddPeer(id: id, address: address, name: name))
            if !options.json { print("added \(peer.id)") }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a peer and close its connection.")
        @Argument var id: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("DELETE", "/v1/peers/\(segment(id))")
            if !options.json { print("removed \(id)") }
        }
    }

    struct Pending: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unknown peers that tried to connect.")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let peers = try options.call([API.Peer].self, "GET", "/v1/peers/pending")
            if !options.json { Peers.printPeers(peers) }
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop syncing with a peer until `peers resume` (kept across restarts); edits keep for later.")
        @Argument var id: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("POST", "/v1/peers/\(segment(id))/pause")
            if !options.json { print("paused sync with \(id)") }
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sync with a paused peer again.")
        @Argument var id: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("POST", "/v1/peers/\(segment(id))/resume")
            if !options.json { print("resumed sync with \(id)") }
        }
    }

    struct Accept: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Trust a pending peer.")
        @Argument var id: String
        @Option(help: "Where to dial it, HOST:PORT (optional: it can keep dialing us).") var address: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let body: [String: Any]? = address.map { ["address": $0] }
            _ = try options.call("POST", "/v1/peers/\(segment(id))/accept", body: body)
            if !options.json { print("accepted \(id)") }
        }
    }
}

/// The path of a project's shares, or the library's (`library` as PROJECT).
func sharesPath(_ project: String) -> String {
    project == "library" ? "/v1/library/shares" : "/v1/projects/\(segment(project))/shares"
}

struct Share: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share a project (or `library`: the folder tree and every project in it) with a peer.",
        discussion: """
            Read-write makes the peer an editor (it may change the project and share it on); \
            --read-only a reader (it receives the project; its edits are refused by every machine). \
            Only the owner (the machine that created the project) and editors may share.
            """)
    @Argument(help: "A project id, or `library`.") var project: String
    @Argument var peer: String
    @Flag(help: "The peer receives the project but its changes are refused.") var readOnly = false
    @OptionGroup var options: ClientOptions

    func run() throws {
        _ = try options.call(
            "PUT", "\(sharesPath(project))/\(segment(peer))", body: ["mode": readOnly ? "read-only" : "read-write"])
        if !options.json { print("shared \(project) with \(peer) (\(readOnly ? "read-only" : "read-write"))") }
    }
}

struct Unshare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop sharing a project (or `library`) with a peer.",
        discussion: "Takes the peer's rights away (the owner only); it holds until someone entitled shares again.")
    @Argument(help: "A project id, or `library`.") var project: String
    @Argument var peer: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        _ = try options.call("DELETE", "\(sharesPath(project))/\(segment(peer))")
        if !options.json { print("unshared \(project) from \(peer)") }
    }
}

struct Projects: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Storyboard projects.",
        subcommands: [List.self, Create.self, Show.self, Copy.self, Rename.self, Describe.self, Delete.self, Restore.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The projects on this machine.")
        @Flag(help: "Include deleted projects.") var deleted = false
        @OptionGroup var options: ClientOptions

        func run() throws {
            let projects = try options.call([API.ProjectSummary].self, "GET", "/v1/projects" + (deleted ? "?deleted=true" : ""))
            guard !options.json else { return }
            printTable(["ID", "NAME", "DELETED"], projects.map { [$0.id, text($0.name), $0.deleted ? "yes" : "no"] })
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a project; prints its id.")
        @Argument var name: String
        @Option(help: "The library folder for it (id, or a path like Films/Shorts; default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let project = try options.call(API.Project.self, "POST", "/v1/projects", body: API.CreateProject(name: name, folder: folder))
            if !options.json { print(project.id) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A project's scenes, shots and layers.")
        @Argument var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let body = try options.call(API.Project.self, "GET", "/v1/projects/\(segment(project))")
            guard !options.json else { return }
            var notes: [String] = []
            if body.legacy { notes.append("legacy: made before signed authorship, not synced; `projects copy` it to share") }
            switch body.role {
            case "reader": notes.append("read-only")
            case "none": notes.append("read-only: no longer shared with this machine")
            case "editor": notes.append("shared with this machine read-write")
            default: break
            }
            print("\(text(body.title ?? body.name))  (\(body.id))" + (notes.isEmpty ? "" : "  [\(notes.joined(separator: "; "))]"))
            for scene in body.scenes {
                print("  scene \(scene.number) \(text(scene.title))  [\(scene.id)]")
                for shot in scene.shots {
                    print("    shot \(shot.label) \(text(shot.caption))  [\(shot.id)]")
                    for layer in shot.layers {
                        let hidden = layer.visible ? "" : ", hidden"
                        print("      layer \(text(layer.name)): \(layer.strokes.count) strokes\(hidden)  [\(layer.id)]")
                    }
                }
            }
        }
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a project into a new one owned by this machine; prints its id.",
            discussion: "Any project can be copied: one this machine only reads, or one made before signed authorship (which cannot be shared itself).")
        @Argument var project: String
        @Option(help: "The copy's name (default: the original's).") var name: String?
        @Option(help: "The library folder for it (default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let copy = try options.call(
                API.Project.self, "POST", "/v1/projects/\(segment(project))/copy", body: API.CopyProject(name: name, folder: folder))
            if !options.json { print(copy.id) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a project.")
        @Argument var project: String
        @Argument var name: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("PATCH", "/v1/projects/\(segment(project))", body: ["name": name])
            if !options.json { print("renamed \(project) to \(name)") }
        }
    }

    struct Describe: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Set a project's description (an edit: it syncs, and undo takes it back).")
        @Argument var project: String
        @Argument var description: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.set(.id(.root), .description, .string(description))] }
        func report(created: [String?]) -> String { "described \(project)" }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a project (kept; `projects restore` brings it back).")
        @Argument var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("DELETE", "/v1/projects/\(segment(project))")
            if !options.json { print("deleted \(project)") }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Restore a deleted project.")
        @Argument var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try options.call("POST", "/v1/projects/\(segment(project))/restore")
            if !options.json { print("restored \(project)") }
        }
    }
}
