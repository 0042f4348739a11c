/// The changes one replica knows from one author, contiguous by sequence number.
/// Changes before `firstSeq` were compacted away or arrived inside a snapshot.
struct ChangeLog: Sendable {
    var firstSeq: UInt64 = 1
    var changes: [EncodedChange] = []

    var nextSeq: UInt64 { firstSeq + UInt64(changes.count) }
}

/// What `apply` did with a batch of changes.
public struct ApplyReport: Sendable {
    /// The changes applied by this call, in the order they were applied
    /// (causal), including earlier buffered ones that became applicable.
    public var applied: [EncodedChange] = []
    /// Changes already applied before (re-deliveries), ignored.
    public var duplicates = 0
    /// Changes held back because something they depend on has not arrived.
    public var buffered = 0
}

/// What `changes(since:)` can give.
public enum ChangesSince: Sendable {
    /// The changes the other side lacks, in causal order.
    case changes([EncodedChange])
    /// Some of them were compacted away: only a snapshot brings the other side up.
    case snapshotRequired
}

/// Everything a replica keeps about a document besides its state: clocks,
/// version vector, the change logs and the causal buffer.
struct ReplicaCore: Sendable {
    let replica: ReplicaID
    /// The highest Lamport counter seen (the well-known objects' counters at first).
    var clock: UInt64 = OpID.firstCounter - 1
    var versionVector = VersionVector()
    /// The full version vector our own last change was made on (for delta deps).
    var lastDependencies = VersionVector()
    /// Last counter used by each replica, so a replica cannot reuse op ids.
    var lastCounters: [ReplicaID: UInt64] = [:]
    var logs: [ReplicaID: ChangeLog] = [:]
    /// Changes waiting for their dependencies, by replica and sequence number.
    var pending: [ReplicaID: [UInt64: (EncodedChange, Change)]] = [:]
    /// Earliest and latest wall time of any applied change.
    var createdAt: Int64?
    var updatedAt: Int64?
    /// Whether applied changes are kept in memory for `changes(since:)`.
    var keepsLog = true

    init(replica: ReplicaID) {
        self.replica = replica
    }

    var pendingCount: Int { pending.values.reduce(0) { $0 + $1.count } }

    private func dependenciesMet(_ change: Change) -> Bool {
        guard versionVector[change.replica] == change.seq - 1 else { return false }
        for (replica, seq) in change.dependencies.entries where versionVector[replica] < seq { return false }
        return true
    }

