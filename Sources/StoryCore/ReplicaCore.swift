/// What `apply` did with a batch of changes.
package struct ApplyReport: Sendable {
    /// The changes applied by this call, in the order they were applied
    /// (causal), including earlier buffered ones that became applicable.
    package var applied: [EncodedChange] = []
    /// Changes already applied before (re-deliveries), ignored.
    package var duplicates = 0
    /// Changes held back because something they depend on has not arrived.
    package var buffered = 0
    /// Changes held back by earlier calls that became applicable but turned
    /// out invalid (forged, forbidden): dropped without failing this call.
    package var droppedHeldBack = 0
    /// Whether an applied change founded the document or changed its access list.
    package var accessChanged = false
    /// The members after the call, when `accessChanged`.
    package var members: [(peer: PeerID, role: Role)] = []
}

/// What `changes(since:)` can give.
package enum ChangesSince: Sendable {
    /// The changes the other side lacks, in causal order.
    case changes([EncodedChange])
    /// Some of them were compacted away: only a snapshot brings the other side up.
    case snapshotRequired
}

/// Where changes being applied come from.
package enum ChangeOrigin: Sendable, Hashable {
    /// A peer, tagged with any number the caller chooses (to bound and drop
    /// what it left held back): every signature, chain and right is checked.
    case peer(UInt64)
    /// This daemon's own store, which holds only changes checked before they
    /// were stored: chains and rights are checked, signatures are not again.
    case store

    /// Changes made in tests and tools without a peer.
    package static let unknown = ChangeOrigin.peer(0)
}

/// Bounds on the changes a document holds back while their dependencies are
/// missing (DESIGN.md: never dropped, never applied early, but never unbounded).
package struct HeldBackLimits: Sendable, Hashable {
    /// Changes held back in the document.
    package var changes: Int
    /// Bytes held back in the document.
    package var bytes: Int
    /// Bytes held back in the document that came from the origin of the call.
    package var bytesFromOrigin: Int

    package init(changes: Int, bytes: Int, bytesFromOrigin: Int = .max) {
        self.changes = changes
        self.bytes = bytes
        self.bytesFromOrigin = bytesFromOrigin
    }

    package static let unlimited = HeldBackLimits(changes: .max, bytes: .max)
}

/// A change's place in its author's sequence.
struct ChangeKey: Hashable {
    var replica: ReplicaID
    var seq: UInt64
}

/// Changes from a peer, decoded and checked for form (`ChangeBatch.decodeReceived`),
/// ready to apply (`ProjectDocument.apply(_:origin:limits:beforeCommit:)`).
package struct ReceivedChanges: Sendable {
    var arrivals: [HeldChange]
    /// The batch they came in (each one's bytes a slice of it), for the log
    /// to hold once for the changes that came in it; empty when none. Not
    /// in each `HeldChange`: 32 more bytes a change made the arrays of a
    /// large batch's arrivals larger, and the holes they left when freed too.
    var batch: ArraySlice<UInt8> = []

    init(arrivals: [HeldChange]) {
        self.arrivals = arrivals
    }

    /// Decoded changes (`ChangeBatch.decode`), to apply as received ones.
    package init(_ changes: [(EncodedChange, Change)]) {
        arrivals = changes.map { HeldChange(encoded: $0.0, change: $0.1, origin: .unknown) }
    }

    package var count: Int { arrivals.count }
    package var isEmpty: Bool { arrivals.isEmpty }

    /// The changes, each with its encoding.
    package var changes: [(EncodedChange, Change)] { arrivals.map { ($0.encoded, $0.change) } }

    /// The highest sequence number of each replica among the changes.
    package var newest: VersionVector {
        var vector = VersionVector()
        for index in arrivals.indices where arrivals[index].change.seq > vector[arrivals[index].change.replica] {
            vector[arrivals[index].change.replica] = arrivals[index].change.seq
        }
        return vector
    }
}

/// A change held back until its dependencies arrive, with what its arrival
/// already established (its chain hash, its author).
struct HeldChange: Sendable {
    var encoded: EncodedChange
    var change: Change
    var hash: Digest32?
    var author: AuthorRecord?
    var origin: ChangeOrigin

    init(encoded: EncodedChange, change: Change, hash: Digest32? = nil, author: AuthorRecord? = nil, origin: ChangeOrigin) {
        self.encoded = encoded
        self.change = change
        self.hash = hash
        self.author = author
        self.origin = origin
    }

