import Foundation
import StoryCore

/// How the store keeps snapshots, checks the database and bounds what peers
/// can make it hold.
public struct StoreOptions: Sendable {
    /// A snapshot is due after this many changes to a document.
    public var snapshotEveryChanges = 1000
    /// …or after this long without changes, if it changed since the last one.
    public var snapshotAfterIdle: Duration = .seconds(30)
    /// Run `PRAGMA integrity_check` instead of `quick_check` when opening.
    public var fullIntegrityCheck = false
    /// Most pending (unknown) peers remembered; older ones are forgotten.
    public var maximumPendingPeers = 64
    /// Changes held back in one document, waiting for changes they depend on.
    public var heldBackPerDocument = HeldBackLimits(changes: 20_000, bytes: 16 << 20)
    /// Bytes held back that one peer sent, over all documents.
    public var heldBackBytesPerPeer = 16 << 20
    /// Bytes held back over all documents and peers.
    public var heldBackBytesTotal = 48 << 20

    public init() {}
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
public actor Store {
    /// The database file.
    public nonisolated let path: String
    public let options: StoreOptions
    /// Who makes this daemon's changes.
    public nonisolated let identity: SigningIdentity
    let database: StoreDatabase
    private let executor: StoreExecutor
    private var author: LocalAuthor
    private var loaded: [DocumentID: any StoredDocument] = [:]
    /// Changes since the last snapshot, and when the last one was made.
    private var unsnapshotted: [DocumentID: (count: Int, lastChange: ContinuousClock.Instant)] = [:]
    private var snapshotsInFlight: Set<DocumentID> = []

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Subscribers to `events()`.
    private let broadcaster = EventBroadcaster<StoreEvent>()

    /// Opens (or creates, mode 0600) the database at `path`, whose local
    /// changes `identity` signs. A database from before signed authorship is
    /// upgraded (`upgradeLegacyDocuments`).
    /// - Throws: `StoreError` naming the file; a corrupt, foreign or newer file is never written.
    public init(path: String, identity: SigningIdentity, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.options = options
        self.identity = identity
        database = try StoreDatabase.open(path: path, fullCheck: options.fullIntegrityCheck)
        executor = StoreExecutor(label: "storyteller.store")
        author = try database.author(for: identity)
        try Self.upgradeLegacyDocuments(database, author: author)
    }

    /// This database's replica id: every local change is authored by it.
    public var replicaID: ReplicaID { author.replica }

    /// This daemon's peer id (who signs its changes).
    public nonisolated var peerID: PeerID { identity.peer }

    // MARK: - Documents

    /// Every document, without loading any.
    public func documents() throws -> [DocumentRecord] { try database.documents() }

    /// One document's record.
    /// - Throws: `StoreError(.notFound)` if there is none.
    public func document(_ id: DocumentID) throws -> DocumentRecord {
        guard let record = try database.document(id) else { throw StoreError(.notFound, "no document \(id)", path: path) }
        return record
    }

    /// Founds a new project or library owned by this daemon's identity: its id
    /// derives from the identity, and its first (signed) change says so.
    public func createDocument(kind: DocumentKind, name: String? = nil, at time: Int64) throws -> DocumentID {
        let commit = { (id: DocumentID, change: EncodedChange) throws in
            try self.database.connection.transaction {
                try self.database.createDocument(id, kind: kind, name: name, created: time)
                try self.database.append([change], to: id)
                try self.database.setMembers([(self.identity.peer, .owner)], of: id)
            }
        }
        let document: any StoredDocument
        switch kind {
        case .project: document = try ProjectDocument.found(by: author, at: time, beforeCommit: commit).document
        case .library: document = try LibraryDocument.found(by: author, at: time, beforeCommit: commit).document
        }
        let id = document.id
        loaded[id] = document
        publish(.documentCreated(id, kind: kind))
        publish(.accessChanged(id))
        return id
    }

    /// Records a document a peer offered and this daemon took: empty until
    /// its founding change arrives, synced with `peer` meanwhile.
    public func receiveDocument(_ id: DocumentID, kind: DocumentKind, name: String?, from peer: PeerID, at time: Int64) throws {
        try database.connection.transaction {
            try database.createDocument(id, kind: kind, name: name, created: time, origin: peer.description)
            try database.removeOffers(of: id)
        }
        switch kind {
        case .project: loaded[id] = ProjectDocument(id: id, author: author)
        case .library: loaded[id] = LibraryDocument(id: id, author: author)
        }
        publish(.documentCreated(id, kind: kind))
    }

    /// A new project owned by this daemon with the content of `source` (any
    /// project here, also a legacy or read-only one): peers receive the
    /// content as a snapshot. The copy is titled `name` when given.
    public func copyProject(_ source: DocumentID, name: String?, at time: Int64) throws -> DocumentID {
        let title = try name ?? database.document(source)?.name
        let copy = try copy(try project(source), kind: .project, name: title, at: time) { copy, id in
            if let name {
                try copy.edit(at: time, { try $0.set(.title, to: .string(name)) }, beforeCommit: { try self.database.append([$0], to: id) })
            }
        }
        return copy.id
    }

    /// A new library owned by this daemon with the folders and entries of `source`.
    public func copyLibrary(_ source: DocumentID, at time: Int64) throws -> DocumentID {
        try copy(try library(source), kind: .library, name: try database.document(source)?.name, at: time) { _, _ in }.id
    }

    private func copy<Document: CopyableDocument>(
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
            return copy
        }
        loaded[copy.id] = copy
        publish(.documentCreated(copy.id, kind: kind))
        publish(.accessChanged(copy.id))
        return copy
    }

