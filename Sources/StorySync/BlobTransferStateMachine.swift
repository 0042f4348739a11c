import StoryCore
import StoryStore

/// What blob fetching decides, apart from the store and the sockets
/// (`BlobExchange` performs it): which peer a blob is asked of, how many
/// chunks are in flight, what is asked again after a timeout, when a peer is
/// given up for a blob and for how long (a refusal waits less, doubling), and
/// when a transfer ends. Time comes in as an argument, so every decision is
/// tested without a clock or a socket (`BlobTransferStateMachineTests`).
struct BlobTransferStateMachine {
    /// How a transfer goes.
    struct Limits {
        /// Chunks asked for and not yet received, per transfer.
        var window = 4
        /// A peer that failed a blob is not asked for it again for this long.
        var retryAfter: Duration = .seconds(30)
        /// The first refusal's wait, doubling up to `retryAfter`.
        var refusalRetryAfter: Duration = .seconds(2)
        /// A chunk (or manifest) asked for and not received in this long is asked for again.
        var chunkTimeout: Duration = .seconds(20)
        /// Chunks that did not match their hash, per transfer, before its peer is given up.
        var maximumBadChunks = 4
    }

    /// A blob being fetched from one peer.
    struct Transfer: Equatable {
        var media: MediaReference
        var documents: Set<DocumentID>
        var source: PeerID
        /// The document the blob is asked for over (shared with the source).
        var document: DocumentID
        var manifest: [BlobHash]?
        /// When the manifest was asked for.
        var manifestAsked: ContinuousClock.Instant
        var chunkSize = 0
        /// Chunks still to ask for, the next one last.
        var missing: [UInt32] = []
        /// Chunks asked for, and when.
        var outstanding: [UInt32: ContinuousClock.Instant] = [:]
        var badChunks = 0
        var heldBytes: UInt64 = 0
        /// Bytes received in this transfer (its rate).
        var received: UInt64 = 0
        let started: ContinuousClock.Instant
        var lastReported: UInt64 = 0
        /// The bytes are held here already and the reference over `document`
        /// is not proven: the peer's copy is fetched as any is, and compared.
        var isVerifying: Bool
        /// A verified chunk differed from the bytes held here.
        var differs = false

        /// Every chunk asked for has arrived and none is left to ask for.
        var isDone: Bool { manifest != nil && missing.isEmpty && outstanding.isEmpty }
    }

    /// What to do with a manifest that arrived.
    enum ManifestAction: Equatable {
        /// Not one this daemon asked for (of another peer, or a second one).
        case ignore
        /// It does not match the reference: the peer is given up for the blob.
        case reject
        /// Verifying: the manifest is taken; ask for chunks (or finish, if it has none).
        case verify
        /// Fetching: begin the partial blob with it, then `manifestStored`.
        case store
    }

    /// What to do after a chunk failed its hash.
    enum BadChunkAction: Equatable {
        /// Ask for it again.
        case askAgain
        /// Too many bad chunks: give the peer up for the blob.
        case giveUp(badChunks: Int)
    }

    let limits: Limits
    private(set) var transfers: [BlobHash: Transfer] = [:]
    /// Peers known to hold a blob (they said so, or served its manifest).
    private(set) var holders: [BlobHash: Set<PeerID>] = [:]
    /// Peers that failed a blob: not asked for it again before this instant.
    private(set) var failures: [BlobHash: [PeerID: ContinuousClock.Instant]] = [:]
    /// Refusals in a row, per blob and peer (each doubles the wait).
    private var refusals: [BlobHash: [PeerID: Int]] = [:]

    init(limits: Limits) { self.limits = limits }

    // MARK: - Links

    /// A newer connection to `peer` replaces one still ending: what was asked
    /// over the old one is answered there or not at all, so its transfers
    /// start again (chunks held are kept). Returns them.
    mutating func replacedLink(to peer: PeerID) -> [BlobHash] {
        let dropped = transfers.filter { $0.value.source == peer }.map(\.key)
        for hash in dropped { transfers[hash] = nil }
        return dropped
    }

    /// `peer` disconnected: its transfers end (to resume from another peer,
    /// or from it when it is back). Returns them.
    mutating func detached(_ peer: PeerID) -> [BlobHash] { replacedLink(to: peer) }

    // MARK: - What peers say

    /// `peer` says it holds these blobs: it is preferred, and asked again at once.
    mutating func peerHas(_ hashes: [BlobHash], _ peer: PeerID) {
        for hash in hashes {
            holders[hash, default: []].insert(peer)
            failures[hash]?[peer] = nil
            refusals[hash]?[peer] = nil
        }
    }

