import Foundation
import StoryClient
import StoryDaemon
import StoryStore
import Testing

/// The daemon as a library: run in this process, driven over its socket,
/// with the one clock it reads set by the test.
@Suite struct InProcessDaemonTests {
    @Test func everyTimeTheDaemonWritesComesFromItsInjectedClock() async throws {
        let clock = ManualWallClock(milliseconds: 1_700_000_000_000)
        let started = try await InProcessDaemon.start(clock: clock.clock)
        let created = try await started.post("/v1/projects", json: #"{"name": "Harbour"}"#)
        #expect(created.status == 201)
        let project = try #require((created.json as? [String: Any])?["id"] as? String)
        #expect((created.json as? [String: Any])?["createdAt"] as? Int64 == 1_700_000_000_000)

        clock.advance(by: 90_000)
        #expect(try await started.post("/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"scene.add","title":"Dawn"}]}"#).status == 200)
        let history = try #require(try await started.get("/v1/projects/\(project)/history").json as? [String: Any])
        let times = (history["changes"] as? [[String: Any]] ?? []).compactMap { $0["time"] as? Int64 }
        #expect(times.first == 1_700_000_090_000, "the newest change has the clock's time: \(times)")
        #expect(times.allSatisfy { $0 == 1_700_000_000_000 || $0 == 1_700_000_090_000 }, "\(times)")
        let shown = try #require(try await started.get("/v1/projects/\(project)").json as? [String: Any])
        #expect(shown["updatedAt"] as? Int64 == 1_700_000_090_000)
        let peers = try await started.post(
            "/v1/peers", json: #"{"id":"\#(ControlAPITests.otherPeer)","name":"b","address":"127.0.0.1:9"}"#)
        #expect((peers.json as? [String: Any])?["added"] as? Int64 == 1_700_000_090_000)
        try await started.stop()
        #expect(!FileManager.default.fileExists(atPath: started.socket), "the socket goes with the daemon")
    }

    @Test func aDaemonInProcessServesAndShutsDownGracefully() async throws {
        let started = try await InProcessDaemon.start()
        let status = try #require(try await started.get("/v1/status").json as? [String: Any])
        #expect(status["name"] as? String == "in-process")
        #expect((status["listenPort"] as? Int ?? 0) > 0, "ready means peers can connect")
        #expect(started.daemon.routes.contains("GET projects/{}"))
        try await started.stop()
        await #expect(throws: ControlClient.Failure.self) { try await started.get("/v1/status") }
    }
}