    /// Applies changes in causal order, holding back those whose dependencies
    /// are missing. All or nothing: if any change fails, or `beforeCommit`
    /// throws, the document and the buffer are left exactly as they were.
    mutating func integrate<State: ReplicatedState>(
        _ incoming: [(EncodedChange, Change)], into state: inout State,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport {
        var report = ApplyReport()
        var queues: [ReplicaID: [UInt64: (EncodedChange, Change)]] = [:]
        let saved = (versionVector, clock, lastCounters, createdAt, updatedAt)
        var logAppends: [ReplicaID: Int] = [:]
        var journal: [State.JournalEntry] = []
        var usedPending: [(ReplicaID, UInt64)] = []
        var rejected: (ReplicaID, UInt64)?
        do {
            // Fast path: a batch sent in causal order applies as it comes.
            for item in incoming {
                let change = item.1
                if change.seq <= versionVector[change.replica] {
                    try checkSameAsLogged(item.0)
                    report.duplicates += 1
                } else if queues.isEmpty && dependenciesMet(change) {
                    do {
                        try applyOne(item, to: &state, journal: &journal)
                    } catch {
                        rejected = (change.replica, change.seq)
                        throw error
                    }
                    appendToLog(item.0, appends: &logAppends)
                    report.applied.append(item.0)
                } else if let held = queues[change.replica]?[change.seq] ?? pending[change.replica]?[change.seq] {
                    guard held.0.bytes == item.0.bytes else {
                        throw DocumentError(
                            .conflict, "two different changes claim sequence number \(change.seq) of replica \(change.replica)")
                    }
                    report.duplicates += 1
                } else {
                    queues[change.replica, default: [:]][change.seq] = item
                }
            }
            let replicas = pending.isEmpty && queues.isEmpty ? [] : Set(queues.keys).union(pending.keys).sorted()
            var progress = !replicas.isEmpty
            while progress {
                progress = false
                for replica in replicas {
                    while true {
                        let next = versionVector[replica] + 1
                        guard let item = queues[replica]?[next] ?? pending[replica]?[next], dependenciesMet(item.1)
                        else { break }
                        if queues[replica]?[next] != nil {
                            queues[replica]![next] = nil
                        } else {
                            usedPending.append((replica, next))
                        }
                        do {
                            try applyOne(item, to: &state, journal: &journal)
                        } catch {
                            rejected = (replica, next)
                            throw error
                        }
                        appendToLog(item.0, appends: &logAppends)
                        report.applied.append(item.0)
                        progress = true
                    }
                }
            }
            report.buffered = pendingCount - usedPending.count + queues.values.reduce(0) { $0 + $1.count }
            try beforeCommit(report)
        } catch {
            state.rollback(journal)
            (versionVector, clock, lastCounters, createdAt, updatedAt) = saved
            for (replica, count) in logAppends { logs[replica]!.changes.removeLast(count) }
            // An invalid change can never apply; it and the rest of its replica's
            // held-back changes (which depend on it) must not block later calls.
            if let (replica, seq) = rejected {
                pending[replica] = pending[replica]?.filter { $0.key < seq }
                pending = pending.filter { !$0.value.isEmpty }
            }
            throw error
        }
        for (replica, seq) in usedPending { pending[replica]![seq] = nil }
        for (replica, queue) in queues where !queue.isEmpty { pending[replica, default: [:]].merge(queue) { a, _ in a } }
        if !pending.isEmpty {
            // Held-back copies of changes that just arrived again and applied.
            let vector = versionVector
            pending = pending.compactMapValues { held in
                let left = held.filter { $0.key > vector[$0.value.1.replica] }
                return left.isEmpty ? nil : left
            }
        }
        return report
    }

    private mutating func appendToLog(_ change: EncodedChange, appends: inout [ReplicaID: Int]) {
        guard keepsLog, logs[change.replica, default: ChangeLog()].nextSeq == change.seq else { return }
        logs[change.replica, default: ChangeLog()].changes.append(change)
        appends[change.replica, default: 0] += 1
    }

    /// Applies one change whose dependencies are met.
    private mutating func applyOne<State: ReplicatedState>(
        _ item: (EncodedChange, Change), to state: inout State, journal: inout [State.JournalEntry]
    ) throws(DocumentError) {
        let change = item.1
        if let last = lastCounters[change.replica], change.startCounter <= last {
            throw DocumentError(
                .invalidOperation,
                "change \(change.seq) of \(change.replica) reuses counter \(change.startCounter) (last was \(last))")
        }
        for (index, op) in change.operations.enumerated() {
            do {
                try state.apply(op, id: change.opID(at: index), time: change.wallTime, journal: &journal)
            } catch {
                throw error.prefixed("change \(change.seq) of \(change.replica), operation \(index + 1)")
            }
        }
        record(change)
    }

    /// Advances clocks and vectors for an applied change.
    mutating func record(_ change: Change) {
        versionVector[change.replica] = change.seq
        clock = max(clock, change.endCounter)
        lastCounters[change.replica] = change.endCounter
        createdAt = min(createdAt ?? change.wallTime, change.wallTime)
        updatedAt = max(updatedAt ?? change.wallTime, change.wallTime)
    }

    /// A re-delivered change must be byte-identical to the one applied; two
    /// different changes with one (replica, seq) mean a copied database.
    private func checkSameAsLogged(_ change: EncodedChange) throws(DocumentError) {
        guard let log = logs[change.replica], change.seq >= log.firstSeq, change.seq < log.nextSeq else { return }
        let logged = log.changes[Int(change.seq - log.firstSeq)]
        if logged.bytes != change.bytes {
            throw DocumentError(
                .conflict,
                "two different changes claim sequence number \(change.seq) of replica \(change.replica): "
                    + "a database was copied or restored without a new replica id")
        }
    }

    /// The changes `other` lacks, in causal order.
    func changes(since other: VersionVector) -> ChangesSince {
        var result: [EncodedChange] = []
        for (replica, seq) in versionVector.sortedEntries where seq > other[replica] {
            guard let log = logs[replica], log.firstSeq <= other[replica] + 1, log.nextSeq == seq + 1 else {
                return .snapshotRequired
            }
            result += log.changes[Int(other[replica] + 1 - log.firstSeq)...]
        }
        result.sort(by: EncodedChange.causalOrder)
        return .changes(result)
    }

    /// The header of our next local change: sequence number, first counter and
    /// the delta of dependencies since our previous change.
    func nextLocalChangeHeader() -> (seq: UInt64, startCounter: UInt64, dependencies: VersionVector) {
        var delta = VersionVector()
        for (other, seq) in versionVector.entries where other != replica && seq > lastDependencies[other] {
            delta[other] = seq
        }
        return (versionVector[replica] + 1, clock + 1, delta)
    }

    /// Records a local change made on the current version vector.
    mutating func commitLocal(_ change: Change, encoded: EncodedChange) {
        for (other, seq) in change.dependencies.entries { lastDependencies[other] = seq }
        record(change)
        if keepsLog, logs[replica, default: ChangeLog()].nextSeq == change.seq {
            logs[replica, default: ChangeLog()].changes.append(encoded)
        }
    }

    /// Joins a snapshot's vectors and clocks. Logs that the snapshot overtook
    /// restart after it (the changes in between exist only inside the snapshot).
    mutating func merge(versionVector other: VersionVector, clock otherClock: UInt64, lastCounters otherCounters: [ReplicaID: UInt64], createdAt otherCreated: Int64?, updatedAt otherUpdated: Int64?) {
        for (replica, seq) in other.sortedEntries where seq > versionVector[replica] {
            logs[replica] = ChangeLog(firstSeq: seq + 1, changes: [])
            pending[replica] = pending[replica]?.filter { $0.key > seq }
        }
        versionVector.formUnion(other)
        clock = max(clock, otherClock)
        lastCounters.merge(otherCounters) { max($0, $1) }
        if let otherCreated { createdAt = min(createdAt ?? otherCreated, otherCreated) }
        if let otherUpdated { updatedAt = max(updatedAt ?? otherUpdated, otherUpdated) }
        pending = pending.filter { !$0.value.isEmpty }
    }

    /// Drops logged changes up to `horizon` (they are covered by a snapshot).
    mutating func compactLogs(upTo horizon: VersionVector) {
        for (replica, log) in logs {
            let keepFrom = min(horizon[replica] + 1, log.nextSeq)
            guard keepFrom > log.firstSeq else { continue }
            logs[replica] = ChangeLog(firstSeq: keepFrom, changes: Array(log.changes[Int(keepFrom - log.firstSeq)...]))
        }
    }
}
