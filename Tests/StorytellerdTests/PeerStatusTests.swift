import Foundation
import StoryAPI
import StoryClient
import StoryTestSupport
import Testing

@testable import storyteller

/// `storyteller peers` says how each peer is, as `tailscale status` would:
/// connected (or idle) and how, offline since when, paused by you or by
/// them, under the name the peer announced even once it has gone.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct PeerStatusTests {
    /// The `peers` entry of `id` on `daemon`.
    private func peer(_ id: String, on daemon: StartedDaemon) async throws -> [String: Any] {
        try #require((try await daemon.json("peers") as? [[String: Any]])?.first { $0["id"] as? String == id })
    }

    /// The `storyteller peers` row of `id` on `daemon`.
    private func row(_ id: String, on daemon: StartedDaemon) async throws -> String {
        let output = try await daemon.cli("peers").output
        return try #require(output.split(separator: "\n").first { $0.hasPrefix(String(id.prefix(7))) }.map(String.init), "\(output)")
    }

    private func pairWithoutNames(_ a: StartedDaemon, _ b: StartedDaemon) async throws -> (aID: String, bID: String) {
        let (aID, bID) = (try a.peerID(), try b.peerID())
        #expect(try await a.cli("peers", "add", bID, "--address", "127.0.0.1:\(try b.port())").status == 0)
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())").status == 0)
        return (aID, bID)
    }

    @Test func theNameAPeerAnnouncedIsKeptWhenItGoesAndAcrossARestart() async throws {
        let a = try await StartedDaemon.start(name: "alice")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "bob")
        defer { b.stop() }
        let (_, bID) = try await pairWithoutNames(a, b)
        try await eventually("a is connected to b") { try await peer(bID, on: a)["connected"] as? Bool == true }
        #expect(try await peer(bID, on: a)["announcedName"] as? String == "bob")
        #expect(try await row(bID, on: a).contains(" bob "))

        #expect(try await b.daemon.terminate() == 0)
        try await eventually("a sees b gone") { try await peer(bID, on: a)["connected"] as? Bool == false }
        #expect(try await peer(bID, on: a)["announcedName"] as? String == "bob", "kept once it disconnected")
        let offline = try await row(bID, on: a)
        #expect(offline.contains(" bob ") && offline.contains("offline, last seen"), "\(offline)")

        #expect(try await a.daemon.terminate() == 0)
        let again = try await StartedDaemon.start(in: a.home, name: "alice")
        defer { again.daemon.kill() }
        #expect(try await peer(bID, on: again)["announcedName"] as? String == "bob", "kept across a restart")
        #expect(try await row(bID, on: again).contains(" bob "))
        // Commands take the announced name too.
        #expect(try await again.cli("peers", "pause", "bob").status == 0)
    }

    @Test func aPeerThatPausedUsIsPausedByThemUntilItResumes() async throws {
        let a = try await StartedDaemon.start(name: "alice")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "bob")
        defer { b.stop() }
        let (aID, bID) = try await pairWithoutNames(a, b)
        try await eventually("connected") { try await peer(bID, on: a)["connected"] as? Bool == true }
        #expect(try await peer(bID, on: a)["pausedByPeer"] as? Bool == false)

        #expect(try await b.cli("peers", "pause", aID).status == 0)
        try await eventually("a learns that b paused it") { try await peer(bID, on: a)["pausedByPeer"] as? Bool == true }
        let paused = try await peer(bID, on: a)
        #expect(paused["connected"] as? Bool == false && paused["paused"] as? Bool == false, "\(paused)")
        let pausedRow = try await row(bID, on: a)
        #expect(pausedRow.contains("paused by them"), "\(pausedRow)")
        #expect(try await row(aID, on: b).contains("paused by you"))

        #expect(try await b.cli("peers", "resume", aID).status == 0)
        try await eventually("connected again") { try await peer(bID, on: a)["connected"] as? Bool == true }
        #expect(try await peer(bID, on: a)["pausedByPeer"] as? Bool == false)
        let resumedRow = try await row(bID, on: a)
        #expect(resumedRow.contains("connected, "), "\(resumedRow)")
    }

    @Test func aQuietConnectionCountsItsIdleSecondsAndAChangeResetsThem() async throws {
        let a = try await StartedDaemon.start(name: "alice")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "bob")
        defer { b.stop() }
        let (_, bID) = try await pairWithoutNames(a, b)
        let project = try await a.cli("projects", "create", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has it") { try b.client.get("/v1/projects/\(project)").status == 200 }
        func idle() async throws -> Int? { (try await peer(bID, on: a)["connection"] as? [String: Any])?["idleSeconds"] as? Int }
        // Pings every 15 s do not count: only what the peer says beyond keepalives.
        try await eventually("quiet for 3 s", timeout: .seconds(30)) { (try await idle() ?? 0) >= 3 }
        #expect(try await b.cli("scenes", "add", project, "--title", "Dawn").status == 0)
        try await eventually("b's change ends the quiet") { (try await idle() ?? 99) < 3 }
    }

    /// How a row reads, for each state (the CLI's own wording).
    @Test func theStatusReadsLikeTailscaleStatus() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let seen = Int64((now.timeIntervalSince1970 - 3 * 3600) * 1000)
        func peer(connection: API.Peer.Connection? = nil, paused: Bool = false, pausedByPeer: Bool = false) -> API.Peer {
            API.Peer(
                id: "QCRP7LQ-7DQ2KPY-A5I4PGB-SEDLTCF-QT6QNXH-RVJR5AR-A4IOYWZ-TG7NPAO", name: "bob", address: "10.0.0.2:7460", state: "configured",
                connected: connection != nil, paused: paused, added: 0, lastSeen: seen, lastAddress: nil, connection: connection,
                pausedByPeer: pausedByPeer)
        }
        let busy = API.Peer.Connection(address: "10.0.0.2:7460", direction: "out", bytesSent: 2048, bytesReceived: 4096, idleSeconds: 5)
        #expect(Peers.status(of: peer(connection: busy), now: now).hasPrefix("connected, dialed 10.0.0.2:7460; "))
        let quiet = API.Peer.Connection(address: "10.0.0.2:7460", direction: "in", bytesSent: 0, bytesReceived: 0, idleSeconds: 600)
        #expect(
            Peers.status(of: peer(connection: quiet), now: now).hasPrefix(
                "idle (nothing to sync for 10 min), connected, they dialed from 10.0.0.2:7460"))
        #expect(Peers.status(of: peer(), now: now) == "offline, last seen 3 h ago")
        #expect(Peers.status(of: peer(pausedByPeer: true), now: now) == "paused by them, last seen 3 h ago")
        #expect(Peers.status(of: peer(paused: true), now: now) == "paused by you, last seen 3 h ago")
    }
}
