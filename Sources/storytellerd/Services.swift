import Foundation
import Logging
import ServiceLifecycle
import StoryStore
import StorySync

// The daemon's services, run by one `ServiceGroup` in this order. On SIGTERM
// or SIGINT the group shuts them down gracefully in reverse order, each after
// the one before it has returned: tell systemd, stop maintenance, stop
// accepting control requests (and end event streams), say Goodbye to every
// peer after the batch in flight, then snapshot and close the store.

/// The store: at shutdown, snapshots what is due so the next start is quick.
struct StoreService: Service, CustomStringConvertible {
    let store: Store
    let logger: Logger
    var description: String { "store" }

    func run() async throws {
        try? await gracefulShutdown()
        // An hour from now every changed document is idle long enough: all are due.
        await snapshotDueDocuments(of: store, now: .now + .seconds(3_600), logger: logger)
    }
}

/// The peer listener and the dialers.
struct PeerService: Service, CustomStringConvertible {
    let manager: PeerManager
    let address: ListenAddress
    var description: String { "peers" }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await manager.run(host: address.host, port: address.port)
        } onGracefulShutdown: {
            Task { await manager.shutdown(timeout: .seconds(5)) }
        }
    }
}

/// The control API on the Unix socket.
struct ControlService: Service, CustomStringConvertible {
    let server: ControlServer
    var description: String { "control" }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await server.run()
        } onGracefulShutdown: {
            Task { await server.close() }
        }
    }
}

/// Periodic snapshots and compaction.
struct MaintenanceService: Service, CustomStringConvertible {
    let store: Store
    let interval: Int
    let logger: Logger
    var description: String { "maintenance" }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Ends the sleep early (with an error) on shutdown.
            guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: .seconds(interval)) })) != nil else { return }
            await snapshotDueDocuments(of: store, now: .now, logger: logger)
        }
    }
}

/// Snapshots (and compacts) the documents due at `now`; failures are logged.
private func snapshotDueDocuments(of store: Store, now: ContinuousClock.Instant, logger: Logger) async {
    do {
        let done = try await store.runMaintenance(at: millisecondsSinceEpoch(), now: now)
        if !done.isEmpty { logger.debug("snapshotted \(done.count) document(s)") }
    } catch {
        logger.error("snapshot and compaction failed: \(error)")
    }
}

/// Tells systemd READY=1 once peers can connect, and STOPPING=1 when the
/// shutdown starts (it is the first service to be shut down).
struct ReadinessService: Service, CustomStringConvertible {
    let manager: PeerManager
    let logger: Logger
    var description: String { "readiness" }

    func run() async throws {
        for _ in 0..<3_000 where !Task.isShuttingDownGracefully {
            if await manager.listeningPort != nil {
                SystemdNotifier.notify("READY=1")
                logger.info("ready")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
        logger.info("shutting down")
    }
}
