import Foundation
import StoryCore

/// How the store keeps snapshots and checks the database.
public struct StoreOptions: Sendable {
    /// A snapshot is due after this many changes to a document.
    public var snapshotEveryChanges = 1000
    /// …or after this long without changes, if it changed since the last one.
    public var snapshotAfterIdle: Duration = .seconds(30)
    /// Run `PRAGMA integrity_check` instead of `quick_check` when opening.
    public var fullIntegrityCheck = false
    /// Most pending (unknown) peers remembered; older ones are forgotten.
    public var maximumPendingPeers = 64

    public init() {}
}

/// The daemon's documents: the SQLite database and the documents loaded from it.
///
/// An actor on its own serial executor. Every write a caller is told succeeded
/// was committed: an edit or a batch of changes is applied to the in-memory
/// document only if its transaction committed, and committed only if it applied.
/// Snapshots are encoded off the actor, so edits continue meanwhile.
public actor Store {
    /// The database file.
    public nonisolated let path: String
    public let options: StoreOptions
    let database: StoreDatabase
    private let executor: StoreExecutor
    private var projects: [DocumentID: ProjectDocument] = [:]
    private var libraries: [DocumentID: LibraryDocument] = [:]
    /// Changes since the last snapshot, and when the last one was made.
    private var unsnapshotted: [DocumentID: (count: Int, lastChange: ContinuousClock.Instant)] = [:]
    private var snapshotsInFlight: Set<DocumentID> = []

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Subscribers to `events()`.
    private var subscribers: [Int: AsyncStream<StoreEvent>.Continuation] = [:]
    private var nextSubscriber = 0

    /// Opens (or creates) the database at `path`.
    /// - Throws: `StoreError` naming the file; a corrupt, foreign or newer file is never written.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.options = options
        database = try StoreDatabase.open(path: path, fullCheck: options.fullIntegrityCheck)
        executor = StoreExecutor(label: "storyteller.store")
    }

    /// This database's replica id: every local change is authored by it.
    public var replicaID: ReplicaID { database.replicaID }

    // MARK: - Documents

    /// Every document, without loading any.
    public func documents() throws -> [DocumentRecord] { try database.documents() }

    /// One document's record.
    public func document(_ id: DocumentID) throws -> DocumentRecord {
        guard let record = try database.document(id) else { throw StoreError(.notFound, "no document \(id)", path: path) }
        return record
    }

    /// Creates an empty project or library document.
    public func createDocument(_ id: DocumentID = .random(), kind: DocumentKind, name: String? = nil, at time: Int64) throws -> DocumentID {
        try database.createDocument(id, kind: kind, name: name, created: time)
        switch kind {
        case .project: projects[id] = ProjectDocument(id: id, replica: replicaID)
        case .library: libraries[id] = LibraryDocument(id: id, replica: replicaID)
        }
        publish(.documentCreated(id, kind: kind))
        return id
    }

    /// Sets the name kept with a document's record (the library holds the
    /// name users see; this is for listings and logs).
    public func setName(_ name: String?, of id: DocumentID) throws { try database.setDocument(id, name: name) }

    /// Marks a document deleted or not (its data stays until removed).
    public func setDeleted(_ deleted: Bool, of id: DocumentID) throws { try database.setDocument(id, deleted: deleted) }

    /// The project, loaded on first use from its snapshot and later changes.
    public func project(_ id: DocumentID) throws -> ProjectDocument {
        if let loaded = projects[id] { return loaded }
        let record = try document(id)
        guard record.kind == .project else { throw StoreError(.notFound, "\(id) is a library, not a project", path: path) }
        let doc = try load(id, empty: ProjectDocument(id: id, replica: replicaID)) { bytes, replica in
            try ProjectDocument(snapshot: bytes, replica: replica)
        }
        projects[id] = doc
        return doc
    }

    /// The library, loaded on first use.
    public func library(_ id: DocumentID) throws -> LibraryDocument {
        if let loaded = libraries[id] { return loaded }
        let record = try document(id)
        guard record.kind == .library else { throw StoreError(.notFound, "\(id) is a project, not a library", path: path) }
        let doc = try load(id, empty: LibraryDocument(id: id, replica: replicaID)) { bytes, replica in
            try LibraryDocument(snapshot: bytes, replica: replica)
        }
        libraries[id] = doc
        return doc
    }

    /// Latest snapshot plus the stored changes after it.
    private func load<Document: StoredDocument>(
        _ id: DocumentID, empty: Document, fromSnapshot: ([UInt8], ReplicaID) throws -> Document
    ) throws -> Document {
        var doc = empty
        if let (_, bytes) = try database.snapshot(of: id) {
            do {
                doc = try fromSnapshot(bytes, replicaID)
            } catch {
                throw StoreError(.invalidData, "the snapshot of \(id) does not load: \(error)", path: path)
            }
        }
        let tail = try database.changes(of: id, notCoveredBy: doc.versionVector)
        do {
            _ = try doc.apply(tail, beforeCommit: { _ in })
        } catch {
            throw StoreError(.invalidData, "stored changes of \(id) do not apply: \(error)", path: path)
        }
        return doc
    }

    /// Forgets a loaded document (it loads again on next use).
    public func unload(_ id: DocumentID) {
        projects[id] = nil
        libraries[id] = nil
    }

    // MARK: - Editing

    /// Edits a project; the change is committed to disk before this returns.
    /// - Throws: `DocumentError` for a bad edit, `StoreError` if it cannot be stored
    ///   (the document is then unchanged).
    public func editProject<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout ProjectEditor) throws -> Value
    ) throws -> EditResult<Value> {
        var doc = try project(id)
        projects[id] = nil  // keep `doc` uniquely referenced while it changes
        defer { projects[id] = doc }
        let result = try doc.edit(session: session, at: time, body) { change in try self.commitLocal(change, to: id) }
        noteChanges(result.change == nil ? 0 : 1, in: id)
        return result
    }

    /// Edits the library; committed before this returns.
    public func editLibrary<Value: Sendable>(
        _ id: DocumentID, session: String? = nil, at time: Int64, _ body: @Sendable (inout LibraryEditor) throws -> Value
    ) throws -> EditResult<Value> {
        var doc = try library(id)
        libraries[id] = nil
        defer { libraries[id] = doc }
        let result = try doc.edit(session: session, at: time, body) { change in try self.commitLocal(change, to: id) }
        noteChanges(result.change == nil ? 0 : 1, in: id)
        return result
    }

    /// Undoes a session's last change to a document (project or library).
    public func undo(_ id: DocumentID, session: String, at time: Int64) throws -> EncodedChange? {
        try replay(id, session: session, at: time, redo: false)
    }

    /// Redoes a session's last undone change.
    public func redo(_ id: DocumentID, session: String, at time: Int64) throws -> EncodedChange? {
        try replay(id, session: session, at: time, redo: true)
    }

    private func replay(_ id: DocumentID, session: String, at time: Int64, redo: Bool) throws -> EncodedChange? {
        let commit: (EncodedChange) throws -> Void = { change in try self.commitLocal(change, to: id) }
        let change: EncodedChange?
        switch try document(id).kind {
        case .project:
            var doc = try project(id)
            projects[id] = nil
            defer { projects[id] = doc }
            change = redo
                ? try doc.redo(session: session, at: time, beforeCommit: commit)
                : try doc.undo(session: session, at: time, beforeCommit: commit)
        case .library:
            var doc = try library(id)
            libraries[id] = nil
            defer { libraries[id] = doc }
            change = redo
                ? try doc.redo(session: session, at: time, beforeCommit: commit)
                : try doc.undo(session: session, at: time, beforeCommit: commit)
        }
        noteChanges(change == nil ? 0 : 1, in: id)
        return change
    }

    private func commitLocal(_ change: EncodedChange, to id: DocumentID) throws {
        try database.connection.transaction { try database.append([change], to: id) }
    }

    // MARK: - Sync

    /// Applies changes from a peer in one transaction (group commit): the
    /// document takes them only if they committed, and they are committed only
    /// if they all applied. Changes whose dependencies are missing are held.
    /// - Throws: `DocumentError` for an invalid change, `StoreError` for the disk.
    @discardableResult
    public func apply(_ changes: [(EncodedChange, Change)], to id: DocumentID, from peer: String? = nil) throws -> ApplyReport {
        let commit: (ApplyReport) throws -> Void = { report in
            guard !report.applied.isEmpty else { return }
            try self.database.connection.transaction { try self.database.append(report.applied, to: id) }
        }
        let report: ApplyReport
        switch try document(id).kind {
        case .project:
            var doc = try project(id)
            projects[id] = nil
            defer { projects[id] = doc }
            report = try doc.apply(changes, beforeCommit: commit)
        case .library:
            var doc = try library(id)
            libraries[id] = nil
            defer { libraries[id] = doc }
            report = try doc.apply(changes, beforeCommit: commit)
        }
        noteChanges(report.applied.count, in: id, origin: peer.map(StoreEvent.Origin.peer) ?? .local)
        return report
    }

    /// Decodes and applies a batch (see `apply(_:to:from:)`).
    @discardableResult
    public func apply(batch bytes: ArraySlice<UInt8>, to id: DocumentID, from peer: String? = nil) throws -> ApplyReport {
        try apply(try ChangeBatch.decode(bytes), to: id, from: peer)
    }

    /// A document's version vector (loads it if needed).
    public func version(of id: DocumentID) throws -> VersionVector {
        switch try document(id).kind {
        case .project: try project(id).versionVector
        case .library: try library(id).versionVector
        }
    }

    /// What a document holds, without loading it: the loaded document's
    /// version if it is in memory, else its snapshot's version joined with the
    /// newest stored change of each replica (the log holds only applied changes,
    /// and a merged snapshot covers what it made applicable).
    public func storedVersion(of id: DocumentID) throws -> VersionVector {
        if let loaded = projects[id] { return loaded.versionVector }
        if let loaded = libraries[id] { return loaded.versionVector }
        let record = try document(id)
        var version = record.snapshotVersion ?? VersionVector()
        version.formUnion(VersionVector(try database.lastStoredSeq(of: id)))
        return version
    }

    /// The documents shared with a peer, with how they are shared.
    public func sharedDocuments(with peer: String) throws -> [(record: DocumentRecord, mode: ShareMode)] {
        let shares = try database.shares().filter { $0.peer == peer }
        return try shares.compactMap { share in
            guard let record = try database.document(share.document), !record.isDeleted else { return nil }
            return (record, share.mode)
        }
    }

    /// What a peer at `version` lacks: from memory when the loaded document's
    /// log reaches back far enough, else from the database, else a snapshot is needed.
    public func changes(of id: DocumentID, since version: VersionVector) throws -> ChangesSince {
        let inMemory: ChangesSince
        let current: VersionVector
        switch try document(id).kind {
        case .project:
            let doc = try project(id)
            (inMemory, current) = (doc.changes(since: version), doc.versionVector)
        case .library:
            let doc = try library(id)
            (inMemory, current) = (doc.changes(since: version), doc.versionVector)
        }
        if case .changes = inMemory { return inMemory }
        let first = try database.firstStoredSeq(of: id)
        for (replica, seq) in current.sortedEntries where seq > version[replica] {
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
    public func snapshot(of id: DocumentID) throws -> [UInt8] {
        switch try document(id).kind {
        case .project: try project(id).snapshot()
        case .library: try library(id).snapshot()
        }
    }

    /// Merges a peer's snapshot, then writes our own snapshot (the changes it
    /// brought are not in the change log).
    public func merge(snapshot bytes: [UInt8], into id: DocumentID, at time: Int64) throws {
        switch try document(id).kind {
        case .project:
            var doc = try project(id)
            try doc.merge(snapshot: bytes)
            // The saved snapshot covers what the merge brought, including held-back
            // changes it made applicable (those were never in the change log).
            try database.connection.transaction {
                try database.saveSnapshot(doc.snapshot(), version: doc.versionVector, of: id, created: time)
            }
            projects[id] = doc
        case .library:
            var doc = try library(id)
            try doc.merge(snapshot: bytes)
            try database.connection.transaction {
                try database.saveSnapshot(doc.snapshot(), version: doc.versionVector, of: id, created: time)
            }
            libraries[id] = doc
        }
        unsnapshotted[id] = nil
        publish(.documentChanged(id, origin: .snapshot, changes: 0))
    }

    // MARK: - Events

    /// What happened in the store, as it happens: documents that changed (by a
    /// local edit or from a peer), documents created, peers waiting for
    /// acceptance. The sync layer pushes changes to peers from this; the
    /// control API streams it to clients.
    public func events() -> AsyncStream<StoreEvent> {
        let (stream, continuation) = AsyncStream<StoreEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let key = nextSubscriber
        nextSubscriber += 1
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(key) }
        }
        return stream
    }

    private func unsubscribe(_ key: Int) { subscribers[key] = nil }

    private func publish(_ event: StoreEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    /// Ends every event stream (at shutdown).
    public func finishEvents() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

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
        let (bytes, version): ([UInt8], VersionVector)
        switch try document(id).kind {
        case .project: (bytes, version) = await Self.encode(try project(id))
        case .library: (bytes, version) = await Self.encode(try library(id))
        }
        try database.connection.transaction { try database.saveSnapshot(bytes, version: version, of: id, created: time) }
        if let state = unsnapshotted[id] {
            let left = state.count - counted
            unsnapshotted[id] = left > 0 ? (left, state.lastChange) : nil
        }
        try compact(id, snapshotVersion: version)
    }

    /// Runs on the global executor, not the actor's.
    nonisolated private static func encode<Document: StoredDocument>(_ doc: Document) async -> ([UInt8], VersionVector) {
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
    /// peer the document is shared with; the in-memory log keeps only what
    /// follows the snapshot. A peer behind that horizon gets a snapshot.
    public func compact(_ id: DocumentID) throws {
        guard let (version, _) = try database.snapshot(of: id) else { return }
        try compact(id, snapshotVersion: version)
    }

    private func compact(_ id: DocumentID, snapshotVersion: VersionVector) throws {
        var horizon = snapshotVersion
        let acknowledged = try database.acknowledged(id)
        for share in try database.shares(of: id) {
            let acked = acknowledged[share.peer] ?? VersionVector()
            for replica in horizon.replicas { horizon[replica] = min(horizon[replica], acked[replica]) }
        }
        try database.connection.transaction { _ = try database.dropChanges(of: id, coveredBy: horizon) }
        projects[id]?.compactChangeLog(upTo: snapshotVersion)
        libraries[id]?.compactChangeLog(upTo: snapshotVersion)
    }

    // MARK: - Peers and shares

    public func peers() throws -> [PeerRecord] { try database.peers() }

    /// Adds or updates a configured peer (accepting a pending one).
    public func addPeer(_ id: String, name: String? = nil, address: String? = nil, at time: Int64) throws {
        let existing = try database.peer(id)
        try database.upsertPeer(
            PeerRecord(
                id: id, name: name ?? existing?.name, address: address ?? existing?.address, state: .configured,
                added: existing?.added ?? time, lastSeen: existing?.lastSeen, lastAddress: existing?.lastAddress))
        publish(.peersChanged)
    }

    /// Records an unknown peer that tried to connect (at most `maximumPendingPeers` are kept).
    public func recordPendingPeer(_ id: String, from address: String, at time: Int64) throws {
        if let existing = try database.peer(id), existing.state == .configured { return }
        let existing = try database.peer(id)
        try database.upsertPeer(
            PeerRecord(id: id, state: .pending, added: existing?.added ?? time, lastSeen: time, lastAddress: address))
        try database.prunePendingPeers(keeping: options.maximumPendingPeers)
        publish(.peerPending(id, address: address))
    }

    /// Whether a peer id is configured (may connect).
    public func isConfigured(_ peer: String) throws -> Bool { try database.peer(peer)?.state == .configured }

    /// Notes that a peer connected.
    public func peerSeen(_ id: String, from address: String, at time: Int64) throws {
        guard var peer = try database.peer(id) else { return }
        peer.lastSeen = time
        peer.lastAddress = address
        try database.upsertPeer(peer)
    }

    public func removePeer(_ id: String) throws {
        try database.removePeer(id)
        publish(.peersChanged)
    }

    public func share(_ document: DocumentID, with peer: String, mode: ShareMode) throws {
        _ = try self.document(document)
        guard try database.peer(peer)?.state == .configured else {
            throw StoreError(.notFound, "no configured peer \(peer)", path: path)
        }
        try database.share(ShareRecord(document: document, peer: peer, mode: mode))
        publish(.sharesChanged(peer: peer))
    }

    public func unshare(_ document: DocumentID, with peer: String) throws {
        try database.unshare(document, peer: peer)
        publish(.sharesChanged(peer: peer))
    }

    public func shares(of document: DocumentID? = nil) throws -> [ShareRecord] { try database.shares(of: document) }

    /// Records what a peer has acknowledged of a document.
    public func acknowledge(_ version: VersionVector, of document: DocumentID, by peer: String, at time: Int64) throws {
        try database.setAcknowledged(version, of: document, by: peer, at: time)
    }

    public func acknowledged(_ document: DocumentID) throws -> [String: VersionVector] { try database.acknowledged(document) }

    // MARK: - Integrity, backup, restore

    /// Problems `PRAGMA integrity_check` finds; empty when healthy.
    public func integrityProblems() throws -> [String] { try database.integrityProblems(full: true) }

    /// Writes a consistent copy of the database to `destination` while it is in use.
    public func backup(to destination: String) throws { try database.backup(to: destination) }

    /// Gives this database a new replica id: when a peer shows it has seen
    /// higher sequence numbers from our id than we have, another copy of this
    /// database is in use. Loaded documents are reloaded under the new id.
    public func mintReplicaID() throws -> ReplicaID {
        let fresh = try database.mintReplicaID()
        projects = [:]
        libraries = [:]
        return fresh
    }

    /// Restores a backup to `destination` (which must not exist) with a new
    /// replica id, so the restored database never reuses sequence numbers.
    /// Returns the new id.
    /// - Throws: `StoreError` if the backup is not a healthy Storyteller database.
    @discardableResult
    public static func restore(backup: String, to destination: String) throws -> ReplicaID {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError(.cannotOpen, "restore destination already exists; remove or move it first", path: destination)
        }
        // Check the backup without writing to it, so a bad one never becomes the database.
        try StoreDatabase.verify(path: backup)
        do {
            try FileManager.default.copyItem(atPath: backup, toPath: destination)
        } catch {
            throw StoreError(.io, "cannot copy the backup: \(error)", path: destination)
        }
        return try StoreDatabase.open(path: destination).mintReplicaID()
    }

    /// Bytes on disk (database and log), after moving the log into the database.
    public func fileSize(checkpointing: Bool = true) throws -> Int {
        if checkpointing { try database.checkpoint() }
        return database.fileSize()
    }

    /// Rewrites the database file without free pages.
    public func vacuum() throws { try database.vacuum() }
}

/// What the store needs of a project or library document.
protocol StoredDocument: Sendable {
    var versionVector: VersionVector { get }
    func snapshot() -> [UInt8]
    mutating func apply(_ changes: [(EncodedChange, Change)], beforeCommit: (ApplyReport) throws -> Void) throws -> ApplyReport
}

extension ProjectDocument: StoredDocument {}
extension LibraryDocument: StoredDocument {}
