import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

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
            let state =
                connection.idleSeconds >= API.Peer.Connection.idleAfterSeconds
                ? "idle (nothing to sync for \(ago(now.addingTimeInterval(-Double(connection.idleSeconds)), now: now).replacingOccurrences(of: " ago", with: ""))), connected"
                : "connected"
            return "\(state), \(how); \(bytes(connection.bytesSent)) sent, \(bytes(connection.bytesReceived)) received"
        }
        if peer.connected { return "connected" }
        if peer.pausedByPeer { return "paused by them" + (seen.map { ", \($0)" } ?? "") }
        if let upgrade = peer.upgrade { return "cannot sync: \(text(upgrade))" }
        if peer.waitingForAcceptance == true {
            return
                "waiting to be accepted there: it does not know this machine yet (on it: storyteller peers accept, with this machine's id from storyteller id)"
        }
        guard let seen else {
            return peer.address == nil
                ? "offline, never seen (dialed once discovered on the LAN, or waits for it to dial in)" : "offline, never connected"
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
            _ = try options.call(API.Removed.self, "DELETE", "/v1/peers/\(segment(id))")
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
            let body = API.PeerSettings(
                autoAccept: autoAccept.flatMap { $0 == "default" ? nil : $0 == "on" }, name: name, addresses: address.isEmpty ? nil : address,
                setsAutoAccept: autoAccept != nil)
            let answer = try options.raw("PATCH", "/v1/peers/\(segment(id))", body: try API.encoder.encode(body))
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
            _ = try options.call(API.Peer.self, "POST", "/v1/peers/\(segment(id))/pause")
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
            _ = try options.call(API.Peer.self, "POST", "/v1/peers/\(segment(id))/resume")
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
