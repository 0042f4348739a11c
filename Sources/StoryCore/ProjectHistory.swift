/// A project's past as one replica can rebuild it: starting points (bases)
/// and the changes logged after them.
///
/// A base is a document at a known version: the empty project when every
/// change since the beginning is still logged, a stored snapshot, or (later)
/// a retained checkpoint. The state at a version V is the newest base at or
/// below V with the changes of the log that V covers applied on top, so it is
/// exactly what a replica whose vector was V saw (docs/crdt.md, "Versions").
/// Pure: the store gathers the bases and changes, this type does the rest.
package struct ProjectHistory: Sendable {
    /// Starting points, each a document at its version vector, oldest first.
    package let bases: [HistoryBase]
    /// The logged changes, in causal order (by start counter, then replica).
    package let changes: [(encoded: EncodedChange, change: Change)]
    /// The document's version now: every version asked for must be below it.
    package let current: VersionVector
    /// Wall time of the project's first change (nil: none).
    package let createdAt: Int64?
    /// The causal vector of each change (parallel to `changes`): its author's
    /// vector when it was made, itself included.
    package let causalVectors: [VersionVector]
    /// The lowest and highest logged seq of each replica.
    private let logged: [ReplicaID: ClosedRange<UInt64>]

    /// A history from bases (any order) and logged changes (any order).
    /// O(changes · replicas).
    package init(bases: [ProjectDocument], changes: [(EncodedChange, Change)], current: VersionVector, createdAt: Int64?) {
        self.init(bases: bases.map(HistoryBase.init), changes: changes, current: current, createdAt: createdAt)
    }

    /// A history from bases loaded when needed (any order) and logged changes (any order).
    /// O(changes · replicas).
    package init(bases: [HistoryBase], changes: [(EncodedChange, Change)], current: VersionVector, createdAt: Int64?) {
        self.bases = bases.sorted { $0.versionVector.totalChanges < $1.versionVector.totalChanges }
        let sorted = changes.sorted { EncodedChange.causalOrder($0.0, $1.0) }
        self.changes = sorted.map { (encoded: $0.0, change: $0.1) }
        self.current = current
        self.createdAt = createdAt
        // A replica whose first changes were compacted starts from the oldest
        // base: an upper bound of its author's vector that every base-built
        // version covers.
        let floor = self.bases.first?.versionVector ?? VersionVector()
        var frontiers: [ReplicaID: VersionVector] = [:]
        var vectors: [VersionVector] = []
        var logged: [ReplicaID: ClosedRange<UInt64>] = [:]
        vectors.reserveCapacity(sorted.count)
        for (_, change) in sorted {
            var point = frontiers.removeValue(forKey: change.replica) ?? (change.seq == 1 ? VersionVector() : floor)
            point.formUnion(change.dependencies)
            point[change.replica] = change.seq
            frontiers[change.replica] = point
            vectors.append(point)
            let range = logged[change.replica].map { min($0.lowerBound, change.seq)...max($0.upperBound, change.seq) }
            logged[change.replica] = range ?? change.seq...change.seq
        }
        causalVectors = vectors
        self.logged = logged
    }

    /// The oldest version this replica can rebuild.
    package var oldestVersion: VersionVector { bases.first?.versionVector ?? VersionVector() }

    /// The project exactly as a replica whose version vector was `target`
    /// saw it. A `target` that is not causally closed (a change in it whose
    /// dependencies are not) gives its largest closed part; the result's
    /// `versionVector` says which. O(changes applied).
    /// - Throws: `HistoryError(.unknownVersion)` for changes this replica
    ///   never had, `.compacted` when the changes needed are gone;
    ///   `DocumentError` if a logged change does not apply (damaged data).
    package func document(at target: VersionVector) throws -> ProjectDocument {
        guard target.isCovered(by: current) else {
            throw HistoryError(.unknownVersion, "version \(target.shortID) holds changes this machine never had")
        }
        for base in bases.reversed() where base.versionVector.isCovered(by: target) && isLogged(from: base.versionVector, to: target) {
            var document = try base.document()
            document.keepsChangeLog = false
            let from = base.versionVector
            let needed = changes.filter { $0.change.seq > from[$0.change.replica] && $0.change.seq <= target[$0.change.replica] }
            if !needed.isEmpty {
                try document.apply(needed.map { ($0.encoded, $0.change) }, origin: .store, limits: nil)
            }
            return document
        }
        throw HistoryError(
            .compacted, "the changes before version \(oldestVersion.shortID) were compacted into a snapshot",
            oldestAvailable: oldestVersion)
    }

    /// Whether the log holds every change between `base` and `target`.
    private func isLogged(from base: VersionVector, to target: VersionVector) -> Bool {
        target.sortedEntries.allSatisfy { replica, seq in
            seq <= base[replica] || logged[replica].map { $0.lowerBound <= base[replica] + 1 && $0.upperBound >= seq } ?? false
        }
    }

    /// The version holding every change made at or before `time` (on its
    /// author's clock), cut back to what is causally closed: a change whose
    /// author had seen a later one (clocks disagree) waits for it. Before
    /// the logged changes, it is the newest base (a daily or weekly
    /// checkpoint) made at or before `time`: what this machine kept of then.
    /// O(changes · passes).
    /// - Throws: `HistoryError(.beforeProject)` before the first change,
    ///   `.compacted` when nothing this machine kept is that old.
    package func vector(at time: Int64) throws(HistoryError) -> VersionVector {
        if let createdAt, time < createdAt {
            throw HistoryError(.beforeProject, "the project did not exist yet")
        }
        // The newest base whose last change is at or before `time` (the empty
        // project counts as before everything).
        guard let start = bases.last(where: { ($0.updatedAt ?? .min) <= time }) else {
            throw HistoryError(.compacted, "the changes around that time were compacted into a snapshot", oldestAvailable: oldestVersion)
        }
        let floor = start.versionVector
        var result = floor
        var stopped: Set<ReplicaID> = []
        for (_, change) in changes where change.seq > floor[change.replica] && !stopped.contains(change.replica) {
            if change.seq == result[change.replica] + 1 && change.wallTime <= time {
                result[change.replica] = change.seq
            } else {
                stopped.insert(change.replica)
            }
        }
        // Each pass only lowers entries, so this ends.
        var changed = true
        while changed {
            changed = false
            for (index, (_, change)) in changes.enumerated()
            where change.seq > floor[change.replica] && change.seq <= result[change.replica] && !causalVectors[index].isCovered(by: result) {
                result[change.replica] = change.seq - 1
                changed = true
            }
        }
        if result.isEmpty { throw HistoryError(.beforeProject, "the project did not exist yet") }
        return result
    }

    /// The history as people read it: each author's burst of changes (the
    /// same replica, consecutive in causal order, each at most `gap`
    /// milliseconds after the one before) is one entry, oldest first. O(changes).
    package func versions(gap: Int64 = 5 * 60 * 1000) -> [ProjectVersion] {
        var result: [ProjectVersion] = []
        for (index, (_, change)) in changes.enumerated() {
            if var last = result.last, last.replica == change.replica, change.wallTime - last.lastTime <= gap {
                last.changes.append(change)
                last.vector = causalVectors[index]
                result[result.count - 1] = last
            } else {
                result.append(ProjectVersion(vector: causalVectors[index], replica: change.replica, changes: [change]))
            }
        }
        return result
    }
}

