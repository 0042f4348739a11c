import Foundation
package import StoryCore

/// Events, and the snapshots and compaction that keep the change log short.
extension Store {
    /// What happened in the store, as it happens: documents that changed (by a
    /// local edit or from a peer), documents created, access lists changed,
    /// peers waiting for acceptance. The sync layer pushes changes to peers
    /// from this; the control API streams it to clients.
    /// The store's events from now on. Lossy by default (a slow subscriber
    /// loses the oldest beyond 1024); `lossless` for a consumer that must see
    /// every one and keeps up (its buffer is unbounded).
    package func events(lossless: Bool = false) -> AsyncStream<StoreEvent> { broadcaster.subscribe(lossless: lossless) }

    func publish(_ event: StoreEvent) {
        if batchEvents != nil { batchEvents!.append(event) } else { broadcaster.publish(event) }
    }

    /// Ends every event stream (at shutdown).
    package func finishEvents() { broadcaster.finish() }

    func noteChanges(_ count: Int, in id: DocumentID, origin: StoreEvent.Origin = .local) {
        guard count > 0 else { return }
        publish(.documentChanged(id, origin: origin, changes: count))
        let previous = unsnapshotted[id]?.count ?? 0
        unsnapshotted[id] = (previous + count, ContinuousClock.now)
    }

    /// Documents due for a snapshot: enough changes, or idle long enough.
    package func documentsDueForSnapshot(now: ContinuousClock.Instant = .now) -> [DocumentID] {
        unsnapshotted.compactMap { id, state in
            state.count >= options.snapshotEveryChanges || now - state.lastChange >= options.snapshotAfterIdle ? id : nil
        }.filter { !snapshotsInFlight.contains($0) }.sorted()
    }

    /// Writes a snapshot of a loaded document, then compacts. The snapshot is
    /// encoded off the actor, so edits go on meanwhile; changes made meanwhile
    /// stay in the change log (the snapshot's version vector says what it covers).
    package func writeSnapshot(of id: DocumentID, at time: Int64) async throws {
        guard !snapshotsInFlight.contains(id) else { return }
        snapshotsInFlight.insert(id)
        defer { snapshotsInFlight.remove(id) }
        let counted = unsnapshotted[id]?.count ?? 0
        let doc = try loadedDocument(id)
        let layout = try pointsLeftInLog(by: doc)
        let (bytes, version) = await Self.encode(doc, leavingInLog: layout)
        // Purged from the trash while it was encoded: nothing is left to snapshot.
        guard try database.hasDocument(id) else { return }
        try database.connection.transaction {
            // A compaction meanwhile dropped changes the snapshot counted on: it keeps their points after all.
            if let layout, try pointsLeftInLog(by: doc)?.first != layout.first {
                try database.saveSnapshot(doc.snapshot(), version: version, of: id, created: time)
            } else {
                try database.saveSnapshot(bytes, version: version, of: id, created: time, pointsInLog: layout?.first)
            }
        }
        if let state = unsnapshotted[id] {
            let left = state.count - counted
            unsnapshotted[id] = left > 0 ? (left, state.lastChange) : nil
        }
        try compact(id, snapshotVersion: version)
    }

    /// Runs on the global executor, not the actor's.
    nonisolated static func encode(_ doc: any StoredDocument, leavingInLog layout: LogPoints?) async -> ([UInt8], VersionVector) {
        (snapshot(of: doc, leavingInLog: layout), doc.versionVector)
    }

    nonisolated static func snapshot(of doc: any StoredDocument, leavingInLog layout: LogPoints?) -> [UInt8] {
        guard let layout, let project = doc as? ProjectDocument else { return doc.snapshot() }
        return project.snapshot(keepingPointsOf: { !layout.holds($0) })
    }

    /// Which point blobs a snapshot of `doc` leaves in the change log, which
    /// holds them: with history retention, those of a project's stored
    /// changes (each blob is then stored once, not in the log and again in
    /// the snapshot), per replica from the start of an unbroken run of stored
    /// changes up to the document's version. Nil: none (no retention, a
    /// library, or no such run).
    func pointsLeftInLog(by doc: any StoredDocument) throws -> LogPoints? {
        guard options.historyRetention > 0, doc is ProjectDocument else { return nil }
        let runs = try database.unbrokenLogRuns(of: doc.id, upTo: doc.versionVector)
        guard !runs.isEmpty else { return nil }
        return LogPoints(first: VersionVector(runs.mapValues(\.seq)), counters: runs.mapValues(\.counter))
    }

    /// The stored snapshot of a document, as the database keeps it (for tests and diagnostics).
    func storedSnapshot(of id: DocumentID) throws -> StoredSnapshot? { try database.snapshot(of: id) }

