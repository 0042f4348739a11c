import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// Local discovery between real `storytellerd` processes on loopback: each
/// test gives its daemons a discovery port of its own, and they listen on
/// 127.0.0.1, so they announce on the loopback only (127.255.255.255).
@Suite(.daemons, .timeLimit(.minutes(15))) struct DiscoveryDaemonTests {
    /// Two daemons with discovery on, on a UDP port of this test's.
    private static func startedPair() async throws -> (StartedDaemon, StartedDaemon) {
        let port = try freeUDPPort()
        let environment = ["STORYTELLER_DISCOVERY": "true"]
        let a = try await StartedDaemon.start(name: "a", ["--discovery-port", "\(port)"], environment: environment)
        do {
            let b = try await StartedDaemon.start(name: "b", ["--discovery-port", "\(port)"], environment: environment)
            return (a, b)
        } catch {
            a.stop()
            throw error
        }
    }

    private static func discovered(_ daemon: StartedDaemon) throws -> [String: Any] {
        try #require(try daemon.client.get("/v1/peers/discovered").json as? [String: Any])
    }

    private static func heard(_ peer: String, by daemon: StartedDaemon) throws -> [String: Any]? {
        (try discovered(daemon)["peers"] as? [[String: Any]])?.first { $0["id"] as? String == peer }
    }

    @Test func twoDaemonsFindEachOtherAndSyncWithNoAddressGiven() async throws {
        let (a, b) = try await Self.startedPair()
        defer {
            a.stop()
            b.stop()
        }
        let (idA, idB) = (try a.peerID(), try b.peerID())
        let portB = try b.port()
        try await eventually("a hears b on the loopback", timeout: .seconds(60)) { try Self.heard(idB, by: a) != nil }
        try await eventually("b hears a on the loopback", timeout: .seconds(60)) { try Self.heard(idA, by: b) != nil }

        // What is heard: the source address with the announced port, when, and that it is not configured.
        let seen = try #require(try Self.heard(idB, by: a))
        #expect(seen["addresses"] as? [String] == ["127.0.0.1:\(portB)"])
        #expect(seen["shortID"] as? String == String(idB.prefix(7)))
        #expect(seen["configured"] as? Bool == false && seen["connected"] as? Bool == false)
        let lastSeenAt = try #require(seen["lastSeenAt"] as? String)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let when = try #require(iso.date(from: lastSeenAt), "ISO 8601: \(lastSeenAt)")
        #expect(abs(when.timeIntervalSinceNow) < 60)
        let answer = try Self.discovered(a)
        #expect(answer["enabled"] as? Bool == true && answer["running"] as? Bool == true && answer["port"] as? Int != nil)
        let validator = SchemaValidator(document: try openAPIDocument())
        let schema = try #require(validator.responseSchema(path: "/v1/peers/discovered", method: "get", status: 200))
        #expect(validator.problems(of: answer, against: schema, at: "discovered").isEmpty)
        let text = try await a.cli("peers", "discovered")
        #expect(text.status == 0)
        #expect(text.output.hasPrefix("PEER") && text.output.contains(String(idB.prefix(7))) && text.output.contains("127.0.0.1:\(portB)"))
        #expect(text.output.contains("storyteller peers add \(idB)"), "the whole id to add it with\n\(text.output)")

        // Each trusts the other's id, with no address: they meet where they were heard.
        #expect(try await a.cli("peers", "add", idB, "--name", "b").status == 0)
        let added = try await b.cli("peers", "add", idA, "--name", "a")
        #expect(added.status == 0 && added.output.contains("waits in `storyteller shares pending`"), "\(added.output)")
        try await eventually("a and b connect", timeout: .seconds(60)) {
            (try a.client.get("/v1/status").json as? [String: Any])?["peersConnected"] as? Int == 1
        }
        // Added by its id alone, a counts as discovered on b: what it shares waits for a user.
        #expect((try b.client.get("/v1/peers").json as? [[String: Any]])?.first?["autoAccept"] as? Bool == false)
        let project = try await a.cli("projects", "create", "Found on the LAN").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, "b").status == 0)
        try await eventually("the offer waits on b", timeout: .seconds(60)) {
            try await b.cli("shares", "pending").output.contains("Found on the LAN")
        }
        #expect(try b.client.get("/v1/projects/\(project)").status == 404, "nothing is taken before a user says so")
        #expect(try await b.cli("shares", "accept", "Found on the LAN").status == 0)
        try await eventually("b has a's project", timeout: .seconds(60)) { try b.client.get("/v1/projects/\(project)").status == 200 }
        // Trusted from now on, a's next share is taken at once.
        #expect(try await b.cli("peers", "set", "a", "--auto-accept", "on").status == 0)
        let next = try await a.cli("projects", "create", "Second").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", next, "b").status == 0)
        try await eventually("b takes the next one itself", timeout: .seconds(60)) { try b.client.get("/v1/projects/\(next)").status == 200 }

        let known = try #require(try Self.heard(idB, by: a))
        #expect(known["configured"] as? Bool == true && known["name"] as? String == "b" && known["connected"] as? Bool == true)
        let listed = try #require(try a.client.get("/v1/peers").json as? [[String: Any]])
        #expect(listed.first?["addresses"] as? [String] == [], "nothing configured: the address came from discovery")
        #expect(try await a.cli("peers", "discovered").output.contains("yes, connected"))
    }

    @Test func aHostNameIsResolvedAndSeveralAddressesAreTriedInTurn() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let closed = try freePort()
        // Discovery is off: only a dials, first where nothing answers, then b's host name.
        #expect(try await b.cli("peers", "add", try a.peerID(), "--name", "a").status == 0)
        let added = try await a.cli(
            "peers", "add", try b.peerID(), "--name", "b", "--address", "127.0.0.1:\(closed)", "--address", "localhost:\(try b.port())",
            "--address", "127.0.0.1:\(closed)")
        #expect(added.status == 0, "\(added.errors)")
        #expect((try a.client.get("/v1/peers").json as? [[String: Any]])?.first?["autoAccept"] as? Bool == true, "added by hand, with addresses")
        try await eventually("a reaches b by its host name", timeout: .seconds(60)) {
            let peers = try a.client.get("/v1/peers").json as? [[String: Any]]
            return (peers?.first?["connection"] as? [String: Any])?["address"] as? String == "localhost:\(try b.port())"
        }
        let peer = try #require((try a.client.get("/v1/peers").json as? [[String: Any]])?.first)
        #expect(peer["addresses"] as? [String] == ["127.0.0.1:\(closed)", "localhost:\(try b.port())"], "in order, the repeat kept once")
        #expect(peer["address"] as? String == "127.0.0.1:\(closed)")
        // Adding it again without an address keeps them.
        #expect(try await a.cli("peers", "add", try b.peerID()).status == 0)
        #expect((try a.client.get("/v1/peers").json as? [[String: Any]])?.first?["addresses"] as? [String] == peer["addresses"] as? [String])
    }

    @Test func badAddressesAreRefusedInTheUsersWordsAndDiscoveryCanBeOff() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let peer = CLITests.otherPeer
        let cases: [(String, [String])] = [
            ("studio-mac.local", ["has no port", "studio-mac.local:7460"]),
            ("fe80::1:7460", ["brackets", "[fe80::1%eth0]:7460"]),
            ("a.local:7460,b.local:7460", ["not one address"]),
            ("studio mac:7460", ["not one address"]),
            ("tcp://studio-mac.local:7460", ["without 'tcp://'", "studio-mac.local:7460"]),
            ("studio-mac.local:99999", ["1 to 65535"]),
            ("300.1.2.3:7460", ["not an IPv4 address"]),
            ("[studio]:7460", ["not an IPv6 address"]),
            ("bad_-host-:7460", ["not a host name"]),
        ]
        for (address, words) in cases {
            let result = try await daemon.cli("peers", "add", peer, "--address", address)
            #expect(result.status == 64, "\(address): \(result.errors)")
            for word in words { #expect(result.errors.contains(word), "\(address): \(result.errors)") }
            // The daemon refuses the same, in the same words.
            let body = try JSONSerialization.data(withJSONObject: ["id": peer, "address": address])
            let response = try daemon.client.request("POST", "/v1/peers", body: body)
            #expect(response.status == 400 && words.allSatisfy { response.errorMessage?.contains($0) == true }, "\(address)")
        }
        #expect((try daemon.client.get("/v1/peers").json as? [Any])?.isEmpty == true, "nothing was added")
        for good in ["studio-mac.local:7460", "192.168.1.20:7460", "[fe80::1%eth0]:7460", "[::1]:7460", "studio-mac.local.:7460"] {
            #expect(try await daemon.cli("peers", "add", peer, "--address", good).status == 0, "\(good)")
        }

        // The test environment turns discovery off: the route and the command say so.
        let off = try #require(try daemon.client.get("/v1/peers/discovered").json as? [String: Any])
        #expect(off["enabled"] as? Bool == false && (off["peers"] as? [Any])?.isEmpty == true)
        #expect(try await daemon.cli("peers", "discovered").output.contains("local discovery is off"))
    }

    @Test func theDiscoverySettingsAreCheckedAndShown() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let badPort = try DaemonProcess(arguments: ["--data-dir", home.path, "--discovery-port", "0"], environment: [:])
        defer { badPort.kill() }
        #expect(try await badPort.waitForExit() == 64)
        #expect(badPort.errors.contains("'discovery-port'") && badPort.errors.contains("1...65535"))
        let printed = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--no-discovery", "--discovery-port", "21100", "--print-config"], environment: [:])
        defer { printed.kill() }
        #expect(try await printed.waitForExit() == 0)
        #expect(printed.output.contains("discovery = false  # --no-discovery"))
        #expect(printed.output.contains("discovery-port = 21100  # --discovery-port"))
        let file = home.path + "/d.toml"
        try "discovery = \"yes\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let badFile = try DaemonProcess(arguments: ["--config", file], environment: [:])
        defer { badFile.kill() }
        #expect(try await badFile.waitForExit() == 78)
        #expect(badFile.errors.contains("d.toml:1: 'discovery'"))
    }
}

/// docs/openapi.json, parsed.
func openAPIDocument() throws -> [String: Any] {
    let data = try Data(contentsOf: repositoryRoot.appendingPathComponent("docs/openapi.json"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}
