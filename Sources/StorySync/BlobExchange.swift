package import Logging
package import StoryCore
package import StoryStore
import Synchronization

/// How blobs move between daemons.
package struct BlobExchangeConfiguration: Sendable {
    /// Chunks asked for and not yet received, per transfer: enough to keep a
    /// fast link busy (4 × 256 KiB = 1 MiB in flight: 300 MB/s on loopback),
    /// few enough that a change sent meanwhile waits behind at most that
    /// much on the wire (3 ms at that rate; 16 chunks made it 10 ms).
    package var window = 4
    /// Chunk requests one peer may have queued here; more are refused.
    package var maximumQueuedChunksPerPeer = 512
    /// Bytes per second sent or received as blob chunks, over all peers;
    /// nil: unlimited (`max-send-kbps`, `max-recv-kbps`).
    package var maximumSendRate: Int?
    package var maximumReceiveRate: Int?
    /// A peer that failed to give a blob is not asked for it again for this long
    /// (unless it says it has it).
    package var retryAfter: Duration = .seconds(30)
    /// A peer that refused a blob (it does not hold it yet, or does not yet
    /// know the document is shared with this daemon: a share still on its
    /// way) is asked again after this, doubling with each refusal up to
    /// `retryAfter`.
    package var refusalRetryAfter: Duration = .seconds(2)
    /// A chunk asked for and not received in this long is asked for again.
    package var chunkTimeout: Duration = .seconds(20)
    /// Chunks whose bytes do not match their hash, per transfer and peer,
    /// before that peer is given up for the blob.
    package var maximumBadChunks = 4
    /// The media this daemon takes: blobs of other types are neither fetched nor served.
    package var acceptedTypes = Set(MediaType.allCases)

    package init() {}
}

/// Something a blob transfer did (for the control API's events).
package enum BlobEvent: Sendable, Hashable {
    case started(BlobHash, from: PeerID, bytes: UInt64)
    /// Every 10 % or so.
    case progressed(BlobHash, from: PeerID, held: UInt64, total: UInt64)
    case completed(BlobHash, from: PeerID, bytes: UInt64)
    case failed(BlobHash, from: PeerID, reason: String)
}

/// A transfer as `media status` shows it.
package struct BlobTransferStatus: Sendable, Hashable {
    package var hash: BlobHash
    package var type: MediaType
    package var peer: PeerID?
    package var totalBytes: UInt64
    package var heldBytes: UInt64
    /// Bytes per second since the transfer started.
    package var rate: Double
    package var documents: [DocumentID]
}

/// What a blob exchange needs of a connection: sending, in two priorities.
protocol BlobLink: AnyObject, Sendable {
    var peer: PeerID { get }
    /// Both Hellos were said: blob messages may be sent.
    var isEstablished: Bool { get }
    /// Documents both sides advertised: blobs they reference are asked for
    /// and served. (Before the peer advertises a document, it may not know it
    /// is shared with this daemon yet, and would refuse.)
    var blobDocumentIDs: [DocumentID] { get }
    /// Sends a message before any queued chunk.
    func sendBlobMessage(_ message: Message)
    /// Queues chunks to send when nothing else waits; false when too many are queued.
    func queueChunks(_ hash: BlobHash, _ indices: [UInt32]) -> Bool
}