    /// Runs `body` on the store's database, on the actor (for tests).
    func withDatabase<Result: Sendable>(_ body: @Sendable (StoreDatabase) throws -> Result) throws -> Result { try body(database) }

    /// When changes go whose points the stored snapshot left in the log
    /// (`documentKeepingPoints` gave `doc`, loaded before the drop): the
    /// snapshot is written again from `doc`, leaving in the log only the
    /// points of the changes still there. Call in the transaction that drops
    /// them, after the drop.
    private func keepPoints(of id: DocumentID, from doc: (any StoredDocument)?) throws {
        guard let doc else { return }
        let layout = try pointsLeftInLog(by: doc)
        try database.saveSnapshot(
            Self.snapshot(of: doc, leavingInLog: layout), version: doc.versionVector, of: id, created: options.clock.milliseconds,
            pointsInLog: layout?.first)
    }

    /// The document, when dropping the changes covered by `dropped` would take
    /// points the stored snapshot left in the log (`keepPoints`).
    private func documentKeepingPoints(of id: DocumentID, dropped: VersionVector) throws -> (any StoredDocument)? {
        guard let inLog = try database.snapshotPointsInLog(of: id),
            inLog.sortedEntries.contains(where: { dropped[$0.replica] >= $0.seq })
        else { return nil }
        return try loadedDocument(id)
    }

    /// Writes the snapshots that are due. Returns the documents snapshotted.
    @discardableResult
    package func runMaintenance(at time: Int64, now: ContinuousClock.Instant = .now) async throws -> [DocumentID] {
        let due = documentsDueForSnapshot(now: now)
        for id in due { try await writeSnapshot(of: id, at: time) }
        return due
    }

    /// Drops stored changes covered by the snapshot and acknowledged by every
    /// configured peer that is a member of the document; the in-memory log
    /// keeps only what follows the snapshot. A peer behind that horizon gets
    /// a snapshot.
    package func compact(_ id: DocumentID) throws {
        guard let version = try database.snapshot(of: id)?.version else { return }
        try compact(id, snapshotVersion: version)
    }

    func compact(_ id: DocumentID, snapshotVersion: VersionVector) throws {
        var horizon = snapshotVersion
        let acknowledged = try database.acknowledged(id)
        let configured = Set(try database.peers().filter { $0.state == .configured }.map(\.id))
        for member in try database.members(of: id) where configured.contains(member.peer) {
            let acked = acknowledged[member.peer] ?? VersionVector()
            for replica in horizon.replicas { horizon[replica] = min(horizon[replica], acked[replica]) }
        }
        if options.historyRetention > 0, try database.document(id)?.kind == .project {
            let (retained, checkpoints) = try retainedHorizon(of: id, under: horizon)
            let doc = try documentKeepingPoints(of: id, dropped: retained)
            try database.connection.transaction {
                for checkpoint in checkpoints.saved {
                    try database.saveCheckpoint(
                        checkpoint.bytes, version: checkpoint.version, of: id, kept: checkpoint.kept, created: options.clock.milliseconds)
                }
                for rowid in checkpoints.dropped { try database.dropCheckpoint(rowid) }
                _ = try database.dropChanges(of: id, coveredBy: retained)
                try keepPoints(of: id, from: doc)
                try database.dropCoveredSignatures(of: id)
            }
        } else {
            let doc = try documentKeepingPoints(of: id, dropped: horizon)
            try database.connection.transaction {
                _ = try database.dropChanges(of: id, coveredBy: horizon)
                try keepPoints(of: id, from: doc)
                try database.dropCoveredSignatures(of: id)
            }
        }
        loaded[id]?.compactChangeLog(upTo: snapshotVersion)
    }

