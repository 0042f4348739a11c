import Foundation
package import Logging
package import NIOCore
import NIOPosix
package import StoryCore
package import StoryIdentity
package import StoryStore
import StoryTLS

/// A connection before the peer is known: the channel and the TLS handshake's outcome.
struct PendingConnection: Sendable {
    let channel: NIOAsyncChannel<Message, Message>
    let handshake: EventLoopFuture<TLSPeer>
    let remote: String
    let bytes: ByteCounts
}

/// What the daemon reports about a peer connection.
package struct PeerStatus: Sendable, Hashable {
    package var peer: PeerID
    package var name: String?
    package var isEstablished: Bool
    /// Whether we dialed it (or it dialed us).
    package var dialed: Bool
    package var documents: [DocumentID]
    /// Where the peer is connected from (or that we dialed).
    package var address: String
    /// Bytes this connection carried, counted below TLS.
    package var bytesSent: Int
    package var bytesReceived: Int
    /// What the peer has of each shared document, as it advertised or
    /// acknowledged it (for "N changes to receive").
    package var peerVersions: [DocumentID: VersionVector] = [:]
    /// Seconds since the peer last sent more than keepalives (its hello,
    /// changes, acknowledgements, blobs): "idle" in `storyteller peers`.
    package var idleSeconds: Int = 0
}

/// What happens to this daemon's peer connections, as `PeerManager.events()`
/// publishes it: the dialer, readiness, shutdown and the control API's
/// event stream wait on these instead of polling.
package enum PeerEvent: Sendable, Hashable {
    /// The listener is bound.
    case listening(port: Int)
    /// A dialer is connecting to this configured peer.
    case dialing(PeerID)
    /// A dialer waits this long before it dials the peer again (the backoff
    /// after a failure), or less if the peer is discovered somewhere new or
    /// given other addresses.
    case waitingToRedial(PeerID, for: Duration)
    case connected(PeerID)
    case disconnected(PeerID)
    case paused(PeerID)
    case resumed(PeerID)
    /// A configured peer offered a document this daemon keeps for a user to accept.
    case offered(DocumentID, by: PeerID)
    /// Local discovery heard a peer at an address it was not known at (it
    /// is new on the LAN, restarted or moved); its dialer, waiting out a
    /// backoff, tries again at once.
    case discovered(PeerID, address: String)
    /// A configured peer was given other addresses (`peers add`, `peers set
    /// --address`); its dialer, waiting out a backoff, tries them at once.
    case addressesChanged(PeerID)
    /// A peer acknowledged changes of a document: `caughtUp` when it now
    /// has every change this daemon has (`of`: this daemon's version it was
    /// compared with), else it is still behind.
    case acknowledged(PeerID, DocumentID, caughtUp: Bool, of: VersionVector)
    /// The manager is shutting down.
    case stopping
}

