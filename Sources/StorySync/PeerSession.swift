import Foundation
import Logging
import Metrics
import NIOCore
import StoryCore
import StoryIdentity
import StoryStore
import StoryTLS
import Synchronization

/// One live connection to a peer: runs a `SyncSessionStateMachine` and carries
/// out its actions against the store and the channel.
///
/// A reader task takes messages in and applies what they carry; it never
/// waits on the socket for writing, so two peers sending large batches at
/// each other cannot deadlock. A writer task sends what is queued, one bounded
/// batch at a time, waiting whenever the channel is not writable.
final class PeerSession: BlobLink, Sendable {
    let peer: PeerID
    /// Whether we dialed (true) or accepted (false) this connection.
    let dialed: Bool
    let address: String
    let bytes: ByteCounts
    private let store: Store
    private let configuration: SyncConfiguration
    private let clock: WallClock
    private let logger: Logger
    private let machine: Mutex<SyncSessionStateMachine>
    private let outbox: AsyncStream<Outgoing>.Continuation
    private let outboxStream: AsyncStream<Outgoing>
    /// Items posted to the outbox and not yet taken by the writer.
    private let waiting = Atomic<Int>(0)
    /// Takes (or keeps for a user) documents the peer offered; per offer, the document to sync, or nil.
    private let onOffers: @Sendable ([Message.Advertisement], PeerID) async -> [SyncSessionStateMachine.SharedDocument?]
    /// Told what the peer acknowledged of a document, once it is recorded.
    private let onAcknowledged: @Sendable (DocumentID, VersionVector) async -> Void
    /// This peer's round trips (metrics).
    private let pingRoundTrip: Metrics.Timer
    private let acknowledgementTime: Metrics.Timer
    /// Where blob messages go, and chunks come from (nil: this session moves no blobs).
    private let blobExchange: BlobExchange?
    private let sendLimiter: RateLimiter?
    /// Chunks the peer asked for, sent when nothing else waits; and whether
    /// a `.blobWork` item is in the outbox for them.
    private let chunkQueue = Mutex<(chunks: [(hash: BlobHash, index: UInt32)], head: Int, scheduled: Bool)>(([], 0, false))
    private let maximumQueuedChunks: Int
    /// The snapshot arriving in parts (the reader's), and whether its sender's
    /// right was checked from its header; bounded by the daemon's budget.
    private let assembly = Mutex<(parts: SnapshotAssembly?, isChecked: Bool)>((nil, false))
    /// Documents with a farewell in the outbox: removed from the session once
    /// it is sent, unless shared again meanwhile (then they sync on).
    private let leaving = Mutex<Set<DocumentID>>([])
    private let snapshotBudget: SnapshotBudget

    enum Outgoing: Sendable {
        case message(Message)
        case advertise(DocumentID)
        case sync(DocumentID)
        /// The peer left the document's access list: send it what it lacks up
        /// to `version` (the revocation, so it learns it), then stop syncing.
        case farewell(DocumentID, upTo: VersionVector)
        /// Send one queued blob chunk (then, if more wait, queue this again
        /// behind whatever arrived meanwhile: changes go first).
        case blobWork
        case close(SyncError?)
    }

