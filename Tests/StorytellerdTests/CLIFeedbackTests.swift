import Foundation
import StoryAPI
import StoryClient
import StoryTestSupport
import Testing

/// What the CLI tells a person beyond the data (issue 12, "Honest
/// feedback"): a daemon of another version, who did what (a peer's name, not
/// a replica id), and progress on a terminal only.
@Suite(.daemons, .timeLimit(.minutes(15))) struct CLIFeedbackTests {
    @Test func versionWarnsWhenTheDaemonIsAnotherVersion() async throws {
        let older = try FakeControlSocket(answering: #"{"version": "0.10.2", "api": "v1"}"#)
        defer { older.stop() }
        let result = try await storyteller(["version", "--socket", older.path])
        #expect(result.status == 0, "a warning, not a failure: \(result.errors)")
        #expect(result.output == "storyteller   \(API.version)\nstorytellerd  0.10.2 (API v1)\n", "\(result.output)")
        #expect(
            result.errors.contains("the daemon is 0.10.2 and this CLI \(API.version): install the same version of both"), "\(result.errors)")
        #expect(older.requestLines.contains { $0.hasPrefix("GET /v1/version ") }, "\(older.requestLines)")
        let json = try await storyteller(["version", "--json", "--socket", older.path])
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(answer["cli"] as? String == API.version && answer["daemon"] as? String == "0.10.2")
        #expect(json.errors.contains("install the same version of both"), "the warning goes to stderr with --json too")

        // The same version: no warning.
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let same = try await started.cli("version")
        #expect(same.status == 0 && same.output.contains("storytellerd  \(API.version) (API v1)") && same.errors.isEmpty, "\(same)")
    }

    /// Two daemons: a knows b only by its id (b announces the name "bob");
    /// what b draws is "bob drew 1 stroke in Night Train › 1-1" in a's
    /// `watch`, and bob in a's `history`.
    @Test func watchAndHistoryNameTheRemotePeerByTheNameItAnnounced() async throws {
        let a = try await StartedDaemon.start(name: "alice")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "bob")
        defer { b.stop() }
        let (aID, bID) = (try a.peerID(), try b.peerID())
        #expect(try await a.cli("peers", "add", bID, "--address", "127.0.0.1:\(try b.port())").status == 0, "no --name: the announced one is used")
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())").status == 0)
        func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", daemon.socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let project = try await ok(a, "projects", "create", "Night Train")
        let scene = try await ok(a, "scenes", "add", project, "--title", "Platform")
        let shot = try await ok(a, "shots", "add", project, scene)
        let layer = try await ok(a, "layers", "add", project, shot, "--name", "ink")
        _ = try await ok(a, "share", project, bID)
        try await eventually("b has the layer") {
            guard try b.client.get("/v1/projects/\(project)").status == 200 else { return false }
            return try await ok(b, "layers", "list", project, "1-1").contains("ink")
        }
        try await eventually("a knows b's name") { try await ok(a, "peers").contains("bob") }

        let watch = try CLIProcess(["watch", "--project", project, "--socket", a.socket], keepingErrors: false)
        defer { watch.kill() }
        // An edit made here shows the stream is live ("you …"); one made before it subscribed is not in it.
        try await eventually("the watch is live", timeout: .seconds(30)) {
            if watch.output.contains("you ") { return true }
            _ = try await ok(a, "scenes", "add", project, "--title", "Tunnel")
            try await Task.sleep(for: .milliseconds(200))
            return watch.output.contains("you ")
        }
        _ = try await ok(b, "strokes", "add", project, layer, "--points", "[0.1, 0.2, 0.5, 0.3, 0.4, 0.6]")
        try await eventually("a's watch says what bob did") { watch.output.contains("bob drew 1 stroke in Night Train › 1-1") }
        #expect(!watch.output.contains(String(bID.prefix(7))), "no id where a name is known: \(watch.output)")

        let history = try await ok(a, "history", project)
        let row = try #require(history.split(separator: "\n").first { $0.contains("drew 1 stroke") }, "\(history)")
        #expect(row.contains("  bob  ") && row.contains("1-1"), "\(row)")
        let own = try #require(history.split(separator: "\n").first { $0.contains("added 1 layer") || $0.contains("added layer") }, "\(history)")
        #expect(own.contains("  you  "), "a's own edits are 'you': \(own)")
        let changes = try await ok(a, "history", project, "--changes")
        #expect(changes.split(separator: "\n").contains { $0.contains("bob") && $0.contains("drew 1 stroke") }, "\(changes)")
    }

    /// `storyteller backup` under a pseudo-terminal (`script`) shows its
    /// progress on stderr, redrawn in place; piped, it shows none.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux"))
    func backupShowsProgressOnATerminalOnly() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        #expect(try await started.cli("projects", "create", "Night Train").status == 0)
        let binary = productsDirectory.appendingPathComponent("storyteller").path
        let file = started.home.path + "/copy.sqlite"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        // -e: its status; -f: flush; -q: no "Script started"; the log to /dev/null.
        process.arguments = ["-qefc", "\(binary) backup \(file) --socket \(started.socket)", "/dev/null"]
        process.environment = TestEnvironment.make()
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let terminal = try await offThePool { String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(terminal)")
        #expect(terminal.contains("\r\u{1B}[Kthe daemon is making a consistent copy of the database…"), "\(terminal.debugDescription)")
        #expect(terminal.contains("\r\u{1B}[Kreceiving ") && terminal.contains("(100 %) → \(file)"), "\(terminal.debugDescription)")
        #expect(terminal.contains("wrote \(file) ("), "\(terminal.debugDescription)")
        #expect(FileManager.default.fileExists(atPath: file))

        let piped = try await started.cli("backup", started.home.path + "/piped.sqlite")
        #expect(piped.status == 0 && piped.errors.isEmpty, "no progress when stderr is not a terminal: \(piped.errors.debugDescription)")
    }
}