    /// Sets the name kept with a document's record (the library holds the
    /// name users see; this is for listings and logs).
    public func setName(_ name: String?, of id: DocumentID) throws { try database.setDocument(id, name: name) }

    /// Marks a document deleted or not (its data stays until removed).
    public func setDeleted(_ deleted: Bool, of id: DocumentID) throws { try database.setDocument(id, deleted: deleted) }

    /// The project, loaded on first use from its snapshot and later changes.
    public func project(_ id: DocumentID) throws -> ProjectDocument {
        guard let project = try loadedDocument(id) as? ProjectDocument else {
            throw StoreError(.notFound, "\(id) is a library, not a project", path: path)
        }
        return project
    }

    /// The library, loaded on first use.
    public func library(_ id: DocumentID) throws -> LibraryDocument {
        guard let library = try loadedDocument(id) as? LibraryDocument else {
            throw StoreError(.notFound, "\(id) is a project, not a library", path: path)
        }
        return library
    }

    private func loadedDocument(_ id: DocumentID) throws -> any StoredDocument {
        if let document = loaded[id] { return document }
        let record = try document(id)
        let document: any StoredDocument
        switch record.kind {
        case .project: document = try load(id, empty: ProjectDocument(id: id, author: author)) { try ProjectDocument(snapshot: $0, author: $1) }
        case .library: document = try load(id, empty: LibraryDocument(id: id, author: author)) { try LibraryDocument(snapshot: $0, author: $1) }
        }
        loaded[id] = document
        return document
    }

    /// Latest snapshot plus the stored changes after it.
    private func load<Document: StoredDocument>(
        _ id: DocumentID, empty: Document, fromSnapshot: ([UInt8], LocalAuthor) throws -> Document
    ) throws -> Document {
        var doc = empty
        if let (_, bytes) = try database.snapshot(of: id) {
            do {
                doc = try fromSnapshot(bytes, author)
            } catch {
                throw StoreError(.invalidData, "the snapshot of \(id) does not load: \(error)", path: path)
            }
        }
        let tail = try database.changes(of: id, notCoveredBy: doc.versionVector)
        do {
            _ = try doc.apply(tail, origin: .store, limits: nil, beforeCommit: { _ in })
        } catch {
            throw StoreError(.invalidData, "stored changes of \(id) do not apply: \(error)", path: path)
        }
        return doc
    }