    init(
        peer: PeerID, dialed: Bool, address: String, bytes: ByteCounts, documents: [SyncSessionStateMachine.SharedDocument],
        store: Store,
        configuration: SyncConfiguration, clock: WallClock, logger: Logger,
        blobExchange: BlobExchange? = nil, sendLimiter: RateLimiter? = nil, maximumQueuedChunks: Int = 512,
        onAcknowledged: @escaping @Sendable (DocumentID, VersionVector) async -> Void = { _, _ in },
        onOffers: @escaping @Sendable ([Message.Advertisement], PeerID) async -> [SyncSessionStateMachine.SharedDocument?]
    ) {
        self.peer = peer
        self.dialed = dialed
        self.address = address
        self.bytes = bytes
        self.store = store
        self.configuration = configuration
        self.clock = clock
        var logger = logger
        logger[metadataKey: "peer"] = "\(peer.short)"
        self.logger = logger
        self.onOffers = onOffers
        self.onAcknowledged = onAcknowledged
        self.blobExchange = blobExchange
        self.sendLimiter = sendLimiter
        self.maximumQueuedChunks = maximumQueuedChunks
        snapshotBudget = configuration.snapshotBudget
        pingRoundTrip = SyncMetrics.pingRoundTrip(peer)
        acknowledgementTime = SyncMetrics.acknowledgement(peer)
        machine = Mutex(
            SyncSessionStateMachine(
                configuration: .init(
                    localName: configuration.name, pingInterval: configuration.pingInterval,
                    idleTimeout: configuration.idleTimeout, maximumSnapshotBytes: configuration.maximumSnapshotBytes),
                documents: documents))
        (outboxStream, outbox) = AsyncStream<Outgoing>.makeStream()
    }

    var isEstablished: Bool { machine.withLock { $0.isEstablished } }
    var peerName: String? { machine.withLock { $0.peerName } }
    /// When the peer last sent more than keepalives (nil: nothing yet).
    var lastActivity: ContinuousClock.Instant? { machine.withLock { $0.lastActivity } }
    /// Why the peer said goodbye, if it did (`Message.pausedReason`: it paused sync with this daemon).
    var goodbyeReason: String? { machine.withLock { $0.goodbyeReason } }
    /// The error the peer closed with (`unknownPeer`: it has not accepted us yet).
    var peerError: SyncError.Code? { machine.withLock { $0.peerError } }
    /// The two sides speak different protocols: which side to upgrade.
    var versionMismatch: String? { machine.withLock { $0.versionMismatch } }

    /// Stores the name the peer gave in its hello, so `peers` and `watch`
    /// still name it once it has gone (and after a restart).
    private func keepAnnouncedName() async {
        guard let name = peerName, !name.isEmpty else { return }
        do {
            try await store.setAnnouncedName(name, of: peer)
        } catch {
            logger.warning("cannot keep the name \(peer.short) announced: \(error)")
        }
    }
    var documentIDs: [DocumentID] { machine.withLock { $0.documentIDs } }
    var blobDocumentIDs: [DocumentID] { machine.withLock { $0.mutuallyAdvertisedDocumentIDs } }

    /// What the peer is known to have of each document it advertised.
    var peerVersions: [DocumentID: VersionVector] {
        machine.withLock { machine in
            var versions: [DocumentID: VersionVector] = [:]
            for id in machine.documentIDs { if let version = machine.peerVersion(of: id) { versions[id] = version } }
            return versions
        }
    }