/// A starting point of a `ProjectHistory`: a document at a known version,
/// decoded only when a version is rebuilt from it (a store may keep dozens
/// of checkpoints; one request needs one).
package struct HistoryBase: Sendable {
    /// The version the document is at.
    package let versionVector: VersionVector
    /// Wall time of its newest change (nil: the empty project).
    package let updatedAt: Int64?
    /// Whether it is a checkpoint history retention kept of the past (a
    /// daily or weekly one, or a named version's), not the present's snapshot
    /// or the empty project.
    package let isCheckpoint: Bool
    private let load: @Sendable () throws -> ProjectDocument

    /// A base already decoded.
    package init(_ document: ProjectDocument) {
        versionVector = document.versionVector
        updatedAt = document.updatedAt
        isCheckpoint = false
        load = { document }
    }

    /// A base decoded by `load` when needed, which must give a document at `versionVector`.
    package init(
        versionVector: VersionVector, updatedAt: Int64?, isCheckpoint: Bool, load: @escaping @Sendable () throws -> ProjectDocument
    ) {
        self.versionVector = versionVector
        self.updatedAt = updatedAt
        self.isCheckpoint = isCheckpoint
        self.load = load
    }

    /// The document.
    /// - Throws: what `load` throws (damaged stored data).
    package func document() throws -> ProjectDocument { try load() }
}
