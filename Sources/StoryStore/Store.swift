import Foundation
package import StoryCore

/// How the store keeps snapshots, checks the database and bounds what peers
/// can make it hold.
package struct StoreOptions: Sendable {
    /// A snapshot is due after this many changes to a document.
    package var snapshotEveryChanges = 1000
    /// …or after this long without changes, if it changed since the last one.
    package var snapshotAfterIdle: Duration = .seconds(30)
    /// Run `PRAGMA integrity_check` instead of `quick_check` when opening.
    package var fullIntegrityCheck = false
    /// Most pending (unknown) peers remembered; older ones are forgotten.
    package var maximumPendingPeers = 64
    /// Most offers one peer has waiting for a user (`shares pending`); its
    /// older ones are dropped and counted (`PeerRecord.offersDropped`).
    package var maximumOffersPerPeer = 200
    /// Changes held back in one document, waiting for changes they depend on.
    package var heldBackPerDocument = HeldBackLimits(changes: 20_000, bytes: 16 << 20)
    /// Bytes held back that one peer sent, over all documents.
    package var heldBackBytesPerPeer = 16 << 20
    /// Bytes held back over all documents and peers.
    package var heldBackBytesTotal = 48 << 20
    /// Documents kept loaded in memory; beyond this the least recently used
    /// are dropped (and load again from the database when next used), so a
    /// library of thousands of projects does not live in memory. Documents
    /// holding changes back for missing dependencies are kept.
    package var loadedDocumentLimit = 1024
    /// How long every change of a project is kept, in milliseconds, so its
    /// past can be shown (`--at`), compared and replayed: compaction drops
    /// only changes made longer ago, leaving a checkpoint (the project as it
    /// was at that point) for the changes kept to start from, and one for
    /// each named version they would take away. 0: compact everything
    /// acknowledged (the whole past is a snapshot). The daemon's default: 30 days.
    package var historyRetention: Int64 = 0
    /// The time of day: when this machine learned a project was deleted
    /// (the trash's retention counts from it). The daemon gives its own.
    package var clock = WallClock.system

    package init() {}
}