    /// Runs until either side closes, the peer goes silent, or the task is cancelled.
    ///
    /// Only the writer ends a session normally: the reader and the ticker queue
    /// a close and wait, so an Error or Goodbye they queued is sent first. A
    /// writer stuck on a peer that stopped reading is cut off after 5 s.
    func run(_ channel: NIOAsyncChannel<Message, Message>) async {
        do {
            try await channel.executeThenClose { inbound, outbound in
                // Start before the reader exists: a Hello that arrives first must
                // find the machine waiting for it.
                await self.perform(self.machine.withLock { $0.start(now: .now) })
                let queue = InboundQueue(capacity: Self.queueBytes)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await self.write(outbound) }
                    group.addTask {
                        await self.read(inbound, into: queue)
                        await self.lingerForWriter()
                    }
                    group.addTask {
                        await self.process(queue)
                        await self.lingerForWriter()
                    }
                    group.addTask {
                        await self.tick()
                        await self.lingerForWriter()
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.info("connection ended: \(error)")
        }
        outbox.finish()
        // What it left waiting for dependencies is sent again by whoever has it.
        await store.dropHeldBack(from: peer)
    }

    // MARK: - Events from the peer manager

    /// A document changed here: push it if the peer takes it.
    func documentChanged(_ id: DocumentID) {
        for action in machine.withLock({ $0.documentChanged(id) }) { enqueue(action) }
    }

    /// A document is now shared with this peer.
    func share(_ document: SyncSessionStateMachine.SharedDocument) async {
        leaving.withLock { _ = $0.remove(document.id) }
        await perform(machine.withLock { $0.addDocument(document) })
    }

    /// The peer advertised a document it lost its rights to while away: send
    /// it what it lacks up to `version` (the revocation), then stop.
    func farewell(_ id: DocumentID, kind: UInt8, theirs: VersionVector, upTo version: VersionVector) {
        machine.withLock { $0.bidFarewell(id, kind: kind, theirs: theirs) }
        leaving.withLock { _ = $0.insert(id) }
        post(.farewell(id, upTo: version))
    }

    /// The peer left a document's access list (its version now is `version`).
    func unshare(_ id: DocumentID, at version: VersionVector) {
        leaving.withLock { _ = $0.insert(id) }
        post(.farewell(id, upTo: version))
    }

    /// Stops syncing a document that is gone here (purged), sending nothing.
    func forget(_ id: DocumentID) {
        machine.withLock { $0.removeDocument(id) }
    }

    /// Says Goodbye and closes.
    func close(reason: String) {
        for action in machine.withLock({ $0.close(reason: reason) }) { enqueue(action) }
    }

    // MARK: - Blobs

    func sendBlobMessage(_ message: Message) {
        post(.message(message))
    }

    func queueChunks(_ hash: BlobHash, _ indices: [UInt32]) -> Bool {
        let schedule: Bool? = chunkQueue.withLock { queue in
            guard queue.chunks.count - queue.head + indices.count <= maximumQueuedChunks else { return nil }
            queue.chunks.append(contentsOf: indices.map { (hash, $0) })
            defer { queue.scheduled = true }
            return !queue.scheduled
        }
        guard let schedule else { return false }
        if schedule { post(.blobWork) }
        return true
    }

    /// The next queued chunk, or nil (and no longer scheduled).
    private func nextChunk() -> (hash: BlobHash, index: UInt32)? {
        chunkQueue.withLock { queue in
            guard queue.head < queue.chunks.count else {
                queue.scheduled = false
                queue.chunks.removeAll(keepingCapacity: true)
                queue.head = 0
                return nil
            }
            defer {
                queue.head += 1
                if queue.head > 256 {
                    queue.chunks.removeFirst(queue.head)
                    queue.head = 0
                }
            }
            return queue.chunks[queue.head]
        }
    }

    private func sendChunk(_ outbound: NIOAsyncChannelOutboundWriter<Message>) async throws {
        guard let (hash, index) = nextChunk() else { return }
        // More wait: come back after whatever was queued meanwhile.
        defer { post(.blobWork) }
        guard let blobs = blobExchange?.blobs else { return }
        let bytes: [UInt8]
        do {
            bytes = try await blobs.readChunk(hash, index: Int(index))
        } catch {
            logger.warning("cannot read chunk \(index) of blob \(hash): \(error)")
            try await outbound.write(.blobUnavailable(hash: hash, reason: "this daemon cannot read it now"))
            return
        }
        if let sendLimiter { await sendLimiter.take(bytes.count) }
        try await outbound.write(.blobChunk(hash: hash, index: index, bytes: bytes[...]))
    }

    // MARK: - Carrying out actions

    /// Queues an item for the writer.
    private func post(_ item: Outgoing) {
        waiting.add(1, ordering: .relaxed)
        outbox.yield(item)
    }

    private func enqueue(_ action: SyncSessionStateMachine.Action) {
        switch action {
        case .send(let message): post(.message(message))
        case .advertise(let id): post(.advertise(id))
        case .sync(let id): post(.sync(id))
        case .close(let error): post(.close(error))
        case .log(let text): logger.notice("\(text)")
        case .measured(.ping, let duration): pingRoundTrip.record(duration: duration)
        case .measured(.acknowledgement, let duration): acknowledgementTime.record(duration: duration)
        case .apply, .mergeSnapshot, .keepSnapshotPart, .recordAcknowledged, .offered, .blob:
            preconditionFailure("store and blob actions run in the reader")
        }
    }

    /// Carries out actions in order; store actions are grouped (`Pending`)
    /// and stored together when the group is flushed.
    private func perform(_ actions: [SyncSessionStateMachine.Action]) async {
        var pending = Pending()
        await perform(actions, collecting: &pending)
        await flush(&pending)
    }

    private func perform(_ actions: [SyncSessionStateMachine.Action], collecting pending: inout Pending) async {
        for action in actions {
            switch action {
            case .apply(let id, let batch): pending.applies.append((id, batch))
            case .recordAcknowledged(let id, let version): pending.acknowledgements.append((id, version))
            case .offered(let advertisement): pending.offers.append(advertisement)
            case .blob(let message):
                if let blobExchange, !blobExchange.hand(message, from: peer) { await blobExchange.receive(message, from: peer) }
            case .mergeSnapshot(let id, _, let bytes):
                await flush(&pending)
                await merge(id, snapshot: bytes)
            case .keepSnapshotPart(let id, let kind, let total, let bytes, let isFirst, let isLast, let senderMayWrite):
                await keep(
                    part: bytes, of: id, kind: kind, total: total, isFirst: isFirst, isLast: isLast, senderMayWrite: senderMayWrite, pending: &pending
                )
            case .sync(let id) where pending.applies.contains(where: { $0.0 == id }):
                // What the peer sent of it must count before working out what it lacks.
                await flush(&pending)
                enqueue(action)
            default:
                enqueue(action)
            }
        }
    }

    /// Store actions waiting to be carried out together.
    private struct Pending {
        var offers: [Message.Advertisement] = []
        var applies: [(DocumentID, ArraySlice<UInt8>)] = []
        var acknowledgements: [(DocumentID, VersionVector)] = []

        var isEmpty: Bool { offers.isEmpty && applies.isEmpty && acknowledgements.isEmpty }
    }

    /// Stores what is pending: offers taken first (a document must exist
    /// before changes to it are applied), then changes, then what the peer
    /// acknowledged; each kind in one transaction.
    private func flush(_ pending: inout Pending) async {
        guard !pending.isEmpty else { return }
        let (offers, applies, acknowledgements) = (pending.offers, pending.applies, pending.acknowledgements)
        pending = Pending()
        if !offers.isEmpty {
            let taken = await onOffers(offers, peer)
            for (offer, shared) in zip(offers, taken) {
                if let shared {
                    await perform(machine.withLock { $0.addDocument(shared) })
                } else {
                    logger.info("not taking \(offer.name) offered by the peer", metadata: ["document": "\(offer.document)"])
                }
            }
        }
        if !applies.isEmpty { await apply(applies) }
        if !acknowledgements.isEmpty { await acknowledge(acknowledgements) }
    }

    private func acknowledge(_ acknowledgements: [(DocumentID, VersionVector)]) async {
        let (peer, now) = (self.peer, clock.milliseconds)
        do {
            try await store.batch { store in
                for (id, version) in acknowledgements { try store.acknowledge(version, of: id, by: peer, at: now) }
            }
        } catch {
            logger.warning("cannot record what the peer acknowledged of \(acknowledgements.count) document(s): \(error)")
            return
        }
        for (id, version) in acknowledgements { await onAcknowledged(id, version) }
    }

    /// Applies the peer's change batches of one or many documents in one
    /// transaction (each document all or nothing on its own), then
    /// acknowledges each. The first that fails closes the session, as a
    /// single failed batch does.
    private func apply(_ items: [(DocumentID, ArraySlice<UInt8>)]) async {
        var decoded: [(id: DocumentID, changes: ReceivedChanges, received: VersionVector)] = []
        for (id, bytes) in items {
            do {
                let changes = try ChangeBatch.decodeReceived(bytes)
                let received = changes.newest
                machine.withLock { $0.receiving(id, upTo: received) }
                decoded.append((id, changes, received))
            } catch {
                await perform(machine.withLock { $0.applyFailed(id, error: SyncError(.malformed, "\(error)")) })
                return
            }
        }
        let started = ContinuousClock.now
        let (peer, now) = (self.peer, clock.milliseconds)
        // What the peer has of each: what it advertised, acknowledged and now
        // sent. Recorded with the changes (as an Ack would be), so a peer that
        // only ever sends here is not shown as behind (`storyteller status`).
        let work = decoded.map { item in
            (item.id, item.changes, machine.withLock { $0.peerVersion(of: item.id) } ?? item.received)
        }
        let results: [Result<VersionVector, any Error>]
        do {
            results = try await store.batch { store in
                work.map { id, changes, peerHas in
                    Result { () throws -> VersionVector in
                        try store.apply(changes, to: id, from: peer)
                        // Bookkeeping: if it fails, the last acknowledgement stands.
                        try? store.acknowledge(peerHas, of: id, by: peer, at: now)
                        return try store.version(of: id)
                    }
                }
            }
        } catch {
            logger.error("cannot store changes of \(decoded.count) document(s): \(error)")
            await perform(machine.withLock { $0.applyFailed(decoded[0].id, error: SyncError(.internalError, "the receiver could not store them")) })
            return
        }
        SyncMetrics.batchApply.record(duration: ContinuousClock.now - started)
        for (item, result) in zip(decoded, results) {
            switch result {
            case .success(let version):
                await perform(machine.withLock { $0.applied(item.id, received: item.received, version: version) })
            case .failure(let error as DocumentError):
                await perform(machine.withLock { $0.applyFailed(item.id, error: Self.syncError(for: error)) })
                return
            case .failure(let error):
                logger.error("cannot store changes: \(error)", metadata: ["document": "\(item.id)"])
                await perform(machine.withLock { $0.applyFailed(item.id, error: SyncError(.internalError, "the receiver could not store them")) })
                return
            }
        }
    }

    /// The wire error for changes or a snapshot the document refused.
    static func syncError(for error: DocumentError) -> SyncError {
        switch error.code {
        case .forbidden, .unauthenticated: SyncError(.forbidden, error.message)
        case .limitExceeded: SyncError(.heldBackLimit, error.message)
        case .replicaReused: SyncError(.replicaConflict, error.message)
        default: SyncError(.invalidChange, error.message)
        }
    }

    /// Keeps a part of a snapshot arriving in parts (`SnapshotAssembly`:
    /// a few megabytes in memory, the rest on disk). As soon as the
    /// snapshot's header has arrived, a sender the access list here does not
    /// know as an owner or editor (a document taken from it, not founded yet)
    /// must be one by the snapshot's own access list, or it is refused then,
    /// before the rest is kept. The last part merges it, one whole snapshot
    /// at a time over the daemon.
    private func keep(
        part bytes: ArraySlice<UInt8>, of id: DocumentID, kind: UInt8, total: UInt64, isFirst: Bool, isLast: Bool, senderMayWrite: Bool,
        pending: inout Pending
    ) async {
        let refusal: SyncError? = assembly.withLock { assembly in
            if isFirst {
                assembly = (
                    SnapshotAssembly(
                        document: id, kind: kind, total: total, budget: snapshotBudget,
                        directory: configuration.scratchDirectory ?? (NSTemporaryDirectory() + "/storyteller-snapshots")),
                    senderMayWrite
                )
            }
            guard let parts = assembly.parts, parts.document == id else { return SyncError(.malformed, "a snapshot part of \(id) out of turn") }
            do throws(SyncError) {
                try parts.append(bytes)
            } catch {
                assembly = (nil, false)
                return error
            }
            if !assembly.isChecked {
                if let header = parts.header {
                    guard header.document == id, header.isLibrary == (kind == 2) else {
                        assembly = (nil, false)
                        return SyncError(.malformed, "a snapshot of \(header.document) sent as \(id)")
                    }
                    guard header.role(of: peer).canWrite else {
                        assembly = (nil, false)
                        return SyncError(
                            .forbidden, "\(peer.short) may not send a snapshot of \(id): its access list does not make it an owner or editor")
                    }
                    assembly.isChecked = true
                } else if let problem = parts.headerError {
                    assembly = (nil, false)
                    return SyncError(.malformed, "the snapshot of \(id) does not begin as a snapshot does: \(problem)")
                } else if parts.headerIsOverdue {
                    assembly = (nil, false)
                    return SyncError(.malformed, "the snapshot of \(id) does not begin with a header that says who may send it")
                }
            }
            return nil
        }
        if let refusal {
            logger.notice("refused a snapshot of \(id): \(refusal.message)")
            await perform(machine.withLock { $0.applyFailed(id, error: refusal) })
            return
        }
        guard isLast else { return }
        guard
            let parts = assembly.withLock({ assembly in
                defer { assembly = (nil, false) }
                return assembly.parts
            })
        else { return }
        await flush(&pending)
        await snapshotBudget.merges.run {
            do throws(SyncError) {
                let whole = try parts.whole()
                await merge(id, snapshot: whole[...])
            } catch {
                await perform(machine.withLock { $0.applyFailed(id, error: error) })
            }
        }
    }

    private func merge(_ id: DocumentID, snapshot bytes: ArraySlice<UInt8>) async {
        do {
            let snapshot = Array(bytes)
            let summary = try SnapshotSummary(reading: snapshot)
            guard summary.document == id else { throw SyncError(.malformed, "a snapshot of \(summary.document) sent as \(id)") }
            machine.withLock { $0.receiving(id, upTo: summary.version) }
            try await store.merge(snapshot: snapshot, into: id, from: peer, at: clock.milliseconds)
            // What the peer has: what its snapshot covers, not all we have now
            // (our own changes it lacks must still go to it).
            let version = try await store.version(of: id)
            await perform(machine.withLock { $0.applied(id, received: summary.version, version: version) })
        } catch let error as StoreError {
            logger.error("cannot store the snapshot: \(error)", metadata: ["document": "\(id)"])
            await perform(machine.withLock { $0.applyFailed(id, error: SyncError(.internalError, "the receiver could not store it")) })
        } catch let error as DocumentError {
            await perform(machine.withLock { $0.applyFailed(id, error: Self.syncError(for: error)) })
        } catch let error as SyncError {
            await perform(machine.withLock { $0.applyFailed(id, error: error) })
        } catch {
            await perform(machine.withLock { $0.applyFailed(id, error: SyncError(.invalidChange, "\(error)")) })
        }
    }

    // MARK: - Tasks

    /// Bytes of messages read ahead of the processor.
    static let queueBytes = 8 << 20
    /// At most this much is taken for one group (one transaction per kind).
    static let groupBytes = 1 << 20

    /// Reads messages into the queue until the peer closes or sends bad bytes.
    private func read(_ inbound: NIOAsyncChannelInboundStream<Message>, into queue: InboundQueue) async {
        do {
            for try await message in inbound {
                await queue.push(message)
                if Task.isCancelled { break }
            }
            queue.finish(.closed)
        } catch let error as SyncError {
            queue.finish(.malformed(error))
        } catch {
            queue.finish(.failed("\(error)"))
        }
    }

    /// Takes what was read, in order, as groups: everything that arrived
    /// while the last group was stored is stored together.
    private func process(_ queue: InboundQueue) async {
        while !Task.isCancelled {
            let (messages, end) = await queue.take(maximumBytes: Self.groupBytes)
            // Shutting down: what was read and not stored is sent again next time.
            if Task.isCancelled { return }
            var pending = Pending()
            for message in messages {
                let wasEstablished = machine.withLock { $0.isEstablished }
                await perform(machine.withLock { $0.receive(message, now: .now) }, collecting: &pending)
                // The peer now shares a document both ways: its blobs may be asked for.
                if case .advertise = message { await blobExchange?.documentsChanged() }
                if !wasEstablished, machine.withLock({ $0.isEstablished }) {
                    await blobExchange?.established(peer)
                    await keepAnnouncedName()
                }
                if machine.withLock({ $0.isClosed }) {
                    await flush(&pending)
                    return
                }
            }
            await flush(&pending)
            if machine.withLock({ $0.isClosed }) { return }
            switch end {
            case nil: continue
            case .closed?:
                logger.info("the peer closed the connection")
                post(.close(nil))
                return
            case .malformed(let error)?:
                logger.warning("bad bytes from the peer: \(error)")
                await perform(machine.withLock { $0.protocolError(error) })
                return
            case .failed(let reason)?:
                logger.info("read failed: \(reason)")
                post(.close(nil))
                return
            }
        }
    }

    /// Waits (at most 5 s, less if cancelled) for the writer to send what is
    /// queued and end the session.
    private func lingerForWriter() async {
        try? await Task.sleep(for: .seconds(5))
    }

    /// Sends what is queued. While more items wait, the messages they make
    /// are held (`OutboundRun`) and leave together when the outbox runs dry:
    /// a catch-up of many small documents goes out in a few writes, and the
    /// peer stores it in a few transactions; a lone item (a live edit, an
    /// acknowledgement) goes at once.
    private func write(_ outbound: NIOAsyncChannelOutboundWriter<Message>) async throws {
        var run = OutboundRun(outbound: outbound)
        for await item in outboxStream {
            waiting.subtract(1, ordering: .relaxed)
            switch item {
            case .message(let message):
                try await run.write(message)
            case .advertise(let id):
                if let advertisement = try await advertisement(of: id) { try await run.write(.advertise(advertisement)) }
            case .sync(let id):
                try await sendMissing(id, &run)
            case .farewell(let id, let version):
                try await sendMissing(id, &run, upTo: version)
                // Shared again while the farewell waited: it syncs on (the new share is a change like any).
                if leaving.withLock({ $0.remove(id) != nil }) { machine.withLock { $0.removeDocument(id) } }
            case .blobWork:
                // Chunks wait on the send rate: what is held goes first.
                try await run.flush()
                try await sendChunk(outbound)
            case .close(let error):
                try await run.flush()
                if let error { logger.notice("closing: \(error)") }
                return
            }
            if waiting.load(ordering: .relaxed) <= 0 { try await run.flush() }
        }
        try await run.flush()
    }

    private func advertisement(of id: DocumentID) async throws -> Message.Advertisement? {
        guard machine.withLock({ $0.documentIDs.contains(id) }) else { return nil }
        let record = try await store.document(id)
        let role = try await store.members(of: id).first { $0.peer == peer }?.role ?? .none
        return Message.Advertisement(
            document: id, kind: UInt8(record.kind.rawValue), name: record.name ?? "", role: role,
            version: try await store.version(of: id))
    }

    /// Sends the peer what it lacks of a document, in bounded batches (each
    /// replica's run in a batch ends at a change whose signature was checked
    /// here; see `ChangeBatch.split`).
    ///
    /// Nothing goes to a peer that is not a member now (the access list in the
    /// store, changed in the same transaction as a revocation), except, with
    /// `cap`, what it lacks up to the revocation.
    private func sendMissing(_ id: DocumentID, _ outbound: inout OutboundRun, upTo cap: VersionVector? = nil) async throws {
        guard let known = machine.withLock({ $0.knownVersion(of: id) }) else { return }
        if cap == nil {
            guard try await store.members(of: id).contains(where: { $0.peer == peer && $0.role >= .reader }) else { return }
        }
        let ours = try await store.version(of: id)
        guard !ours.isCovered(by: known) else { return }
        if cap == nil, ours.changeCount(beyond: known) >= configuration.snapshotCatchUpChanges,
            let (snapshot, version) = try await store.catchUpSnapshot(of: id)
        {
            // Far behind: the snapshot, then what came after it.
            try await send(snapshot: snapshot, of: id, &outbound)
            machine.withLock { $0.sent(id, upTo: version, at: .now) }
            if case .changes(let changes) = try await store.changes(of: id, since: known.union(version)) {
                try await send(changes, of: id, &outbound)
            }
            return
        }
        switch try await store.changes(of: id, since: known) {
        case .changes(var changes):
            if let cap { changes = changes.filter { $0.seq <= cap[$0.replica] } }
            try await send(changes, of: id, &outbound)
        case .snapshotRequired:
            guard cap == nil else { return }
            try await send(snapshot: try await store.snapshot(of: id), of: id, &outbound)
            machine.withLock { $0.sent(id, upTo: ours, at: .now) }
        }
    }

    /// Changes in bounded batches.
    private func send(_ changes: [EncodedChange], of id: DocumentID, _ outbound: inout OutboundRun) async throws {
        for batch in ChangeBatch.split(changes, targetBytes: configuration.batchBytes) {
            try await outbound.write(.changes(document: id, batch: ChangeBatch.encode(batch)[...]))
            var sent = VersionVector()
            for change in batch where change.seq > sent[change.replica] { sent[change.replica] = change.seq }
            machine.withLock { $0.sent(id, upTo: sent, at: .now) }
        }
    }

    /// A snapshot: in one frame, or in parts to a peer that takes them.
    private func send(snapshot: [UInt8], of id: DocumentID, _ outbound: inout OutboundRun) async throws {
        let kind = UInt8(try await store.document(id).kind.rawValue)
        let partBytes = max(1, configuration.snapshotPartBytes)
        guard snapshot.count > partBytes, machine.withLock({ $0.peerTakesSnapshotParts }) else {
            try await outbound.write(.snapshot(document: id, kind: kind, bytes: snapshot[...]))
            return
        }
        var offset = 0
        while offset < snapshot.count {
            let end = min(offset + partBytes, snapshot.count)
            try await outbound.write(
                .snapshotPart(document: id, kind: kind, total: UInt64(snapshot.count), offset: UInt64(offset), bytes: snapshot[offset..<end]))
            offset = end
        }
    }

    private func tick() async {
        let interval = min(Duration.seconds(1), configuration.pingInterval / 3)
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            await perform(machine.withLock { $0.tick(now: .now) })
            if machine.withLock({ $0.isClosed }) { return }
        }
    }

}

