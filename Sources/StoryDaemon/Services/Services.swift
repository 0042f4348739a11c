import Foundation
import Hummingbird
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
    let clock: WallClock
    let logger: Logger
    var description: String { "store" }

    func run() async throws {
        try? await gracefulShutdown()
        // An hour from now every changed document is idle long enough: all are due.
        await snapshotDueDocuments(of: store, now: .now + .seconds(3_600), clock: clock, logger: logger)
    }
}

/// The peer listener and the dialers.
struct PeerService: Service, CustomStringConvertible {
    let manager: PeerManager
    let address: ListenAddress
    var description: String { "peers" }

    func run() async throws {
        do {
            try await withGracefulShutdownHandler {
                try await manager.run(host: address.host, port: address.port)
            } onGracefulShutdown: {
                Task { await manager.shutdown(timeout: .seconds(5)) }
            }
        } catch is CancellationError {
            // Cancelled after its graceful shutdown (its event loop was still
            // waiting for the store's next event): a clean stop, not a failure.
        }
    }
}

/// Local discovery: announces this daemon on the LAN once the peer listener
/// is bound (the announcement carries its port) and listens for the others'
/// until the shutdown.
struct DiscoveryService: Service, CustomStringConvertible {
    let discovery: LocalDiscovery
    let manager: PeerManager
    /// The host the peer listener is bound to: announcements go only where it can be reached.
    let listenHost: String
    var description: String { "discovery" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await manager.waitUntilListening()
            guard let port = await manager.listeningPort else { return }
            await discovery.run(announcing: port, listenHost: listenHost)
        }
    }
}

/// The control API (Hummingbird) on the Unix socket; the socket file goes with it.
struct ControlService: Service, CustomStringConvertible {
    let application: Application<RouterResponder<ControlContext>>
    let path: String
    let readiness: ReadinessSignal
    var description: String { "control" }

    func run() async throws {
        defer { unlink(path) }
        do {
            try await application.run()
        } catch {
            readiness.controlFailed()
            throw ControlSocket.Failure(path: path, error: error)
        }
    }
}

/// Periodic snapshots and compaction, and purging what has been in the
/// trash longer than `trash-retention`.
struct MaintenanceService: Service, CustomStringConvertible {
    let store: Store
    let trash: ProjectTrash
    let blobs: BlobStore
    let interval: Int
    let clock: WallClock
    let logger: Logger
    var description: String { "maintenance" }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Ends the sleep early (with an error) on shutdown.
            guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: .seconds(interval)) })) != nil else { return }
            await snapshotDueDocuments(of: store, now: .now, clock: clock, logger: logger)
            await trash.purgeExpired()
            await collectBlobGarbage(blobs, store: store, logger: logger)
        }
    }
}

/// Deletes blobs no document references any more, once the grace period
/// has passed (`BlobStore.collectGarbage`); failures are logged.
func collectBlobGarbage(_ blobs: BlobStore, store: Store, logger: Logger) async {
    do {
        let referenced = Set(try await store.referencedBlobs().keys)
        let deleted = try await blobs.collectGarbage(referenced: referenced)
        if !deleted.isEmpty { logger.info("deleted \(deleted.count) blob(s) no project references") }
    } catch {
        logger.error("blob garbage collection failed: \(error)")
    }
}

/// The blob exchange follows the store: a project that references a new
/// blob makes it look for what this daemon lacks.
struct BlobService: Service, CustomStringConvertible {
    let exchange: BlobExchange
    let store: Store
    var description: String { "blobs" }

    func run() async throws {
        let events = await store.events(lossless: true)
        await exchange.documentsChanged()
        await cancelWhenGracefulShutdown {
            for await event in events {
                switch event {
                case .blobsReferenced, .accessChanged: await exchange.documentsChanged()
                default: continue
                }
            }
        }
    }
}

/// The library follows the trash: a project deleted or restored (here or by
/// a peer) takes its entries in this daemon's library with it.
struct TrashService: Service, CustomStringConvertible {
    let trash: ProjectTrash
    var description: String { "trash" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await trash.run() }
    }
}

/// Export jobs (animatics …), one at a time; the shutdown cancels the one
/// running (its ffmpeg is killed) and removes every export's files. Started
/// before the control service, so shut down after it: no job is posted then.
struct ExportService: Service, CustomStringConvertible {
    let exports: ExportJobs
    var description: String { "exports" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await exports.run() }
    }
}

/// Snapshots (and compacts) the documents due at `now`; failures are logged.
private func snapshotDueDocuments(of store: Store, now: ContinuousClock.Instant, clock: WallClock, logger: Logger) async {
    do {
        let done = try await store.runMaintenance(at: clock.milliseconds, now: now)
        if !done.isEmpty { logger.debug("snapshotted \(done.count) document(s)") }
    } catch {
        logger.error("snapshot and compaction failed: \(error)")
    }
}

/// Tells systemd READY=1 once peers can connect and the control socket
/// answers, and STOPPING=1 when the shutdown starts (it is the first service
/// to be shut down).
struct ReadinessService: Service, CustomStringConvertible {
    let manager: PeerManager
    let readiness: ReadinessSignal
    let logger: Logger
    var description: String { "readiness" }

    func run() async throws {
        // Both wait on events, not by polling; shutdown ends the waits.
        await cancelWhenGracefulShutdown {
            await manager.waitUntilListening()
            // Ended by a shutdown (a listener that failed to open), not ready.
            guard !Task.isCancelled && !Task.isShuttingDownGracefully else { return }
            readiness.peersAreListening()
            if await readiness.waitForControl() {
                SystemdNotifier.notify("READY=1")
                logger.info("ready")
            }
        }
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
        logger.info("shutting down")
    }
}
