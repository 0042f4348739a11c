import Foundation
import Testing

/// Runs the built `storyteller` CLI; its exit status, stdout and stderr.
func storyteller(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent("storyteller")
    process.arguments = arguments
    var base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STORYTELLER_") }
    base.merge(environment) { $1 }
    process.environment = base
    let (out, err) = (Pipe(), Pipe())
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
}

@Suite(.serialized) struct CLITests {
    static let otherPeer = "YBB5GOE-GQ5FJ33-5EEN22A-XE43GRK-VDMGR2H-3HRCQFX-DSTMRI6-ZPZJYQP"

    @Test func everyCommandAgainstARealDaemon() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let socket = home.path + "/control.sock"
        let daemon = try DaemonProcess(arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        func run(_ arguments: String...) throws -> (status: Int32, output: String, errors: String) {
            try storyteller(arguments + ["--socket", socket])
        }

        let id = try run("id")
        #expect(id.status == 0)
        let peerID = id.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(daemon.output.contains("peer id:    \(peerID)"))
        let idJSON = try #require(try JSONSerialization.jsonObject(with: Data(try run("id", "--json").output.utf8)) as? [String: Any])
        #expect(idJSON["peerID"] as? String == peerID)

        let status = try run("status")
        #expect(status.status == 0 && status.output.contains("peers connected:  0"))

        let created = try run("projects", "create", "Night Train")
        #expect(created.status == 0)
        let project = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!project.isEmpty)
        let createdJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(try run("projects", "create", "Second", "--json").output.utf8)) as? [String: Any])
        #expect(createdJSON["id"] is String, "creating prints the new object with its id")
        let list = try run("projects", "list")
        #expect(list.output.hasPrefix("ID"), "a table with a header (no colour when not a TTY)")
        #expect(!list.output.contains("\u{1B}["))
        #expect(list.output.contains(project) && list.output.contains("Night Train"))
        let shown = try #require(
            try JSONSerialization.jsonObject(with: Data(try run("projects", "show", project, "--json").output.utf8)) as? [String: Any])
        #expect(shown["title"] as? String == "Night Train")
        #expect(try run("projects", "show", project).output.contains("Night Train"))

        #expect(try run("peers", "add", Self.otherPeer, "--address", "127.0.0.1:9", "--name", "b").status == 0)
        let peers = try run("peers", "list")
        #expect(peers.output.contains(Self.otherPeer) && peers.output.contains("127.0.0.1:9") && peers.output.contains("configured"))
        #expect(try run("peers", "pending").status == 0)
        #expect(try run("share", project, Self.otherPeer, "--read-only").output.contains("read-only"))
        #expect(try run("unshare", project, Self.otherPeer).status == 0)
        #expect(try run("peers", "remove", Self.otherPeer).status == 0)
        #expect(!(try run("peers", "list").output.contains(Self.otherPeer)))
        #expect(try run("projects", "delete", project).status == 0)
        #expect(!(try run("projects", "list").output.contains(project)))
        #expect(try run("projects", "list", "--deleted").output.contains(project))
        #expect(try run("projects", "restore", project).status == 0)

        // The daemon's refusals: message and exit 1.
        let badPeer = try run("peers", "add", "NOT-A-PEER")
        #expect(badPeer.status == 1)
        #expect(badPeer.errors.contains("not a peer id"))
        let noProject = try run("projects", "show", "00000000000000000000000000000001")
        #expect(noProject.status == 1 && noProject.errors.contains("no project"))
        // Bad arguments: exit 64 from the argument parser.
        #expect(try run("share", project).status == 64)
        #expect(try await daemon.terminate() == 0)

        // No daemon: a clear message and exit 69.
        let down = try run("status")
        #expect(down.status == 69)
        #expect(down.errors.contains("is storytellerd running?"))
    }

    @Test func theDefaultSocketIsTheDaemons() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let environment = ["HOME": home.path, "XDG_RUNTIME_DIR": home.path + "/run"]
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(daemon.output.contains("control:    \(home.path)/run/storyteller/control.sock"))
        let id = try storyteller(["id"], environment: environment)
        #expect(id.status == 0, "\(id.errors)")
        #expect(daemon.output.contains(id.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await daemon.terminate() == 0)
    }
}