extension VersionVector {
    /// How many changes this vector holds that `other` lacks (a replica's
    /// sequence numbers run without gaps).
    func changeCount(beyond other: VersionVector) -> UInt64 {
        sortedEntries.reduce(0) { sum, entry in sum + (entry.seq > other[entry.replica] ? entry.seq - other[entry.replica] : 0) }
    }
}

/// Messages written in runs (`PeerSession.write`): held until `flush`, or
/// until 256 of them or 256 KiB of payload are held, then written with one
/// flush of the channel.
struct OutboundRun {
    let outbound: NIOAsyncChannelOutboundWriter<Message>
    private var held: [Message] = []
    private var heldBytes = 0
    static let maximumMessages = 256
    static let maximumBytes = 256 << 10

    init(outbound: NIOAsyncChannelOutboundWriter<Message>) { self.outbound = outbound }

    mutating func write(_ message: Message) async throws {
        held.append(message)
        heldBytes += message.payloadBytes
        if held.count >= Self.maximumMessages || heldBytes >= Self.maximumBytes { try await flush() }
    }

    /// Writes what is held.
    mutating func flush() async throws {
        guard !held.isEmpty else { return }
        let messages = held
        held.removeAll(keepingCapacity: true)
        heldBytes = 0
        try await outbound.write(contentsOf: messages)
    }
}

extension Message {
    /// The bytes a message carries beyond its header (about; for bounding runs).
    var payloadBytes: Int {
        switch self {
        case .changes(_, let bytes), .snapshot(_, _, let bytes), .snapshotPart(_, _, _, _, let bytes), .blobChunk(_, _, let bytes): bytes.count
        default: 64
        }
    }
}
