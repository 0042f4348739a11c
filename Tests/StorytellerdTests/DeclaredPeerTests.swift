import Foundation
import StoryClient
import StoryCore
import StoryDaemon
import StoryIdentity
import StoryTestSupport
import Testing

/// `[[peer]]` tables in the config file: strict parsing with `FILE:LINE`
/// errors, `--print-config`, and the merge with peers added at run time.
@Suite(.daemons, .timeLimit(.minutes(15))) struct DeclaredPeerTests {
    static let bob = TestIdentities.identity(1).peerID
    static let carol = TestIdentities.identity(2).peerID

    @Test func peersAreReadWithTheirFieldsAndLines() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let parsed = try configSettings(
            """
            name = "studio"   # top-level keys first

            [[peer]]
            id = "\(Self.bob)"
            name = "bob"
            addresses = [
                "bob-laptop.local:7460",
                "[fd00::12]:7460",
                "bob-laptop.local:7460",
            ]
            auto-accept = false

            # lower case and without dashes is the same id
            [[peer]]
            "id" = "\(Self.carol.description.lowercased().replacingOccurrences(of: "-", with: ""))"
            """, in: home)
        #expect(parsed.name == "studio")
        let file = home.path + "/storytellerd.toml"
        #expect(
            parsed.peers == [
                DeclaredPeer(
                    id: Self.bob, name: "bob", addresses: ["bob-laptop.local:7460", "[fd00::12]:7460"], autoAccept: false, source: "\(file):3"),
                DeclaredPeer(id: Self.carol, source: "\(file):14"),
            ])
    }

    @Test(arguments: [
        // (file, words the error must contain)
        (
            "[[peer]]\nid = \"QCRP7LQ-7DQ2KPY-A5I4PGB-SEDLTCF-QT6QNXH-RVJR5AR-A4IOYWZ-TG7NPAB\"\n",
            [":2:", "'peer.id'", "not a peer id", "check characters"]
        ),
        ("[[peer]]\nname = \"bob\"\n", [":1:", "'peer'", "has no 'id'"]),
        ("[[peer]]\nid = 12\n", [":2:", "'peer.id'", "must be a string"]),
        (
            "[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\n\n[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\n",
            [":5:", "'peer.id'", "declared twice", "first at", ":1"]
        ),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\nadress = \"b:1\"\n", [":3:", "'peer.adress'", "not a key of a [[peer]] table", "addresses"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\naddresses = \"b.local:7460\"\n", [":3:", "'peer.addresses'", "must be a list"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\naddresses = [\"b.local\"]\n", [":3:", "'peer.addresses'", "\"b.local\"", "HOST:PORT"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\naddresses = [\"b.local:0\"]\n", [":3:", "'peer.addresses'", "1 to 65535"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\naddresses = [7460]\n", [":3:", "'peer.addresses'", "HOST:PORT"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\nname = \"\"\n", [":3:", "'peer.name'", "1 to 64 bytes"]),
        ("[[peer]]\nid = \"\(DeclaredPeerTests.bob)\"\nauto-accept = \"yes\"\n", [":3:", "'peer.auto-accept'", "true or false"]),
        ("peer = \"bob\"\n", [":1:", "'peer'", "must be [[peer]] tables"]),
        ("peer = [1, 2]\n", [":1:", "'peer'", "must be [[peer]] tables"]),
        ("[peer]\nid = \"\(DeclaredPeerTests.bob)\"\n", [":1:", "'peer'", "must be [[peer]] tables"]),
        ("[[peers]]\nid = \"\(DeclaredPeerTests.bob)\"\n", [":1:", "'peers'", "not a known key", "[[peer]]"]),
    ])
    func aBadPeerTableIsAnErrorNamingTheLineAndKey(file: String, words: [String]) throws {
        try expectConfigRefused(file, saying: words)
    }

    @Test func printConfigShowsDeclaredPeersWithTheirSourceAndReadsThemBack() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/storytellerd.toml"
        let first = try configSettings(
            "log-format = \"json\"\n\n[[peer]]\nid = \"\(Self.bob)\"\nname = \"b \\\"the\\\" one\"\naddresses = [\"b:1\", \"c:2\"]\nauto-accept = true\n",
            in: home)
        let paths = DaemonPaths(dataDirectory: home.path, socket: nil, environment: [:])
        let printed = first.effectiveConfiguration(paths: paths, name: "here")
        #expect(printed.contains("log-format = \"json\"  # \(file):1"))
        #expect(printed.contains("metrics-listen = \"\"  # default"))
        #expect(
            printed.hasSuffix(
                """

                [[peer]]  # \(file):3
                id = "\(Self.bob)"
                name = "b \\"the\\" one"
                addresses = ["b:1", "c:2"]
                auto-accept = true

                """), "\(printed)")
        let again = try configSettings(printed, in: home, name: "printed.toml")
        #expect(again.peers.map(\.id) == first.peers.map(\.id))
        #expect(again.peers.first?.name == "b \"the\" one" && again.peers.first?.addresses == ["b:1", "c:2"])
        #expect(again.peers.first?.autoAccept == true && again.logFormat == .json)
    }

    // MARK: - At start

    /// The peers the daemon lists: id → (name, address).
    private func listed(_ daemon: InProcessDaemon) async throws -> [String: (name: String?, address: String?)] {
        let peers = try #require(try await daemon.get("/v1/peers").json as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: peers.map { ($0["id"] as? String ?? "", ($0["name"] as? String, $0["address"] as? String)) })
    }

    @Test func declaredPeersAreMergedAtStartAndTheConfigWinsForTheFieldsItSets() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let closed = try freePort()  // nothing answers: the dialers fail fast
        let file = home.path + "/storytellerd.toml"
        let config = """
            [[peer]]
            id = "\(Self.bob)"
            name = "bob"
            addresses = ["127.0.0.1:\(closed)", "127.0.0.1:\(closed)"]

            [[peer]]
            id = "\(Self.carol)"
            auto-accept = true
            """
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        let first = try await InProcessDaemon.start(in: home) { try $0.apply(file: file) }
        var peers = try await listed(first)
        #expect(peers[Self.bob.description]?.name == "bob" && peers[Self.bob.description]?.address == "127.0.0.1:\(closed)")
        #expect(peers[Self.carol.description] != nil && peers[Self.carol.description]?.name == nil)
        let own = try #require(try await first.get("/v1/identity").json as? [String: Any])["peerID"] as? String
        // Changed at run time: bob removed, carol named and given an address.
        #expect(try await first.request("DELETE", "/v1/peers/\(Self.bob)").status == 200)
        let carol = #"{"id": "\#(Self.carol)", "name": "carol", "address": "127.0.0.1:\#(closed)"}"#
        #expect(try await first.post("/v1/peers", json: carol).status == 201)
        #expect(try await listed(first)[Self.bob.description] == nil)
        try await first.stop(keepingHome: true)

        // The same file, listing this daemon too (one file for a whole crew).
        try (config + "\n\n[[peer]]\nid = \"\(try #require(own))\"\nname = \"me\"\n").write(toFile: file, atomically: true, encoding: .utf8)
        let second = try await InProcessDaemon.start(in: home) { try $0.apply(file: file) }
        peers = try await listed(second)
        #expect(peers[Self.bob.description]?.name == "bob", "a declared peer removed at run time is back")
        #expect(peers[Self.carol.description]?.name == "carol", "fields the file does not set keep their run-time value")
        #expect(peers[Self.carol.description]?.address == "127.0.0.1:\(closed)")
        #expect(peers[own!] == nil, "this daemon's own id is skipped")
        try await second.stop()
    }

    /// Two daemons: a declares b with an address where nothing answers
    /// first and b's real one second, and does not take what b shares.
    @Test func aDeclaredPeerIsDialedAtItsNextAddressAndAutoAcceptIsPerPeer() async throws {
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let home = try TemporaryDirectory()
        let file = home.path + "/a.toml"
        let closed = try freePort()
        try """
        accept-shares = true

        [[peer]]
        id = "\(try b.peerID())"
        name = "bee"
        addresses = ["127.0.0.1:\(closed)", "127.0.0.1:\(try b.port())"]
        auto-accept = false
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let a = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        defer { a.stop() }
        // b knows a but has no address for it: only a dials, so the link is a's second address.
        #expect(try await b.cli("peers", "add", try a.peerID(), "--name", "a").status == 0)
        try await eventually("a reaches b at its second address") {
            (try a.client.get("/v1/status").json as? [String: Any])?["peersConnected"] as? Int == 1
        }
        let shown = try #require(try a.client.get("/v1/peers").json as? [[String: Any]])
        #expect(shown.first?["name"] as? String == "bee" && shown.first?["address"] as? String == "127.0.0.1:\(closed)")

        let project = try await b.cli("projects", "create", "Offered").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await b.cli("share", project, try a.peerID()).status == 0)
        try await a.daemon.waitForLog("kept for a user to accept")
        #expect(try a.client.get("/v1/projects/\(project)").status == 404, "auto-accept = false for b wins over accept-shares = true")
    }
}

/// The settings a config file with `text` gives (written to a file `name` in `home`).
func configSettings(_ text: String, in home: TemporaryDirectory, name: String = "storytellerd.toml") throws(ConfigError) -> DaemonSettings {
    let file = home.path + "/" + name
    try? text.write(toFile: file, atomically: true, encoding: .utf8)
    var settings = DaemonSettings()
    try settings.apply(file: file)
    return settings
}

/// A config file with `file` as its text is refused with an error at its
/// `FILE:LINE` that contains each of `words`.
func expectConfigRefused(_ file: String, saying words: [String]) throws {
    let home = try TemporaryDirectory()
    defer { home.remove() }
    do {
        _ = try configSettings(file, in: home)
        Issue.record("accepted: \(file)")
    } catch {
        for word in words { #expect(error.description.contains(word), "'\(word)' in \(error.description)") }
        #expect(error.description.hasPrefix(home.path + "/storytellerd.toml:"), "\(error.description)")
    }
}
