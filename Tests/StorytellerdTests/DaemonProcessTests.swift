import Foundation
import StoryCore
import StoryIdentity
import StoryStore
import StoryTLS
import StoryTestSupport
import Testing

/// The built `storytellerd` binary, started as a real process on loopback.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct DaemonProcessTests {
    /// Test daemons die with the run that started them (issue 37): 54 were
    /// left running for half an hour after a test process crashed. With
    /// `--stop-with-stdin` a daemon stops, cleanly, when its standard input
    /// closes: when its parent goes, whichever way.
    @Test func aDaemonStopsCleanlyWhenItsParentGoes() async throws {
        let home = try TemporaryDirectory()
        let daemon = try DaemonProcess(arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        daemon.dropLifeline()
        #expect(try await daemon.waitForExit(timeout: .seconds(30)) == 0)
        #expect(daemon.errors.contains("standard input closed (--stop-with-stdin): stopping") && daemon.errors.contains("stopped"))
        #expect(!FileManager.default.fileExists(atPath: home.path + "/control.sock"), "the socket went with it")
    }

    @Test func startsWithEmbeddedDefaultsAndStopsOnSIGTERM() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try FileManager.default.createDirectory(atPath: home.path + "/run", withIntermediateDirectories: true)
        let environment = ["HOME": home.path, "XDG_DATA_HOME": home.path + "/xdg", "XDG_RUNTIME_DIR": home.path + "/run"]
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        let state = home.path + "/xdg/storyteller"
        #expect(daemon.output.contains("state:      \(state)"))
        // A desktop session's socket is in the runtime directory, where the CLI looks with no flags.
        #expect(daemon.output.contains("control:    \(home.path)/run/storyteller/control.sock"))
        let status = try await storyteller(["status"], environment: environment)
        #expect(status.status == 0 && status.output.contains(peerLine(daemon)), "the CLI finds the daemon with no flags: \(status)")
        let peerID = try #require(PeerID(peerLine(daemon)), "the printed peer id parses")
        for file in ["identity/key.pem", "identity/cert.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: state + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file) is private")
        }
        #expect(FileManager.default.fileExists(atPath: state + "/storyteller.sqlite"))
        #expect(try await daemon.terminate() == 0)
        #expect(daemon.errors.contains("shutting down") && daemon.errors.contains("stopped"))

        // A second start keeps the identity.
        let again = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { again.kill() }
        try await again.waitForLog("ready")
        #expect(again.output.contains(peerID.description))
        #expect(try await again.terminate(signal: SIGINT) == 0)
    }

    /// The peer id a daemon printed at start.
    func peerLine(_ daemon: DaemonProcess) -> String {
        String(daemon.output.split(separator: "\n").first { $0.contains("peer id:") }?.split(separator: " ").last ?? "")
    }

    /// A daemon given only a data directory keeps its socket in it, whatever
    /// the session's runtime directory: two such daemons never collide.
    @Test func aDataDirectoryKeepsItsOwnSocket() async throws {
        let (first, second) = (try TemporaryDirectory(), try TemporaryDirectory())
        defer {
            first.remove()
            second.remove()
        }
        var daemons: [DaemonProcess] = []
        defer { for daemon in daemons { daemon.kill() } }
        for home in [first, second] {
            let daemon = try DaemonProcess(arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: [:])
            daemons.append(daemon)
            try await daemon.waitForLog("ready")
            #expect(daemon.output.contains("control:    \(home.path)/control.sock"))
            let id = try await storyteller(["id", "--socket", home.path + "/control.sock"])
            #expect(id.status == 0 && id.output.contains(peerLine(daemon)))
        }
        for daemon in daemons { #expect(try await daemon.terminate() == 0) }
    }

    @Test func badFlagsAreUsageErrors() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        for (arguments, named) in [
            (["--log-level", "loud"], "--log-level"), (["--listen", "nowhere"], "--listen"), (["--colour", "red"], "--colour"),
        ] {
            let daemon = try DaemonProcess(arguments: ["--data-dir", home.path] + arguments, environment: [:])
            defer { daemon.kill() }
            #expect(try await daemon.waitForExit() == 64, "\(arguments)")
            #expect(daemon.errors.contains(named), "the error names \(named): \(daemon.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.path + "/storyteller.sqlite"), "nothing was created")
    }

    @Test func aTakenPortIsAClearStartupError() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let first = try DaemonProcess(arguments: ["--data-dir", home.path + "/a", "--listen", "127.0.0.1:0"], environment: [:])
        defer { first.kill() }
        let port = try await first.waitForPort()
        let second = try DaemonProcess(
            arguments: ["--data-dir", home.path + "/b", "--listen", "127.0.0.1:\(port)"], environment: [:])
        defer { second.kill() }
        #expect(try await second.waitForExit() == 1)
        #expect(second.errors.contains("is in use on 127.0.0.1 (another storytellerd?"), "\(second.errors)")
        #expect(!second.errors.contains("bind(descriptor"), "no NIO function signatures in the message")
        #expect(try await first.terminate() == 0, "the first daemon was not disturbed")
    }

    /// Two daemons whose stores were paired beforehand: a project shared by A
    /// arrives at B over TLS, survives a graceful stop and a restart.
    @Test func twoDaemonsSyncASharedProject() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let (a, b) = (home.path + "/a", home.path + "/b")
        let idA = try Identity.loadOrCreate(in: a + "/identity").peerID
        let idB = try Identity.loadOrCreate(in: b + "/identity").peerID
        let (portA, portB) = (try freePort(), try freePort())
        let project: DocumentID
        let expected: VersionVector
        let expectedView: ProjectView
        do {
            let storeA = try Store(path: a + "/storyteller.sqlite", identity: try TestIdentities.signing(in: a + "/identity"))
            let storeB = try Store(path: b + "/storyteller.sqlite", identity: try TestIdentities.signing(in: b + "/identity"))
            try await storeA.addPeer(idB, name: "b", address: "127.0.0.1:\(portB)", at: 1)
            try await storeB.addPeer(idA, name: "a", address: "127.0.0.1:\(portA)", at: 1)
            project = try await storeA.createDocument(kind: .project, name: "Night Train", at: 1)
            _ = try await storeA.editProject(project, at: 2) { editor in
                let scene = try editor.insertScene(at: 0)
                let shot = try editor.insertShot(in: scene, at: 0)
                let layer = try editor.insertLayer(in: shot, at: 0)
                for seed in 0..<25 {
                    _ = try editor.addStroke(
                        to: layer, brush: Brush(),
                        points: (0..<80).map { Point(x: Double($0), y: Double(seed), pressure: 0.5) })
                }
            }
            try await storeA.share(project, with: idB, role: .editor, at: 3)
            expected = try await storeA.version(of: project)
            expectedView = try await storeA.project(project).view
            #expect(expectedView.scenes.first?.shots.first?.layers.first?.strokes.count == 25)
        }
        let daemonA = try DaemonProcess(arguments: ["--data-dir", a, "--listen", "127.0.0.1:\(portA)", "--name", "a"], environment: [:])
        defer { daemonA.kill() }
        let daemonB = try DaemonProcess(arguments: ["--data-dir", b, "--listen", "127.0.0.1:\(portB)", "--name", "b"], environment: [:])
        defer { daemonB.kill() }
        try await daemonA.waitForLog("ready")
        try await daemonB.waitForLog("ready")
        try await daemonB.waitForLog("took project \(project)")
        // Read B's database beside the running daemon (WAL) until it holds A's version.
        var synced = false
        for _ in 0..<120 where !synced {
            let reader = try Store(path: b + "/storyteller.sqlite", identity: try TestIdentities.signing(in: b + "/identity"))
            synced = (try? await reader.version(of: project)) == expected
            if !synced { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(synced, "B holds everything A drew")
        if !synced {
            let reader = try Store(path: b + "/storyteller.sqlite", identity: try TestIdentities.signing(in: b + "/identity"))
            print("B has \(String(describing: try? await reader.version(of: project))), expected \(expected)")
            print("A:\n\(daemonA.errors)\nB:\n\(daemonB.errors)")
        }
        #expect(try await daemonB.terminate() == 0)
        #expect(try await daemonA.terminate() == 0)

        let reopened = try Store(path: b + "/storyteller.sqlite", identity: try TestIdentities.signing(in: b + "/identity"))
        #expect(try await reopened.version(of: project) == expected)
        #expect(try await reopened.project(project).view == expectedView, "nothing drawn was lost")
        #expect(try await reopened.members(of: project).first { $0.peer == idA }?.role == .owner)
        #expect(try await reopened.localRole(of: project) == .editor)
    }
}
