import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// Two network namespaces joined by a veth pair, made and removed by a test
/// (`ip netns`, root only): two machines on one LAN as far as the daemons
/// can tell, each with its own loopback and ports, so they use the default
/// ports (TCP 7460, UDP 21029) and nothing reaches the host's networks.
struct NetworkNamespaces {
    enum Family: String, CustomTestStringConvertible, Sendable {
        /// IPv4 addresses with a broadcast address on the link; the daemons listen on 0.0.0.0.
        case ipv4
        /// Only the link-local IPv6 addresses the kernel gives; the daemons listen on [::].
        case ipv6

        var testDescription: String { rawValue }
    }

    /// `ip`, when this process may use it (root, and the command exists).
    static let ip: String? = {
        guard getuid() == 0 else { return nil }
        return ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    let names: (String, String)
    let links: (String, String)
    /// The IPv4 subnet's first three numbers (`10.a.b`), unused in the IPv6 case.
    let subnet: String

    /// Names for a pair of namespaces and their link, unique to this process and call.
    init() {
        let tag = String(format: "%05d%03d", getpid() % 100_000, Int.random(in: 0..<1_000))
        names = ("st-test-\(tag)-a", "st-test-\(tag)-b")
        links = ("stv\(tag)a", "stv\(tag)b")
        subnet = "10.\(Int.random(in: 64...127)).\(Int.random(in: 0...255))"
    }

    /// Creates them; on failure what was made is removed, else `remove()` does it.
    func create(family: Family) throws {
        do {
            try Self.run(["netns", "add", names.0])
            try Self.run(["netns", "add", names.1])
            try Self.run(["link", "add", links.0, "type", "veth", "peer", "name", links.1])
            try Self.run(["link", "set", links.0, "netns", names.0])
            try Self.run(["link", "set", links.1, "netns", names.1])
            for (name, link, host) in [(names.0, links.0, 1), (names.1, links.1, 2)] {
                if family == .ipv4 { try Self.run(["-n", name, "addr", "add", "\(subnet).\(host)/24", "brd", "+", "dev", link]) }
                try Self.run(["-n", name, "link", "set", "lo", "up"])
                try Self.run(["-n", name, "link", "set", link, "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Waits (at most `timeout`) until duplicate address detection has let
    /// go of both link-local addresses: a tentative one cannot send.
    func waitForLinkLocalAddresses(timeout: Duration = .seconds(15)) async throws {
        var limit = TestDeadline(timeout)
        while !limit.hasPassed() {
            let states = try [(names.0, links.0), (names.1, links.1)].map { name, link in
                try Self.run(["-n", name, "-6", "addr", "show", "dev", link, "scope", "link"])
            }
            if states.allSatisfy({ $0.contains("inet6 fe80") && !$0.contains("tentative") }) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TimedOut(description: "the link-local addresses stayed tentative")
    }

    /// Deletes the namespaces (the veth pair goes with them).
    func remove() {
        _ = try? Self.run(["netns", "del", names.0])
        _ = try? Self.run(["netns", "del", names.1])
    }

    /// The launcher that runs a command in namespace `index` (0 or 1).
    func launcher(_ index: Int) -> [String] { [Self.ip ?? "ip", "netns", "exec", index == 0 ? names.0 : names.1] }

    /// Runs `ip ARGUMENTS`; its output, or an error with what it said.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        guard let ip else { throw TimedOut(description: "no ip command") }
        let result = try ChildProcess.runBlocking(URL(fileURLWithPath: ip), arguments, deadline: .seconds(30))
        guard result.status == 0, !result.timedOut else {
            throw TimedOut(description: "ip \(arguments.joined(separator: " ")): \(result.timedOut ? "ran past 30 s" : result.errorText)")
        }
        return result.outputText
    }
}

/// Local discovery between two "machines" (network namespaces on a veth
/// link): each daemon hears the other at its address on the link, and two
/// configured peers with no address find each other and sync.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized, .enabled(if: NetworkNamespaces.ip != nil, "needs root and the ip command"))
struct NetworkNamespaceTests {
    @Test(arguments: [NetworkNamespaces.Family.ipv4, .ipv6])
    func daemonsOnTwoMachinesOfALinkFindEachOtherAndSync(_ family: NetworkNamespaces.Family) async throws {
        let namespaces = NetworkNamespaces()
        try namespaces.create(family: family)
        defer { namespaces.remove() }
        if family == .ipv6 { try await namespaces.waitForLinkLocalAddresses() }

        let listen = family == .ipv4 ? "0.0.0.0:7460" : "[::]:7460"
        var daemons: [StartedDaemon] = []
        // Stopped before the namespaces go (defers run last first).
        defer { for daemon in daemons { daemon.stop() } }
        for (index, name) in ["a", "b"].enumerated() {
            let home = try TemporaryDirectory()
            let process = try DaemonProcess(
                arguments: ["--data-dir", home.path, "--listen", listen, "--name", name], environment: ["STORYTELLER_DISCOVERY": "true"],
                launcher: namespaces.launcher(index))
            daemons.append(StartedDaemon(home: home, daemon: process, extraArguments: []))
            try await process.waitForLog("ready")
        }
        let (a, b) = (daemons[0], daemons[1])
        let (idA, idB) = (try a.peerID(), try b.peerID())

        func heard(_ peer: String, by daemon: StartedDaemon) throws -> [String]? {
            let answer = try daemon.client.get("/v1/peers/discovered").json as? [String: Any]
            return ((answer?["peers"] as? [[String: Any]])?.first { $0["id"] as? String == peer })?["addresses"] as? [String]
        }
        try await eventually("a hears b over the link", timeout: .seconds(60)) { try heard(idB, by: a) != nil }
        try await eventually("b hears a over the link", timeout: .seconds(60)) { try heard(idA, by: b) != nil }
        let addresses = try #require(try heard(idB, by: a))
        switch family {
        case .ipv4:
            #expect(addresses == ["\(namespaces.subnet).2:7460"], "b's address on the link, from the packet's source")
        case .ipv6:
            #expect(
                addresses.count == 1 && addresses[0].hasPrefix("[fe80::") && addresses[0].hasSuffix("%\(namespaces.links.0)]:7460"),
                "b's link-local address, with a's interface to reach it: \(addresses)")
        }

        #expect(try await a.cli("peers", "add", idB, "--name", "b").status == 0)
        #expect(try await b.cli("peers", "add", idA, "--name", "a").status == 0)
        // Added by its id alone, a counts as discovered on b: b takes its shares once told to.
        #expect(try await b.cli("peers", "set", "a", "--auto-accept", "on").status == 0)
        try await eventually("a and b connect over the link", timeout: .seconds(60)) {
            (try a.client.get("/v1/status").json as? [String: Any])?["peersConnected"] as? Int == 1
        }
        let project = try await a.cli("projects", "create", "Across the link").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, "b").status == 0)
        try await eventually("b has a's project", timeout: .seconds(60)) { try b.client.get("/v1/projects/\(project)").status == 200 }
        for daemon in daemons { #expect(try await daemon.daemon.terminate() == 0) }
    }
}