/// Every connection of this daemon to its peers: listens, dials configured
/// peers with exponential backoff and jitter (at their configured addresses,
/// then where local discovery heard them), admits only configured peers
/// (unknown ones are recorded as pending and closed), keeps one session per
/// peer, and pushes each document change to the peers it is shared with, so
/// changes learned from one peer flow on to the others.
package actor PeerManager {
    package nonisolated let identity: Identity
    package nonisolated let configuration: SyncConfiguration
    private let context: TLSContext
    private let store: Store
    private let group: any EventLoopGroup
    private let clock: WallClock
    private let logger: Logger
    private var sessions: [PeerID: PeerSession] = [:]
    /// Access changes handled so far: a connection that read its peer's
    /// shares before one of them, and registered its session after, missed
    /// the refresh the other sessions got (`register`'s re-read).
    private var accessChanges = 0
    /// When and where each configured peer is dialed.
    private var dialer: Dialer
    typealias Dialer = DialerStateMachine<SystemRandomNumberGenerator>
    /// Where peers are heard on the LAN (nil: discovery is off).
    private let discovery: LocalDiscovery?
    /// The configured peers and their addresses, as last read: discovery
    /// events are checked against it without a database read each, and a
    /// change of addresses wakes the peer's dialer from its backoff
    /// (`PeerEvent.addressesChanged`).
    private var configuredPeers: [PeerID: [String]] = [:]
    /// Counts sessions as they are registered: the blob exchange keeps the
    /// newest one's link even when an older one's attach arrives after it.
    private var sessionsRegistered = 0
    /// Where the dialer task group takes the peers to dial from (set by `run`).
    private var dialRequests: AsyncStream<PeerID>.Continuation?
    private let broadcaster = EventBroadcaster<PeerEvent>()
    /// Peers whose sync is paused until resumed (kept in the store's settings
    /// under `pausedPeersKey`, so a restart keeps them paused).
    package private(set) var paused: Set<PeerID> = []
    /// Peers that paused sync with this daemon: their last connection ended
    /// with their Goodbye saying so (until one gets as far as a hello again).
    package private(set) var pausedByPeers: Set<PeerID> = []
    /// Peers whose last answer was that they do not know this daemon yet: a
    /// user there must accept it (`peers accept`), which `peers` says here.
    package private(set) var waitingForAcceptanceBy: Set<PeerID> = []
    /// Peers whose last connection ended on different protocol versions:
    /// which side to upgrade, in words (until one connects again).
    package private(set) var upgradeNeeded: [PeerID: String] = [:]
    static let pausedPeersKey = "paused-peers"
    private var server: NIOAsyncChannel<PendingConnection, Never>?
    private var isShuttingDown = false
    /// Every connection's bytes add up here too.
    private let totals = ByteCounts()
    /// Called for a document a configured peer offered and we took: the
    /// daemon may show it to its users.
    private var incoming: (@Sendable (DocumentID, DocumentKind, String, PeerID) async -> Void)?
    /// Moves images and sounds (nil: this daemon syncs documents only).
    package nonisolated let blobExchange: BlobExchange?
    private let blobSendLimiter: RateLimiter?

    /// - Parameter discovery: local discovery, whose addresses are tried after
    ///   the configured ones (it runs on its own; nil when it is off).
    package init(
        store: Store, identity: Identity, configuration: SyncConfiguration, group: any EventLoopGroup, clock: WallClock = .system,
        discovery: LocalDiscovery? = nil, blobExchange: BlobExchange? = nil, logger: Logger
    ) throws {
        self.store = store
        self.blobExchange = blobExchange
        blobSendLimiter = blobExchange?.configuration.maximumSendRate.map { RateLimiter(bytesPerSecond: $0) }
        self.discovery = discovery
        self.clock = clock
        self.identity = identity
        self.configuration = configuration
        dialer = Dialer(backoffBase: configuration.backoffBase, backoffMaximum: configuration.backoffMaximum, random: .init())
        self.group = group
        self.logger = logger
        context = try TLSContext(identity: identity)
    }

    /// Sets what happens to documents taken from peers.
    package func onIncomingDocument(_ handler: @escaping @Sendable (DocumentID, DocumentKind, String, PeerID) async -> Void) {
        incoming = handler
    }

    /// Pauses sync with a peer: closes its session (with Goodbye), stops
    /// dialing it and refuses its connections until `resume`.
    package func pause(_ peer: PeerID) async throws {
        guard paused.insert(peer).inserted else { return }
        sessions[peer]?.close(reason: Message.pausedReason)
        broadcaster.publish(.paused(peer))
        try await savePaused()
        logger.info("paused sync with \(peer.short)")
    }

    /// Resumes sync with a paused peer (dialing it again at once).
    package func resume(_ peer: PeerID) async throws {
        guard paused.remove(peer) != nil else { return }
        // The dialer waits for this, and dials at once.
        broadcaster.publish(.resumed(peer))
        try await savePaused()
        logger.info("resumed sync with \(peer.short)")
    }

    private func savePaused() async throws {
        let text = paused.map(\.description).sorted().joined(separator: ",")
        try await store.setSetting(Self.pausedPeersKey, to: text.isEmpty ? nil : text)
    }

    /// The paused peers as stored, less any that are no longer configured.
    private func loadPaused() async {
        do {
            let stored = try await store.setting(Self.pausedPeersKey)?.split(separator: ",").compactMap { PeerID(String($0)) } ?? []
            let configured = Set(try await store.peers().filter { $0.state == .configured }.map(\.id))
            let now = Set(stored.filter { configured.contains($0) })
            // Peers no longer paused (removed, or changed elsewhere): their dialers wake up.
            for peer in paused.subtracting(now) { broadcaster.publish(.resumed(peer)) }
            paused = now
            if paused.count != stored.count { try await savePaused() }
        } catch {
            // Keep what was paused rather than resuming anyone on a read failure.
            logger.error("cannot read which peers are paused: \(error)")
        }
        if !paused.isEmpty { logger.info("sync paused with \(paused.map(\.short).sorted().joined(separator: ", "))") }
    }

    /// The port the listener is bound to (after `run` started it).
    package var listeningPort: Int? { server?.channel.localAddress?.port }

    /// What happens from now on: connections, pauses, offers, the listener.
    package nonisolated func events() -> AsyncStream<PeerEvent> { broadcaster.subscribe() }

    /// Returns once the listener is bound (or the manager is shutting down, or the task is cancelled).
    package func waitUntilListening() async {
        let events = broadcaster.subscribe()
        guard server == nil, !isShuttingDown else { return }
        for await event in events {
            switch event {
            case .listening, .stopping: return
            default: continue
            }
        }
    }

    /// The connected peers.
    package func status() -> [PeerStatus] {
        let now = ContinuousClock.now
        return sessions.values.map {
            PeerStatus(
                peer: $0.peer, name: $0.peerName, isEstablished: $0.isEstablished, dialed: $0.dialed, documents: $0.documentIDs,
                address: $0.address, bytesSent: $0.bytes.sent, bytesReceived: $0.bytes.received, peerVersions: $0.peerVersions,
                idleSeconds: $0.lastActivity.map { Int((now - $0).components.seconds) } ?? 0)
        }.sorted { $0.peer < $1.peer }
    }

    /// Bytes of every connection since start (including closed ones), below TLS.
    package var totalBytes: (sent: Int, received: Int) {
        sessions.values.reduce((totals.sent, totals.received)) { ($0.0 + $1.bytes.sent, $0.1 + $1.bytes.received) }
    }

    // MARK: - Running

    /// Listens on `host:port`, dials the configured peers and serves until
    /// cancelled. Call `shutdown()` first for a graceful end (Goodbye to peers).
    package func run(host: String, port: Int) async throws {
        let server: NIOAsyncChannel<PendingConnection, Never>
        do {
            server = try await bind(host: host, port: port)
        } catch {
            throw ListenError(host: host, port: port, error: error)
        }
        self.server = server
        let boundPort = server.channel.localAddress?.port ?? port
        logger.info("listening for peers on \(host):\(boundPort) as \(identity.peerID)")
        broadcaster.publish(.listening(port: boundPort))
        // Every change must be pushed and every access change followed: lossless.
        let events = await store.events(lossless: true)
        let discovered = discovery?.events()
        await loadPaused()
        let (dialRequests, requestDial) = AsyncStream.makeStream(of: PeerID.self)
        self.dialRequests = requestDial
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.accept(server) }
            // Dialers are started from the event loop below and from discovery
            // events; each runs until its peer has nowhere to be dialed.
            group.addTask {
                await withDiscardingTaskGroup { dialers in
                    for await peer in dialRequests { dialers.addTask { await self.dial(peer) } }
                }
            }
            if let discovered {
                group.addTask {
                    for await case .discovered(let peer, let address) in discovered { await self.discovered(peer, at: address) }
                }
            }
            try await dialConfiguredPeers()
            for await event in events {
                if isShuttingDown { break }
                switch event {
                case .documentChanged(let id, _, _):
                    for session in sessions.values { session.documentChanged(id) }
                case .peersChanged:
                    try await dialConfiguredPeers()
                    await dropRemovedPeers()
                    await loadPaused()
                case .accessChanged(let id):
                    accessChanges &+= 1
                    for peer in Array(sessions.keys) { await refreshShare(of: id, with: peer) }
                case .documentCreated, .peerPending, .trashChanged, .blobsReferenced, .fieldsOverwritten:
                    break
                }
            }
            requestDial.finish()
            group.cancelAll()
        }
    }

    /// Starts a dialer for each configured peer that has none (one with
    /// nowhere to dial ends at once, until discovery finds it).
    private func dialConfiguredPeers() async throws {
        var configured: [PeerID: [String]] = [:]
        for record in try await store.peers() where record.state == .configured {
            configured[record.id] = record.addresses
            if let before = configuredPeers[record.id], before != record.addresses {
                logger.info("\(record.id.short) is now dialed at \(record.addresses.joined(separator: ", "))")
                dialer.addressesChanged(record.id)
                broadcaster.publish(.addressesChanged(record.id))
            }
        }
        configuredPeers = configured
        for peer in configuredPeers.keys.sorted() where dialer.start(peer) { dialRequests?.yield(peer) }
    }

    /// Local discovery heard `peer` somewhere new: dial it if it is
    /// configured, or wake its dialer from its backoff.
    private func discovered(_ peer: PeerID, at address: String) {
        broadcaster.publish(.discovered(peer, address: address))
        if dialer.discovered(peer, isConfigured: configuredPeers[peer] != nil) {
            logger.info("found \(peer.short) on the LAN at \(address); dialing it")
            dialRequests?.yield(peer)
        }
    }

    /// Stops accepting and dialing, says Goodbye to every peer and waits (at
    /// most `timeout`) for the sessions to end.
    package func shutdown(timeout: Duration = .seconds(3)) async {
        isShuttingDown = true
        dialer.stop()
        let events = broadcaster.subscribe()
        broadcaster.publish(.stopping)
        try? await server?.channel.close()
        for session in sessions.values { session.close(reason: "shutting down") }
        if !sessions.isEmpty {
            // Each session's end is an event: wait for the last, or the timeout.
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events {
                        if case .disconnected = event, await self.sessions.isEmpty { return }
                    }
                }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
        }
        await store.finishEvents()
        broadcaster.finish()
    }

    // MARK: - Connections

    private func bind(host: String, port: Int) async throws -> NIOAsyncChannel<PendingConnection, Never> {
        let context = self.context
        let configuration = self.configuration
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: Self.waterMark(configuration))
            .bind(host: host, port: port) { channel in
                Self.initialize(channel, context: context, configuration: configuration, isServer: true)
            }
    }

    /// Dials a peer (once).
    func connect(to address: String) async throws -> PendingConnection {
        let (host, port) = try Self.split(address)
        let context = self.context
        let configuration = self.configuration
        return try await ClientBootstrap(group: group)
            .connectTimeout(.milliseconds(Int64(configuration.connectTimeout.components.seconds * 1000)))
            .channelOption(.writeBufferWaterMark, value: Self.waterMark(configuration))
            .connect(host: host, port: port) { channel in
                Self.initialize(channel, context: context, configuration: configuration, isServer: false, remote: address)
            }
    }

    private static func waterMark(_ configuration: SyncConfiguration) -> ChannelOptions.Types.WriteBufferWaterMark {
        ChannelOptions.Types.WriteBufferWaterMark(low: configuration.maximumInFlightBytes / 4, high: configuration.maximumInFlightBytes)
    }

    private static func initialize(
        _ channel: any Channel, context: TLSContext, configuration: SyncConfiguration, isServer: Bool, remote: String? = nil
    ) -> EventLoopFuture<PendingConnection> {
        channel.eventLoop.makeCompletedFuture {
            let promise = channel.eventLoop.makePromise(of: TLSPeer.self)
            let timeout = TimeAmount.milliseconds(Int64(configuration.handshakeTimeout.components.seconds * 1000))
            let bytes = ByteCounts()
            try channel.pipeline.syncOperations.addHandler(ByteCountingHandler(bytes))
            try channel.pipeline.syncOperations.addHandler(
                TLSHandler(context: context, isServer: isServer, handshakePromise: promise, handshakeTimeout: timeout))
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(MessageDecoder(maximumFrameBytes: configuration.maximumFrameBytes)))
            try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MessageEncoder()))
            let wrapped = try NIOAsyncChannel<Message, Message>(wrappingChannelSynchronously: channel)
            return PendingConnection(
                channel: wrapped, handshake: promise.futureResult,
                remote: remote ?? channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?", bytes: bytes)
        }
    }

    static func split(_ address: String) throws -> (String, Int) {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (1...65535).contains(port)
        else { throw SyncError(.malformed, "peer address \(address) is not host:port") }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    private func accept(_ server: NIOAsyncChannel<PendingConnection, Never>) async throws {
        try await withThrowingDiscardingTaskGroup { connections in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    connections.addTask { await self.handle(connection, expected: nil) }
                }
            }
        }
    }

    /// Dials a configured peer until it is removed, has nowhere to be dialed,
    /// or we shut down, performing what `DialerStateMachine` decides.
    private func dial(_ peer: PeerID) async {
        defer { dialer.ended(peer) }
        var action = Dialer.Action.readPeer
        var record: PeerRecord?
        var started = ContinuousClock.now
        while !Task.isCancelled {
            switch action {
            case .readPeer:
                do {
                    record = try await store.peers().first { $0.id == peer && $0.state == .configured }
                    action = dialer.peerRead(
                        peer, configured: record?.addresses, isPaused: paused.contains(peer), isConnected: sessions[peer] != nil)
                } catch {
                    // A store failure is not a removal: try again after the backoff.
                    logger.error("cannot read the configured peers: \(error)")
                    action = dialer.peerReadFailed(peer)
                }
            case .waitForResume:
                // Subscribed right after the machine's answer, with no
                // suspension between (this is the actor): a resume cannot slip through unseen.
                let events = broadcaster.subscribe()
                for await event in events where event == .resumed(peer) || event == .stopping { break }
                action = dialer.resumed(peer)
            case .waitUntilDisconnected:
                await waitUntilDisconnected(peer)
                action = dialer.disconnected(peer)
            case .lookUpAddresses:
                let found = if let record { await addresses(of: record) } else { [String]() }
                action = dialer.found(peer, addresses: found)
                if case .connect = action { broadcaster.publish(.dialing(peer)) }
            case .connect(let address):
                do {
                    let connection = try await connect(to: address)
                    started = ContinuousClock.now
                    let outcome = await handle(connection, expected: peer)
                    action = dialer.connectionEnded(
                        peer, outcome: outcome, lasted: ContinuousClock.now - started, isPaused: paused.contains(peer))
                } catch {
                    logger.debug("cannot reach \(peer.short) at \(address): \(error)")
                    action = dialer.connectFailed(peer, isPaused: paused.contains(peer))
                }
            case .discredit(let address):
                await discovery?.discredit(peer, at: address)
                action = dialer.discredited(peer, isPaused: paused.contains(peer))
            case .wait(let delay):
                broadcaster.publish(.waitingToRedial(peer, for: delay))
                await waitBeforeRedialing(peer, for: delay)
                action = dialer.waited(peer)
            case .stop:
                return
            }
        }
    }

    /// Where to dial a configured peer, in order: its configured addresses,
    /// then those local discovery heard it at (most recent first).
    private func addresses(of peer: PeerRecord) async -> [String] {
        var addresses = peer.addresses
        for address in await discovery?.addresses(of: peer.id) ?? [] where !addresses.contains(address) {
            addresses.append(address)
        }
        return addresses
    }

    /// Returns once `peer` has no session (or we stop, or the task is cancelled).
    private func waitUntilDisconnected(_ peer: PeerID) async {
        // Subscribed before the check, with no suspension between: the end cannot slip through unseen.
        let events = broadcaster.subscribe()
        guard sessions[peer] != nil, !isShuttingDown else { return }
        for await event in events where event == .disconnected(peer) || event == .stopping { return }
    }

    /// Sleeps for `delay`, or less if discovery hears `peer` somewhere new
    /// (it restarted, perhaps on another port), a user gives it other
    /// addresses, or we shut down.
    private func waitBeforeRedialing(_ peer: PeerID, for delay: Duration) async {
        let events = broadcaster.subscribe()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask {
                for await event in events {
                    if case .discovered(peer, _) = event { return }
                    if event == .addressesChanged(peer) || event == .stopping { return }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Finishes the TLS handshake, checks the peer and runs a session.
    @discardableResult
    private func handle(_ connection: PendingConnection, expected: PeerID?) async -> ConnectionOutcome {
        let tls: TLSPeer
        do {
            tls = try await connection.handshake.get()
        } catch {
            logger.info("TLS handshake with \(connection.remote) failed: \(error)")
            try? await connection.channel.executeThenClose { _, _ in }
            return .notThePeer
        }
        let peer = tls.peerID
        if let expected, peer != expected {
            logger.warning("\(connection.remote) answered as \(peer), not the configured \(expected); closing")
            try? await connection.channel.executeThenClose { _, _ in }
            return .notThePeer
        }
        let isConfigured: Bool
        do {
            isConfigured = try await store.isConfigured(peer)
        } catch {
            // Not known to be a stranger: close without recording it as pending.
            logger.error("cannot check whether \(peer.short) is configured: \(error); closing")
            try? await connection.channel.executeThenClose { _, _ in }
            return .handled
        }
        guard isConfigured else {
            logger.warning("unknown peer \(peer) from \(connection.remote): recorded as pending; accept it to sync")
            do {
                try await store.recordPendingPeer(peer, from: connection.remote, at: clock.milliseconds)
            } catch {
                logger.error("cannot record \(peer.short) as pending: \(error)")
            }
            try? await connection.channel.executeThenClose { _, outbound in
                try await outbound.write(.error(code: SyncError.Code.unknownPeer.rawValue, message: "this daemon does not know you yet"))
            }
            return .handled
        }
        guard !paused.contains(peer) else {
            logger.info("\(peer.short) connected from \(connection.remote), but sync with it is paused; closing")
            try? await connection.channel.executeThenClose { _, outbound in
                try await outbound.write(.goodbye(reason: Message.pausedReason))
            }
            return .handled
        }
        connection.bytes.attribute(to: SyncMetrics.PeerBytes(peer))
        let dialedByUs = expected != nil
        let documents: [SyncSessionStateMachine.SharedDocument]
        let accessChangesBefore = accessChanges
        do {
            documents = try await store.sharedDocuments(with: peer).map {
                .init(id: $0.record.id, kind: UInt8($0.record.kind.rawValue), peerRole: $0.role)
            }
        } catch {
            logger.error("cannot read the shares of \(peer.short): \(error)")
            try? await connection.channel.executeThenClose { _, _ in }
            return .handled
        }
        guard !isShuttingDown else {
            try? await connection.channel.executeThenClose { _, _ in }
            return .handled
        }
        // From here to registering the session there is no suspension, so two
        // connections to one peer racing through this point cannot both win.
        if let existing = sessions[peer] {
            // Two connections the same way round: the peer (or we) reconnected while
            // the old one was still ending; the new one wins. Crossing dials: both
            // sides keep the connection dialed by the peer with the smaller id.
            let keepNew =
                existing.dialed == dialedByUs
                || (dialedByUs ? identity.peerID : peer) < (existing.dialed ? identity.peerID : peer)
            guard keepNew else {
                try? await connection.channel.executeThenClose { _, _ in }
                return .handled
            }
            existing.close(reason: "replaced by a newer connection")
        }
        let session = PeerSession(
            peer: peer, dialed: dialedByUs, address: connection.remote, bytes: connection.bytes, documents: documents,
            store: store, configuration: configuration, clock: clock, logger: logger,
            blobExchange: blobExchange, sendLimiter: blobSendLimiter,
            maximumQueuedChunks: blobExchange?.configuration.maximumQueuedChunksPerPeer ?? 0,
            onAcknowledged: { [weak self] document, version in await self?.acknowledged(document, version, by: peer) },
            onOffers: { [weak self] offers, from in await self?.take(offers, from: from) ?? offers.map { _ in nil } })
        let isReplacement = sessions[peer] != nil
        sessions[peer] = session
        sessionsRegistered += 1
        let generation = sessionsRegistered
        if !isReplacement { broadcaster.publish(.connected(peer)) }
        if accessChanges != accessChangesBefore {
            // A share (or unshare) was made while the shares were read, and its
            // refresh went to the sessions registered then: read them again
            // (before the session runs, its documents are advertised once it is established).
            await refreshShares(with: peer, of: session, after: documents.map(\.id))
        }
        do {
            try await store.peerSeen(peer, from: connection.remote, at: clock.milliseconds)
        } catch {
            logger.warning("cannot note that \(peer.short) connected: \(error)")
        }
        logger.info("connected to \(peer.short) (\(connection.remote))")
        await blobExchange?.attach(session, generation: generation)
        await session.run(connection.channel)
        if let reason = session.goodbyeReason, reason == Message.pausedReason || reason == Message.legacyPausedReason {
            pausedByPeers.insert(peer)
        } else if session.peerName != nil {
            pausedByPeers.remove(peer)  // it said hello: not paused (any more)
        }
        if session.peerError == .unknownPeer {
            if waitingForAcceptanceBy.insert(peer).inserted {
                logger.notice(
                    "\(peer.short) does not know this daemon yet: a user there must accept it (storyteller peers accept \(identity.peerID.short))")
            }
        } else if session.peerName != nil {
            waitingForAcceptanceBy.remove(peer)
        }
        if let mismatch = session.versionMismatch {
            if upgradeNeeded.updateValue(mismatch, forKey: peer) != mismatch { logger.error("\(peer.short): \(mismatch)") }
        } else if session.peerName != nil {
            upgradeNeeded[peer] = nil
        }
        if let blobExchange, sessions[peer] === session { await blobExchange.detach(peer) }
        totals.add(sent: connection.bytes.sent, received: connection.bytes.received)
        if sessions[peer] === session {
            sessions[peer] = nil
            broadcaster.publish(.disconnected(peer))
        }
        logger.info("disconnected from \(peer.short)")
        return .handled
    }

    /// Publishes what a peer acknowledged, and whether that is all this daemon has.
    private func acknowledged(_ document: DocumentID, _ version: VersionVector, by peer: PeerID) async {
        do {
            let ours = try await store.version(of: document)
            broadcaster.publish(.acknowledged(peer, document, caughtUp: ours.isCovered(by: version), of: ours))
        } catch {
            logger.warning("cannot read the version to compare with what \(peer.short) acknowledged: \(error)", metadata: ["document": "\(document)"])
        }
    }

    /// A configured peer advertises a document this session does not sync.
    /// Taking it is the consent of this daemon (automatic when
    /// `acceptsOfferedDocuments`, else the offer is kept for a user to
    /// decide), never a right of the offerer: a document this daemon already
    /// holds is synced only with the members of its access list, so
    /// advertising one (or having been unshared) obtains nothing.
    func take(_ offers: [Message.Advertisement], from peer: PeerID) async -> [SyncSessionStateMachine.SharedDocument?] {
        enum Outcome: Sendable {
            case decided(OfferPolicy.Decision)
            case failed(String)
        }
        // A peer's [[peer]] auto-accept in the config, else what `peers set` stored, else accept-shares.
        let declared = configuration.acceptsOffers[peer]
        let fallback = configuration.acceptsOfferedDocuments
        let now = clock.milliseconds
        // One transaction for a burst of offers (a library of projects shared at once).
        let outcomes: [Outcome]
        do {
            outcomes = try await store.batch { store in
                let accepting = (try? declared ?? store.autoAcceptSettings()[peer]) ?? fallback
                defer {
                    // Offers kept for a user are bounded per peer: the oldest go (counted).
                    if !accepting, let dropped = try? store.pruneOffers(from: peer), dropped > 0 {
                        self.logger.notice(
                            "dropped \(dropped) older offer(s) of \(peer.short): at most \(store.options.maximumOffersPerPeer) wait per peer")
                    }
                }
                return offers.map { offer in
                    do {
                        var facts = OfferFacts(accepting: accepting)
                        facts.existing = try store.documentIfPresent(offer.document)
                        if let existing = facts.existing {
                            facts.farewell = try store.farewell(of: offer.document, to: peer)
                            if facts.farewell == nil { facts.sharedRole = try store.sharedRole(of: existing, with: peer) }
                        } else {
                            facts.purged = try store.purgedDocument(offer.document)
                            facts.declined = try store.isDeclined(offer.document, from: peer)
                        }
                        let decision = OfferPolicy.decide(offer, facts: facts)
                        switch decision {
                        case .existingFarewellKnown: try store.forgetFarewell(of: offer.document, to: peer)
                        case .take(let kind): try store.receiveDocument(offer.document, kind: kind, name: offer.name, from: peer, at: now)
                        case .keep(let kind): try store.recordOffer(offer.document, kind: kind, name: offer.name, from: peer, at: now)
                        default: break
                        }
                        return .decided(decision)
                    } catch {
                        return .failed("\(error)")
                    }
                }
            }
        } catch {
            logger.error("cannot take \(offers.count) document(s) from \(peer.short): \(error)")
            return offers.map { _ in nil }
        }
        var result: [SyncSessionStateMachine.SharedDocument?] = []
        for (offer, outcome) in zip(offers, outcomes) {
            guard case .decided(let decision) = outcome else {
                if case .failed(let error) = outcome { logger.error("cannot take \(offer.document) from \(peer.short): \(error)") }
                result.append(nil)
                continue
            }
            switch decision {
            case .invalid:
                result.append(nil)
            case .farewell(let kind, let cap):
                logger.info("\(peer.short) advertised \(kind) \(offer.document), which it lost its rights to while away; telling it")
                sessions[peer]?.farewell(offer.document, kind: offer.kind, theirs: offer.version, upTo: cap)
                result.append(nil)
            case .declined:
                logger.debug("\(peer.short) offers \(offer.document) again, which a user declined")
                result.append(nil)
            case .shared(let kind, let role):
                logger.debug("\(peer.short) advertised \(kind) \(offer.document), shared with it since this session began; syncing it")
                result.append(.init(id: offer.document, kind: offer.kind, peerRole: role))
            case .existing(let kind), .existingFarewellKnown(let kind):
                logger.notice("\(peer.short) advertised \(kind) \(offer.document), which is not shared with it here; ignored")
                result.append(nil)
            case .purged(let purged):
                logger.info(
                    "\(peer.short) offers \(purged.kind) \(offer.document) (\(offer.name)), purged here with nothing new since; not taken")
                result.append(nil)
            case .keep(let kind):
                broadcaster.publish(.offered(offer.document, by: peer))
                logger.info("\(peer.short) offers \(kind) \(offer.document) (\(offer.name)); kept for a user to accept")
                result.append(nil)
            case .take(let kind):
                await incoming?(offer.document, kind, offer.name, peer)
                logger.info("took \(kind) \(offer.document) (\(offer.name)) shared by \(peer.short)")
                result.append(.init(id: offer.document, kind: offer.kind, peerRole: .none))
            }
        }
        return result
    }

    /// Whether what each peer shares is taken without asking: its `auto-accept`
    /// in the config, else what a user set (`peers set`), else `accept-shares`.
    package func autoAccept(for peers: [PeerID]) async -> [PeerID: Bool] {
        let stored = (try? await store.autoAcceptSettings()) ?? [:]
        var result: [PeerID: Bool] = [:]
        for peer in peers { result[peer] = configuration.acceptsOffers[peer] ?? stored[peer] ?? configuration.acceptsOfferedDocuments }
        return result
    }

    /// Whether the config declares this peer's auto-accept (a user's setting does not override it).
    package nonisolated func declaresAutoAccept(for peer: PeerID) -> Bool { configuration.acceptsOffers[peer] != nil }

    /// Takes a document a peer offered that was kept for a user to decide:
    /// it is recorded as taken from that peer and synced at once if the peer
    /// is connected (else when it next is).
    /// - Throws: `StoreError(.notFound)` if nothing offers it.
    @discardableResult
    package func acceptOffer(_ document: DocumentID) async throws -> OfferRecord {
        guard let offer = try await store.offers().first(where: { $0.document == document }) else {
            throw StoreError(.notFound, "no peer offers \(document)", path: store.path)
        }
        try await store.receiveDocument(document, kind: offer.kind, name: offer.name, from: offer.peer, at: clock.milliseconds)
        await incoming?(document, offer.kind, offer.name ?? "", offer.peer)
        logger.info("took \(offer.kind) \(document) (\(offer.name ?? "")) offered by \(offer.peer.short), as a user chose")
        await sessions[offer.peer]?.share(.init(id: document, kind: UInt8(offer.kind.rawValue), peerRole: .none))
        return offer
    }

    /// Brings a new session in line with the peer's shares as they are now:
    /// each is shared again (a no-op for one the session has with that role;
    /// a new one or a new role is advertised), and those gone are refreshed.
    private func refreshShares(with peer: PeerID, of session: PeerSession, after initial: [DocumentID]) async {
        guard sessions[peer] === session else { return }
        do {
            let now = try await store.sharedDocuments(with: peer)
            let current = Set(now.map(\.record.id))
            for document in now {
                await session.share(.init(id: document.record.id, kind: UInt8(document.record.kind.rawValue), peerRole: document.role))
            }
            for id in initial where !current.contains(id) { await refreshShare(of: id, with: peer) }
        } catch {
            logger.error("cannot read the shares of \(peer.short) again: \(error)")
        }
    }

    /// Brings one document in line with its access list for one session:
    /// O(1) store reads, so a thousand access changes (a library shared at
    /// once) do not each walk every shared document.
    private func refreshShare(of id: DocumentID, with peer: PeerID) async {
        guard let session = sessions[peer] else { return }
        do {
            guard let record = try await store.documentIfPresent(id) else {
                session.forget(id)  // purged here: nothing of it is left to send
                return
            }
            // A project in the trash still syncs: a restore made elsewhere must arrive.
            guard let role = try await store.sharedRole(of: record, with: peer) else {
                if session.documentIDs.contains(id) { session.unshare(id, at: try await store.version(of: id)) }
                return
            }
            await session.share(.init(id: id, kind: UInt8(record.kind.rawValue), peerRole: role))
        } catch {
            logger.error("cannot read who shares \(id) to update \(peer.short)'s session: \(error)")
        }
    }

    private func dropRemovedPeers() async {
        let configured: Set<PeerID>
        do {
            configured = Set(try await store.peers().filter { $0.state == .configured }.map(\.id))
        } catch {
            logger.error("cannot read the configured peers: \(error)")
            return
        }
        for (peer, session) in sessions where !configured.contains(peer) {
            session.close(reason: "no longer a configured peer")
        }
    }
}