    /// `peer` refused the blob: it is not taken as a holder, and is asked
    /// again after a wait that doubles with each refusal in a row (up to
    /// `retryAfter`). Returns whether a transfer from it ended.
    mutating func refused(_ hash: BlobHash, by peer: PeerID, now: ContinuousClock.Instant) -> Bool {
        holders[hash]?.remove(peer)
        let count = (refusals[hash]?[peer] ?? 0) + 1
        refusals[hash, default: [:]][peer] = count
        let wait = min(limits.retryAfter, limits.refusalRetryAfter * (1 << min(count - 1, 16)))
        return giveUp(hash, on: peer, now: now, for: wait)
    }

    /// Stops fetching a blob from a peer, which is not asked for it again
    /// for `wait` (default `retryAfter`). Returns whether a transfer from it ended.
    @discardableResult
    mutating func giveUp(_ hash: BlobHash, on peer: PeerID, now: ContinuousClock.Instant, for wait: Duration? = nil) -> Bool {
        failures[hash, default: [:]][peer] = now + (wait ?? limits.retryAfter)
        guard transfers[hash]?.source == peer else { return false }
        transfers[hash] = nil
        return true
    }

    /// A manifest arrived from `peer`.
    mutating func manifestArrived(_ manifest: Message.BlobManifest, from peer: PeerID) -> ManifestAction {
        guard var transfer = transfers[manifest.hash], transfer.source == peer, transfer.manifest == nil else { return .ignore }
        guard manifest.byteCount == transfer.media.byteCount, manifest.type == transfer.media.type else { return .reject }
        guard transfer.isVerifying else { return .store }
        guard manifest.chunkSize > 0,
            manifest.chunks.count == BlobRecord.chunkCount(byteCount: manifest.byteCount, chunkSize: Int(manifest.chunkSize))
        else { return .reject }
        holders[manifest.hash, default: []].insert(peer)
        transfer.manifest = manifest.chunks
        transfer.chunkSize = Int(manifest.chunkSize)
        transfer.missing = (0..<UInt32(manifest.chunks.count)).reversed()
        transfers[manifest.hash] = transfer
        return .verify
    }

    /// The partial blob was begun from the manifest; `missing` are the chunks not held yet.
    mutating func manifestStored(_ manifest: Message.BlobManifest, from peer: PeerID, missing: [Int]) {
        holders[manifest.hash, default: []].insert(peer)
        guard var transfer = transfers[manifest.hash], transfer.source == peer else { return }
        transfer.manifest = manifest.chunks
        transfer.chunkSize = Int(manifest.chunkSize)
        transfer.missing = missing.map(UInt32.init).reversed()
        let chunkSize = UInt64(manifest.chunkSize)
        let missingBytes = missing.reduce(UInt64(0)) { sum, index in
            sum + min(chunkSize, manifest.byteCount - UInt64(index) * chunkSize)
        }
        transfer.heldBytes = manifest.byteCount - missingBytes
        transfers[manifest.hash] = transfer
    }

    /// A chunk arrived: taken (the transfer as it now is) only when it is one
    /// asked of that peer and not received yet.
    mutating func chunkArrived(_ hash: BlobHash, index: UInt32, byteCount: Int, from peer: PeerID) -> Transfer? {
        guard var transfer = transfers[hash], transfer.source == peer, transfer.outstanding.removeValue(forKey: index) != nil
        else { return nil }
        transfer.received += UInt64(byteCount)
        transfers[hash] = transfer
        return transfer
    }

    /// A verified chunk was compared with the bytes held here.
    mutating func chunkCompared(_ hash: BlobHash, from peer: PeerID, matchesHeld: Bool) -> Bool {
        guard var transfer = transfers[hash], transfer.source == peer else { return false }
        transfer.differs = transfer.differs || !matchesHeld
        transfers[hash] = transfer
        return true
    }

    /// A chunk did not match its hash.
    mutating func chunkMismatched(_ hash: BlobHash, index: UInt32) -> BadChunkAction? {
        guard var transfer = transfers[hash] else { return nil }
        transfer.badChunks += 1
        if transfer.badChunks > limits.maximumBadChunks { return .giveUp(badChunks: transfer.badChunks) }
        transfer.missing.append(index)
        transfers[hash] = transfer
        return .askAgain
    }

    /// A chunk of `byteCount` bytes is held: the held bytes to report, every 10 % or so (nil: not yet).
    mutating func chunkHeld(_ hash: BlobHash, byteCount: Int, isLast: Bool) -> UInt64? {
        guard var transfer = transfers[hash] else { return nil }
        transfer.heldBytes += UInt64(byteCount)
        var report: UInt64?
        if transfer.heldBytes - transfer.lastReported >= max(transfer.media.byteCount / 10, 1), !isLast {
            transfer.lastReported = transfer.heldBytes
            report = transfer.heldBytes
        }
        transfers[hash] = transfer
        return report
    }