    /// History retention: `horizon` cut back so that every change made
    /// within `historyRetention` stays, and the checkpoints to write before
    /// the changes below it go: the project as it was at the new horizon
    /// (the base the kept changes start from; older ones it replaces are
    /// dropped) and each named version whose changes would go (kept for
    /// good). A horizon that is not causally closed (clocks that disagree)
    /// is cut back to the part that is. The window starts at midnight UTC,
    /// so this reads the log at most once a day per project.
    private func retainedHorizon(
        of id: DocumentID, under horizon: VersionVector
    ) throws -> (VersionVector, checkpoints: (saved: [(version: VersionVector, bytes: [UInt8], kept: Bool)], dropped: [Int64])) {
        // The window starts at a whole (UTC) day, so the horizon moves, and the
        // log is read to make a checkpoint, at most once a day per project.
        let day: Int64 = 86_400_000
        let cutoff = Int64((Double(options.clock.milliseconds - options.historyRetention) / Double(day)).rounded(.down)) * day
        let young = try database.firstStoredSeq(of: id, madeSince: cutoff)
        var retained = horizon
        for (replica, seq) in horizon.sortedEntries {
            if let first = young[replica] { retained[replica] = min(seq, first - 1) }
        }
        let stored = try database.firstStoredSeq(of: id)
        guard stored.contains(where: { retained[$0.key] >= $0.value }) else { return (retained, ([], [])) }
        let history = try projectHistory(id)
        let base: ProjectDocument
        do {
            base = try history.document(at: retained)
        } catch {
            // No base below it (compacted before retention): keep every stored change.
            return (VersionVector(), ([], []))
        }
        retained = base.versionVector
        let existing = try database.checkpoints(of: id)
        // Checkpoints leave their points out: the project keeps every point
        // blob it ever had, and a checkpoint loads with them (Store.projectHistory).
        var saved: [(version: VersionVector, bytes: [UInt8], kept: Bool)] = []
        for named in try project(id).versionNames {
            guard let version = named.version, version.isCovered(by: retained),
                !existing.contains(where: { $0.version == version }), !saved.contains(where: { $0.version == version }),
                let past = try? history.document(at: version), past.versionVector == version
            else { continue }
            saved.append((version, past.snapshot(includingPoints: false), true))
        }
        if !existing.contains(where: { $0.version == retained }) { saved.append((retained, base.snapshot(includingPoints: false), false)) }
        // The bases this one replaces stay as daily, then weekly checkpoints
        // (the history read each one's time already).
        let older = existing.filter { !$0.kept && $0.version != retained && $0.version.isCovered(by: retained) }.map { checkpoint in
            (rowid: checkpoint.rowid, updatedAt: history.bases.first { $0.isCheckpoint && $0.versionVector == checkpoint.version }?.updatedAt)
        }
        let days = max((options.historyRetention + day - 1) / day, 1)
        let dropped = Self.checkpointsToDrop(older, before: cutoff, days: days, weeks: Self.weeklyCheckpoints)
        return (retained, (saved, dropped))
    }

    /// Weeks for which a weekly checkpoint is kept, before the daily ones.
    static let weeklyCheckpoints: Int64 = 52

    /// Which of the unnamed checkpoints older than the retention window to
    /// drop: for `days` days before `cutoff` (the window's start) the newest
    /// of each day stays, for `weeks` weeks (Monday to Sunday, UTC) before
    /// those the newest of each week; older ones go. A checkpoint's day is
    /// that of its newest change (nil: the empty project, dropped).
    static func checkpointsToDrop(_ checkpoints: [(rowid: Int64, updatedAt: Int64?)], before cutoff: Int64, days: Int64, weeks: Int64) -> [Int64] {
        let day: Int64 = 86_400_000
        func dayIndex(_ time: Int64) -> Int64 { time >= 0 ? time / day : (time - day + 1) / day }
        // 1970-01-01 was a Thursday: day + 3 counts weeks from Mondays.
        func weekIndex(_ dayIndex: Int64) -> Int64 { dayIndex + 3 >= 0 ? (dayIndex + 3) / 7 : (dayIndex + 3 - 6) / 7 }
        let dailyFrom = dayIndex(cutoff) - days
        let weeklyFrom = weekIndex(dailyFrom) - weeks
        enum Period: Hashable {
            case day(Int64)
            case week(Int64)
        }
        var newest: [Period: (rowid: Int64, time: Int64)] = [:]
        var dropped: [Int64] = []
        for checkpoint in checkpoints {
            guard let time = checkpoint.updatedAt else {
                dropped.append(checkpoint.rowid)
                continue
            }
            let index = dayIndex(time)
            let group: Period
            if index >= dailyFrom {
                group = .day(index)
            } else if weekIndex(index) >= weeklyFrom {
                group = .week(weekIndex(index))
            } else {
                dropped.append(checkpoint.rowid)
                continue
            }
            if let kept = newest[group] {
                if (time, checkpoint.rowid) > (kept.time, kept.rowid) {
                    dropped.append(kept.rowid)
                    newest[group] = (checkpoint.rowid, time)
                } else {
                    dropped.append(checkpoint.rowid)
                }
            } else {
                newest[group] = (checkpoint.rowid, time)
            }
        }
        return dropped.sorted()
    }
}

/// The point blobs a project's snapshot leaves in the change log
/// (`Store.pointsLeftInLog`): per replica, those of operations from the
/// first counter of an unbroken run of stored changes.
struct LogPoints {
    /// Per replica, the sequence number the run starts at (stored with the snapshot).
    let first: VersionVector
    let counters: [ReplicaID: UInt64]

    func holds(_ operation: OpID) -> Bool { counters[operation.replica].map { operation.counter >= $0 } ?? false }
}
