import ArgumentParser
import Foundation
import StoryAPI

extension Help {
    /// `--address` of `peers add`.
    static let peerAddress = ArgumentHelp(
        "Where to reach it, HOST:PORT: a host name (resolved at each dial), an IPv4 address or [IPv6]:PORT. Repeat for several, tried in turn.",
        discussion: "Without one it is dialed where local discovery hears it on the LAN (`storyteller peers discovered`).",
        valueName: "host:port")
}

/// Checks `--address` values as the daemon will, before asking it (exit 64, in the daemon's words).
func checkPeerAddresses(_ addresses: [String]) throws {
    do {
        _ = try API.PeerAddress.list(addresses)
    } catch {
        throw ValidationError("--address " + error.error.message)
    }
}

extension Peers {
    /// `storyteller peers discovered`: what local discovery hears.
    struct Discovered: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Daemons heard on the LAN (local discovery): id, addresses, when last heard, and whether each is configured here.",
            discussion: """
                Each daemon announces its id and peer port every 30 s (UDP broadcast, and IPv6 multicast when it listens on IPv6); \
                what is listed was heard within the last 90 s. A configured peer is dialed where it is heard, so \
                `storyteller peers add ID` needs no address for a machine on the same LAN. An announcement proves nothing about who \
                sent it: check an id against `storyteller id` on that machine before adding it.

                Example:
                  storyteller peers discovered
                """)
        @OptionGroup var options: ClientOptions

        func run() throws {
            let discovery = try options.call(API.Discovery.self, "GET", "/v1/peers/discovered")
            if !options.json { Self.show(discovery, now: Date()) }
        }

        static func show(_ discovery: API.Discovery, now: Date) {
            guard discovery.enabled else {
                print("local discovery is off on this daemon (discovery = false, --no-discovery or STORYTELLER_DISCOVERY=false)")
                return
            }
            if !discovery.running {
                print("local discovery is not running" + (discovery.problem.map { ": \($0)" } ?? " yet"))
                return
            }
            if let problem = discovery.problem { print("note: \(problem)") }
            let port = discovery.port.map { "UDP \($0)" } ?? "its UDP port"
            guard !discovery.peers.isEmpty else {
                print("no other daemon heard on the LAN in the last 90 s (each announces itself every 30 s on \(port))")
                return
            }
            printTable(
                ["PEER", "NAME", "ADDRESSES", "LAST SEEN", "CONFIGURED"],
                discovery.peers.map { peer in
                    let seen = Date(timeIntervalSince1970: Double(peer.lastSeen) / 1000)
                    let configured = peer.configured ? (peer.connected ? "yes, connected" : "yes") : "no"
                    return [
                        peer.shortID, peer.name ?? "-", peer.addresses.joined(separator: ", "), "\(peer.lastSeenAt) (\(ago(seen, now: now)))",
                        configured,
                    ]
                })
            let strangers = discovery.peers.filter { !$0.configured }
            if !strangers.isEmpty {
                print("\nTo sync with one, check its id with `storyteller id` on that machine, then:")
                for peer in strangers { print("  storyteller peers add \(peer.id) --name NAME") }
            }
            if discovery.ignoredPackets > 0 {
                print("\n\(discovery.ignoredPackets) packet(s) on \(port) were not announcements and were ignored")
            }
        }
    }
}