    /// Runs `body` on a loaded document, kept uniquely referenced while it
    /// changes (so it changes in place) and put back whatever happens.
    private func mutate<Result>(_ id: DocumentID, _ body: (inout any StoredDocument) throws -> Result) throws -> Result {
        var document = try loadedDocument(id)
        loaded[id] = nil
        defer { loaded[id] = document }
        return try body(&document)
    }

    /// Forgets a loaded document (it loads again on next use).
    public func unload(_ id: DocumentID) {
        loaded[id] = nil
    }

    // MARK: - Editing

    /// Edits a project; the change is committed to disk before this returns.
    /// - Throws: `DocumentError` for a bad edit (`.forbidden` when this
    ///   daemon may only read the project), `StoreError` if it cannot be
    ///   stored (the document is then unchanged).
    public func editProject<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout ProjectEditor) throws -> Value
    ) throws -> EditResult<Value> {
        var doc = try project(id)
        loaded[id] = nil  // keep `doc` uniquely referenced while it changes
        defer { loaded[id] = doc }
        let result = try doc.edit(session: session, at: time, body) { change in try self.commitLocal(change, to: id) }
        noteChanges(result.change == nil ? 0 : 1, in: id)
        return result
    }

    /// Edits the library; committed before this returns.
    public func editLibrary<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout LibraryEditor) throws -> Value
    ) throws -> EditResult<Value> {
        var doc = try library(id)
        loaded[id] = nil
        defer { loaded[id] = doc }
        let result = try doc.edit(session: session, at: time, body) { change in try self.commitLocal(change, to: id) }
        noteChanges(result.change == nil ? 0 : 1, in: id)
        return result
    }

    /// Undoes a session's last change to a document (project or library).
    public func undo(_ id: DocumentID, session: String, at time: Int64) throws -> EncodedChange? {
        let change = try mutate(id) { try $0.undo(session: session, at: time) { try self.commitLocal($0, to: id) } }
        noteChanges(change == nil ? 0 : 1, in: id)
        return change
    }

    /// Redoes a session's last undone change.
    public func redo(_ id: DocumentID, session: String, at time: Int64) throws -> EncodedChange? {
        let change = try mutate(id) { try $0.redo(session: session, at: time) { try self.commitLocal($0, to: id) } }
        noteChanges(change == nil ? 0 : 1, in: id)
        return change
    }

    private func commitLocal(_ change: EncodedChange, to id: DocumentID) throws {
        // Signed here: its own signature is as good as checked.
        try database.connection.transaction { try database.append([change.markedAnchor(true)], to: id) }
    }

    // MARK: - Access

    /// Gives `peer` a role in a document (`.none` takes its rights away), as
    /// a signed change every peer checks. Sharing is an act of a daemon
    /// entitled to it: the owner, or an editor giving rights.
    /// - Throws: `DocumentError(.forbidden)` when this daemon may not,
    ///   `DocumentError(.invalidOperation)` for a legacy document.
    public func share(_ id: DocumentID, with peer: PeerID, role: Role, at time: Int64) throws {
        let current = try loadedDocument(id)
        guard !current.isLegacy else {
            throw DocumentError(
                .invalidOperation, "this document was made before signed authorship and cannot be shared; share a copy of it")
        }
        var members = current.members.filter { $0.peer != peer }
        if role > .none { members.append((peer, role)) }
        _ = try mutate(id) { document in
            try document.setAccess(role, for: peer, at: time) { change in
                try self.database.connection.transaction {
                    try self.database.append([change], to: id)
                    try self.database.setMembers(members, of: id)
                    if role == .none { try self.database.forgetAcknowledged(id, by: peer) }
                }
            }
        }
        noteChanges(1, in: id)
        publish(.accessChanged(id))
    }

    /// The members of one document or of all, as the access lists say.
    public func members(of document: DocumentID? = nil) throws -> [MemberRecord] { try database.members(of: document) }

    /// What this daemon may do with a document.
    public func localRole(of id: DocumentID) throws -> Role { try loadedDocument(id).localRole }

    /// The documents to sync with a peer: those it is a member of, and those
    /// taken from it whose founding change has not arrived yet. Never a
    /// deleted or legacy one.
    public func sharedDocuments(with peer: PeerID) throws -> [(record: DocumentRecord, role: Role)] {
        var result: [(DocumentRecord, Role)] = []
        var seen: Set<DocumentID> = []
        for member in try database.documents(sharedWith: peer) {
            guard let record = try database.document(member.document), !record.isDeleted else { continue }
            seen.insert(record.id)
            result.append((record, member.role))
        }
        for record in try database.documents() where record.origin == peer.description && !seen.contains(record.id) && !record.isDeleted {
            result.append((record, .none))
        }
        return result
    }

    /// Keeps an offer this daemon did not take (not accepting offers from that peer).
    public func recordOffer(_ document: DocumentID, kind: DocumentKind, name: String?, from peer: PeerID, at time: Int64) throws {
        try database.recordOffer(OfferRecord(document: document, peer: peer, kind: kind, name: name, received: time))
    }

    /// Offers kept, oldest first.
    public func offers() throws -> [OfferRecord] { try database.offers() }

    // MARK: - Sync

    /// The origin tag of changes from a peer (for held-back bounds).
    public nonisolated static func origin(of peer: PeerID) -> ChangeOrigin {
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
    public func apply(_ changes: [(EncodedChange, Change)], to id: DocumentID, from peer: PeerID? = nil) throws -> ApplyReport {
        let origin = peer.map(Self.origin(of:)) ?? .unknown
        let limits = heldBackLimits(for: id, origin: origin)
        let commit: (ApplyReport) throws -> Void = { report in
            guard !report.applied.isEmpty else { return }
            try self.database.connection.transaction {
                try self.database.append(report.applied, to: id)
                if report.accessChanged {
                    try self.database.setMembers(report.members, of: id)
                    try self.database.clearOrigin(of: id)
                }
            }
        }
        let report: ApplyReport
        do {
            report = try mutate(id) { try $0.apply(changes, origin: origin, limits: limits, beforeCommit: commit) }
        } catch let error as DocumentError where error.code == .replicaReused {
            let fresh = try mintReplicaID()
            throw DocumentError(.replicaReused, "\(error.message); this database is now replica \(fresh)")
        }
        noteChanges(report.applied.count, in: id, origin: peer.map { .peer($0) } ?? .local)
        if report.accessChanged { publish(.accessChanged(id)) }
        return report
    }

    /// Decodes and applies a batch (see `apply(_:to:from:)`).
    @discardableResult
    public func apply(batch bytes: ArraySlice<UInt8>, to id: DocumentID, from peer: PeerID? = nil) throws -> ApplyReport {
        try apply(try ChangeBatch.decode(bytes), to: id, from: peer)
    }

    /// The bounds for a call that applies changes from `origin` to `id`:
    /// the per-document limits, less what other documents already hold back
    /// in all and from that origin.
    private func heldBackLimits(for id: DocumentID, origin: ChangeOrigin) -> HeldBackLimits {
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
    public func dropHeldBack(from peer: PeerID) {
        let origin = Self.origin(of: peer)
        for id in Array(loaded.keys) where loaded[id]!.heldBackBytes(from: origin) > 0 {
            loaded[id]!.dropHeldBack(from: origin)
        }
    }

    /// Bytes held back over all loaded documents.
    public var heldBackBytes: Int { loaded.values.reduce(0) { $0 + $1.heldBackBytes } }

    /// A document's version vector (loads it if needed).
    public func version(of id: DocumentID) throws -> VersionVector { try loadedDocument(id).versionVector }

    /// What a document holds, without loading it: the loaded document's
    /// version if it is in memory, else its snapshot's version joined with the
    /// newest stored change of each replica (the log holds only applied changes,
    /// and a merged snapshot covers what it made applicable).
    public func storedVersion(of id: DocumentID) throws -> VersionVector {
        if let loaded = loaded[id] { return loaded.versionVector }
        let record = try document(id)
        var version = record.snapshotVersion ?? VersionVector()
        version.formUnion(VersionVector(try database.lastStoredSeq(of: id)))
        return version
    }

    /// What a peer at `version` lacks: from memory when the loaded document's
    /// log reaches back far enough, else from the database, else a snapshot is needed.
    public func changes(of id: DocumentID, since version: VersionVector) throws -> ChangesSince {
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
    public func setting(_ key: String) throws -> String? { try database.setting(key) }

    public func setSetting(_ key: String, to value: String?) throws { try database.setSetting(key, to: value) }

    /// A document's history: its latest `limit` stored changes, newest first,
    /// and whether older changes were compacted into a snapshot (and are no
    /// longer listed one by one).
    public func history(of id: DocumentID, limit: Int) throws -> (changes: [Change], compacted: Bool) {
        _ = try document(id)
        let compacted = try database.firstStoredSeq(of: id).values.contains { $0 > 1 }
            || (try database.changeCount(of: id) == 0 && database.snapshot(of: id) != nil)
        return (try database.recentChanges(of: id, limit: limit), compacted)
    }

    /// The document's current state as a snapshot (for a peer behind the
    /// compaction horizon).
    public func snapshot(of id: DocumentID) throws -> [UInt8] { try loadedDocument(id).snapshot() }

    /// Merges a peer's snapshot, then writes our own snapshot (the changes it
    /// brought are not in the change log). Only an owner or editor may send a
    /// snapshot: its content is taken on the sender's word (its authorship is
    /// checked by the document).
    /// - Throws: `DocumentError(.forbidden)` when `peer` may not send one,
    ///   `DocumentError`/`CodecError` for a bad snapshot; nothing changes then.
    public func merge(snapshot bytes: [UInt8], into id: DocumentID, from peer: PeerID, at time: Int64) throws {
        var doc = try loadedDocument(id)
        if doc.isFounded {
            guard doc.role(of: peer).canWrite else {
                throw DocumentError(.forbidden, "\(peer.short) may not send a snapshot of \(id): it is not an owner or editor")
            }
        }
        _ = try doc.merge(snapshot: bytes)
        guard doc.role(of: peer).canWrite else {
            throw DocumentError(.forbidden, "\(peer.short) may not send a snapshot of \(id): the snapshot does not make it an owner or editor")
        }
        let members = doc.members
        // The saved snapshot covers what the merge brought, including held-back
        // changes it made applicable (those were never in the change log).
        try database.connection.transaction {
            try database.saveSnapshot(doc.snapshot(), version: doc.versionVector, of: id, created: time)
            try database.setMembers(members, of: id)
            try database.clearOrigin(of: id)
        }
        loaded[id] = doc
        unsnapshotted[id] = nil
        publish(.documentChanged(id, origin: .snapshot, changes: 0))
        publish(.accessChanged(id))
    }

    // MARK: - Events

    /// What happened in the store, as it happens: documents that changed (by a
    /// local edit or from a peer), documents created, access lists changed,
    /// peers waiting for acceptance. The sync layer pushes changes to peers
    /// from this; the control API streams it to clients.
    public func events() -> AsyncStream<StoreEvent> { broadcaster.subscribe() }

    private func publish(_ event: StoreEvent) { broadcaster.publish(event) }

    /// Ends every event stream (at shutdown).
    public func finishEvents() { broadcaster.finish() }

    // MARK: - Snapshots and compaction

    private func noteChanges(_ count: Int, in id: DocumentID, origin: StoreEvent.Origin = .local) {
        guard count > 0 else { return }
        publish(.documentChanged(id, origin: origin, changes: count))
        let previous = unsnapshotted[id]?.count ?? 0
        unsnapshotted[id] = (previous + count, ContinuousClock.now)
    }

    /// Documents due for a snapshot: enough changes, or idle long enough.
    public func documentsDueForSnapshot(now: ContinuousClock.Instant = .now) -> [DocumentID] {
        unsnapshotted.compactMap { id, state in
            state.count >= options.snapshotEveryChanges || now - state.lastChange >= options.snapshotAfterIdle ? id : nil
        }.filter { !snapshotsInFlight.contains($0) }.sorted()
    }

    /// Writes a snapshot of a loaded document, then compacts. The snapshot is
    /// encoded off the actor, so edits go on meanwhile; changes made meanwhile
    /// stay in the change log (the snapshot's version vector says what it covers).
    public func writeSnapshot(of id: DocumentID, at time: Int64) async throws {
        guard !snapshotsInFlight.contains(id) else { return }
        snapshotsInFlight.insert(id)
        defer { snapshotsInFlight.remove(id) }
        let counted = unsnapshotted[id]?.count ?? 0
        let (bytes, version) = await Self.encode(try loadedDocument(id))
        try database.connection.transaction { try database.saveSnapshot(bytes, version: version, of: id, created: time) }
        if let state = unsnapshotted[id] {
            let left = state.count - counted
            unsnapshotted[id] = left > 0 ? (left, state.lastChange) : nil
        }
        try compact(id, snapshotVersion: version)
    }

    /// Runs on the global executor, not the actor's.
    nonisolated private static func encode(_ doc: any StoredDocument) async -> ([UInt8], VersionVector) {
        (doc.snapshot(), doc.versionVector)
    }

    /// Writes the snapshots that are due. Returns the documents snapshotted.
    @discardableResult
    public func runMaintenance(at time: Int64, now: ContinuousClock.Instant = .now) async throws -> [DocumentID] {
        let due = documentsDueForSnapshot(now: now)
        for id in due { try await writeSnapshot(of: id, at: time) }
        return due
    }

    /// Drops stored changes covered by the snapshot and acknowledged by every
    /// configured peer that is a member of the document; the in-memory log
    /// keeps only what follows the snapshot. A peer behind that horizon gets
    /// a snapshot.
    public func compact(_ id: DocumentID) throws {
        guard let (version, _) = try database.snapshot(of: id) else { return }
        try compact(id, snapshotVersion: version)
    }

    private func compact(_ id: DocumentID, snapshotVersion: VersionVector) throws {
        var horizon = snapshotVersion
        let acknowledged = try database.acknowledged(id)
        let configured = Set(try database.peers().filter { $0.state == .configured }.map(\.id))
        for member in try database.members(of: id) where configured.contains(member.peer) {
            let acked = acknowledged[member.peer] ?? VersionVector()
            for replica in horizon.replicas { horizon[replica] = min(horizon[replica], acked[replica]) }
        }
        try database.connection.transaction { _ = try database.dropChanges(of: id, coveredBy: horizon) }
        loaded[id]?.compactChangeLog(upTo: snapshotVersion)
    }

    // MARK: - Peers

    public func peers() throws -> [PeerRecord] { try database.peers() }

    /// Adds or updates a configured peer (accepting a pending one).
    public func addPeer(_ id: PeerID, name: String? = nil, address: String? = nil, at time: Int64) throws {
        let existing = try database.peer(id)
        try database.upsertPeer(
            PeerRecord(
                id: id, name: name ?? existing?.name, address: address ?? existing?.address, state: .configured,
                added: existing?.added ?? time, lastSeen: existing?.lastSeen, lastAddress: existing?.lastAddress))
        publish(.peersChanged)
    }

    /// Records an unknown peer that tried to connect (at most `maximumPendingPeers` are kept).
    public func recordPendingPeer(_ id: PeerID, from address: String, at time: Int64) throws {
        if let existing = try database.peer(id), existing.state == .configured { return }
        let existing = try database.peer(id)
        try database.upsertPeer(
            PeerRecord(id: id, state: .pending, added: existing?.added ?? time, lastSeen: time, lastAddress: address))
        try database.prunePendingPeers(keeping: options.maximumPendingPeers)
        publish(.peerPending(id, address: address))
    }

    /// Whether a peer id is configured (may connect).
    public func isConfigured(_ peer: PeerID) throws -> Bool { try database.peer(peer)?.state == .configured }

    /// Notes that a peer connected.
    public func peerSeen(_ id: PeerID, from address: String, at time: Int64) throws {
        guard var peer = try database.peer(id) else { return }
        peer.lastSeen = time
        peer.lastAddress = address
        try database.upsertPeer(peer)
    }

    public func removePeer(_ id: PeerID) throws {
        try database.removePeer(id)
        publish(.peersChanged)
    }

    /// Records what a peer has acknowledged of a document.
    public func acknowledge(_ version: VersionVector, of document: DocumentID, by peer: PeerID, at time: Int64) throws {
        try database.setAcknowledged(version, of: document, by: peer, at: time)
    }

    public func acknowledged(_ document: DocumentID) throws -> [PeerID: VersionVector] { try database.acknowledged(document) }

    // MARK: - Integrity, backup, restore

    /// Problems `PRAGMA integrity_check` finds; empty when healthy.
    public func integrityProblems() throws -> [String] { try database.integrityProblems(full: true) }

    /// Writes a consistent copy of the database (as of the call) to
    /// `destination`, which must not exist. Copies on a connection and a
    /// thread of its own, in steps: edits and sync go on meanwhile.
    /// - Throws: `StoreError` (a full disk has SQLite's SQLITE_FULL); nothing
    ///   is left at `destination` after a failure.
    public nonisolated func backup(
        to destination: String, betweenSteps: (@Sendable (_ remainingPages: Int32) -> Void)? = nil, pagesPerStep: Int32 = 1024
    ) async throws {
        try await StoreBackup.copy(from: path, to: destination, pagesPerStep: pagesPerStep, betweenSteps: betweenSteps)
    }

    /// Gives this database a new replica id (a new nonce for its identity):
    /// when a peer proves, with a change signed by this identity that this
    /// replica never made, that another copy of this database is in use.
    /// Loaded documents are reloaded under the new id.
    public func mintReplicaID() throws -> ReplicaID {
        author = try database.mintAuthor(for: identity)
        loaded = [:]
        return author.replica
    }

    /// Restores a backup to `destination` (which must not exist); the next
    /// open mints a new replica id, so the restored database never reuses
    /// sequence numbers.
    /// - Throws: `StoreError` if the backup is not a healthy Storyteller database.
    public static func restore(backup: String, to destination: String) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError(.cannotOpen, "restore destination already exists; remove or move it first", path: destination)
        }
        // Check the backup without writing to it, so a bad one never becomes the database.
        try StoreDatabase.verify(path: backup)
        do {
            try FileManager.default.copyItem(atPath: backup, toPath: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination)
        } catch {
            throw StoreError(.io, "cannot copy the backup: \(error)", path: destination)
        }
        try StoreDatabase.open(path: destination).forgetReplica()
    }

    /// Bytes on disk (database and log), after moving the log into the database.
    public func fileSize(checkpointing: Bool = true) throws -> Int {
        if checkpointing { try database.checkpoint() }
        return database.fileSize()
    }

    /// Rewrites the database file without free pages.
    public func vacuum() throws { try database.vacuum() }

    // MARK: - Upgrade

    /// Turns the documents of a database written before signed authorship
    /// into legacy documents owned by this daemon: each is loaded as it was
    /// (unsigned changes on its snapshot), saved as one snapshot whose access
    /// list names this daemon as owner, and its unsigned changes are dropped.
    /// Nothing is lost; such documents are edited as before but never synced
    /// (a copy of one can be shared). One transaction: all or nothing.
    private static func upgradeLegacyDocuments(_ database: StoreDatabase, author: LocalAuthor) throws {
        guard try database.connection.scalar("SELECT value FROM meta WHERE key = 'legacy_upgrade'") != nil else { return }
        try database.connection.transaction {
            for record in try database.documents() {
                let tail = try database.changes(of: record.id)
                let snapshot = try database.snapshot(of: record.id)?.bytes
                let bytes: [UInt8]
                do {
                    switch record.kind {
                    case .project:
                        var old = try snapshot.map { try ProjectDocument(snapshot: $0, replica: ReplicaID(1)) }
                            ?? ProjectDocument(id: record.id, replica: ReplicaID(1))
                        try old.apply(tail)
                        var upgraded = try ProjectDocument(snapshot: old.snapshot(), author: author)
                        try upgraded.upgradeToLegacyOwnership()
                        bytes = upgraded.snapshot()
                    case .library:
                        var old = try snapshot.map { try LibraryDocument(snapshot: $0, replica: ReplicaID(1)) }
                            ?? LibraryDocument(id: record.id, replica: ReplicaID(1))
                        try old.apply(tail)
                        var upgraded = try LibraryDocument(snapshot: old.snapshot(), author: author)
                        try upgraded.upgradeToLegacyOwnership()
                        bytes = upgraded.snapshot()
                    }
                } catch {
                    throw StoreError(.invalidData, "cannot upgrade \(record.kind) \(record.id): \(error)", path: database.path)
                }
                let version = try SnapshotSummary(reading: bytes).version
                try database.saveSnapshot(bytes, version: version, of: record.id, created: record.created)
                try database.dropChanges(of: record.id, coveredBy: version)
                try database.setMembers([(author.identity.peer, .owner)], of: record.id)
            }
            try database.connection.run("DELETE FROM meta WHERE key = 'legacy_upgrade'")
        }
    }
}

