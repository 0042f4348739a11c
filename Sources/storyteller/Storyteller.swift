import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

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
            Status.self, Version.self, ID.self, Use.self, Peers.self, Share.self, Unshare.self, Shares.self, Tree.self, Folders.self, Projects.self, Scenes.self, Shots.self,
            Tags.self, Layers.self, Strokes.self, Images.self, Sound.self, Media.self, Undo.self, Redo.self, Search.self, History.self, Versions.self, Diff.self, RestoreVersion.self, Conflicts.self, Render.self, Replay.self, Export.self, Import.self, Preview.self, Watch.self, Backup.self, Demo.self,
        ])
}

extension Storyteller {
    /// Runs the command line with the global options moved where the
    /// commands declare them, so they work before the subcommand too.
    static func main() {
        let arguments = GlobalOptions.movedToTheEnd(Array(CommandLine.arguments.dropFirst()))
        if let problem = CommandSuggestions.problem(in: arguments) {
            printError(problem)
            Foundation.exit(64)
        }
        main(arguments)
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
    @Option(help: "The daemon's control socket (default: your daemon's, else the system daemon's /run/storyteller/control.sock; also STORYTELLER_SOCKET).")
    var socket: String?

    @Flag(help: "Print the daemon's JSON answer instead of text.")
    var json = false

    var client: ControlClient {
        let environment = ProcessInfo.processInfo.environment
        if let given = socket ?? environment["STORYTELLER_SOCKET"] { return ControlClient(path: given) }
        return ControlClient.locate(environment: environment)
    }

    /// Sends a request and returns the JSON answer, or exits with a clear message.
    func call(_ method: String, _ target: String, body: [String: Any]? = nil, timeoutSeconds: Int = 30) throws -> Any {
        let response = try raw(method, target, body: body, timeoutSeconds: timeoutSeconds)
        if json { print(String(decoding: response.body, as: UTF8.self)) }
        return response.json ?? [:]
    }

    /// Sends a request and decodes the answer as one of the API's types
    /// (printing the JSON as it came with `--json`).
    func call<Answer: Decodable>(_ answer: Answer.Type, _ method: String, _ target: String, timeoutSeconds: Int = 30) throws -> Answer {
        try decoded(answer, raw(method, target, body: nil as Data?, timeoutSeconds: timeoutSeconds), target)
    }

    /// Sends one of the API's request types and decodes the answer.
    func call<Answer: Decodable, Body: Encodable>(
        _ answer: Answer.Type, _ method: String, _ target: String, body: Body, timeoutSeconds: Int = 30
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
    func raw(_ method: String, _ target: String, body: [String: Any]? = nil, timeoutSeconds: Int = 30) throws -> ControlClientResponse {
        try raw(method, target, body: try body.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }, timeoutSeconds: timeoutSeconds)
    }

    /// Sends a request with an encoded body (the API's types); the successful
    /// response, or exits with a clear message (`reword` may give the
    /// command's own words for an error code).
    func raw(
        _ method: String, _ target: String, body data: Data?, timeoutSeconds: Int = 30,
        reword: (_ code: String, _ message: String) -> String? = { _, _ in nil }
    ) throws -> ControlClientResponse {
        let response: ControlClient.Response
        do {
            response = try client.request(method, target, body: data, timeoutSeconds: timeoutSeconds)
        } catch let failure as ControlClient.Failure {
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(69)
        }
        guard (200..<300).contains(response.status) else {
            if let code = response.errorCode, let message = response.errorMessage, let words = reword(code, message) {
                printError(words)
            } else {
                printError(response.errorMessage.map(UserWords.translate) ?? "the daemon answered \(response.status)")
            }
            throw ExitCode(1)
        }
        return response
    }
}

/// ", not here yet" for media this machine does not hold completely.
func mediaState(_ media: API.Media) -> String {
    switch media.state {
    case "partial"?: ", arriving"
    case "missing"?: ", not here yet"
    default: ""
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
    // Names and titles may come from peers: no control character reaches the terminal.
    let rows = rows.map { $0.map(PrintableText.escaped) }
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
    case let string as String: PrintableText.escaped(string)
    case let number as NSNumber: number.stringValue
    case nil, is NSNull: "-"
    default: "\(value!)"
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The daemon's identity, its projects and how far each peer is in syncing them.",
        discussion: """
            Per connected peer: how many projects are in sync, and how many changes are still to be sent \
            (the peer has not acknowledged them) or received (the peer has them, this machine not yet). \
            --wait follows a sync (a new machine taking a library) until every connected peer is in sync, \
            with a progress line on a terminal.

            Examples:
              storyteller status
              storyteller status --wait --timeout 600
            """)
    @Flag(help: "Wait until every connected peer is in sync on every shared project (exit 1 on --timeout).") var wait = false
    @Option(help: "With --wait: give up after this many seconds (1 to 86400).") var timeout = 600
    @OptionGroup var options: ClientOptions

    mutating func validate() throws {
        guard (1...86400).contains(timeout) else { throw ValidationError("--timeout must be 1 to 86400 seconds, not \(timeout)") }
    }

    func run() throws {
        guard wait else { return try show() }
        let deadline = Date().addingTimeInterval(Double(timeout))
        let terminal = isatty(STDERR_FILENO) == 1
        var quiet = options
        quiet.json = false
        while true {
            let progress = SyncProgress(try quiet.call(API.Status.self, "GET", "/v1/status"))
            if progress.isDone {
                if terminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                return try show()
            }
            if terminal { FileHandle.standardError.write(Data("\r\u{1B}[K\(progress.line)".utf8)) }
            guard Date() < deadline else {
                if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
                printError("not in sync after \(timeout) s: \(progress.line)")
                throw ExitCode(1)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    private func show() throws {
        let status = try options.call(API.Status.self, "GET", "/v1/status")
        guard !options.json else { return }
        let names = Names(options)
        print("peer id:          \(status.peerID)")
        print("name:             \(status.name)")
        print("projects:         \(status.projects)")
        print("peers connected:  \(status.peersConnected)")
        print("bytes sent/recv:  \(bytes(status.bytesSent)) / \(bytes(status.bytesReceived))")
        print("up:               \(duration(status.uptimeSeconds))")
        if status.conflicts > 0 {
            let fields = "\(status.conflicts) field\(status.conflicts == 1 ? "" : "s")"
            let projects = "\(status.conflictedProjects) project\(status.conflictedProjects == 1 ? "" : "s")"
            print("conflicts:        \(fields) in \(projects) overwritten by a concurrent edit (storyteller conflicts PROJECT)")
        } else {
            print("conflicts:        none")
        }
        let progress = SyncProgress(status)
        for peer in progress.peers {
            let who = names.who(peer.id, local: false, me: status.peerID)
            print("sync with \(who):".padding(toLength: 18, withPad: " ", startingAt: 0) + peer.line)
        }
        let documents = status.sync.filter { $0.kind == "project" }
        guard !documents.isEmpty else { return }
        print("")
        let short = API.shortIDs(documents.map(\.id))
        // Members this machine is not paired with sync through others (a folder shared with a
        // crew): they are named, but not as if this machine had failed to reach them.
        let paired = Set(((try? names.configuredPeers()) ?? []).map(\.id))
        printTable(
            ["PROJECT", "CHANGES", "SYNC", "ID"],
            documents.map { document in
                let peers = document.peers.map { peer -> String in
                    guard paired.contains(peer.peer) else {
                        return "\(names.who(peer.peer, local: false, me: status.peerID)) (a member, not paired here)"
                    }
                    var parts: [String] = []
                    switch peer.behind {
                    case nil: parts.append("never synced")
                    case 0?: break
                    case let count?: parts.append("\(count) behind")
                    }
                    if let ahead = peer.ahead, ahead > 0 { parts.append("\(ahead) to receive") }
                    let state = parts.isEmpty ? "in sync" : parts.joined(separator: ", ")
                    return "\(names.who(peer.peer, local: false, me: status.peerID)) \(state)\(peer.connected ? "" : " (offline)")"
                }
                let name = text(document.name) + (document.deleted == true ? " (in the trash)" : "")
                return [name, "\(document.changes)", peers.isEmpty ? "not shared" : peers.joined(separator: ", "), short[document.id] ?? document.id]
            })
    }
}

/// How far the connected peers are in syncing the shared documents.
struct SyncProgress {
    struct Peer {
        let id: String
        var documents = 0
        var inSync = 0
        var toSend: UInt64 = 0
        var toReceive: UInt64 = 0

        var line: String {
            guard inSync < documents else { return "in sync (\(documents) document\(documents == 1 ? "" : "s"))" }
            var parts = ["\(inSync) of \(documents) documents in sync"]
            if toSend > 0 { parts.append("\(toSend) changes to send") }
            if toReceive > 0 { parts.append("\(toReceive) to receive") }
            return parts.joined(separator: ", ")
        }
    }

    let peers: [Peer]

    init(_ status: API.Status) {
        var byPeer: [String: Peer] = [:]
        for document in status.sync {
            for peer in document.peers where peer.connected {
                var entry = byPeer[peer.peer] ?? Peer(id: peer.peer)
                let send = peer.behind ?? document.changes
                let receive = peer.ahead ?? 0
                entry.documents += 1
                entry.toSend += send
                entry.toReceive += receive
                if send == 0 && receive == 0 { entry.inSync += 1 }
                byPeer[peer.peer] = entry
            }
        }
        peers = byPeer.values.sorted { $0.id < $1.id }
    }

    var isDone: Bool { peers.allSatisfy { $0.inSync == $0.documents } }

    /// "syncing: 640 of 1000 documents in sync, 12345 changes to go".
    var line: String {
        let documents = peers.reduce(0) { $0 + $1.documents }
        let inSync = peers.reduce(0) { $0 + $1.inSync }
        let changes = peers.reduce(UInt64(0)) { $0 + $1.toSend + $1.toReceive }
        let width = 24
        let filled = documents == 0 ? width : width * inSync / documents
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "syncing [\(bar)] \(inSync) of \(documents) documents in sync, \(changes) changes to go"
    }
}

/// "3 d 4 h", "2 h 5 min", "12 s".
func duration(_ seconds: Int) -> String {
    switch seconds {
    case ..<60: "\(seconds) s"
    case ..<3600: "\(seconds / 60) min \(seconds % 60) s"
    case ..<86400: "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    default: "\(seconds / 86400) d \(seconds % 86400 / 3600) h"
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The versions of this CLI and of the daemon it talks to (a warning when they differ).",
        discussion: "Example:\n  storyteller version")
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
            let client = options.client
            let tried = client.searched.count > 1 ? client.searched.joined(separator: " or ") : client.path
            print("storytellerd  \(daemon.map { "\($0.version) (API \($0.api))" } ?? "not running (no daemon at \(tried))")")
        }
        if let daemon, daemon.version != API.version {
            printError("the daemon is \(daemon.version) and this CLI \(API.version): install the same version of both")
        }
    }
}

struct ID: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id", abstract: "This daemon's peer id (give it to the other machines).",
        discussion: "On the other machine:\n  storyteller peers add $(ssh this-machine storyteller id) --address this-machine:7460 --name me")
    @OptionGroup var options: ClientOptions