/// The daemon's documents: the SQLite database and the documents loaded from it.
///
/// An actor on its own serial executor. Every write a caller is told succeeded
/// was committed: an edit or a batch of changes is applied to the in-memory
/// document only if its transaction committed, and committed only if it applied.
/// Snapshots are encoded off the actor, so edits continue meanwhile.
///
/// Every document is signed: local changes are signed by `identity`, changes
/// from peers are checked (signature, author, rights) before they are stored.
package actor Store {
    /// The database file.
    package nonisolated let path: String
    package let options: StoreOptions
    /// Who makes this daemon's changes.
    package nonisolated let identity: SigningIdentity
    let database: StoreDatabase
    let executor: StoreExecutor
    var author: LocalAuthor
    var loaded: [DocumentID: any StoredDocument] = [:]
    /// When each loaded document was last used (a counter), for eviction.
    var lastUse: [DocumentID: UInt64] = [:]
    var uses: UInt64 = 0
    /// The versions of documents not in memory (dropped or not loaded yet),
    /// so `status` needs no query per document. A document changes only
    /// while loaded, and its entry is dropped when it loads.
    var evictedVersions: [DocumentID: VersionVector] = [:]
    /// Changes since the last snapshot, and when the last one was made.
    var unsnapshotted: [DocumentID: (count: Int, lastChange: ContinuousClock.Instant)] = [:]
    var snapshotsInFlight: Set<DocumentID> = []
    /// While `batch` runs: the events it will publish once committed, and
    /// the documents it touched (reloaded if the commit fails).
    var batchEvents: [StoreEvent]?
    var batchTouched: Set<DocumentID> = []
    /// Each loaded project's `mediaWrites` when its references were last recorded.
    var recordedMediaWrites: [DocumentID: Int] = [:]

    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Subscribers to `events()`.
    let broadcaster = EventBroadcaster<StoreEvent>()

    /// Opens (or creates, mode 0600) the database at `path`, whose local
    /// changes `identity` signs. A database from before signed authorship is
    /// upgraded (`upgradeLegacyDocuments`).
    /// - Throws: `StoreError` naming the file; a corrupt, foreign or newer file is never written.
    package init(path: String, identity: SigningIdentity, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.options = options
        self.identity = identity
        database = try StoreDatabase.open(path: path, fullCheck: options.fullIntegrityCheck)
        executor = StoreExecutor(label: "storyteller.store")
        author = try database.author(for: identity)
        try Self.upgradeLegacyDocuments(database, author: author)
    }

    /// This database's replica id: every local change is authored by it.
    package var replicaID: ReplicaID { author.replica }

    /// This daemon's peer id (who signs its changes).
    package nonisolated var peerID: PeerID { identity.peer }

    // MARK: - Documents

    /// Every document, without loading any.
    package func documents() throws -> [DocumentRecord] { try database.documents() }

    /// The documents people see: all but those taken from a peer whose
    /// founding change has not checked out yet (`isAwaitingFounding`).
    package func foundedDocuments() throws -> [DocumentRecord] { try database.documents().filter { !$0.isAwaitingFounding } }

    /// One document's record.
    /// - Throws: `StoreError(.notFound)` if there is none.
    package func document(_ id: DocumentID) throws -> DocumentRecord {
        guard let record = try database.document(id) else { throw StoreError(.notFound, "no document \(id)", path: path) }
        return record
    }

    /// The record of a document, or nil if there is none.
    package func documentIfPresent(_ id: DocumentID) throws -> DocumentRecord? { try database.document(id) }

    /// Founds a new project or library owned by this daemon's identity: its id
    /// derives from the identity, and its first (signed) change says so.
    package func createDocument(kind: DocumentKind, name: String? = nil, at time: Int64) throws -> DocumentID {
        let commit = { (id: DocumentID, change: EncodedChange) throws in
            try self.database.connection.transaction {
                try self.database.createDocument(id, kind: kind, name: name, created: time)
                try self.database.append([change], to: id)
                try self.database.setMembers([(self.identity.peer, .owner)], of: id)
            }
        }
        var document: any StoredDocument
        switch kind {
        case .project: document = try ProjectDocument.found(by: author, at: time, beforeCommit: commit).document
        case .library: document = try LibraryDocument.found(by: author, at: time, beforeCommit: commit).document
        }
        document.recordsUndoStorage = true
        let id = document.id
        loaded[id] = document
        if batchEvents != nil { batchTouched.insert(id) }
        publish(.documentCreated(id, kind: kind))
        publish(.accessChanged(id))
        return id
    }

    /// Records a document a peer offered and this daemon took: empty until
    /// its founding change arrives, synced with `peer` meanwhile.
    /// A project purged here comes back hidden if it was hidden, and in the
    /// trash once its changes say it is still deleted (see `purge`). If this
    /// replica had made changes to it, the store first takes a new replica
    /// id: the purge forgot them, and taking them back under the same replica
    /// would look like a copy of this database (`replicaReused`).
    package func receiveDocument(_ id: DocumentID, kind: DocumentKind, name: String?, from peer: PeerID, at time: Int64) throws {
        let purged = try database.purgedDocument(id)
        if let purged, purged.version[author.replica] > 0 { _ = try mintReplicaID() }
        try database.connection.transaction {
            try database.createDocument(id, kind: kind, name: name, created: time, origin: peer.description)
            try database.removeOffers(of: id)
            if let purged {
                if purged.wasHidden { _ = try database.setDocument(id, hidden: true, at: time) }
                try database.forgetPurged(id)
            }
        }
        var document: any StoredDocument
        switch kind {
        case .project: document = ProjectDocument(id: id, author: author)
        case .library: document = LibraryDocument(id: id, author: author)
        }
        document.recordsUndoStorage = true
        loaded[id] = document
        if batchEvents != nil { batchTouched.insert(id) }
        // No `.documentCreated` yet: it exists for users once its founding change checks out (`apply`, `merge`).
        // Out of the purged state: its library entries follow it again.
        if purged != nil { publish(.trashChanged(id)) }
    }

    /// A new project owned by this daemon with the content of `source` (any
    /// project here, also a legacy or read-only one): peers receive the
    /// content as a snapshot. The copy is titled `name` when given.
    package func copyProject(_ source: DocumentID, name: String?, at time: Int64) throws -> DocumentID {
        let title = try name ?? database.document(source)?.name
        let copy = try copy(try project(source), kind: .project, name: title, at: time) { copy, id in
            if let name {
                try copy.edit(at: time, { try $0.set(.title, to: .string(name)) }, beforeCommit: { try self.database.append([$0], to: id) })
            }
            // A copy is a new project: a copy of one in the trash is not in the trash.
            if copy.deletion != nil {
                try copy.edit(at: time, { try $0.restoreProject() }, beforeCommit: { try self.database.append([$0], to: id) })
            }
            // The copy references its source's pictures and sounds: recorded
            // (so they are kept and served), with the proofs the source has.
            try self.database.addBlobReferences(copy.mediaReferences, of: id)
            try self.copyBlobProofs(from: source, to: id)
        }
        return copy.id
    }

    /// A new library owned by this daemon with the folders and entries of `source`.
    package func copyLibrary(_ source: DocumentID, at time: Int64) throws -> DocumentID {
        try copy(try library(source), kind: .library, name: try database.document(source)?.name, at: time) { _, _ in }.id
    }

    func copy<Document: CopyableDocument>(
        _ original: Document, kind: DocumentKind, name: String?, at time: Int64, then finish: (inout Document, DocumentID) throws -> Void
    ) throws -> Document {
        let copy: Document = try database.connection.transaction {
            let founded = try Document.found(by: author, at: time, salt: .random(in: .min ... .max), beforeCommit: { _, _ in })
            var copy = founded.document
            let id = copy.id
            try database.createDocument(id, kind: kind, name: name, created: time)
            try database.append([founded.change], to: id)
            copy.adoptContent(of: original)
            try finish(&copy, id)
            try database.saveSnapshot(copy.snapshot(), version: copy.versionVector, of: id, created: time)
            try database.setMembers([(identity.peer, .owner)], of: id)
            try mirrorIndexes(of: id, in: copy)
            copy.recordsUndoStorage = true
            return copy
        }
        loaded[copy.id] = copy
        publish(.documentCreated(copy.id, kind: kind))
        publish(.accessChanged(copy.id))
        return copy
    }

    /// Sets the name kept with a document's record (the library holds the
    /// name users see; this is for listings and logs).
    package func setName(_ name: String?, of id: DocumentID) throws { try database.setDocument(id, name: name) }

    /// The project, loaded on first use from its snapshot and later changes.
    package func project(_ id: DocumentID) throws -> ProjectDocument { try document(id, as: ProjectDocument.self) }

    /// The library, loaded on first use.
    package func library(_ id: DocumentID) throws -> LibraryDocument { try document(id, as: LibraryDocument.self) }

    /// A loaded document of the given kind.
    /// - Throws: `StoreError(.notFound)` when there is none, or it is of the other kind.
    func document<Document: StoredDocument>(_ id: DocumentID, as type: Document.Type) throws -> Document {
        guard let document = try loadedDocument(id) as? Document else {
            throw StoreError(.notFound, "\(id) is not a \(Document.kind)", path: path)
        }
        return document
    }

    /// Runs `body` on a loaded document of the given kind, kept uniquely
    /// referenced while it changes (so it changes in place) and put back
    /// whatever happens. The one way projects and libraries are changed.
    func withDocument<Document: StoredDocument, Result>(
        _ id: DocumentID, as type: Document.Type, _ body: (inout Document) throws -> Result
    ) throws -> Result {
        var document = try self.document(id, as: type)
        if batchEvents != nil { batchTouched.insert(id) }
        loaded[id] = nil
        defer { loaded[id] = document }
        return try body(&document)
    }

    func loadedDocument(_ id: DocumentID) throws -> any StoredDocument {
        uses += 1
        lastUse[id] = uses
        defer { evictLeastRecentlyUsed(keeping: id) }
        if let document = loaded[id] { return document }
        evictedVersions[id] = nil
        recordedMediaWrites[id] = nil
        let record = try document(id)
        let document: any StoredDocument
        switch record.kind {
        case .project:
            var project = try load(id, empty: ProjectDocument(id: id, author: author)) { bytes, author, points in
                try points.map { try ProjectDocument(snapshot: bytes, author: author, addingPoints: $0) }
                    ?? ProjectDocument(snapshot: bytes, author: author)
            }
            try restoreUndoHistory(of: id, into: &project)
            document = project
        case .library:
            var library = try load(id, empty: LibraryDocument(id: id, author: author)) { bytes, author, points in
                guard points == nil else { throw DocumentError(.invalidSnapshot, "a library's snapshot never leaves points in the log") }
                return try LibraryDocument(snapshot: bytes, author: author)
            }
            try restoreUndoHistory(of: id, into: &library)
            document = library
        }
        loaded[id] = document
        return document
    }

    /// Latest snapshot (with the points it left in the change log) plus the stored changes after it.
    func load<Document: StoredDocument>(
        _ id: DocumentID, empty: Document, fromSnapshot: ([UInt8], LocalAuthor, [OpID: PointsBlob]?) throws -> Document
    ) throws -> Document {
        var doc = empty
        if let stored = try database.snapshot(of: id) {
            let points = try stored.pointsInLog.map { try database.pointsInLog(of: id, from: $0, upTo: stored.version) }
            do {
                doc = try fromSnapshot(stored.bytes, author, points)
            } catch {
                throw StoreError(.invalidData, "the snapshot of \(id) does not load: \(error)", path: path)
            }
        }
        let tail = try database.changes(of: id, notCoveredBy: doc.versionVector)
        do {
            _ = try doc.apply(ReceivedChanges(tail), origin: .store, limits: nil, beforeCommit: { _ in })
        } catch {
            throw StoreError(.invalidData, "stored changes of \(id) do not apply: \(error)", path: path)
        }
        return doc
    }

    /// Runs `body` on a loaded document, kept uniquely referenced while it
    /// changes (so it changes in place) and put back whatever happens.
    func mutate<Result>(_ id: DocumentID, _ body: (inout any StoredDocument) throws -> Result) throws -> Result {
        var document = try loadedDocument(id)
        if batchEvents != nil { batchTouched.insert(id) }
        loaded[id] = nil
        defer { loaded[id] = document }
        return try body(&document)
    }

    /// Drops least recently used documents beyond `loadedDocumentLimit`;
    /// never one that holds changes back, is in a batch or a snapshot now,
    /// nor `kept`. O(loaded documents) per document dropped.
    func evictLeastRecentlyUsed(keeping kept: DocumentID) {
        while loaded.count > options.loadedDocumentLimit {
            var oldest: (id: DocumentID, use: UInt64)?
            for (id, document) in loaded
            where id != kept && document.heldBackBytes == 0 && !batchTouched.contains(id)
                && !snapshotsInFlight.contains(id)
            {
                let use = lastUse[id] ?? 0
                if oldest == nil || use < oldest!.use { oldest = (id, use) }
            }
            guard let oldest else { return }
            evictedVersions[oldest.id] = loaded[oldest.id]?.versionVector
            loaded[oldest.id] = nil
            lastUse[oldest.id] = nil
        }
    }

    /// How many documents are loaded in memory now.
    package var loadedDocumentCount: Int { loaded.count }

    /// Forgets a loaded document (it loads again on next use).
    package func unload(_ id: DocumentID) {
        loaded[id] = nil
        lastUse[id] = nil
        evictedVersions[id] = nil
    }

    // MARK: - Editing

    /// Edits a project; the change is committed to disk before this returns.
    /// - Throws: `DocumentError` for a bad edit (`.forbidden` when this
    ///   daemon may only read the project), `StoreError` if it cannot be
    ///   stored (the document is then unchanged).
    package func editProject<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout ProjectEditor) throws -> Value
    ) throws -> EditResult<Value> {
        try edit(id, as: ProjectDocument.self) { try $0.edit(session: session, at: time, body, beforeCommit: $1) }
    }

    /// Edits the library; committed before this returns.
    package func editLibrary<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout LibraryEditor) throws -> Value
    ) throws -> EditResult<Value> {
        try edit(id, as: LibraryDocument.self) { try $0.edit(session: session, at: time, body, beforeCommit: $1) }
    }

    /// A local edit of either kind: made in place, committed through `commitLocal`, announced.
    func edit<Document: StoredDocument, Value>(
        _ id: DocumentID, as type: Document.Type,
        _ body: (inout Document, _ commit: (EncodedChange) throws -> Void) throws -> EditResult<Value>
    ) throws -> EditResult<Value> {
        let (result, undoChanges) = try changingDocument(id) {
            try withDocument(id, as: type) { document in
                let result = try body(&document) { change in try self.commitLocal(change, to: id) }
                return (result, document.takeUndoStorageChanges())
            }
        }
        saveUndoHistory(undoChanges, of: id)
        noteChanges(result.change == nil ? 0 : 1, in: id)
        return result
    }

    /// Undoes a session's last edit of a document (project or library); see
    /// `ProjectDocument.undo` for what an overruled edit and `older` mean.
    package func undo(_ id: DocumentID, session: String, older: Bool = false, at time: Int64) throws -> UndoOutcome {
        try replay(id) { try $0.undo(session: session, older: older, at: time, beforeCommit: $1) }
    }

    /// Redoes a session's last undone edit.
    package func redo(_ id: DocumentID, session: String, older: Bool = false, at time: Int64) throws -> UndoOutcome {
        try replay(id) { try $0.redo(session: session, older: older, at: time, beforeCommit: $1) }
    }

    private func replay(
        _ id: DocumentID, _ body: (inout any StoredDocument, _ commit: (EncodedChange) throws -> Void) throws -> UndoOutcome
    ) throws -> UndoOutcome {
        let (outcome, undoChanges) = try changingDocument(id) {
            try mutate(id) { document in
                let outcome = try body(&document) { try self.commitLocal($0, to: id) }
                return (outcome, document.takeUndoStorageChanges())
            }
        }
        saveUndoHistory(undoChanges, of: id)
        noteChanges(outcome.change == nil ? 0 : 1, in: id)
        return outcome
    }

    /// Writes undo history changes after the edit they belong to was
    /// committed. The history is a convenience, not the document: if it
    /// cannot be written (the disk just filled), the edit stands and only
    /// its undo record is missing after a restart.
    private func saveUndoHistory(_ changes: [UndoStorageChange], of id: DocumentID) {
        guard !changes.isEmpty else { return }
        try? database.apply(changes, to: id)
    }

    /// Puts a loaded document's stored undo history back and has it report
    /// changes from now on. A record that does not decode drops its stack
    /// (and its rows): undo history is never a reason a document fails to load.
    private func restoreUndoHistory<Document: StoredDocument>(of id: DocumentID, into document: inout Document) throws {
        let rows = try database.undoRecords(of: id)
        var stacks: [String: [UndoStack: [(position: UInt64, bytes: [UInt8])]]] = [:]
        for row in rows { stacks[row.session, default: [:]][row.stack, default: []].append((row.position, row.bytes)) }
        var broken: [UndoStorageChange] = []
        for (session, byStack) in stacks {
            for (stack, records) in byStack {
                do {
                    try document.restoreUndo(session: session, stack: stack, records: records)
                } catch {
                    broken.append(.clear(session: session, stack: stack))
                }
            }
        }
        document.recordsUndoStorage = true
        saveUndoHistory(broken, of: id)
    }

    func commitLocal(_ change: EncodedChange, to id: DocumentID) throws {
        // Signed here: its own signature is as good as checked.
        try database.connection.transaction { try database.append([change.markedAnchor(true)], to: id) }
    }
}
