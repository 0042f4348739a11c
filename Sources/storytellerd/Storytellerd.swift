import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import StoryCore
import StoryStore
import StorySync
import StoryTLS

/// The Storyteller daemon: one store, one identity, the peer listener and
/// dialers, and periodic snapshots and compaction.
///
/// Runs with embedded defaults (state under `$XDG_DATA_HOME/storyteller`,
/// peers on TCP 7460); SIGTERM or SIGINT ends it gracefully: stop accepting,
/// Goodbye to every peer, close the database.
@main
struct Storytellerd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storytellerd",
        abstract: "Keeps film storyboards in sync between the machines of a crew.",
        discussion: """
            Exit codes: 0 after a graceful shutdown, 64 for bad flags, 1 when the \
            state directory, the database or the listener cannot be opened.
            """)

    @Option(name: .customLong("data-dir"), help: "State directory (default $XDG_DATA_HOME/storyteller or ~/.local/share/storyteller).")
    var dataDirectory: String?

    @Option(help: "Address peers connect to, HOST:PORT.")
    var listen = "0.0.0.0:\(DaemonPaths.defaultPeerPort)"

    @Option(help: "Name told to peers (default: the host name).")
    var name: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(name: .customLong("maintenance-interval"), help: "Seconds between snapshot and compaction passes.")
    var maintenanceInterval = 30

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical")
        }
        guard (try? ListenAddress(listen)) != nil else {
            throw ValidationError("--listen: '\(listen)' is not HOST:PORT with a port in 0...65535")
        }
        guard maintenanceInterval > 0 else { throw ValidationError("--maintenance-interval must be positive") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "storytellerd")
        let address = try ListenAddress(listen)
        let paths = DaemonPaths(dataDirectory: dataDirectory, environment: ProcessInfo.processInfo.environment)
        let daemonName = name ?? ProcessInfo.processInfo.hostName

        let store: Store
        let identity: Identity
        do {
            try FileManager.default.createDirectory(
                atPath: paths.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            identity = try Identity.loadOrCreate(in: paths.identityDirectory)
            store = try Store(path: paths.databasePath)
        } catch {
            logger.critical("cannot open the state in \(paths.dataDirectory): \(error)")
            throw ExitCode(1)
        }
        print("storytellerd \(daemonName)")
        print("  peer id:    \(identity.peerID)")
        print("  state:      \(paths.dataDirectory)")
        print("  database:   \(paths.databasePath)")
        print("  peers on:   \(address.host):\(address.port)")
        fflush(nil)

        let manager = try PeerManager(
            store: store, identity: identity, configuration: SyncConfiguration(name: daemonName),
            group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let stop = ShutdownSignal()
        stop.install(for: [SIGTERM, SIGINT])
        let sync = Task {
            do {
                try await manager.run(host: address.host, port: address.port)
            } catch {
                stop.fail("peer listener: \(error)")
            }
        }
        let maintenance = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(maintenanceInterval))
                if Task.isCancelled { break }
                do {
                    let done = try await store.runMaintenance(at: millisecondsSinceEpoch())
                    if !done.isEmpty { logger.debug("snapshotted \(done.count) document(s)") }
                } catch {
                    logger.error("maintenance failed: \(error)")
                }
            }
        }

        // Ready means listening for peers: tell systemd.
        for _ in 0..<1_000 where stop.reason == nil {
            if await manager.listeningPort != nil {
                SystemdNotifier.notify("READY=1")
                logger.info("ready")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }

        let reason = await stop.wait()
        SystemdNotifier.notify("STOPPING=1")
        maintenance.cancel()
        await manager.shutdown(timeout: .seconds(5))
        sync.cancel()
        _ = await sync.result
        _ = await maintenance.result
        switch reason {
        case .signal(let number):
            logger.info("stopped after signal \(number)")
        case .failure(let message):
            logger.critical("stopped: \(message)")
            throw ExitCode(1)
        }
    }
}

func millisecondsSinceEpoch() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