    func run() throws {
        let identity = try options.call(API.Identity.self, "GET", "/v1/identity")
        if !options.json { print(identity.peerID) }
    }
}

struct Peers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Configured and pending peers.",
        subcommands: [List.self, Add.self, Remove.self, SetFields.self, Pending.self, Accept.self, Pause.self, Resume.self, Discovered.self],
        defaultSubcommand: List.self)

    /// Names first, then how each peer is reached, like `tailscale status`:
    /// "connected, they dialed from 10.0.0.4:51234", "offline, last seen 3h ago".
    static func printPeers(_ peers: [API.Peer]) {
        let now = Date()
        printTable(
            ["PEER", "NAME", "DIAL ADDRESS", "STATUS"],
            peers.map { peer in
                var name = peer.name ?? peer.announcedName ?? "-"
                if let announced = peer.announcedName, let given = peer.name, announced != given { name += " (calls itself \(announced))" }
                let more = peer.addresses.count > 1 ? " (+\(peer.addresses.count - 1))" : ""
                return [String(peer.id.prefix(7)), name, peer.address.map { $0 + more } ?? "-", status(of: peer, now: now)]
            })
    }

    static func status(of peer: API.Peer, now: Date) -> String {
        let seen = peer.lastSeen.map { "last seen \(ago(Date(timeIntervalSince1970: Double($0) / 1000), now: now))" }
        if peer.state == "pending" {
            return "asks to connect (from \(peer.lastAddress ?? "?")\(seen.map { ", \($0)" } ?? "")): storyteller peers accept \(peer.id.prefix(7))"
        }
        if peer.paused { return "paused by you" + (seen.map { ", \($0)" } ?? "") }
        if let connection = peer.connection {
            let how = connection.direction == "out" ? "dialed \(connection.address)" : "they dialed from \(connection.address)"
            // Idle as `tailscale status` says it: connected, but nothing but keepalives for a while.
            let state = connection.idleSeconds >= API.Peer.Connection.idleAfterSeconds
                ? "idle (nothing to sync for \(ago(now.addingTimeInterval(-Double(connection.idleSeconds)), now: now).replacingOccurrences(of: " ago", with: ""))), connected"
                : "connected"
            return "\(state), \(how); \(bytes(connection.bytesSent)) sent, \(bytes(connection.bytesReceived)) received"
        }
        if peer.connected { return "connected" }
        if peer.pausedByPeer { return "paused by them" + (seen.map { ", \($0)" } ?? "") }
        if let upgrade = peer.upgrade { return "cannot sync: \(text(upgrade))" }
        if peer.waitingForAcceptance == true {
            return "waiting to be accepted there: it does not know this machine yet (on it: storyteller peers accept, with this machine's id from storyteller id)"
        }
        guard let seen else {
            return peer.address == nil ? "offline, never seen (dialed once discovered on the LAN, or waits for it to dial in)" : "offline, never connected"
        }
        return "offline, \(seen)"
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Configured peers: name, short id, dial address, and whether and how they are connected.",
            discussion: "Example:\n  storyteller peers")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let peers = try options.call([API.Peer].self, "GET", "/v1/peers")
            if !options.json { Peers.printPeers(peers) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust a peer id and dial it at its addresses, or where it is discovered on the LAN.",
            discussion: """
                A peer added by its id alone (no --address) is dialed where local discovery hears it, and counts as \
                discovered: what it shares waits in `storyteller shares pending` until `storyteller peers set PEER \
                --auto-accept on`. With an address, what it shares is taken without asking (the `accept-shares` setting).

                Examples:
                  storyteller peers add YBB5GOE-GQ5FJ33-…-ZPZJYQP --address studio-mac.local:7460 --address 192.168.1.20:7460 --name bob
                  storyteller peers add YBB5GOE-GQ5FJ33-…-ZPZJYQP --name bob
                """)
        @Argument(help: "The peer's whole id (`storyteller id` on that machine).") var id: String
        @Option(help: Help.peerAddress) var address: [String] = []
        @Option(help: "A name for it (commands then take the name).") var name: String?
        @OptionGroup var options: ClientOptions

        func validate() throws {
            if let mistake = PeerID.mistake(in: id) {
                throw ValidationError(
                    "'\(id)' is not a peer id: \(mistake). A peer id is eight groups of seven letters and digits, like "
                        + "YBB5GOE-GQ5FJ33-…-ZPZJYQP (`storyteller id` on that machine prints it)")
            }
            try checkPeerAddresses(address)
        }

        func run() throws {
            let body = API.AddPeer(id: id, addresses: address.isEmpty ? nil : address, name: name)
            let peer = try options.call(API.Peer.self, "POST", "/v1/peers", body: body)
            guard !options.json else { return }
            print("added \(peer.name.map { "\($0) " } ?? "")(\(peer.id.prefix(7)))")
            if !peer.autoAccept {
                let why = address.isEmpty ? " (added by its id alone, as a discovered peer)" : ""
                print(
                    "what it shares waits in `storyteller shares pending`\(why); "
                        + "`storyteller peers set \(peer.name ?? String(peer.id.prefix(7))) --auto-accept on` takes it without asking")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a peer and close its connection.", discussion: "Example:\n  storyteller peers remove bob")
        @Argument(help: Help.peer) var peer: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).peer(peer)
            _ = try options.call("DELETE", "/v1/peers/\(segment(id))")
            if !options.json { print("removed \(peer) (\(id.prefix(7)))") }
        }
    }

    struct Pending: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unknown peers that tried to connect (accept one with `storyteller peers accept ID`).",
            discussion: "Example:\n  storyteller peers pending")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let peers = try options.call([API.Peer].self, "GET", "/v1/peers/pending")
            if !options.json { Peers.printPeers(peers) }
        }
    }

    struct SetFields: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a peer's name, where to dial it, or whether what it shares is taken without asking.",
            discussion: """
                With --auto-accept off, what the peer shares waits in `storyteller shares pending`; \
                default follows the daemon's accept-shares setting. --address replaces the addresses it is dialed at \
                (the machine moved, or its daemon listens on another port), and it is dialed there at once; a peer \
                the config file declares gets the file's addresses back when the daemon restarts.

                Examples:
                  storyteller peers set bob --auto-accept off
                  storyteller peers set YBB5GOE --name bob
                  storyteller peers set bob --address studio-mac.local:7460
                """)
        @Argument(help: Help.peer) var peer: String
        @Option(help: "on, off, or default (the accept-shares setting).") var autoAccept: String?
        @Option(help: "The name commands take for it.") var name: String?
        @Option(help: Help.peerAddress) var address: [String] = []
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            guard autoAccept != nil || name != nil || !address.isEmpty else {
                throw ValidationError("give --auto-accept, --name and/or --address")
            }
            if let autoAccept, !["on", "off", "default"].contains(autoAccept) {
                throw ValidationError("--auto-accept takes on, off or default, not '\(autoAccept)'")
            }
            try checkPeerAddresses(address)
        }

        func run() throws {
            let id = try Names(options).peer(peer)
            var body: [String: Any] = [:]
            if let autoAccept { body["autoAccept"] = autoAccept == "default" ? NSNull() : (autoAccept == "on") as Any }
            if let name { body["name"] = name }
            if !address.isEmpty { body["addresses"] = address }
            let answer = try options.raw("PATCH", "/v1/peers/\(segment(id))", body: body)
            if options.json { return print(String(decoding: answer.body, as: UTF8.self)) }
            let updated = try? API.decoder.decode(API.Peer.self, from: answer.body)
            let who = updated?.name ?? peer
            if !address.isEmpty { print("\(who): dialed at \((updated?.addresses ?? address).joined(separator: ", "))") }
            if autoAccept != nil || name != nil {
                print("\(who): shares \(updated?.autoAccept == false ? "wait in `storyteller shares pending`" : "are taken as they come")")
            }
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop syncing with a peer until `peers resume` (kept across restarts); edits keep for later.",
            discussion: "Example:\n  storyteller peers pause bob")
        @Argument(help: Help.peer) var peer: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).peer(peer)
            _ = try options.call("POST", "/v1/peers/\(segment(id))/pause")
            if !options.json { print("paused sync with \(peer)") }
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sync with a paused peer again.", discussion: "Example:\n  storyteller peers resume bob")
        @Argument(help: Help.peer) var peer: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).peer(peer)
            _ = try options.call("POST", "/v1/peers/\(segment(id))/resume")
            if !options.json { print("resumed sync with \(peer)") }
        }
    }

    struct Accept: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust a pending peer.", discussion: "Example:\n  storyteller peers accept YBB5GOE --address 192.168.1.20:7460")
        @Argument(help: "The pending peer: id or id prefix (as `storyteller peers pending` shows).") var peer: String
        @Option(help: "Where to dial it, HOST:PORT (optional: it can keep dialing us).") var address: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).peer(peer, pending: true)
            _ = try options.call(API.Peer.self, "POST", "/v1/peers/\(segment(id))/accept", body: API.AcceptPeer(address: address))
            if !options.json { print("accepted \(id.prefix(7))") }
        }
    }
}