    /// The final check found these chunks bad (cleared): ask for them again.
    /// False: the transfer ended meanwhile, or there is nothing to ask for.
    mutating func askAgain(_ hash: BlobHash, missing: [UInt32]) -> Bool {
        guard transfers[hash] != nil, !missing.isEmpty else { return false }
        transfers[hash]!.missing = missing.reversed()
        return true
    }

    /// The transfer ended well: it is gone, and the blob's refusals forgotten.
    mutating func finished(_ hash: BlobHash) -> Transfer? {
        refusals[hash] = nil
        return transfers.removeValue(forKey: hash)
    }

    /// The chunks to ask for now to keep `window` in flight (marked asked at `now`).
    mutating func nextRequest(_ hash: BlobHash, now: ContinuousClock.Instant) -> (
        source: PeerID, document: DocumentID, chunks: [UInt32], chunkSize: Int
    )? {
        guard var transfer = transfers[hash] else { return nil }
        var chunks: [UInt32] = []
        while transfer.outstanding.count < limits.window, let next = transfer.missing.popLast() {
            transfer.outstanding[next] = now
            chunks.append(next)
        }
        transfers[hash] = transfer
        guard !chunks.isEmpty else { return nil }
        return (transfer.source, transfer.document, chunks, transfer.chunkSize)
    }

    // MARK: - Deciding what to fetch

    /// Forgets failures that have aged out; returns the transfers whose
    /// manifest was not answered in `chunkTimeout` (asked again now) and
    /// those with chunks that timed out (put back to be asked for).
    mutating func expire(now: ContinuousClock.Instant) -> (manifests: [BlobHash], chunks: [BlobHash]) {
        for (hash, byPeer) in failures {
            let kept = byPeer.filter { now < $0.value }
            failures[hash] = kept.isEmpty ? nil : kept
        }
        var manifests: [BlobHash] = []
        var chunks: [BlobHash] = []
        for (hash, var transfer) in transfers {
            if transfer.manifest == nil, now - transfer.manifestAsked > limits.chunkTimeout {
                transfer.manifestAsked = now
                manifests.append(hash)
            }
            let late = transfer.outstanding.filter { now - $0.value > limits.chunkTimeout }.map(\.key).sorted()
            if !late.isEmpty {
                for index in late { transfer.outstanding[index] = nil }
                transfer.missing.append(contentsOf: late)
                chunks.append(hash)
            }
            transfers[hash] = transfer
        }
        return (manifests.sorted { $0.description < $1.description }, chunks.sorted { $0.description < $1.description })
    }

    /// A connected peer for `documents`' blob: one sharing a referencing
    /// document (`links`: each established peer and its documents), preferring
    /// one known to hold the blob, skipping those that failed it lately.
    func chooseSource(
        _ hash: BlobHash, documents: Set<DocumentID>, links: [(peer: PeerID, documents: [DocumentID])], now: ContinuousClock.Instant
    ) -> (peer: PeerID, document: DocumentID)? {
        var candidates: [(peer: PeerID, document: DocumentID, holds: Bool)] = []
        for link in links {
            if let until = failures[hash]?[link.peer], now < until { continue }
            guard let document = link.documents.first(where: documents.contains) else { continue }
            candidates.append((link.peer, document, holders[hash]?.contains(link.peer) == true))
        }
        guard let best = candidates.max(by: { ($0.holds ? 1 : 0, $1.peer.description) < ($1.holds ? 1 : 0, $0.peer.description) })
        else { return nil }
        return (best.peer, best.document)
    }

    /// Starts fetching (or verifying) a blob from `source` over `document`: ask for its manifest.
    mutating func start(
        _ media: MediaReference, documents: Set<DocumentID>, source: PeerID, document: DocumentID, isVerifying: Bool,
        now: ContinuousClock.Instant
    ) {
        transfers[media.hash] = Transfer(
            media: media, documents: documents, source: source, document: document, manifestAsked: now, started: now,
            isVerifying: isVerifying)
    }

    /// When to look again (timeouts, and the first failure to age out); nil: only when something happens.
    func nextCheck(now: ContinuousClock.Instant) -> Duration? {
        guard transfers.values.contains(where: { !$0.outstanding.isEmpty || $0.manifest == nil }) || !failures.isEmpty else { return nil }
        let firstRetry = failures.values.flatMap(\.values).min().map { max($0 - now, .milliseconds(50)) }
        return min(limits.chunkTimeout, firstRetry ?? limits.chunkTimeout)
    }
}