    /// An empty record, to read into: a copy of this one. (Built afresh
    /// where it is wanted, it was built aside and then copied in: more
    /// instructions, not fewer.)
    static let placeholder = HeldChange(encoded: .placeholder, change: .placeholder, origin: .unknown)

    /// Reads the change `bytes` encode, with the signature beside them, into
    /// this record in place (`ChangeBatch.decodeReceived`).
    mutating func read(_ bytes: consuming ArraySlice<UInt8>, signature: [UInt8]?) throws(CodecError) {
        let read = try change.read(bytes)
        change.signature = signature
        encoded = EncodedChange(bytes: read, of: change)
    }
}

/// Everything a replica keeps about a document besides its state: clocks,
/// version vector, the change logs and the causal buffer; and, for a signed
/// document, the authors, their chain heads, each replica's causal frontier
/// and the access list.
struct ReplicaCore: Sendable {
    let replica: ReplicaID
    let document: DocumentID
    /// The local author: nil for an open document (tests and benchmarks: no
    /// signatures, no access control), set for every document a store holds.
    let author: LocalAuthor?
    /// The highest Lamport counter seen (the well-known objects' counters at first).
    var clock: UInt64 = OpID.firstCounter - 1
    var versionVector = VersionVector()
    /// The full version vector our own last change was made on (for delta deps).
    var lastDependencies = VersionVector()
    /// Last counter used by each replica, so a replica cannot reuse op ids.
    var lastCounters: [ReplicaID: UInt64] = [:]
    var logs: [ReplicaID: ChangeLog] = [:]
    /// Changes waiting for their dependencies, by replica and sequence number.
    var pending = CausalBuffer()
    /// Earliest and latest wall time of any applied change.
    var createdAt: Int64?
    var updatedAt: Int64?
    /// Whether applied changes are kept in memory for `changes(since:)`.
    var keepsLog = true

    /// Signed documents: who each replica's author is (from its declaration).
    var authors: [ReplicaID: AuthorRecord] = [:]
    /// Signed documents: each replica's newest applied change.
    var heads: [ReplicaID: ChainHead] = [:]
    /// Signed documents: the full causal vector of each replica's newest
    /// applied change (its dependencies are sent as a delta against it).
    var frontiers: [ReplicaID: VersionVector] = [:]
    var access = AccessList()

    /// An open document held by `replica`.
    init(replica: ReplicaID, document: DocumentID) {
        self.replica = replica
        self.document = document
        author = nil
        crypto = nil
        isSigned = false
    }

    /// A signed document whose local changes `author` makes.
    init(author: LocalAuthor, document: DocumentID) {
        replica = author.replica
        self.document = document
        self.author = author
        crypto = author.crypto
        isSigned = true
    }

    /// The author's crypto, kept apart: every change applied asks for it, and
    /// taking it from `author` each time copied the author (a profile of a
    /// sync showed the copies).
    let crypto: (any DocumentCrypto)?

    /// Whether changes are signed and checked: stored, since asking `crypto`
    /// copied the existential for every change applied.
    let isSigned: Bool

    var pendingCount: Int { pending.count }

    var pendingBytes: Int { pending.bytes }

    /// Bytes held back that came from `origin`.
    func pendingBytes(from origin: ChangeOrigin) -> Int { pending.bytes(from: origin) }

    /// Forgets held-back changes that came from `origin` (a peer that went
    /// away; whoever has them sends them again).
    mutating func dropPending(from origin: ChangeOrigin) { pending.drop(from: origin) }

    private func dependenciesMet(_ change: borrowing Change) -> Bool {
        guard versionVector[change.replica] == change.seq - 1 else { return false }
        return change.dependencies.isCovered(by: versionVector)
    }

    // MARK: - Applying