/// The path of a project's shares, or the library's (`library` as PROJECT).

struct Share: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share a project, a folder (with everything in it, now and later) or `library` with a peer.",
        discussion: """
            Read-write makes the peer an editor (it may change what is shared and share it on); \
            --read-only a reader (it receives it; its edits are refused by every machine). A folder \
            share takes in the projects and folders under it, and whatever is created, moved or \
            filed there later; a project moved out leaves it (it keeps its other shares). Sharing a \
            folder again --read-only makes what the peer has only through it read-only too. The peer \
            sees the folder under its name. Only owners and editors may share.

            Examples:
              storyteller share "Night Train" bob
              storyteller share Films bob
              storyteller share "Films/Night Train" client-laptop --read-only
              storyteller share library my-laptop
            """)
    @Argument(help: "A project (name, library path, id or id prefix), a folder (path, as `storyteller tree` shows), or `library`.")
    var target: String
    @Argument(help: Help.peer) var peer: String
    @Flag(help: "The peer receives it but its changes are refused.") var readOnly = false
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        let resolved = try names.shareTarget(target)
        let peerID = try names.peer(peer)
        let share = try options.call(
            API.Share.self, "PUT", "\(resolved.sharesPath)/\(segment(peerID))", body: API.SetShare(mode: readOnly ? "read-only" : "read-write"))
        guard !options.json else { return }
        let what = if case .folder = resolved { "folder \(target)" } else { target }
        print("shared \(what) with \(peer) (\(readOnly ? "read-only" : "read-write"))")
        if let shared = share.shared {
            let projects = shared.filter { $0.kind == "project" }.count
            let folders = shared.count - projects
            var parts = ["\(projects) project\(projects == 1 ? "" : "s")"]
            if folders > 0 { parts.append("\(folders) folder\(folders == 1 ? "" : "s")") }
            print("  \(peer) now has \(parts.joined(separator: " and ")) through it" + (shared.isEmpty ? "" : ":"))
            for document in shared { print("    \(text(document.path ?? document.name))  (\(document.role))") }
        }
        if let notShared = share.notShared, !notShared.isEmpty {
            print("  not shared:")
            for entry in notShared { print("    \(text(entry.path ?? entry.name)): \(entry.reason)") }
        }
    }
}

