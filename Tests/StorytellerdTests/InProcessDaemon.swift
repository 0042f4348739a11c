import Foundation
import StoryClient
import StoryDaemon
import StoryStore
import StoryTestSupport
import Testing

/// A `Daemon` run in this test process (not the binary): its own data
/// directory and socket, loopback peers on a free port, no signal handlers.
/// `stop()` shuts it down gracefully and waits for the run to end.
struct InProcessDaemon {
    let home: TemporaryDirectory
    let daemon: Daemon
    let run: Task<Void, any Error>
    var socket: String { daemon.paths.socketPath }
    var client: ControlClient { ControlClient(path: socket) }

    static func start(clock: WallClock = .system) async throws -> InProcessDaemon {
        try await start(in: try TemporaryDirectory(), clock: clock)
    }

    /// Starts (again) in `home`, with `configure` adding settings (a config file, `metrics-listen` …).
    static func start(
        in home: TemporaryDirectory, clock: WallClock = .system, configure: (inout DaemonSettings) throws -> Void = { _ in }
    ) async throws -> InProcessDaemon {
        var settings = DaemonSettings()
        // Off unless the test turns it on (tests keep to loopback).
        try settings.set("discovery", to: "false", source: "test")
        try configure(&settings)
        try settings.set("data-dir", to: home.path, source: "test")
        try settings.set("listen", to: "127.0.0.1:0", source: "test")
        if settings.name == nil { try settings.set("name", to: "in-process", source: "test") }
        let daemon = Daemon(settings: settings, environment: TestEnvironment.make(), clock: clock, signals: [])
        let run = Task { try await daemon.run() }
        await daemon.waitUntilReady()
        // Readiness also comes when the run failed: then its error is the
        // one to report, not a missing socket at the first request.
        guard FileManager.default.fileExists(atPath: daemon.paths.socketPath) else {
            try await run.value
            throw NotStarted(socket: daemon.paths.socketPath)
        }
        return InProcessDaemon(home: home, daemon: daemon, run: run)
    }

    /// The run ended without an error before its control socket existed.
    struct NotStarted: Error, CustomStringConvertible {
        let socket: String
        var description: String { "the daemon stopped before it served \(socket)" }
    }

    /// A request to the daemon, made on a thread of its own: the client
    /// blocks, and blocking the cooperative pool would stall the daemon that
    /// runs on it in this same process.
    func request(_ method: String, _ target: String, json: String? = nil) async throws -> ControlClient.Response {
        let client = self.client
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try client.request(method, target, body: json.map { Data($0.utf8) }) })
            }
        }
    }

    func get(_ target: String) async throws -> ControlClient.Response { try await request("GET", target) }

    func post(_ target: String, json: String) async throws -> ControlClient.Response { try await request("POST", target, json: json) }

    /// Shuts the daemon down and removes its directory (unless `keepingHome`, for a restart).
    func stop(keepingHome: Bool = false) async throws {
        await daemon.shutdown()
        defer { if !keepingHome { home.remove() } }
        try await run.value
    }

    /// The routes a daemon serves (`GET projects/{}`).
    static func routes() async throws -> Set<String> {
        let started = try await start()
        let routes = started.daemon.routes
        try await started.stop()
        return routes
    }
}