    /// Applies changes in causal order, holding back those whose dependencies
    /// are missing. All or nothing: if any change fails, the held-back buffer
    /// would exceed `limits`, or `beforeCommit` throws, the document and the
    /// buffer are left exactly as they were.
    ///
    /// A signed document checks on arrival, before anything is held: each
    /// replica's changes in the call continue a chain this document knows,
    /// the author declarations bind replicas to identities, and the signature
    /// of the last change of each replica in the call (and of every change
    /// `Authorship.isCheckedInRun` names) is valid. When a change applies, its
    /// author must have write rights at the change's causal point.
    ///
    /// The changes are checked and applied where they are (`ReceivedChanges`),
    /// not copied into held records.
    mutating func integrate<State: ReplicatedState>(
        _ received: consuming ReceivedChanges, origin: ChangeOrigin, limits: HeldBackLimits?, into state: inout State,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport {
        var report = ApplyReport()
        var queues: [ReplicaID: [UInt64: HeldChange]] = [:]
        let saved = (versionVector, clock, lastCounters, createdAt, updatedAt)
        let savedSigned = (authors, heads, frontiers, access)
        // Appended to the logs, for a rollback: (replica, count) for each run
        // of one replica's changes (no hashing per change).
        var logAppends: [(replica: ReplicaID, count: Int)] = []
        var journal: [State.JournalEntry] = []
        var usedPending: [(ReplicaID, UInt64)] = []
        var droppedFrom: [(ReplicaID, UInt64)] = []
        var rejected: (ReplicaID, UInt64)?
        let batch = received.batch
        do {
            // Taken, so the array is uniquely held and changes in place.
            var fresh = (consume received).arrivals
            try admitArrivals(&fresh, origin: origin, report: &report)
            // Most changes leave one entry (a stroke, a field): grown once, not by doubling.
            journal.reserveCapacity(fresh.count)
            report.applied.reserveCapacity(fresh.count)
            // Fast path: a batch sent in causal order applies as it comes.
            // Each change is moved out of the array into a local: a change read
            // in place through the array or its buffer was copied whole before
            // each call, since the document being changed might have aliased
            // it. Reversed once, then taken from the end: no record is copied
            // or left behind to be destroyed (swapping an empty record in was a
            // copy of that record and its destruction, 3 % of a sync's
            // instructions). Reversed through the buffer, whose swaps move;
            // the array's own swaps copy each record and destroy the original.
            fresh.withUnsafeMutableBufferPointer { $0.reverse() }
            while let item = fresh.popLast() {
                if queues.isEmpty && dependenciesMet(item.change) {
                    do {
                        try applyOne(item, to: &state, journal: &journal, report: &report)
                    } catch {
                        rejected = (item.change.replica, item.change.seq)
                        throw error
                    }
                    appendToLog(item.encoded, within: batch, appends: &logAppends)
                    report.applied.append(item.encoded)
                } else {
                    queues[item.change.replica, default: [:]][item.change.seq] = item
                }
            }
            let replicas = pending.isEmpty && queues.isEmpty ? [] : Set(queues.keys).union(pending.replicas).sorted()
            var progress = !replicas.isEmpty
            while progress {
                progress = false
                for replica in replicas {
                    while true {
                        let next = versionVector[replica] + 1
                        guard let item = queues[replica]?[next] ?? pending[replica, next], dependenciesMet(item.change)
                        else { break }
                        let fromPending = queues[replica]?[next] == nil
                        if fromPending {
                            usedPending.append((replica, next))
                        } else {
                            queues[replica]![next] = nil
                        }
                        let mark = journal.count
                        let savedAccess = access
                        let savedFrontier = fromPending ? frontiers[replica] : nil
                        do {
                            try applyOne(item, to: &state, journal: &journal, report: &report)
                        } catch {
                            guard fromPending else {
                                rejected = (replica, next)
                                throw error
                            }
                            // Held back from an earlier call (perhaps another sender): it
                            // can never apply, but it must not fail the changes that came
                            // now. Undo it alone and drop it with what follows it.
                            state.rollback(Array(journal[mark...]))
                            journal.removeSubrange(mark...)
                            access = savedAccess
                            frontiers[replica] = savedFrontier
                            report.droppedHeldBack += 1 + pending.count(of: replica, after: next)
                            droppedFrom.append((replica, next))
                            break
                        }
                        // Held back from an earlier call, it may have come in another batch.
                        appendToLog(item.encoded, within: fromPending ? [] : batch, appends: &logAppends)
                        report.applied.append(item.encoded)
                        progress = true
                    }
                }
            }
            let queued = queues.values.reduce(0) { $0 + $1.count }
            report.buffered = pendingCount - usedPending.count + queued - (report.droppedHeldBack - droppedFrom.count)
            if let limits, queued > 0 {
                let used = usedPending.reduce(0) { $0 + pending[$1.0, $1.1]!.encoded.bytes.count }
                let usedFromOrigin = usedPending.reduce(0) {
                    let held = pending[$1.0, $1.1]!
                    return $0 + (held.origin == origin ? held.encoded.bytes.count : 0)
                }
                let queuedBytes = queues.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.encoded.bytes.count } }
                let bytes = pendingBytes - used + queuedBytes
                let fromOrigin = pendingBytes(from: origin) - usedFromOrigin + queuedBytes
                if report.buffered > limits.changes || bytes > limits.bytes || fromOrigin > limits.bytesFromOrigin {
                    throw DocumentError(
                        .limitExceeded,
                        "\(report.buffered) changes (\(bytes) bytes, \(fromOrigin) from this sender) would be held back waiting for changes they depend on; the limit is \(limits.changes) changes, \(limits.bytes) bytes, \(limits.bytesFromOrigin) from one sender"
                    )
                }
            }
            if report.accessChanged { report.members = access.members }
            try beforeCommit(report)
        } catch {
            state.rollback(journal)
            (versionVector, clock, lastCounters, createdAt, updatedAt) = saved
            (authors, heads, frontiers, access) = savedSigned
            for (replica, count) in logAppends { logs[replica]!.removeLast(count) }
            // An invalid change can never apply; it and the rest of its replica's
            // held-back changes (which depend on it) must not block later calls.
            if let (replica, seq) = rejected { pending.drop(replica, from: seq) }
            throw error
        }
        for (replica, seq) in usedPending { pending.remove(replica, seq: seq) }
        for (replica, seq) in droppedFrom { pending.drop(replica, from: seq) }
        for (replica, queue) in queues { pending.hold(queue, of: replica) }
        // Held-back copies of changes that just arrived again and applied.
        pending.dropCovered(by: versionVector)
        return report
    }

    private mutating func appendToLog(
        _ change: EncodedChange, within batch: ArraySlice<UInt8>, appends: inout [(replica: ReplicaID, count: Int)]
    ) {
        guard keepsLog, logs[change.replica, default: ChangeLog()].append(change, within: batch) else { return }
        if appends.last?.replica == change.replica {
            appends[appends.count - 1].count += 1
        } else {
            appends.append((change.replica, 1))
        }
    }

    /// Applies one change whose dependencies are met. The change is borrowed
    /// and read in place: copying it cost a reference count per operation.
    private mutating func applyOne<State: ReplicatedState>(
        _ item: borrowing HeldChange, to state: inout State, journal: inout [State.JournalEntry], report: inout ApplyReport
    ) throws(DocumentError) {
        let replica = item.change.replica
        let seq = item.change.seq
        // Found once, written through by `record` (nothing changes `lastCounters` in between).
        let counterIndex = lastCounters.index(forKey: replica)
        if let counterIndex, case let last = lastCounters.values[counterIndex], item.change.startCounter <= last {
            throw DocumentError(
                .invalidOperation,
                "change \(seq) of \(replica) reuses counter \(item.change.startCounter) (last was \(last))")
        }
        // Taken out so it grows in place (no copy per change), through its
        // index: found once, and put back without hashing again (a removal and
        // an insertion cost 3 % of a sync's instructions). Nothing here changes
        // `frontiers` in between, so the index holds. On a failure the caller
        // restores it (the call's saved state, or the savepoint of a held change).
        let frontierIndex = frontiers.index(forKey: replica)
        var point = VersionVector()
        if let frontierIndex { swap(&point, &frontiers.values[frontierIndex]) }
        point.formUnion(item.change.dependencies)
        point[replica] = seq
        if isSigned {
            guard let record = item.author ?? authors[replica] else {
                throw DocumentError(.unauthenticated, "replica \(replica) has no known author")
            }
            try admit(item.change, by: record, at: point, report: &report)
        }
        // An open document keeps frontiers too: a text field needs each
        // change's causal past to tell a concurrent write from a later one.
        state.begin(WriteContext(dot: ChangeDot(replica: replica, seq: seq), past: point))
        // The closure captures scalars, not the borrowed change.
        let startCounter = item.change.startCounter
        let time = item.change.wallTime
        try item.change.operations.forEachInPlace { (index, operation) throws(DocumentError) in
            guard !operation.isAccessOperation else { return }
            do throws(DocumentError) {
                let id = OpID(counter: startCounter + UInt64(index), replica: replica)
                try state.apply(operation, id: id, time: time, journal: &journal)
            } catch {
                throw error.prefixed("change \(seq) of \(replica), operation \(index + 1)")
            }
        }
        // Drop the context's reference to the frontier, which the next change of this replica extends in place.
        state.begin(.local)
        record(item.change, counterIndex: counterIndex)
        if let frontierIndex {
            frontiers.values[frontierIndex] = consume point
        } else {
            frontiers[replica] = consume point
        }
        if isSigned, let hash = item.hash {
            heads[replica] = ChainHead(seq: seq, hash: hash, signature: item.change.signature)
            if seq == 1, let author = item.author { authors[replica] = author }
        }
    }

    /// Advances clocks and vectors for an applied change.
    /// `counterIndex`: where the replica's last counter is, when the caller has found it.
    mutating func record(_ change: Change, counterIndex: Dictionary<ReplicaID, UInt64>.Index? = nil) {
        versionVector[change.replica] = change.seq
        clock = max(clock, change.endCounter)
        if let counterIndex {
            lastCounters.values[counterIndex] = change.endCounter
        } else {
            lastCounters[change.replica] = change.endCounter
        }
        createdAt = min(createdAt ?? change.wallTime, change.wallTime)
        updatedAt = max(updatedAt ?? change.wallTime, change.wallTime)
    }

    /// A re-delivered change must be byte-identical to the one applied; two
    /// different changes with one (replica, seq) mean a copied database.
    func checkSameAsLogged(_ change: EncodedChange) throws(DocumentError) {
        guard let log = logs[change.replica], change.seq >= log.firstSeq, change.seq < log.nextSeq else { return }
        if log.bytes(ofSeq: change.seq) != change.bytes {
            throw DocumentError(
                .conflict,
                "two different changes claim sequence number \(change.seq) of replica \(change.replica): "
                    + "a database was copied or restored without a new replica id")
        }
    }

    /// The changes `other` lacks, in causal order.
    func changes(since other: VersionVector) -> ChangesSince {
        // Each replica's run is read out of its log in one pass (a change's
        // header fields are read from its bytes); the runs are in counter
        // order already, so they are merged, not sorted.
        var runs: [[EncodedChange]] = []
        var total = 0
        for (replica, seq) in versionVector.sortedEntries where seq > other[replica] {
            guard let log = logs[replica], log.firstSeq <= other[replica] + 1, log.nextSeq == seq + 1 else {
                return .snapshotRequired
            }
            let first = Int(other[replica] + 1 - log.firstSeq)
            let run = log.changes(from: first, replica: replica)
            total += run.count
            runs.append(run)
        }
        guard runs.count > 1 else { return .changes(runs.first ?? []) }
        var result: [EncodedChange] = []
        result.reserveCapacity(total)
        // Each run reversed, so its next change is its last, and taken out
        // with `removeLast` (moved, where a copy cost a reference count in
        // and another when the runs were freed).
        for index in runs.indices { runs[index].reverse() }
        var counters = runs.map { $0[$0.count - 1].startCounter }
        while true {
            // The run whose next change comes first (`EncodedChange.causalOrder`:
            // by first counter, then replica; runs are in replica order).
            var best = -1
            var bestCounter = UInt64.max
            for index in runs.indices where !runs[index].isEmpty {
                if best < 0 || counters[index] < bestCounter {
                    best = index
                    bestCounter = counters[index]
                }
            }
            guard best >= 0 else { break }
            result.append(runs[best].removeLast())
            if !runs[best].isEmpty { counters[best] = runs[best][runs[best].count - 1].startCounter }
        }
        return .changes(result)
    }

    // MARK: - Local changes

    /// The header of our next local change: sequence number, first counter and
    /// the delta of dependencies since our previous change.
    func nextLocalChangeHeader() -> (seq: UInt64, startCounter: UInt64, dependencies: VersionVector) {
        var delta = VersionVector()
        versionVector.forEach { other, seq in
            if other != replica && seq > lastDependencies[other] { delta[other] = seq }
        }
        return (versionVector[replica] + 1, clock + 1, delta)
    }

    /// Refuses a local edit when this replica's identity may not write.
    /// - Throws: `DocumentError(.forbidden)`.
    func checkLocalWrite() throws(DocumentError) {
        guard let author else { return }
        let role = access.role(of: author.peer)
        guard role.canWrite else {
            throw DocumentError(
                .forbidden,
                access.isFounded
                    ? "read-only: this machine is \(role == .none ? "not a member" : "a reader") of this document"
                    : "this document has no owner yet (its first changes have not arrived)")
        }
    }

    /// The author's declaration for a local change with sequence number `seq`.
    func declaration(forSeq seq: UInt64) -> AuthorDeclaration? {
        seq == 1 ? author?.declaration : nil
    }

    /// A signer for the body of the local change with sequence number `seq`:
    /// extends this replica's chain and signs it. Nil for an open document.
    func localSigner(seq: UInt64) throws(DocumentError) -> ((ArraySlice<UInt8>) -> [UInt8], () -> Digest32)? {
        guard let author else { return nil }
        let previous: Digest32
        if seq == 1 {
            previous = Authorship.chainStart(document: document, replica: replica, crypto: author.crypto)
        } else if let head = heads[replica], head.seq == seq - 1 {
            previous = head.hash
        } else {
            throw DocumentError(.unauthenticated, "this replica's chain in \(document) is broken; it needs a new replica id")
        }
        let box = HashBox()
        let sign: (ArraySlice<UInt8>) -> [UInt8] = { body in
            let hash = author.crypto.sha256(previous, body)
            box.hash = hash
            return author.identity.sign(Authorship.signedMessage(hash))
        }
        return (sign, { box.hash! })
    }

    /// Makes an unfounded signed document this identity's own, as a legacy
    /// document (see `ProjectDocument.upgradeToLegacyOwnership`).
    /// - Throws: `DocumentError(.invalidOperation)` if it is open or founded already.
    mutating func upgradeToLegacyOwnership() throws(DocumentError) {
        guard let author, !access.isFounded else {
            throw DocumentError(.invalidOperation, "only an unfounded signed document can be upgraded")
        }
        access.owner = author.identity.peer
        access.isLegacy = true
    }

    /// Records a local change made on the current version vector.
    mutating func commitLocal(_ change: Change, encoded: EncodedChange, hash: Digest32?) {
        change.dependencies.forEach { other, seq in lastDependencies[other] = seq }
        record(change)
        let encoded = encoded.markedAnchor(true)
        // Open documents too: a snapshot carries the frontier a text field's
        // concurrency check needs (`WriteContext`).
        // Raised in place, not assigned: an assignment would share
        // `versionVector`'s storage, and the next edit would copy it to write.
        if frontiers[replica]?.isCovered(by: versionVector) == true {
            frontiers[replica]!.formUnion(versionVector)
        } else {
            frontiers[replica] = versionVector
        }
        if let author, let hash {
            heads[replica] = ChainHead(seq: change.seq, hash: hash, signature: encoded.signature)
            if change.seq == 1 { authors[replica] = author.record }
        }
        if keepsLog {
            logs[replica, default: ChangeLog()].append(encoded)
        }
    }

    /// Packs each full block of changes in this replica's log
    /// (`ChangeLog.packFull`), and moves the state's point blobs into the
    /// packed bytes with them: the arrays the changes were made in are then
    /// held by nothing and freed. Called once an edit has committed (a
    /// rollback removes only changes not packed).
    mutating func packOwnLog<State: ReplicatedState>(_ state: inout State) {
        guard logs[replica]?.hasFullUnpackedBlock == true else { return }
        state.movePoints(of: replica, moved: logs[replica]!.packFull())
    }

    /// Makes a local change of access operations (founding, sharing): checked
    /// exactly as a peer would check it, then signed and committed.
    /// - Throws: `DocumentError(.forbidden)` if this identity may not make it,
    ///   or what `beforeCommit` throws; nothing changes then.
    mutating func commitAccess(
        _ operations: [Operation], at time: Int64, beforeCommit: (EncodedChange) throws -> Void
    ) throws -> (EncodedChange, accessChanged: Bool) {
        guard let author else { throw DocumentError(.forbidden, "an open document has no access list") }
        let header = nextLocalChangeHeader()
        let change = Change(
            replica: replica, seq: header.seq, startCounter: header.startCounter, wallTime: time,
            dependencies: header.dependencies, operations: operations, declaration: declaration(forSeq: header.seq))
        var point = versionVector
        point[replica] = header.seq
        let savedAccess = access
        var report = ApplyReport()
        try admit(change, by: author.record, at: point, report: &report)
        do {
            guard let (sign, hash) = try localSigner(seq: header.seq) else { preconditionFailure("signed document") }
            let encoded = change.encodedSharingPoints(sign: sign).change.markedAnchor(true)
            try beforeCommit(encoded)
            commitLocal(change, encoded: encoded, hash: hash())
            return (encoded.markedAnchor(true), report.accessChanged)
        } catch {
            access = savedAccess
            throw error
        }
    }

    // MARK: - Snapshots and compaction

    /// Joins a snapshot's vectors, clocks and (signed) authorship. Logs that
    /// the snapshot overtook restart after it (the changes in between exist
    /// only inside the snapshot), and held-back changes of a replica the
    /// snapshot moved forward are dropped (they are sent again if needed).
    mutating func merge(_ header: SnapshotHeader) {
        for (replica, seq) in header.versionVector.sortedEntries where seq > versionVector[replica] {
            if !isSigned, let frontier = header.frontiers[replica] { frontiers[replica] = frontier }
            logs[replica] = ChangeLog(firstSeq: seq + 1)
            // Held-back changes after the snapshot stay if their chain continues
            // from the snapshot's head (an open document has no chains).
            let continues = !isSigned || (header.heads[replica].map { pending[replica, seq]?.hash == $0.hash } ?? false)
            pending.keep(replica, after: continues ? seq : nil)
        }
        for (replica, head) in header.heads where head.seq > (heads[replica]?.seq ?? 0) {
            heads[replica] = head
            if let frontier = header.frontiers[replica] { frontiers[replica] = frontier }
        }
        authors.merge(header.authors) { mine, _ in mine }
        versionVector.formUnion(header.versionVector)
        clock = max(clock, header.clock)
        lastCounters.merge(header.lastCounters) { max($0, $1) }
        if let otherCreated = header.createdAt { createdAt = min(createdAt ?? otherCreated, otherCreated) }
        if let otherUpdated = header.updatedAt { updatedAt = max(updatedAt ?? otherUpdated, otherUpdated) }
    }

    /// Checks the authorship a peer's snapshot claims: owner bound to the
    /// document id, authors bound to their replica ids, and a valid signature
    /// on every chain head it would move forward. The content itself is
    /// taken on the word of the sender, which the sync layer accepts only
    /// from an owner or editor.
    /// - Throws: `DocumentError(.invalidSnapshot)` or `.unauthenticated`.
    func verify(_ header: SnapshotHeader) throws(DocumentError) {
        guard let crypto else { return }
        let theirs = header.access
        guard let owner = theirs.owner, let salt = theirs.salt, !theirs.isLegacy else {
            throw DocumentError(.invalidSnapshot, "the snapshot has no owner bound to the document")
        }
        guard Authorship.documentID(owner: owner, salt: salt, crypto: crypto) == document else {
            throw DocumentError(.invalidSnapshot, "the snapshot's owner \(owner.short) does not own this document")
        }
        var known = authors
        for (replica, record) in header.authors where known[replica] == nil {
            let checked = try Authorship.verify(
                AuthorDeclaration(certificate: record.certificate, nonce: record.nonce), of: replica, crypto: crypto)
            known[replica] = checked
        }
        for (replica, head) in header.heads where head.seq > (heads[replica]?.seq ?? 0) {
            guard let key = known[replica]?.publicKey, let signature = head.signature,
                crypto.isValidSignature(signature[...], of: Authorship.signedMessage(head.hash), publicKey: key)
            else {
                throw DocumentError(.unauthenticated, "the snapshot's head of replica \(replica) is not signed by its author")
            }
            guard header.versionVector[replica] == head.seq else {
                throw DocumentError(.invalidSnapshot, "the snapshot's head of replica \(replica) is not its newest change")
            }
        }
    }

    /// Drops logged changes up to `horizon` (they are covered by a snapshot).
    mutating func compactLogs(upTo horizon: VersionVector) {
        for (replica, log) in logs {
            let keepFrom = min(horizon[replica] + 1, log.nextSeq)
            guard keepFrom > log.firstSeq else { continue }
            logs[replica] = log.dropping(before: keepFrom, replica: replica)
        }
    }
}

/// Where the local signer leaves the chain hash it computed.
private final class HashBox: @unchecked Sendable {
    var hash: Digest32?
}
