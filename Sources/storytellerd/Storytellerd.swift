import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StoryCore
import StoryIdentity
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
            Settings, highest first: flags, STORYTELLER_* environment variables, \
            the config file, embedded defaults.

            Exit codes: 0 after a graceful shutdown (SIGTERM, SIGINT), 64 for bad \
            flags, 78 for a bad config file or environment variable, 1 when the \
            state directory, the database or the peer listener cannot be opened \
            or a service fails.
            """)

    @Option(help: "Config file (key = value lines; see Config/storytellerd.example.toml). Also STORYTELLER_CONFIG.")
    var config: String?

    @Option(name: .customLong("data-dir"), help: "State directory (default $XDG_DATA_HOME/storyteller or ~/.local/share/storyteller).")
    var dataDirectory: String?

    @Option(help: "Control socket (default: control.sock in --data-dir when given, else $XDG_RUNTIME_DIR/storyteller/control.sock, else in the state directory).")
    var socket: String?

    @Option(name: .customLong("socket-group"), help: "Group whose members may also use the control socket (mode 0660). Default: none, mode 0600.")
    var socketGroup: String?

    @Option(help: "Address peers connect to, HOST:PORT (default 0.0.0.0:\(DaemonPaths.defaultPeerPort)).")
    var listen: String?

    @Option(help: "Name told to peers (default: the host name).")
    var name: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(name: .customLong("maintenance-interval"), help: "Seconds between snapshot and compaction passes (default 30).")
    var maintenanceInterval: String?

    /// The flags as config keys, for the last layer of `resolve`.
    private var flags: [(String, String?)] {
        [("data-dir", dataDirectory), ("socket", socket), ("socket-group", socketGroup), ("listen", listen), ("name", name), ("log-level", logLevel),
         ("maintenance-interval", maintenanceInterval)]
    }

    func validate() throws {
        var settings = DaemonSettings()
        for case (let key, let value?) in flags {
            do { try settings.set(key, to: value, source: "--\(key)") } catch { throw ValidationError(error.description) }
        }
    }

    /// Defaults, then the config file, then the environment, then the flags.
    private func resolve(environment: [String: String]) throws(ConfigError) -> (DaemonSettings, unknownVariables: [String]) {
        var settings = DaemonSettings()
        if let file = config ?? environment["STORYTELLER_CONFIG"] { try settings.apply(file: file) }
        let unknown = try settings.apply(environment: environment)
        for case (let key, let value?) in flags { try settings.set(key, to: value, source: "--\(key)") }
        return (settings, unknown)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings: DaemonSettings
        let unknownVariables: [String]
        do {
            (settings, unknownVariables) = try resolve(environment: environment)
        } catch {
            FileHandle.standardError.write(Data("storytellerd: configuration error: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "storytellerd")
        for variable in unknownVariables {
            logger.warning("ignoring \(variable): not a storytellerd setting (known: \(DaemonSettings.keys.map(DaemonSettings.environmentName(of:)).joined(separator: ", ")))")
        }
        let address = settings.listen
        logger.debug(
            "settings: listen=\(address.host):\(address.port) data-dir=\(settings.dataDirectory ?? "(default)") name=\(settings.name ?? "(host name)") maintenance-interval=\(settings.maintenanceInterval)s"
        )
        let paths = DaemonPaths(dataDirectory: settings.dataDirectory, socket: settings.socket, environment: environment)
        let daemonName = settings.name ?? ProcessInfo.processInfo.hostName
        let maintenanceInterval = settings.maintenanceInterval

        let store: Store
        let identity: Identity
        let lock: DataDirectoryLock
        do {
            // Before the database or the socket is touched: a second daemon on
            // this directory stops here and leaves the running one alone.
            lock = try DataDirectoryLock.acquire(paths.dataDirectory)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        do {
            identity = try Identity.loadOrCreate(in: paths.identityDirectory)
            store = try Store(path: paths.databasePath, identity: try identity.signingIdentity, options: settings.storeOptions)
        } catch {
            logger.critical("cannot open the state in \(paths.dataDirectory): \(error)")
            throw ExitCode(1)
        }
        print("storytellerd \(daemonName)")
        print("  peer id:    \(identity.peerID)")
        print("  state:      \(paths.dataDirectory)")
        print("  database:   \(paths.databasePath)")
        print("  control:    \(paths.socketPath)")
        print("  peers on:   \(address.host):\(address.port)")
        fflush(nil)

        var syncConfiguration = SyncConfiguration(name: daemonName)
        syncConfiguration.acceptsOfferedDocuments = settings.acceptShares
        let manager = try PeerManager(
            store: store, identity: identity, configuration: syncConfiguration,
            group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let library = LibraryService(store: store, logger: logger)
        do {
            try await library.prepare()
        } catch {
            logger.critical("cannot open the library: \(error)")
            throw ExitCode(1)
        }
        await manager.onIncomingDocument { document, kind, name, peer in
            await library.fileIncoming(document, kind: kind, name: name, from: peer.description)
        }
        let control: ControlServer
        do {
            let routes = ControlRoutes(
                store: store, identity: identity, manager: manager, library: library, name: daemonName, started: Date(), logger: logger)
            control = try await ControlServer.bind(
                path: paths.socketPath, group: MultiThreadedEventLoopGroup.singleton, access: settings.socketAccess, logger: logger
            ) { await routes.handle($0) }
        } catch {
            logger.critical("cannot serve the control socket \(paths.socketPath): \(error)")
            throw ExitCode(1)
        }

        // Started in this order, shut down gracefully in the reverse one (see Services.swift).
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: StoreService(store: store, logger: logger)),
                .init(service: PeerService(manager: manager, address: address)),
                .init(service: ControlService(server: control)),
                .init(service: MaintenanceService(store: store, interval: maintenanceInterval, logger: logger)),
                .init(service: ReadinessService(manager: manager, logger: logger)),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(20)
        configuration.maximumCancellationDuration = .seconds(5)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            logger.critical("stopped: \(error)")
            await control.close()
            throw ExitCode(1)
        }
        logger.info("stopped")
        withExtendedLifetime(lock) {}
    }
}

func millisecondsSinceEpoch() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
