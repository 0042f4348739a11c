import Foundation
package import StoryCore
import Synchronization

/// What sync needs of the store: applying peers' changes and snapshots, versions, changes since a version, settings, history.
extension Store {
    /// The origin tag of changes from a peer (for held-back bounds).
    package nonisolated static func origin(of peer: PeerID) -> ChangeOrigin {
        .peer(peer.digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Applies changes from a peer in one transaction (group commit): the
    /// document takes them only if they committed, and they are committed only
    /// if they all applied. Changes whose dependencies are missing are held,
    /// within `options`' bounds.
    /// - Throws: `DocumentError` for an invalid, forged or forbidden change or
    ///   a full held-back buffer (`.replicaReused`: a peer proved another copy
    ///   of this database uses its replica id, which is then renewed);
    ///   `StoreError` for the disk.
    @discardableResult
    package func apply(_ changes: [(EncodedChange, Change)], to id: DocumentID, from peer: PeerID? = nil) throws -> ApplyReport {
        try apply(ReceivedChanges(changes), to: id, from: peer)
    }

    /// Applies received changes (`ChangeBatch.decodeReceived`), as `apply(_:to:from:)` applies decoded ones.
    @discardableResult
    package func apply(_ changes: consuming ReceivedChanges, to id: DocumentID, from peer: PeerID? = nil) throws -> ApplyReport {
        let origin = peer.map(Self.origin(of:)) ?? .unknown
        let limits = heldBackLimits(for: id, origin: origin)
        let founded = FoundedKind()
        let commit: (ApplyReport) throws -> Void = { report in
            guard !report.applied.isEmpty else { return }
            try self.database.connection.transaction {
                try self.database.append(report.applied, to: id)
                if report.accessChanged {
                    try self.database.setMembers(report.members, of: id)
                    if let record = try self.database.document(id), record.isAwaitingFounding { founded.kind.withLock { $0 = record.kind } }
                    try self.database.clearOrigin(of: id)
                }
            }
        }
        let report: ApplyReport
        do {
            // Moved into the document, not copied (the changes are moved out
            // of their array where they are; a second holder made that a copy).
            var pending = Optional(consume changes)
            report = try changingDocument(id) {
                try mutate(id) { document in
                    guard let changes = pending.take() else { preconditionFailure("a document's changes applied twice") }
                    return try document.apply(changes, origin: origin, limits: limits, beforeCommit: commit)
                }
            }
        } catch let error as DocumentError where error.code == .replicaReused {
            let fresh = try mintReplicaID()
            throw DocumentError(.replicaReused, "\(error.message); this database is now replica \(fresh)")
        }
        // A document taken from a peer exists for everyone here once its founding checked out.
        if let kind = founded.kind.withLock({ $0 }) { publish(.documentCreated(id, kind: kind)) }
        noteChanges(report.applied.count, in: id, origin: peer.map { .peer($0) } ?? .local)
        if report.accessChanged { publish(.accessChanged(id)) }
        return report
    }

    /// Decodes and applies a batch (see `apply(_:to:from:)`).
    @discardableResult
    package func apply(batch bytes: ArraySlice<UInt8>, to id: DocumentID, from peer: PeerID? = nil) throws -> ApplyReport {
        try apply(try ChangeBatch.decodeReceived(bytes), to: id, from: peer)
    }

    /// The bounds for a call that applies changes from `origin` to `id`:
    /// the per-document limits, less what other documents already hold back
    /// in all and from that origin.
    func heldBackLimits(for id: DocumentID, origin: ChangeOrigin) -> HeldBackLimits {
        var others = 0
        var othersFromOrigin = 0
        for (document, loaded) in loaded where document != id {
            let held = loaded.heldBackBytes
            guard held > 0 else { continue }
            others += held
            othersFromOrigin += loaded.heldBackBytes(from: origin)
        }
        return HeldBackLimits(
            changes: options.heldBackPerDocument.changes,
            bytes: min(options.heldBackPerDocument.bytes, max(0, options.heldBackBytesTotal - others)),
            bytesFromOrigin: max(0, options.heldBackBytesPerPeer - othersFromOrigin))
    }

    /// Forgets what a peer left held back (it went away; whoever has those
    /// changes sends them again).
    package func dropHeldBack(from peer: PeerID) {
        let origin = Self.origin(of: peer)
        for id in Array(loaded.keys) where loaded[id]!.heldBackBytes(from: origin) > 0 {
            loaded[id]!.dropHeldBack(from: origin)
        }
    }

    /// Bytes held back over all loaded documents.
    package var heldBackBytes: Int { loaded.values.reduce(0) { $0 + $1.heldBackBytes } }

    /// A document's version vector (loads it if needed).
    package func version(of id: DocumentID) throws -> VersionVector { try loadedDocument(id).versionVector }

    /// What a document holds, without loading it: the loaded document's
    /// version if it is in memory, else its snapshot's version joined with the
    /// newest stored change of each replica (the log holds only applied changes,
    /// and a merged snapshot covers what it made applicable).
    package func storedVersion(of id: DocumentID) throws -> VersionVector {
        if let loaded = loaded[id] { return loaded.versionVector }
        if let known = evictedVersions[id] { return known }
        return try storedVersion(of: try document(id))
    }

    /// The version of a document not in memory, from its record and the log.
    func storedVersion(of record: DocumentRecord) throws -> VersionVector {
        if let loaded = loaded[record.id] { return loaded.versionVector }
        if let known = evictedVersions[record.id] { return known }
        var version = record.snapshotVersion ?? VersionVector()
        version.formUnion(VersionVector(try database.lastStoredSeq(of: record.id)))
        evictedVersions[record.id] = version
        return version
    }

    /// Every document with its version and what each peer acknowledged of
    /// it: one query for the records, one for the acknowledgements, and the
    /// versions from memory (`status` with thousands of projects).
    package func syncStates() throws -> [(record: DocumentRecord, version: VersionVector, acknowledged: [PeerID: VersionVector])] {
        let acknowledged = try database.acknowledgedByDocument()
        return try database.documents().map { record in
            (record, try storedVersion(of: record), acknowledged[record.id] ?? [:])
        }
    }

    /// What a peer at `version` lacks: from memory when the loaded document's
    /// log reaches back far enough, else from the database, else a snapshot is needed.
    package func changes(of id: DocumentID, since version: VersionVector) throws -> ChangesSince {
        let doc = try loadedDocument(id)
        let inMemory = doc.changes(since: version)
        if case .changes = inMemory { return inMemory }
        let first = try database.firstStoredSeq(of: id)
        for (replica, seq) in doc.versionVector.sortedEntries where seq > version[replica] {
            guard let stored = first[replica], stored <= version[replica] + 1 else { return .snapshotRequired }
        }
        return .changes(try database.changes(of: id, notCoveredBy: version).map(\.0))
    }

    /// A setting of the daemon's that lives with its data (such as which
    /// library document it uses), committed at once.
    package func setting(_ key: String) throws -> String? { try database.setting(key) }

    package func setSetting(_ key: String, to value: String?) throws { try database.setSetting(key, to: value) }

    /// A document's history: its latest `limit` stored changes, newest first,
    /// and whether older changes were compacted into a snapshot (and are no
    /// longer listed one by one).
    package func history(of id: DocumentID, limit: Int) throws -> (changes: [Change], compacted: Bool) {
        _ = try document(id)
        let compacted =
            try database.firstStoredSeq(of: id).values.contains { $0 > 1 }
            || (try database.changeCount(of: id) == 0 && database.snapshot(of: id) != nil)
        return (try database.recentChanges(of: id, limit: limit), compacted)
    }

    /// The document's current state as a snapshot (for a peer behind the
    /// compaction horizon).
    package func snapshot(of id: DocumentID) throws -> [UInt8] { try loadedDocument(id).snapshot() }

    /// A snapshot to catch a far-behind peer up with, and the version it
    /// covers: the stored one as it is on disk (nothing to encode), else the
    /// document's. Nil when a peer would refuse a snapshot from this daemon
    /// (it may only send snapshots as an owner or editor) or the document is
    /// not founded yet. (Whether the peer is a member is the caller's check.)
    package func catchUpSnapshot(of id: DocumentID) throws -> (bytes: [UInt8], version: VersionVector)? {
        let doc = try loadedDocument(id)
        guard doc.isFounded, doc.localRole.canWrite else { return nil }
        // One that left points in the change log is no use to a peer (and is not read): encoded afresh then.
        if try database.snapshotPointsInLog(of: id) == nil, let stored = try database.snapshot(of: id), !stored.version.isEmpty {
            return (stored.bytes, stored.version)
        }
        return (doc.snapshot(), doc.versionVector)
    }

    /// Merges a peer's snapshot, then writes our own snapshot (the changes it
    /// brought are not in the change log). Only an owner or editor may send a
    /// snapshot: its content is taken on the sender's word (its authorship is
    /// checked by the document).
    /// - Throws: `DocumentError(.forbidden)` when `peer` may not send one,
    ///   `DocumentError`/`CodecError` for a bad snapshot; nothing changes then.
    package func merge(snapshot bytes: [UInt8], into id: DocumentID, from peer: PeerID, at time: Int64) throws {
        var doc = try loadedDocument(id)
        if doc.isFounded {
            guard doc.role(of: peer).canWrite else {
                throw DocumentError(.forbidden, "\(peer.short) may not send a snapshot of \(id): it is not an owner or editor")
            }
        }
        let overwritesBefore = (doc as? ProjectDocument)?.overwrites
        // A copy that held nothing takes the snapshot as it is: stored as it came (a
        // new peer's catch-up of a big project spares its encode), once checked to
        // cover exactly what the merge made of it.
        let wasEmpty = doc.versionVector.isEmpty && doc.heldBackBytes == 0
        _ = try doc.merge(snapshot: bytes)
        guard doc.role(of: peer).canWrite else {
            throw DocumentError(.forbidden, "\(peer.short) may not send a snapshot of \(id): the snapshot does not make it an owner or editor")
        }
        let members = doc.members
        // The saved snapshot covers what the merge brought, including held-back
        // changes it made applicable (those were never in the change log).
        let storedAsItCame = try wasEmpty && SnapshotSummary(reading: bytes).version == doc.versionVector
        let founded = try database.document(id).flatMap { $0.isAwaitingFounding ? $0.kind : nil }
        let trashChanged = try database.connection.transaction {
            try database.saveSnapshot(storedAsItCame ? bytes : doc.snapshot(), version: doc.versionVector, of: id, created: time)
            try database.setMembers(members, of: id)
            try database.clearOrigin(of: id)
            try mirrorIndexes(of: id, in: doc)
            return try mirrorDeletion(of: id, in: doc)
        }
        loaded[id] = doc
        if let founded { publish(.documentCreated(id, kind: founded)) }
        if trashChanged { publish(.trashChanged(id)) }
        if batchEvents != nil { batchTouched.insert(id) }
        unsnapshotted[id] = nil
        publish(.documentChanged(id, origin: .snapshot, changes: 0))
        publish(.accessChanged(id))
        if let project = doc as? ProjectDocument, project.overwrites != overwritesBefore { publish(.fieldsOverwritten(id)) }
    }
}

/// The kind of a document whose founding a commit just stored (it was taken
/// from a peer and awaited it), set inside the commit, read after it.
private final class FoundedKind: Sendable {
    let kind = Mutex<DocumentKind?>(nil)
}
