package import StoryCore

/// What a project package (`storyteller export package`) carries of a
/// document, and taking one in: the same verifying path as a peer's changes
/// and snapshots (docs/architecture.md, "Project packages").
extension Store {
    /// A project's state and history as a package carries them: a snapshot of
    /// the whole state, and the stored change log as a `ChangeBatch`.
    package struct PackageContent: Sendable {
        /// The document's snapshot (`ProjectDocument.snapshot()`).
        package var snapshot: [UInt8]
        /// What the snapshot holds.
        package var version: VersionVector
        /// The stored change log in causal order as one `ChangeBatch`, each
        /// replica's run ending on a change whose signature this daemon checked
        /// or made (the batch carries those signatures). Compaction may have
        /// dropped its beginning; the snapshot covers that.
        package var changes: [UInt8]
        /// How many changes `changes` holds.
        package var changeCount: Int
        /// The blobs the project references, now or in its history.
        package var media: [MediaReference]
        /// The project's view (for thumbnails and the manifest's title).
        package var view: ProjectView
    }

    /// The snapshot, change log and media of a project, consistent with each
    /// other (taken in one turn of the actor); the snapshot and the batch are
    /// encoded off the actor. O(project).
    /// - Throws: `StoreError(.notFound)` if there is no such project.
    package func packageContent(of id: DocumentID) async throws -> PackageContent {
        let document = try project(id)
        let stored = try database.changes(of: id).map(\.0)
        let media = try database.blobReferences(of: id)
        return await Self.encodePackage(document, stored, media)
    }

    /// Runs on the global executor, not the actor's.
    nonisolated static func encodePackage(
        _ document: ProjectDocument, _ stored: [EncodedChange], _ media: [MediaReference]
    ) async -> PackageContent {
        // One batch: `split` keeps every replica's run ending on an anchor and
        // leaves an unchecked tail out (the snapshot holds it).
        let changes = ChangeBatch.split(stored, targetBytes: .max).flatMap { $0 }
        return PackageContent(
            snapshot: document.snapshot(), version: document.versionVector, changes: ChangeBatch.encode(changes),
            changeCount: changes.count, media: media, view: document.view)
    }

    /// What taking in a package did.
    package struct PackageImport: Sendable {
        /// The project was new to this machine (not merged into one held here).
        package var isNew: Bool
        /// Changes this machine did not have before (counted by version vectors,
        /// so those a snapshot brought count too).
        package var newChanges: UInt64
        /// Whether the package's snapshot was merged (its change log did not
        /// reach back far enough), on the exporter's word.
        package var usedSnapshot: Bool
        /// The project's version afterwards.
        package var version: VersionVector
    }

    /// Takes in a project from a package, all or nothing, as a peer's batch:
    /// its changes go through `apply(_:to:from:)` (every signature, chain and
    /// right is checked, as for changes from `exporter`); the snapshot is used
    /// only where the change log does not reach back to what this machine
    /// holds, and then, as a peer's snapshot, only if `exporter` is an owner
    /// or editor of the project (`merge(snapshot:into:from:at:)`). A project
    /// not held here is recorded first. If anything fails, nothing is stored.
    /// - Parameters:
    ///   - version: what the package says the snapshot holds; the project must
    ///     hold at least that afterwards, or the package is refused as incomplete.
    /// - Throws: `DocumentError` for a forged, forbidden or incomplete package,
    ///   `CodecError` for bad bytes, `StoreError` for the disk; nothing is stored then.
    package func importPackage(
        _ id: DocumentID, snapshot: [UInt8], version: VersionVector, changes: [(EncodedChange, Change)], from exporter: PeerID,
        name: String?, at time: Int64
    ) throws -> PackageImport {
        try batch { store in
            let existing = try store.database.document(id)
            if let existing, existing.kind != .project {
                throw DocumentError(.invalidValue, "\(id) is a library on this machine, not a project")
            }
            if existing == nil { try store.receiveDocument(id, kind: .project, name: name, from: exporter, at: time) }
            let before = try store.version(of: id)
            var usedSnapshot = false
            if !Self.reaches(changes, wanted: version, from: before) {
                try store.merge(snapshot: snapshot, into: id, from: exporter, at: time)
                if let document = store.loaded[id] { try store.recordMediaReferences(of: id, in: document) }
                usedSnapshot = true
            }
            let held = try store.version(of: id)
            let fresh = changes.filter { $0.0.seq > held[$0.0.replica] }
            if !fresh.isEmpty { try store.apply(fresh, to: id, from: exporter) }
            let after = try store.version(of: id)
            // Changes a peer left held back before are not the package's to answer for:
            // the package is complete when the project holds what its manifest names.
            guard after.covers(version) else {
                throw DocumentError(
                    .invalidValue, "the package is incomplete: its changes and snapshot do not make up the version its manifest names")
            }
            if existing == nil, let title = (store.loaded[id] as? ProjectDocument)?.view.title {
                try store.database.setDocument(id, name: title)
            }
            return PackageImport(
                isNew: existing == nil, newChanges: after.totalChanges - before.totalChanges, usedSnapshot: usedSnapshot, version: after)
        }
    }

    /// Whether `changes` bring a replica at `held` up to `wanted` by
    /// themselves: for every replica behind, a contiguous run from the next
    /// change it lacks to the one wanted. O(changes).
    nonisolated static func reaches(_ changes: [(EncodedChange, Change)], wanted: VersionVector, from held: VersionVector) -> Bool {
        var first: [ReplicaID: UInt64] = [:]
        var last: [ReplicaID: UInt64] = [:]
        var count: [ReplicaID: UInt64] = [:]
        for (change, _) in changes {
            first[change.replica] = min(first[change.replica] ?? .max, change.seq)
            last[change.replica] = max(last[change.replica] ?? 0, change.seq)
            count[change.replica, default: 0] += 1
        }
        for (replica, seq) in wanted.sortedEntries where seq > held[replica] {
            guard let low = first[replica], let high = last[replica], low <= held[replica] + 1, high >= seq,
                count[replica]! == high - low + 1
            else { return false }
        }
        return true
    }
}