/// What the store needs of a project or library document.
protocol StoredDocument: Sendable {
    var id: DocumentID { get }
    var versionVector: VersionVector { get }
    var isFounded: Bool { get }
    var isLegacy: Bool { get }
    var localRole: Role { get }
    var members: [(peer: PeerID, role: Role)] { get }
    var heldBackBytes: Int { get }
    func role(of peer: PeerID) -> Role
    func heldBackBytes(from origin: ChangeOrigin) -> Int
    func snapshot() -> [UInt8]
    func changes(since other: VersionVector) -> ChangesSince
    mutating func apply(
        _ changes: [(EncodedChange, Change)], origin: ChangeOrigin, limits: HeldBackLimits?,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport
    mutating func merge(snapshot bytes: [UInt8]) throws -> [any Error]
    mutating func setAccess(_ role: Role, for peer: PeerID, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws
        -> EncodedChange
    mutating func undo(session: String, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> EncodedChange?
    mutating func redo(session: String, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> EncodedChange?
    mutating func compactChangeLog(upTo horizon: VersionVector)
    mutating func dropHeldBack(from origin: ChangeOrigin)
}

extension ProjectDocument: StoredDocument {}
extension LibraryDocument: StoredDocument {}

/// A document that can be founded and take another's content (a copy).
protocol CopyableDocument: StoredDocument {
    static func found(
        by author: LocalAuthor, at time: Int64, salt: UInt128, beforeCommit: (DocumentID, EncodedChange) throws -> Void
    ) throws -> (document: Self, change: EncodedChange)
    mutating func adoptContent(of other: Self)
}

extension ProjectDocument: CopyableDocument {}
extension LibraryDocument: CopyableDocument {}