/// Moves images and sounds between this daemon and its peers
/// (docs/protocol.md, "Blobs"): fetches every blob a document here references
/// and this daemon lacks, in chunks checked against the sender's manifest,
/// several in flight, resuming from the chunks already held after a
/// disconnect or a restart; serves the blobs of documents shared with a peer,
/// and nothing else, at a lower priority than changes.
package actor BlobExchange {
    let blobs: BlobStore
    let store: Store
    let configuration: BlobExchangeConfiguration
    let logger: Logger
    let broadcaster = EventBroadcaster<BlobEvent>()

    private var links: [PeerID: any BlobLink] = [:]
    /// The registration number of each peer's attached session (`attach`).
    private var linkGenerations: [PeerID: Int] = [:]
    /// Which peer, which chunks, when to ask again and when to give up.
    private var machine: BlobTransferStateMachine
    private var transfers: [BlobHash: BlobTransferStateMachine.Transfer] { machine.transfers }
    private var pumpScheduled = false
    private let receiveLimiter: RateLimiter?
    /// Chunks as they arrive, stored by a task of their own (`storeChunks`):
    /// a session's reader hands a chunk over and goes on to the next message,
    /// so a change behind a chunk never waits for a disk write.
    private nonisolated let arrivals: AsyncStream<(Message, PeerID)>.Continuation
    /// Bytes handed over and not yet stored; beyond `maximumPendingBytes` a
    /// reader stores the chunk itself (and so reads no further meanwhile).
    private nonisolated let pendingBytes = Mutex(0)
    static let maximumPendingBytes = 32 << 20
    private let arrivalStream: AsyncStream<(Message, PeerID)>
    private var storing: Task<Void, Never>?

    package init(blobs: BlobStore, store: Store, configuration: BlobExchangeConfiguration = .init(), logger: Logger) {
        self.blobs = blobs
        self.store = store
        self.configuration = configuration
        self.logger = logger
        machine = BlobTransferStateMachine(
            limits: .init(
                window: configuration.window, retryAfter: configuration.retryAfter, refusalRetryAfter: configuration.refusalRetryAfter,
                chunkTimeout: configuration.chunkTimeout, maximumBadChunks: configuration.maximumBadChunks))
        receiveLimiter = configuration.maximumReceiveRate.map { RateLimiter(bytesPerSecond: $0) }
        // Unbounded in type, bounded in fact: only chunks this daemon asked
        // for are taken (`window` per transfer), the rest are dropped unread.
        (arrivalStream, arrivals) = AsyncStream.makeStream()
    }

    deinit {
        arrivals.finish()
        storing?.cancel()
    }

    /// Takes a message from a session's reader without waiting: chunks are
    /// stored in arrival order by their own task, the rest handled at once.
    /// - Returns: false when too much is waiting already: the caller
    ///   `receive`s the message itself, which holds its reader back.
    nonisolated func hand(_ message: Message, from peer: PeerID) -> Bool {
        let size = Self.size(of: message)
        let taken = pendingBytes.withLock { pending in
            guard pending + size <= Self.maximumPendingBytes else { return false }
            pending += size
            return true
        }
        if taken { arrivals.yield((message, peer)) }
        return taken
    }

    private static func size(of message: Message) -> Int {
        if case .blobChunk(_, _, let bytes) = message { return bytes.count + 64 }
        return 64
    }

    private func storeArrivals() {
        guard storing == nil else { return }
        let stream = arrivalStream
        storing = Task { [weak self] in
            for await (message, peer) in stream {
                guard let self else { return }
                await self.receive(message, from: peer)
                self.pendingBytes.withLock { $0 -= Self.size(of: message) }
            }
        }
    }

    /// Transfer events as they happen.
    package nonisolated func events() -> AsyncStream<BlobEvent> { broadcaster.subscribe() }

    /// Transfers in progress.
    package func status() -> [BlobTransferStatus] {
        transfers.values.map { transfer in
            let seconds =
                Double((ContinuousClock.now - transfer.started).components.attoseconds) / 1e18
                + Double((ContinuousClock.now - transfer.started).components.seconds)
            return BlobTransferStatus(
                hash: transfer.media.hash, type: transfer.media.type, peer: transfer.source, totalBytes: transfer.media.byteCount,
                heldBytes: transfer.heldBytes, rate: seconds > 0 ? Double(transfer.received) / seconds : 0,
                documents: transfer.documents.sorted())
        }.sorted { $0.hash.description < $1.hash.description }
    }

    /// Peers known to hold a blob.
    package func holders(of hash: BlobHash) -> Set<PeerID> { machine.holders[hash] ?? [] }

    // MARK: - Connections

    func attach(_ link: any BlobLink, generation: Int) {
        storeArrivals()
        // A session registered before the one attached already (its attach
        // was held up) is ending: keeping its link would send every answer
        // to that peer where nobody reads it.
        if let newest = linkGenerations[link.peer], newest > generation { return }
        linkGenerations[link.peer] = generation
        if links[link.peer] != nil {
            // A newer connection to the peer replaces one still ending: what was
            // asked over the old one is answered there, or not at all, so
            // those transfers start again over this one (chunks held are kept).
            _ = machine.replacedLink(to: link.peer)
        }
        links[link.peer] = link
        schedulePump()
    }

    /// A connection said its Hello: what it may have can now be asked for.
    func established(_ peer: PeerID) { schedulePump() }

    func detach(_ peer: PeerID) {
        links[peer] = nil
        for hash in machine.detached(peer) {
            broadcaster.publish(.failed(hash, from: peer, reason: "the peer disconnected; the transfer resumes from another peer or when it is back"))
        }
        schedulePump()
    }

    /// Something may need fetching (a document referenced a new blob, a peer connected).
    package func documentsChanged() { schedulePump() }

    /// A blob became complete here, or its reference proven for a document
    /// (uploaded into it, fetched over it): tell the peers sharing a document
    /// whose reference is proven, so those waiting ask. Documents that only
    /// reference it are never named: that would say this daemon holds it.
    package func announce(_ hash: BlobHash) async {
        guard let documents = try? await store.provenDocuments(referencing: hash), await blobs.record(hash)?.problem == nil else { return }
        for link in links.values where link.isEstablished {
            for document in link.blobDocumentIDs where documents.contains(document) {
                link.sendBlobMessage(.blobHave(document: document, hashes: [hash]))
            }
        }
    }

    // MARK: - Messages from peers

    func receive(_ message: Message, from peer: PeerID) async {
        switch message {
        case .blobHave(let document, let hashes):
            guard links[peer]?.blobDocumentIDs.contains(document) == true else { return }
            machine.peerHas(hashes, peer)
            schedulePump()
        case .blobRequest(let request):
            await serve(request, to: peer)
        case .blobManifest(let manifest):
            await received(manifest, from: peer)
        case .blobChunk(let hash, let index, let bytes):
            await received(chunk: bytes, index: index, of: hash, from: peer)
        case .blobUnavailable(let hash, let reason):
            logger.info("peer cannot send blob \(hash): \(reason)", metadata: ["peer": "\(peer.short)"])
            if machine.refused(hash, by: peer, now: .now) {
                broadcaster.publish(.failed(hash, from: peer, reason: "the peer does not have it (\(reason))"))
            }
            schedulePump()
        default:
            return
        }
    }

    /// The one answer to a request this daemon does not serve, whatever the
    /// reason: the document is not shared with the peer or does not
    /// reference the blob, its reference is not proven here, the bytes are
    /// not here or kept aside. One answer, so asking tells nothing of what
    /// this daemon holds for other documents.
    static let notServed = "not available here for that document"

    /// Serves a request when the peer may have the blob: the document is
    /// shared with it, references the blob, the reference is proven here (the
    /// bytes reached this daemon through that document: knowing a hash
    /// grants nothing), and the blob is complete here, of the type the
    /// reference declares and not kept aside.
    private func serve(_ request: Message.BlobRequest, to peer: PeerID) async {
        guard let link = links[peer] else { return }
        let refusal: String?
        do {
            let proven = try await store.provenDocuments(referencing: request.hash)
            let members = try await store.members(of: request.document)
            let record = await blobs.record(request.hash)
            let declared = try await store.blobReferences(of: request.document).first { $0.hash == request.hash }?.type
            if !proven.contains(request.document) || !link.blobDocumentIDs.contains(request.document)
                || !members.contains(where: { $0.peer == peer && $0.role >= .reader })
            {
                refusal = Self.notServed
                logger.info(
                    "did not serve blob \(request.hash) over \(request.document): not shared with the peer, or not proven here for that document",
                    metadata: ["peer": "\(peer.short)"])
            } else if let record, record.isComplete, record.problem == nil, record.type == declared {
                refusal = nil
            } else {
                refusal = Self.notServed
            }
        } catch {
            logger.warning("cannot check a blob request: \(error)")
            refusal = "this daemon cannot read it now"
        }
        if let refusal {
            link.sendBlobMessage(.blobUnavailable(hash: request.hash, reason: refusal))
            return
        }
        if request.manifest {
            do {
                let record = await blobs.record(request.hash)!
                let chunks = try await blobs.manifest(request.hash)
                logger.debug("sending blob \(request.hash)'s manifest", metadata: ["peer": "\(peer.short)"])
                link.sendBlobMessage(
                    .blobManifest(
                        Message.BlobManifest(
                            hash: request.hash, byteCount: record.byteCount, type: record.type, chunkSize: UInt32(record.chunkSize),
                            chunks: chunks)))
            } catch {
                link.sendBlobMessage(.blobUnavailable(hash: request.hash, reason: "this daemon cannot read it now"))
                return
            }
        }
        if !request.chunks.isEmpty, !link.queueChunks(request.hash, request.chunks) {
            link.sendBlobMessage(.blobUnavailable(hash: request.hash, reason: "too many chunks asked for at once"))
        }
    }

    private func received(_ manifest: Message.BlobManifest, from peer: PeerID) async {
        switch machine.manifestArrived(manifest, from: peer) {
        case .ignore:
            return
        case .reject:
            giveUp(manifest.hash, on: peer, reason: "its manifest does not match the reference (size or type)")
        case .verify:
            if manifest.chunks.isEmpty { await finishVerifying(manifest.hash) } else { await requestMore(manifest.hash) }
        case .store:
            do {
                _ = try await blobs.beginPartial(manifest.hash, byteCount: manifest.byteCount, type: manifest.type, manifest: manifest.chunks)
            } catch {
                giveUp(manifest.hash, on: peer, reason: "\(error)")
                return
            }
            let missing = await blobs.missingChunks(manifest.hash)
            logger.debug(
                "blob \(manifest.hash): manifest of \(manifest.chunks.count) chunks, \(missing.count) missing", metadata: ["peer": "\(peer.short)"])
            machine.manifestStored(manifest, from: peer, missing: missing)
            if missing.isEmpty {
                await complete(manifest.hash)
            } else {
                await requestMore(manifest.hash)
            }
        }
    }

    private func received(chunk bytes: ArraySlice<UInt8>, index: UInt32, of hash: BlobHash, from peer: PeerID) async {
        guard let transfer = machine.chunkArrived(hash, index: index, byteCount: bytes.count, from: peer) else { return }
        let done: Bool
        do throws(BlobError) {
            if transfer.isVerifying {
                guard let manifest = transfer.manifest, Int(index) < manifest.count else { return }
                let offset = UInt64(index) * UInt64(transfer.chunkSize)
                let checked = try await blobs.check(bytes, at: offset, of: hash, expected: manifest[Int(index)])
                // Checked as a received chunk is (against the peer's manifest);
                // whether it is the bytes held here shows only at the end.
                guard checked.matchesManifest else { throw BlobError(.chunkMismatch, "chunk \(index) does not match its hash") }
                guard machine.chunkCompared(hash, from: peer, matchesHeld: checked.matchesHeld) else { return }
                done = transfers[hash]?.isDone == true
            } else {
                done = try await blobs.writeChunk(hash, index: Int(index), bytes: bytes)
            }
        } catch  where error.kind == .chunkMismatch {
            logger.warning("chunk \(index) of blob \(hash) does not match its hash; asking again", metadata: ["peer": "\(peer.short)"])
            switch machine.chunkMismatched(hash, index: index) {
            case nil: return
            case .giveUp(let badChunks): giveUp(hash, on: peer, reason: "\(badChunks) chunks did not match their hashes")
            case .askAgain: await requestMore(hash)
            }
            return
        } catch {
            logger.error("cannot store a chunk of blob \(hash): \(error)")
            giveUp(hash, on: peer, reason: "\(error)")
            return
        }
        guard transfers[hash] != nil else { return }
        if let held = machine.chunkHeld(hash, byteCount: bytes.count, isLast: done) {
            broadcaster.publish(.progressed(hash, from: peer, held: held, total: transfer.media.byteCount))
        }
        if done && transfer.isVerifying {
            await finishVerifying(hash)
        } else if done {
            await complete(hash)
        } else {
            await requestMore(hash)
        }
    }

    /// Every chunk of a verification arrived: the peer's bytes are the ones
    /// held here (the reference over the transfer's document is proven), or
    /// they are not, and it ends as a fetch whose bytes do not hash to the
    /// blob's name does.
    private func finishVerifying(_ hash: BlobHash) async {
        guard let transfer = transfers[hash] else { return }
        guard !transfer.differs else {
            logger.warning("blob \(hash) from a peer does not match its hash", metadata: ["peer": "\(transfer.source.short)"])
            giveUp(hash, on: transfer.source, reason: "the bytes do not match the blob's hash")
            return
        }
        guard await prove(hash, by: transfer) else {
            giveUp(hash, on: transfer.source, reason: "this daemon cannot record it now")
            return
        }
        await finish(hash, transfer, "received blob \(hash) (\(transfer.media.byteCount) bytes), held already for another document")
    }

    /// Records that a transfer's bytes came over its document (`Store.proveBlobReference`).
    private func prove(_ hash: BlobHash, by transfer: BlobTransferStateMachine.Transfer) async -> Bool {
        do {
            try await store.proveBlobReference(hash, in: transfer.document)
            return true
        } catch {
            logger.error("cannot record that blob \(hash) came over \(transfer.document): \(error)")
            return false
        }
    }

    /// A transfer ended well: said, announced, and the next one looked for.
    private func finish(_ hash: BlobHash, _ transfer: BlobTransferStateMachine.Transfer, _ words: String) async {
        _ = machine.finished(hash)
        logger.info("\(words)", metadata: ["peer": "\(transfer.source.short)"])
        broadcaster.publish(.completed(hash, from: transfer.source, bytes: transfer.media.byteCount))
        await announce(hash)
        schedulePump()
    }

    /// Every chunk is held: check the whole blob against its hash.
    private func complete(_ hash: BlobHash) async {
        guard let transfer = transfers[hash] else { return }
        do {
            _ = try await blobs.completePartial(hash)
        } catch  where error.kind == .hashMismatch {
            logger.warning("blob \(hash) from a peer does not match its hash; fetching it again", metadata: ["peer": "\(transfer.source.short)"])
            giveUp(hash, on: transfer.source, reason: "the bytes do not match the blob's hash")
            return
        } catch {
            // Chunks found bad on the final check were cleared: ask for them
            // again (unless the transfer ended meanwhile: its peer left).
            let missing = await blobs.missingChunks(hash).map(UInt32.init)
            guard transfers[hash] != nil else { return }
            if machine.askAgain(hash, missing: missing) {
                await requestMore(hash)
            } else {
                giveUp(hash, on: transfer.source, reason: "\(error)")
            }
            return
        }
        // Stored either way; a proof not recorded now is fetched again (compared, not written) later.
        _ = await prove(hash, by: transfer)
        if let problem = await blobs.record(hash)?.problem {
            logger.warning("blob \(hash) from a peer is kept aside: \(problem)", metadata: ["peer": "\(transfer.source.short)"])
        }
        await finish(hash, transfer, "received blob \(hash) (\(transfer.media.byteCount) bytes)")
    }

    /// Keeps `window` chunks of a transfer asked for.
    private func requestMore(_ hash: BlobHash) async {
        guard let source = transfers[hash]?.source, let link = links[source],
            let request = machine.nextRequest(hash, now: .now)
        else { return }
        if let receiveLimiter { await receiveLimiter.take(request.chunks.count * request.chunkSize) }
        link.sendBlobMessage(
            .blobRequest(Message.BlobRequest(document: request.document, hash: hash, manifest: false, chunks: request.chunks)))
    }

    /// Stops fetching a blob from a peer; another (or the same, later) is tried.
    private func giveUp(_ hash: BlobHash, on peer: PeerID, reason: String, for wait: Duration? = nil) {
        if machine.giveUp(hash, on: peer, now: .now, for: wait) {
            broadcaster.publish(.failed(hash, from: peer, reason: reason))
        }
        schedulePump()
    }

    // MARK: - Deciding what to fetch

    private func schedulePump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            await self.pump()
        }
    }

    /// Starts a transfer for every referenced blob this daemon lacks that a
    /// connected peer sharing a referencing document may have, and asks
    /// again for chunks that timed out.
    func pump() async {
        pumpScheduled = false
        let now = ContinuousClock.now
        let wanted: [BlobHash: (media: MediaReference, documents: Set<DocumentID>)]
        do { wanted = try await store.unprovenBlobReferences() } catch {
            logger.warning("cannot read which blobs documents reference: \(error)")
            return
        }
        let late = machine.expire(now: now)
        for hash in late.manifests {
            // A manifest never answered (a lost message): ask again.
            guard let transfer = transfers[hash] else { continue }
            links[transfer.source]?.sendBlobMessage(Self.manifestRequest(hash, over: transfer.document))
        }
        // An earlier one's request may have let a peer leave meanwhile (`requestMore` checks).
        for hash in late.chunks { await requestMore(hash) }
        let established = links.values.filter(\.isEstablished).map { (peer: $0.peer, documents: $0.blobDocumentIDs) }
        for (hash, want) in wanted.sorted(by: { $0.key.description < $1.key.description })
        where transfers[hash] == nil && configuration.acceptedTypes.contains(want.media.type) {
            // Held already or not, an unproven reference is fetched the same way:
            // whether this daemon asks must not tell whether it holds the bytes.
            let isHeld = await blobs.record(hash)?.isComplete == true
            guard transfers[hash] == nil,
                let (source, document) = machine.chooseSource(hash, documents: want.documents, links: established, now: now),
                let link = links[source]
            else { continue }
            machine.start(want.media, documents: want.documents, source: source, document: document, isVerifying: isHeld, now: now)
            broadcaster.publish(.started(hash, from: source, bytes: want.media.byteCount))
            logger.debug("asking for blob \(hash)'s manifest", metadata: ["peer": "\(source.short)"])
            link.sendBlobMessage(Self.manifestRequest(hash, over: document))
        }
        if let wait = machine.nextCheck(now: now) {
            // Look again later: timeouts, and when the first failure ages out.
            Task {
                try? await Task.sleep(for: wait)
                self.schedulePumpFromTimer()
            }
        }
    }

    private func schedulePumpFromTimer() { schedulePump() }

    private static func manifestRequest(_ hash: BlobHash, over document: DocumentID) -> Message {
        .blobRequest(Message.BlobRequest(document: document, hash: hash, manifest: true, chunks: []))
    }
}

/// A token bucket: `take` waits until that many bytes may pass.
actor RateLimiter {
    let bytesPerSecond: Int
    private var available: Double
    private var last = ContinuousClock.now

    init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(bytesPerSecond, 1024)
        available = Double(self.bytesPerSecond)
    }

    func take(_ bytes: Int) async {
        let now = ContinuousClock.now
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        available = min(Double(bytesPerSecond), available + seconds * Double(bytesPerSecond))
        available -= Double(bytes)
        if available < 0 {
            let wait = -available / Double(bytesPerSecond)
            try? await Task.sleep(for: .milliseconds(Int((wait * 1000).rounded(.up))))
        }
    }
}