struct Unshare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop sharing a project, a shared folder or `library` with a peer.",
        discussion: """
            Takes the peer's rights away (the owner's to take); it holds until someone entitled shares again. \
            A folder's projects leave the peer too, unless it has them another way (shared directly, or \
            through another folder or the library): `storyteller shares list --peer PEER` shows why it has what.

            Examples:
              storyteller unshare "Night Train" bob
              storyteller unshare Films bob
            """)
    @Argument(help: "A project (name, library path, id or id prefix), a shared folder (path), or `library`.") var target: String
    @Argument(help: Help.peer) var peer: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        let resolved = try names.shareTarget(target)
        let answer = try options.call(API.Unshared.self, "DELETE", "\(resolved.sharesPath)/\(segment(try names.peer(peer)))")
        guard !options.json else { return }
        print("unshared \(target) from \(peer)")
        for kept in answer.keeps ?? [] {
            print("  \(peer) keeps it through \(text(kept.via)) (\(kept.role == "editor" ? "read-write" : "read-only"))")
        }
    }
}

struct Projects: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Storyboard projects.",
        subcommands: [List.self, Create.self, Show.self, Copy.self, Rename.self, Describe.self, SetFields.self, Delete.self, Restore.self, Purge.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The projects on this machine: name, place in the library, short id (* marks the current one).",
            discussion: """
                With --deleted, the projects in the trash too: deleted for everyone (by whom, when, and when this \
                machine purges it) or hidden on this machine only. With --tag, only the projects carrying that tag \
                (in any case; `storyteller tags add PROJECT TAG` puts one on). A TAGS column shows when some project has tags.

                Examples:
                  storyteller projects
                  storyteller projects list --deleted
                  storyteller projects list --tag "client review"
                """)
        @Flag(help: "Include deleted projects (the trash).") var deleted = false
        @Option(help: "Only the projects carrying this tag.") var tag: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            var query: [String] = deleted ? ["deleted=true"] : []
            if let tag { query.append("tag=" + segment(tag)) }
            let projects = try options.call(
                [API.ProjectSummary].self, "GET", "/v1/projects" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            guard !options.json else { return }
            guard !projects.isEmpty else {
                printError(Projects.noneListed(tag: tag, deleted: deleted, options: options))
                return
            }
            let names = Names(options)
            let library = try? names.libraryTree()
            let paths = library.map(API.projectPaths) ?? [:]
            let short = API.shortIDs(projects.map(\.id))
            let current = CurrentProject.chosen(for: options.client.path).map(\.0)
            let me = deleted ? try? names.quietIdentity() : nil
            let showsTags = projects.contains { !$0.tags.isEmpty }
            var header = deleted ? ["NAME", "IN LIBRARY", "DELETED", "PURGED", "ID"] : ["NAME", "IN LIBRARY", "ID"]
            if showsTags { header.insert("TAGS", at: header.count - 1) }
            printTable(
                header,
                projects.map { project in
                    let marker = current == project.id ? "* " : ""
                    let name = marker + (project.name ?? "(untitled)")
                    let path = paths[project.id]?.first.map { "/" + $0 } ?? ""
                    let id = short[project.id] ?? project.id
                    var row = deleted ? [name, path, trashWords(project.trash, names: names, me: me), purgeWords(project.trash)] : [name, path]
                    if showsTags { row.append(project.tags.joined(separator: ", ")) }
                    return row + [id]
                })
        }
    }

    /// Why the list is empty, in words (on stderr; the exit status stays 0):
    /// with a tag that only shots carry, which shots do.
    static func noneListed(tag: String?, deleted: Bool, options: ClientOptions) -> String {
        guard let tag else {
            return deleted ? "no projects, and none in the trash" : "no projects yet: `storyteller projects create NAME` makes one"
        }
        let wanted = tag.trimmingCharacters(in: .whitespaces).lowercased()
        let query = tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? tag
        let hits = (try? options.call([API.SearchHit].self, "GET", "/v1/search?q=\(query)")) ?? []
        let shots = hits.filter { hit in
            hit.field == "tags" && hit.object != nil
                && hit.text.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == wanted }
        }
        guard !shots.isEmpty else { return "no project carries the tag '\(tag)'" }
        let places = shots.prefix(5).map { "\($0.projectName ?? String($0.project.prefix(7))): \($0.label)" }
        let more = shots.count > 5 ? " and \(shots.count - 5) more" : ""
        return "no project carries the tag '\(tag)', but shots do (\(places.joined(separator: "; "))\(more)); "
            + "`storyteller search \(tag.contains(" ") ? "\"\(tag)\"" : tag)` lists them"
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project; prints its id.",
            discussion: "Examples:\n  storyteller projects create \"Night Train\"\n  storyteller projects create \"Night Train\" --folder Films/Shorts")
        @Argument(help: "The project's name (its title too).") var name: String
        @Option(help: "The library folder for it (id, or a path like Films/Shorts; default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let project = try options.call(API.Project.self, "POST", "/v1/projects", body: API.CreateProject(name: name, folder: folder))
            if !options.json { print(isatty(STDOUT_FILENO) == 1 ? "created \(name)  [\(project.id)]" : project.id) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A project's scenes, shots and layers (now, or as they were at a version).",
            discussion: """
                Examples:
                  storyteller projects show "Night Train"
                  storyteller projects show "Night Train" --at 2026-11-24T17:00
                """)
        @Argument(help: Help.project) var project: String?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let query = past.query.isEmpty ? "" : "?" + past.query
            let body = try options.call(API.Project.self, "GET", "/v1/projects/\(segment(id))\(query)")
            guard !options.json else { return }
            var notes: [String] = []
            if let version = body.version { notes.append("as it was at version \(version)") }
            if body.legacy { notes.append("legacy: made before signed authorship, not synced; `projects copy` it to share") }
            if let trash = body.trash {
                notes.append(trash.isForEveryone ? "in the trash: deleted for everyone" : "in the trash: hidden on this machine")
            }
            switch body.role {
            case "reader": notes.append("read-only")
            case "none": notes.append("read-only: no longer shared with this machine")
            case "editor": notes.append("shared with this machine read-write")
            default: break
            }
            if body.conflicts != nil { notes.append("overwritten: \(overwritten(body.conflicts))") }
            print("\(text(body.title ?? body.name))  [\(body.id)]" + (notes.isEmpty ? "" : "  (\(notes.joined(separator: "; ")))"))
            if !body.tags.isEmpty { print("  tags: \(body.tags.joined(separator: ", "))") }
            if let description = body.description, !description.isEmpty { print("  description: \(text(description))") }
            let short = API.shortIDs(body.scenes.flatMap { scene in [scene.id] + scene.shots.flatMap { [$0.id] + $0.layers.map(\.id) } })
            for scene in body.scenes {
                print("  scene \(scene.number)\(scene.title.map { " \($0)" } ?? "")  [\(short[scene.id] ?? scene.id)]\(marked(scene.conflicts))")
                for shot in scene.shots {
                    let details = [shot.caption, shot.duration.map(seconds)].compactMap { $0 }.joined(separator: ", ")
                    print("    shot \(shot.label)\(details.isEmpty ? "" : "  \(details)")  [\(short[shot.id] ?? shot.id)]\(marked(shot.conflicts))")
                    if !shot.tags.isEmpty { print("      tags: \(shot.tags.joined(separator: ", "))") }
                    if let dialogue = shot.dialogue { print("      dialogue: \(text(dialogue))") }
                    if let action = shot.action { print("      action: \(text(action))") }
                    if let notes = shot.notes, !notes.isEmpty { print("      notes: \(text(notes))") }
                    if let sound = shot.sound {
                        let start = (sound.offset ?? 0) > 0 ? " from \(seconds(sound.offset ?? 0))" : ""
                        print("      sound: \(sound.type), \(seconds(sound.duration ?? 0))\(start)  \(sound.blob.prefix(12))\(mediaState(sound))")
                    }
                    for layer in shot.layers {
                        let hidden = layer.visible ? "" : ", hidden"
                        let locked = layer.locked ? ", locked" : ""
                        let count = layer.strokes.count
                        let content = layer.image.map { "image \($0.width ?? 0)×\($0.height ?? 0) \($0.blob.prefix(12))\(mediaState($0))" }
                            ?? "\(count) stroke\(count == 1 ? "" : "s")"
                        print("      layer \(text(layer.name)): \(content)\(hidden)\(locked)  [\(short[layer.id] ?? layer.id)]\(marked(layer.conflicts))")
                    }
                }
            }
            if body.conflicts != nil || body.scenes.contains(where: { scene in
                scene.conflicts != nil || scene.shots.contains { $0.conflicts != nil || $0.layers.contains { $0.conflicts != nil } }
            }) {
                print("(* a concurrent edit overwrote another value of these fields: `storyteller conflicts` lists both)")
            }
        }

        private func overwritten(_ fields: [String]?) -> String { (fields ?? []).joined(separator: ", ") }

        /// `  * caption overwritten` after an object whose fields have open conflicts.
        private func marked(_ fields: [String]?) -> String {
            guard let fields else { return "" }
            return "  * \(fields.joined(separator: ", ")) overwritten"
        }
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a project into a new one owned by this machine; prints its id.",
            discussion: """
                Any project can be copied: one this machine only reads, or one made before signed authorship (which cannot be shared itself).

                Example:
                  storyteller projects copy "Night Train" --name "Night Train (alt ending)"
                """)
        @Argument(help: Help.project) var project: String
        @Option(help: "The copy's name (default: the original's).") var name: String?
        @Option(help: "The library folder for it (default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let copy = try options.call(
                API.Project.self, "POST", "/v1/projects/\(segment(id))/copy", body: API.CopyProject(name: name, folder: folder))
            if !options.json { print(copy.id) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename a project.", discussion: "Example:\n  storyteller projects rename \"Night Train\" \"Night Train II\"")
        @Argument(help: Help.project) var project: String
        @Argument(help: "The new name.") var name: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            _ = try options.call(API.Project.self, "PATCH", "/v1/projects/\(segment(id))", body: API.CreateProject(name: name))
            if !options.json { print("renamed \(project) to \(name)") }
        }
    }

    struct Describe: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a project's description (an edit: it syncs, and undo takes it back).",
            discussion: "Example:\n  storyteller projects describe \"Night Train\" \"A chase across the night platforms.\"")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The description.") var description: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, description) = try shiftedForCurrentProject(project, description, "DESCRIPTION") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.set(.id(.root), .description, .string(description!))]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "described \(self.project ?? "the project")" }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a project: to the trash on every machine it is shared with (`projects restore` brings it back).",
            discussion: """
                Owners and editors delete a project for everyone it is shared with; anyone of them can restore it. \
                On a machine that may only read the project, it is hidden on this machine only (the others keep it). \
                Projects deleted for everyone are purged after the daemon's trash-retention (30 days by default).

                Example:
                  storyteller projects delete "Night Train"
                """)
        @Argument(help: Help.project) var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let body = try options.call(API.Project.self, "DELETE", "/v1/projects/\(segment(id))")
            guard !options.json else { return }
            if body.trash?.isForEveryone == true {
                print("deleted \(project) for everyone it is shared with (storyteller projects restore brings it back)")
            } else {
                print("hid \(project) on this machine only: this machine may only read it, so it is not deleted for the others")
            }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Restore a deleted project, on every machine it is shared with.",
            discussion: "Example:\n  storyteller projects restore \"Night Train\"")
        @Argument(help: "The deleted project: name, id or id prefix (`projects list --deleted`).") var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project, deleted: true)
            let before = try names.projectSummaries(deleted: true).first { $0.id == id }?.trash
            _ = try options.call(API.Project.self, "POST", "/v1/projects/\(segment(id))/restore")
            guard !options.json else { return }
            print(before?.isForEveryone == true ? "restored \(project) for everyone it is shared with" : "restored \(project)")
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Purge a project in the trash from this machine now, for good (other machines keep their copies).",
            discussion: """
                The daemon purges projects deleted for everyone by itself after its trash-retention; this does it now. \
                A peer that has not received the delete yet would keep the project and could offer it back: \
                the daemon refuses then, unless --force.

                Example:
                  storyteller projects purge "Night Train" --yes
                """)
        @Argument(help: "The project in the trash: name, id or id prefix (`projects list --deleted`).") var project: String
        @Flag(help: "Confirm: the project's data on this machine is removed and cannot be restored from here.") var yes = false
        @Flag(help: "Purge even if a peer it is shared with has not received the delete yet.") var force = false
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project, deleted: true)
            guard yes else {
                printError("purging removes \(project) from this machine for good; run again with --yes to confirm")
                throw ExitCode(64)
            }
            let result = try options.call(
                API.PurgeResult.self, "POST", "/v1/projects/\(segment(id))/purge" + (force ? "?force=true" : ""))
            guard !options.json else { return }
            print("purged \(project) from this machine")
            if !result.awaiting.isEmpty {
                let names = Names(options)
                let who = result.awaiting.map { names.who($0, local: false, me: nil) }.joined(separator: ", ")
                print("note: \(who) had not received the delete; it keeps the project")
            }
        }
    }
}

/// "for everyone by b, 3 h ago", "here only, 2 min ago", "no".
func trashWords(_ trash: API.Trash?, names: Names, me: String?) -> String {
    guard let trash else { return "no" }
    let when = trash.time.map { " " + ago(Date(timeIntervalSince1970: Double($0) / 1000)) } ?? ""
    guard trash.isForEveryone else { return "here only," + when }
    return "for everyone by \(names.who(trash.by, local: false, me: me)),\(when)"
}

/// When the daemon purges a project in the trash: "in 29 d", "due", "never".
func purgeWords(_ trash: API.Trash?) -> String {
    guard let trash else { return "" }
    guard let time = trash.purgeTime else { return "never" }
    let seconds = Int(Double(time) / 1000 - Date().timeIntervalSince1970)
    guard seconds > 0 else { return "due" }
    return "in " + duration(seconds)
}

/// "3 h ago", "2 min ago", "just now", "4 d ago".
func ago(_ date: Date, now: Date = Date()) -> String {
    let seconds = Int(now.timeIntervalSince(date))
    switch seconds {
    case ..<10: return "just now"
    case ..<60: return "\(seconds) s ago"
    case ..<3600: return "\(seconds / 60) min ago"
    case ..<86400: return "\(seconds / 3600) h ago"
    default: return "\(seconds / 86400) d ago"
    }
}

/// "12.3 kB".
func bytes(_ count: Int) -> String {
    ByteCountFormatter.string(fromByteCount: Int64(count), countStyle: .file)
}

/// A time as ISO 8601 with the local zone: `2026-11-24T14:03:12+01:00`.
func isoTime(milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone.current
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
