import Foundation
import StoryAPI
import StoryClient
import StoryCore
import StoryDaemon
import StoryIdentity
import StoryTestSupport
import Testing

/// `[[share]]` tables in the config file: strict parsing with `FILE:LINE`
/// errors, `--print-config`, and shares made once at start (a run-time
/// unshare holds; a changed table is made again).
@Suite(.daemons, .timeLimit(.minutes(15))) struct DeclaredShareTests {
    static let bob = TestIdentities.identity(1).peerID
    static let carol = TestIdentities.identity(2).peerID

    @Test func sharesAreReadWithTheirPeerByIdOrByTheNameOfADeclaredPeer() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        // A share may come before the [[peer]] whose name it gives.
        let parsed = try configSettings(
            """
            name = "studio"

            [[share]]
            path = "Films/Night Train"
            peer = "bob"
            read-only = true

            [[peer]]
            id = "\(Self.bob)"
            name = "bob"

            [[share]]
            path = "library"
            peer = "\(Self.carol.description.lowercased())"
            """, in: home)
        let file = home.path + "/storytellerd.toml"
        #expect(
            parsed.shares == [
                DeclaredShare(path: "Films/Night Train", peer: Self.bob, peerName: "bob", isReadOnly: true, source: "\(file):3"),
                DeclaredShare(path: "library", peer: Self.carol, source: "\(file):12"),
            ])
    }

    @Test(arguments: [
        ("[[share]]\npeer = \"\(DeclaredShareTests.bob)\"\n", [":1:", "'share'", "has no 'path'"]),
        ("[[share]]\npath = \"\"\npeer = \"\(DeclaredShareTests.bob)\"\n", [":2:", "'share.path'", "\"library\""]),
        ("[[share]]\npath = 3\npeer = \"\(DeclaredShareTests.bob)\"\n", [":2:", "'share.path'"]),
        ("[[share]]\npath = \"Films\"\n", [":1:", "'share'", "has no 'peer'"]),
        ("[[share]]\npath = \"Films\"\npeer = \"dave\"\n", [":3:", "'share.peer'", "'dave' is neither a peer id nor the name of a [[peer]]"]),
        ("[[share]]\npath = \"Films\"\npeer = 7\n", [":3:", "'share.peer'", "must be a string"]),
        ("[[share]]\npath = \"Films\"\npeer = \"\(DeclaredShareTests.bob)\"\nread-only = \"yes\"\n", [":4:", "'share.read-only'", "true or false"]),
        (
            "[[share]]\npath = \"Films\"\npeer = \"\(DeclaredShareTests.bob)\"\nreadonly = true\n",
            [":4:", "'share.readonly'", "not a key of a [[share]] table", "read-only"]
        ),
        (
            "[[share]]\npath = \"Films\"\npeer = \"\(DeclaredShareTests.bob)\"\n\n[[share]]\npath = \"Films\"\npeer = \"\(DeclaredShareTests.bob)\"\n",
            [":5:", "again", "first at"]
        ),
        ("share = \"Films\"\n", [":1:", "'share'", "must be [[share]] tables"]),
        ("[[shares]]\npath = \"Films\"\n", [":1:", "'shares'", "not a known key", "[[share]]"]),
    ])
    func aBadShareTableIsAnErrorNamingTheLineAndKey(file: String, words: [String]) throws {
        try expectConfigRefused(file, saying: words)
    }

    @Test func printConfigShowsDeclaredSharesWithTheirSourceAndReadsThemBack() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/storytellerd.toml"
        try """
        [[peer]]
        id = "\(Self.bob)"
        name = "bob"

        [[share]]
        path = "Films/\\"Quoted\\" Night"
        peer = "bob"
        read-only = true
        """.write(toFile: file, atomically: true, encoding: .utf8)
        // The binary, as an administrator would check a file.
        let daemon = try DaemonProcess(arguments: ["--config", file, "--data-dir", home.path + "/state", "--print-config"], environment: [:])
        defer { daemon.kill() }
        #expect(try await daemon.waitForExit() == 0, "\(daemon.errors)")
        let printed = daemon.output
        #expect(
            printed.hasSuffix(
                """

                [[share]]  # \(file):5
                path = "Films/\\"Quoted\\" Night"
                peer = "\(Self.bob)"  # bob
                read-only = true

                """), "\(printed)")
        let again = try configSettings(printed, in: home, name: "printed.toml")
        #expect(again.shares.map(\.path) == ["Films/\"Quoted\" Night"] && again.shares.first?.peer == Self.bob)
        #expect(again.shares.first?.isReadOnly == true)

        // A wrong key is the usual config error: the file, the line, the key; exit 78.
        try "[[share]]\npath = \"Films\"\npeer = \"\(Self.bob)\"\nmode = \"read-only\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try DaemonProcess(arguments: ["--config", file, "--data-dir", home.path + "/state"], environment: [:])
        defer { bad.kill() }
        #expect(try await bad.waitForExit() == 78)
        #expect(bad.errors.contains("\(file):4: 'share.mode' is not a key of a [[share]] table"), "\(bad.errors)")
    }

    /// The rows of `storyteller shares list`, as (what, with whom, rights).
    private func shares(_ daemon: StartedDaemon) async throws -> [[String]] {
        let output = try await daemon.cli("shares", "list").output
        return output.split(separator: "\n").dropFirst().map { line in
            line.split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    @Test func aDeclaredShareIsMadeOnceAtStartAndARunTimeUnshareHolds() async throws {
        let home = try TemporaryDirectory()
        let closed = try freePort()  // nothing answers there: the peer stays offline
        let file = home.path + "/storytellerd.toml"
        func write(readOnly: Bool) throws {
            try """
            [[peer]]
            id = "\(Self.bob)"
            name = "bob"
            addresses = ["127.0.0.1:\(closed)"]

            [[share]]
            path = "Films/Night Train"
            peer = "bob"
            read-only = \(readOnly)

            [[share]]
            path = "Shorts"
            peer = "\(Self.bob)"

            [[share]]
            path = "Not Yet"
            peer = "bob"
            """.write(toFile: file, atomically: true, encoding: .utf8)
        }
        try write(readOnly: true)
        // First start: the folders and the project do not exist yet; nothing is shared, and the daemon says why.
        var daemon = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        defer { daemon.stop() }
        try await daemon.daemon.waitForLog("cannot share 'Films/Night Train' with bob (\(Self.bob.short)) yet: no project or folder is at that path")
        #expect(try await shares(daemon).isEmpty)
        #expect(try await daemon.cli("folders", "create", "Films").status == 0)
        #expect(try await daemon.cli("folders", "create", "Shorts").status == 0)
        #expect(try await daemon.cli("projects", "create", "Night Train", "--folder", "Films").status == 0)
        #expect(try await daemon.daemon.terminate() == 0)

        // Next start: both are shared, as declared.
        daemon = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        try await daemon.daemon.waitForLog("shared 'Films/Night Train' with bob (\(Self.bob.short)) (read-only), as declared")
        var listed = try await shares(daemon)
        #expect(listed.contains { $0.starts(with: ["Films/Night Train", "bob", "read-only"]) }, "\(listed)")
        #expect(listed.contains { $0.starts(with: ["Shorts/", "bob", "read-write"]) }, "\(listed)")
        #expect(daemon.daemon.errors.contains("cannot share 'Not Yet' with bob"), "one still missing is said again")

        // Unshared at run time: that holds over restarts.
        #expect(try await daemon.cli("unshare", "Films/Night Train", "bob").status == 0)
        #expect(try await daemon.daemon.terminate() == 0)
        daemon = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        listed = try await shares(daemon)
        #expect(!listed.contains { $0.first == "Films/Night Train" }, "the run-time unshare holds: \(listed)")
        #expect(listed.contains { $0.starts(with: ["Shorts/", "bob"]) })
        #expect(!daemon.daemon.errors.contains("shared 'Films/Night Train'"))

        // The table changed (read-write now): made again at the next start.
        try write(readOnly: false)
        #expect(try await daemon.daemon.terminate() == 0)
        daemon = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        try await daemon.daemon.waitForLog("shared 'Films/Night Train' with bob (\(Self.bob.short)) (read-write), as declared")
        listed = try await shares(daemon)
        #expect(listed.contains { $0.starts(with: ["Films/Night Train", "bob", "read-write", "direct"]) }, "\(listed)")
    }

    /// Two daemons: a's config shares a project with b by name; b, which
    /// knows a, receives it without anyone running `storyteller share`.
    @Test func aDeclaredShareReachesThePeer() async throws {
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let home = try TemporaryDirectory()
        let seed = try await StartedDaemon.start(in: home, name: "a")
        let project = try await seed.cli("projects", "create", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let aID = try seed.peerID()
        #expect(try await seed.daemon.terminate() == 0)
        let file = home.path + "/a.toml"
        try """
        [[peer]]
        id = "\(try b.peerID())"
        name = "bee"
        addresses = ["127.0.0.1:\(try b.port())"]

        [[share]]
        path = "Harbour"
        peer = "bee"
        """.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await b.cli("peers", "add", aID, "--name", "a").status == 0)
        // Added by its id alone, a counts as discovered: b takes its shares once told to.
        #expect(try await b.cli("peers", "set", "a", "--auto-accept", "on").status == 0)
        let a = try await StartedDaemon.start(in: home, name: "a", ["--config", file])
        defer { a.stop() }
        try await eventually("b has the project a's config shares") { try b.client.get("/v1/projects/\(project)").status == 200 }
    }
}
