import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

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
            try printJSON(VersionsAnswer(cli: API.version, daemon: daemon?.version, api: daemon?.api))
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
