import Foundation
import Hummingbird
package import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StoryAPI
import StoryCore
import StoryIdentity
package import StoryStore
import StorySync
import Synchronization
package import UnixSignals

/// The Storyteller daemon: one store, one identity, the peer listener and
/// dialers, local discovery, the control API on its Unix socket, and periodic
/// snapshots and compaction, run as one `ServiceGroup`.
///
/// `storytellerd` makes one from its flags and runs it until SIGTERM or
/// SIGINT; tests run one in process and end it with `shutdown()`.
package final class Daemon: Sendable {
    package let settings: DaemonSettings
    package let paths: DaemonPaths
    /// The name told to peers.
    package let name: String
    private let clock: WallClock
    private let signals: [UnixSignal]
    private let logger: Logger
    private let group = Mutex<ServiceGroup?>(nil)
    private let shutdownRequested = Mutex(false)
    private let readiness = ReadinessSignal()
    private let routeTable = Mutex(ControlRouteTable())
    private let boundMetricsPort = Mutex<Int?>(nil)

    /// A daemon with resolved settings; nothing is opened until `run`.
    /// - Parameters:
    ///   - environment: where `XDG_*` and `HOME` come from (for the default paths).
    ///   - signals: the signals that end it gracefully (none for a daemon in a test).
    package init(
        settings: DaemonSettings, environment: [String: String], clock: WallClock = .system, signals: [UnixSignal] = [.sigterm, .sigint],
        logger: Logger = Logger(label: "storytellerd")
    ) {
        self.settings = settings
        paths = DaemonPaths(dataDirectory: settings.dataDirectory, socket: settings.socket, environment: environment)
        name = settings.name ?? ProcessInfo.processInfo.hostName
        self.clock = clock
        self.signals = signals
        self.logger = logger
    }

    /// What stopped a daemon from starting or running: one sentence saying
    /// what is wrong and what to do, in the words of the type that failed
    /// (never a Swift case name, a NIO signature or an NSError dump).
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        init(description: String) {
            self.description = description
        }

        /// The failure of opening the state: the error's own sentence
        /// (`StoreError`, `BlobError` and `IdentityError` are `LocalizedError`s).
        init(opening error: any Error) {
            description = (error as? any LocalizedError)?.errorDescription ?? "cannot open the state: \(error)"
        }

        /// A service that ended the daemon: the listeners say what to do themselves.
        init(stoppedBy error: any Error) {
            switch error {
            case let error as ListenError: description = error.description
            case let error as MetricsListenError: description = error.description
            case let error as ControlSocket.Failure: description = error.description
            case let error as any LocalizedError: description = error.errorDescription ?? "stopped: \(error)"
            default: description = "stopped: \(error)"
            }
        }
    }

    /// Opens the state, serves peers and the control socket until a signal or
    /// `shutdown()`, then shuts down gracefully (Goodbye to peers, snapshot,
    /// close the database).
    /// - Throws: `Failure` when the state directory, the database, the
    ///   library, the peer listener or the control socket cannot be opened,
    ///   or a service fails.
    package func run() async throws(Failure) {
        // Whatever ends the run, nobody waits for readiness any longer.
        defer { readiness.controlFailed() }
        let lock: DataDirectoryLock
        do {
            // Before the database or the socket is touched: a second daemon on
            // this directory stops here and leaves the running one alone.
            lock = try DataDirectoryLock.acquire(paths.dataDirectory)
        } catch {
            throw Failure(description: error.description)
        }
        defer { withExtendedLifetime(lock) {} }
        // What a backup left here when the daemon stopped in the middle of one (only this daemon uses the directory).
        for name in (try? FileManager.default.contentsOfDirectory(atPath: paths.temporaryDirectory)) ?? [] {
            try? FileManager.default.removeItem(atPath: paths.temporaryDirectory + "/" + name)
        }
        let store: Store
        let identity: Identity
        let blobs: BlobStore
        do {
            identity = try Identity.loadOrCreate(in: paths.identityDirectory)
            var options = settings.storeOptions
            options.clock = clock
            store = try Store(path: paths.databasePath, identity: try identity.signingIdentity, options: options)
            var blobOptions = settings.blobOptions
            blobOptions.clock = clock
            blobs = try BlobStore(directory: paths.blobDirectory, options: blobOptions)
        } catch {
            throw Failure(opening: error)
        }
        print("storytellerd \(name)")
        print("  peer id:    \(identity.peerID)")
        print("  state:      \(paths.dataDirectory)")
        print("  database:   \(paths.databasePath)")
        print("  control:    \(paths.socketPath)")
        print("  peers on:   \(settings.listen.host):\(settings.listen.port)")
        fflush(nil)

        do {
            try await addDeclaredPeers(to: store, identity: identity)
        } catch {
            throw Failure(opening: error)
        }
        var syncConfiguration = SyncConfiguration(name: name)
        syncConfiguration.scratchDirectory = paths.temporaryDirectory + "/snapshots"
        syncConfiguration.acceptsOfferedDocuments = settings.acceptShares
        for peer in settings.peers {
            if let autoAccept = peer.autoAccept { syncConfiguration.acceptsOffers[peer.id] = autoAccept }
        }
        var discovery: LocalDiscovery?
        if settings.discovery {
            var configuration = DiscoveryConfiguration()
            configuration.port = settings.discoveryPort
            discovery = LocalDiscovery(
                peerID: identity.peerID, configuration: configuration, group: MultiThreadedEventLoopGroup.singleton, clock: clock,
                logger: logger)
        }
        let manager: PeerManager
        let exchange = BlobExchange(blobs: blobs, store: store, configuration: settings.blobExchange, logger: logger)
        do {
            manager = try PeerManager(
                store: store, identity: identity, configuration: syncConfiguration, group: MultiThreadedEventLoopGroup.singleton,
                clock: clock, discovery: discovery, blobExchange: exchange, logger: logger)
        } catch {
            throw Failure(description: "cannot set up TLS: \(error)")
        }
        let library = LibraryService(store: store, clock: clock, logger: logger)
        do {
            try await library.prepare()
        } catch {
            throw Failure(opening: error)
        }
        await makeDeclaredShares(store: store, library: library, identity: identity)
        await manager.onIncomingDocument { document, kind, name, peer in
            await library.fileIncoming(document, kind: kind, name: name, from: peer)
        }

        let trash = ProjectTrash(store: store, library: library, clock: clock, retention: settings.trashRetention, logger: logger)

        let metrics = DaemonMetrics()
        let started = ContinuousClock.now
        let exports = ExportJobs(directory: paths.temporaryDirectory + "/exports", logger: logger)
        let previews = PreviewRegistry(
            source: SlideshowSource(store: store, blobs: blobs, renderer: PanelRenderService(label: "storyteller.render.preview")), logger: logger)
        let api = ControlAPI(
            store: store, identity: identity, manager: manager, discovery: discovery, library: library, trash: trash, name: name,
            started: started, clock: clock, metrics: metrics, temporaryDirectory: paths.temporaryDirectory, blobs: blobs,
            acceptedMediaTypes: settings.mediaTypes, previews: previews,
            logger: logger, exports: exports)
        let (router, table) = api.makeRouter(access: settings.socketAccess)
        routeTable.withLock { $0 = table }
        do {
            try ControlSocket.prepare(path: paths.socketPath, access: settings.socketAccess)
        } catch {
            throw Failure(description: error.description)
        }
        let socketPath = paths.socketPath
        let access = settings.socketAccess
        let readiness = self.readiness
        let logger = self.logger
        let control = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [MalformedRequestResponder(logger: logger)])),
            configuration: .init(address: .unixDomainSocket(path: socketPath), serverName: nil, backlog: 1024),
            onServerRunning: { _ in
                do {
                    try ControlSocket.restrict(path: socketPath, access: access)
                    readiness.controlIsServing()
                } catch {
                    // Gone: the daemon is already stopping (another service
                    // failed, and the server removed its socket as it closed),
                    // and that failure is the one sentence to print.
                    if FileManager.default.fileExists(atPath: socketPath) {
                        logger.critical("\(error)")
                    } else {
                        logger.debug("the control socket was removed as it started: the daemon is stopping")
                    }
                    readiness.controlFailed()
                }
            },
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
            logger: logger)

        // Started in this order, shut down gracefully in the reverse one (see Services.swift).
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: StoreService(store: store, clock: clock, logger: logger)),
            // A listener that cannot open ends the daemon gracefully: the
            // others stop as at SIGTERM, and only its own error is printed.
            .init(service: PeerService(manager: manager, address: settings.listen), failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let discovery {
            // It ends early when its port cannot be opened; the daemon runs on without it.
            services.append(
                .init(
                    service: DiscoveryService(discovery: discovery, manager: manager, listenHost: settings.listen.host),
                    successTerminationBehavior: .ignore))
        }
        services.append(.init(service: TrashService(trash: trash)))
        services.append(.init(service: ExportService(exports: exports)))
        services.append(.init(service: previews))
        services.append(
            .init(
                service: ControlService(application: control, path: socketPath, readiness: readiness),
                failureTerminationBehavior: .gracefullyShutdownGroup))
        if let address = settings.metricsListen {
            let metricsService = MetricsService(
                address: address,
                exposition: {
                    try await metrics.exposition(
                        store: store, manager: manager, uptimeSeconds: ControlAPI.seconds(since: started))
                },
                boundPort: { [self] port in boundMetricsPort.withLock { $0 = port } }, logger: logger)
            services.append(.init(service: metricsService, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        services += [
            .init(
                service: MaintenanceService(
                    store: store, trash: trash, blobs: blobs, interval: settings.maintenanceInterval, clock: clock, logger: logger)),
            .init(service: BlobService(exchange: exchange, store: store)),
            .init(service: ReadinessService(manager: manager, readiness: readiness, logger: logger)),
        ]
        var configuration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: signals,
            logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(20)
        configuration.maximumCancellationDuration = .seconds(5)
        let serviceGroup = ServiceGroup(configuration: configuration)
        group.withLock { $0 = serviceGroup }
        if shutdownRequested.withLock({ $0 }) { await serviceGroup.triggerGracefulShutdown() }
        do {
            try await serviceGroup.run()
        } catch {
            unlink(socketPath)
            throw Failure(stoppedBy: error)
        }
        logger.info("stopped")
    }

    /// Makes the peers declared in the config file configured peers (the
    /// fields each declares win over what was set at run time; a peer
    /// removed at run time comes back). This daemon's own id is skipped, so
    /// one file can list a whole crew and be installed on every machine.
    private func addDeclaredPeers(to store: Store, identity: Identity) async throws {
        for peer in settings.peers {
            guard peer.id != identity.peerID else {
                logger.debug("\(peer.source): [[peer]] \(peer.id.short) is this daemon; skipped")
                continue
            }
            try await store.addPeer(peer.id, name: peer.name, addresses: peer.addresses, at: clock.milliseconds)
        }
        if !settings.peers.isEmpty { logger.info("\(settings.peers.count) peer(s) declared in the config file") }
    }

    /// Makes the shares declared in the config file that were not made yet
    /// (`DeclaredShare`): each once, remembered in the store with its mode,
    /// so a run-time `unshare` or change of mode holds. One that cannot be
    /// made now (nothing at its path yet, a peer not configured, rights this
    /// machine lacks) is logged and tried again at the next start; it never
    /// stops the daemon.
    private func makeDeclaredShares(store: Store, library: LibraryService, identity: Identity) async {
        for share in settings.shares {
            let peer = share.peerName.map { "\($0) (\(share.peer.short))" } ?? share.peer.short
            let mode: ShareMode = share.isReadOnly ? .readOnly : .readWrite
            guard share.peer != identity.peerID else {
                logger.debug("\(share.source): [[share]] with \(peer) is with this daemon; skipped")
                continue
            }
            do {
                if try await store.setting(share.madeKey) == mode.rawValue { continue }
                guard try await store.peers().contains(where: { $0.id == share.peer && $0.state == .configured }) else {
                    logger.warning(
                        """
                        \(share.source): cannot share '\(share.path)' with \(peer) yet: it is not a configured peer \
                        (declare it in a [[peer]] table or add it with storyteller peers add); tried again at the next start
                        """)
                    continue
                }
                let set = try await library.set()
                if share.path == "library" {
                    _ = try await library.share(with: share.peer, role: mode.role)
                } else {
                    let place = try set.resolve(share.path)
                    if (place.node == .root && place.library != set.main) || set.node(place)?.kind == .folder {
                        _ = try await library.share(folder: place, with: share.peer, role: mode.role)
                    } else if let project = set.node(place)?.document {
                        try await store.share(project, with: share.peer, role: mode.role, at: clock.milliseconds)
                        try await store.setDirectShare(true, of: project, with: share.peer)
                    } else {
                        throw APIError(.badRequest, "'\(share.path)' is neither a project nor a folder")
                    }
                }
                try await store.setSetting(share.madeKey, to: mode.rawValue)
                logger.info("\(share.source): shared '\(share.path)' with \(peer) (\(mode.rawValue)), as declared")
            } catch let error as APIError where error.error.code == .notFound {
                logger.warning(
                    """
                    \(share.source): cannot share '\(share.path)' with \(peer) yet: no project or folder is at that path here \
                    (storyteller tree shows the paths); tried again at the next start
                    """)
            } catch let error as APIError {
                logger.warning("\(share.source): cannot share '\(share.path)' with \(peer): \(error.error.message)")
            } catch {
                logger.warning(
                    "\(share.source): cannot share '\(share.path)' with \(peer): \((error as? any LocalizedError)?.errorDescription ?? "\(error)")")
            }
        }
    }

    /// The port the metrics listener is bound to, once it is (nil without `metrics-listen`).
    package var metricsPort: Int? { boundMetricsPort.withLock { $0 } }

    /// Ends a running daemon gracefully (as SIGTERM does).
    package func shutdown() async {
        shutdownRequested.withLock { $0 = true }
        guard let group = group.withLock({ $0 }) else { return }
        await group.triggerGracefulShutdown()
    }

    /// The control API's routes, `METHOD template` below `/v1` with
    /// parameters as `{}` (`GET projects/{}`); empty until `run` set them up.
    package var routes: Set<String> {
        Set(routeTable.withLock { $0.routes.map { "\($0.method.rawValue) \($0.template)" } })
    }

    /// Returns once peers can connect and the control socket answers (or the daemon failed to start).
    package func waitUntilReady() async {
        await readiness.wait()
    }
}
