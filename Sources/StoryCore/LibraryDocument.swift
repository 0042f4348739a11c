/// The folder tree of projects as a CRDT document held by one replica.
///
/// Same sync API as `ProjectDocument`. Tree moves follow Kleppmann et al.
/// (2021): concurrent moves never create a cycle, lose a node or duplicate one.
package struct LibraryDocument: Sendable {
    /// The document's identity, the same on every replica.
    package let id: DocumentID
    var replicaState: Replica<LibraryEditor>

    var core: ReplicaCore { replicaState.core }
    var state: LibraryState { replicaState.state }

    /// A new library with only the root, trash and Incoming folders.
    package init(id: DocumentID, replica: ReplicaID) {
        self.id = id
        replicaState = Replica(core: ReplicaCore(replica: replica, document: id), state: LibraryState())
    }

    init(id: DocumentID, replicaState: Replica<LibraryEditor>) {
        self.id = id
        self.replicaState = replicaState
    }

    /// The replica holding this copy.
    package var replica: ReplicaID { core.replica }

    /// What this replica has applied.
    package var versionVector: VersionVector { core.versionVector }

    /// Changes received whose dependencies have not arrived yet.
    package var pendingChangeCount: Int { core.pendingCount }

    // MARK: - Editing

    /// Makes one change from the edits in `body` (see `ProjectDocument.edit`).
    @discardableResult
    @inlinable
    package mutating func edit<Value>(
        session: String? = nil, at time: Int64, _ body: (inout LibraryEditor) throws -> Value,
        beforeCommit: (EncodedChange) throws -> Void = { _ in }
    ) throws -> EditResult<Value> {
        var value: Value?
        let change = try commitEdit(session: session, at: time, { value = try body(&$0) }, beforeCommit: beforeCommit)
        // `body` ran to completion (it did not throw), so `value` is set.
        return EditResult(value: value!, change: change)
    }

    /// The non-generic part of `edit`.
    @usableFromInline
    mutating func commitEdit(
        session: String?, at time: Int64, _ body: (inout LibraryEditor) throws -> Void,
        beforeCommit: (EncodedChange) throws -> Void
    ) throws -> EncodedChange? {
        try replicaState.edit(session: session, at: time, body, beforeCommit: beforeCommit)
    }

    /// Undoes the session's last edit: erases what it drew, restores what it
    /// erased, moves back what it moved, restores fields it set. Parts that
    /// somebody else changed since are left alone. If somebody else changed
    /// every part of it, nothing is done and the outcome says it was
    /// overruled (by whom); with `older`, such edits are passed over and the
    /// newest one with something of its own is undone. Never undoes another
    /// session's or person's work.
    @discardableResult
    package mutating func undo(
        session: String, older: Bool = false, at time: Int64, beforeCommit: (EncodedChange) throws -> Void = { _ in }
    ) throws -> UndoOutcome {
        try replicaState.undo(session: session, older: older, at: time, beforeCommit: beforeCommit)
    }

    /// Redoes the session's last undone edit (the same rules as `undo`).
    @discardableResult
    package mutating func redo(
        session: String, older: Bool = false, at time: Int64, beforeCommit: (EncodedChange) throws -> Void = { _ in }
    ) throws -> UndoOutcome {
        try replicaState.redo(session: session, older: older, at: time, beforeCommit: beforeCommit)
    }

    /// Whether changes to the undo history are collected for a store
    /// (`takeUndoStorageChanges`); off by default.
    package var recordsUndoStorage: Bool {
        get { replicaState.recordsUndoStorage }
        set { replicaState.recordsUndoStorage = newValue }
    }

    /// The undo history's changes since the last call, for a store to write.
    package mutating func takeUndoStorageChanges() -> [UndoStorageChange] { replicaState.takeUndoStorageChanges() }

    /// Puts back a session's stored undo or redo stack (records as
    /// `UndoStorageChange` gave them, in any order).
    /// - Throws: `CodecError` for a record that does not decode; nothing changes then.
    package mutating func restoreUndo(session: String, stack: UndoStack, records: [(position: UInt64, bytes: [UInt8])]) throws(CodecError) {
        try replicaState.restoreUndo(session: session, stack: stack, records: records)
    }

    /// Whether the session has something to undo.
    package func canUndo(session: String) -> Bool { replicaState.canUndo(session: session) }

    /// Whether the session has something to redo.
    package func canRedo(session: String) -> Bool { replicaState.canRedo(session: session) }

    /// Forgets a session's undo and redo stacks.
    package mutating func endSession(_ session: String) { replicaState.endSession(session) }

    // MARK: - Sync

    /// The changes a replica at `other` lacks (see `ProjectDocument.changes(since:)`).
    package func changes(since other: VersionVector) -> ChangesSince { core.changes(since: other) }

    /// Applies changes from other replicas (see `ProjectDocument.apply(_:beforeCommit:)`).
    @discardableResult
    package mutating func apply(
        _ changes: [(EncodedChange, Change)], origin: ChangeOrigin = .unknown, limits: HeldBackLimits? = nil,
        beforeCommit: (ApplyReport) throws -> Void = { _ in }
    ) throws -> ApplyReport {
        try apply(ReceivedChanges(changes), origin: origin, limits: limits, beforeCommit: beforeCommit)
    }

    /// Applies received changes (`ChangeBatch.decodeReceived`), as `apply(_:origin:limits:beforeCommit:)`
    /// applies decoded ones, without copying each change into the records it is held in.
    @discardableResult
    package mutating func apply(
        _ received: consuming ReceivedChanges, origin: ChangeOrigin = .unknown, limits: HeldBackLimits? = nil,
        beforeCommit: (ApplyReport) throws -> Void = { _ in }
    ) throws -> ApplyReport {
        // Handed on, not copied (see `ProjectDocument.apply(_:origin:limits:beforeCommit:)`).
        try replicaState.apply(consume received, origin: origin, limits: limits, beforeCommit: beforeCommit)
    }

    /// Decodes and applies a batch.
    @discardableResult
    package mutating func apply(
        batch bytes: ArraySlice<UInt8>, beforeCommit: (ApplyReport) throws -> Void = { _ in }
    ) throws -> ApplyReport {
        try apply(try ChangeBatch.decodeReceived(bytes), beforeCommit: beforeCommit)
    }

    /// Forgets logged changes covered by `horizon`.
    package mutating func compactChangeLog(upTo horizon: VersionVector) {
        replicaState.core.compactLogs(upTo: horizon)
    }

    // MARK: - Reading

    /// The tree as shown.
    package var view: LibraryView { LibraryView(state: state) { author(of: $0.replica) } }

    /// The children shown in a folder, in order.
    package func children(of folder: OpID) -> [OpID] { state.children(of: folder) }

    /// The folder a node is in.
    package func parent(of node: OpID) -> OpID? { state.place(of: node)?.value.container }

    /// A node's kind, if it exists.
    package func kind(of node: OpID) -> ObjectKind? { state.node(node)?.kind }

    /// A node's field.
    package func field(_ key: FieldKey, of node: OpID) -> FieldValue { state.node(node)?.field(key) ?? .null }

    /// When this library document (a shared folder) was deleted for everyone
    /// who shares it (milliseconds since 1970), or nil: it is not.
    package var deletedAt: Int64? { state.node(.root)?.field(.deletedAt).number.map { Int64($0) } }

    /// The project document of an entry.
    package func document(of node: OpID) -> DocumentID? { state.node(node)?.document }

    /// Whether a node is in the library, in the trash, or purged (nil: unknown).
    package func isInTrash(_ node: OpID) -> Bool? {
        guard let location = state.location(of: node) else { return nil }
        return location == .trash
    }

    /// Whether a node was purged.
    package func isPurged(_ node: OpID) -> Bool { state.isPurged(node) }

    /// The entries (not purged) naming a project document.
    package func entries(for document: DocumentID) -> [OpID] {
        state.allNodes.compactMap { id, node in
            node.document == document && !state.isPurged(id) ? id : nil
        }.sorted()
    }

    /// Every node id except the root and trash (for checks and listings).
    package var allNodeIDs: [OpID] {
        state.allNodes.keys.filter { $0 != .root && $0 != .trash }.sorted()
    }

    /// Whether following parents from every node reaches the root or the trash
    /// without a cycle, and every non-purged node is shown exactly once.
    package var isWellFormed: Bool {
        let shown = view.nodes.map(\.id)
        guard Set(shown).count == shown.count else { return false }
        let shownSet = Set(shown)
        for node in allNodeIDs where node != .incoming && !state.isPurged(node) {
            guard state.location(of: node) != nil, shownSet.contains(node) else { return false }
        }
        return true
    }
}

extension LibraryDocument {
    /// The library as a snapshot (see `ProjectDocument.snapshot()`).
    package func snapshot() -> [UInt8] {
        var replicas: Set<ReplicaID> = [.reserved]
        for (id, node) in state.allNodes {
            replicas.insert(id.replica)
            for register in node.fields.values { replicas.insert(register.stamp.replica) }
        }
        for (id, tree) in state.allContainers {
            replicas.insert(id.replica)
            for (entry, value) in tree.entries {
                replicas.insert(entry.replica)
                replicas.insert(value.object.replica)
            }
        }
        for record in state.allMoves { replicas.insert(record.id.replica) }
        var writer = SnapshotWriter(header: replicaState.header(kind: .library, document: id), replicas: replicas)
        let table = writer.table
        writer.section { out in
            let nodes = state.allNodes.sorted { $0.key < $1.key }
            out.write(count: nodes.count)
            for (id, node) in nodes {
                out.write(id, table: table)
                out.write(byte: node.kind.rawValue)
                out.write(bool: node.document != nil)
                if let document = node.document {
                    out.write(fixed64: document.high)
                    out.write(fixed64: document.low)
                }
                out.write(signed: node.createdAt)
                out.write(signed: node.updatedAt)
                out.write(fields: node.fields, table: table)
            }
        }
        writer.section { out in out.write(trees: state.allContainers, table: table) }
        writer.section { out in
            out.write(count: state.allMoves.count)
            for record in state.allMoves {
                out.write(record.id, table: table)
                out.write(record.node, table: table)
                out.write(record.place.container, table: table)
            }
        }
        writer.section { out in
            out.write(count: state.allPurged.count)
            for node in state.allPurged.sorted() { out.write(node, table: table) }
        }
        return writer.finish()
    }

    /// Loads a library from a snapshot, as held by `replica`.
    /// - Throws: `CodecError`, `DocumentError(.invalidSnapshot)`.
    package init(snapshot bytes: [UInt8], replica: ReplicaID) throws {
        try self.init(snapshot: bytes) { ReplicaCore(replica: replica, document: $0) }
    }

    /// Loads a signed document from a snapshot this daemon stored (its
    /// authorship was checked before it was stored), as held by `author`.
    /// - Throws: `CodecError`, `DocumentError`.
    package init(snapshot bytes: [UInt8], author: LocalAuthor) throws {
        try self.init(snapshot: bytes) { ReplicaCore(author: author, document: $0) }
    }

    private init(snapshot bytes: [UInt8], core: (DocumentID) -> ReplicaCore) throws {
        var reader = try SnapshotReader(bytes)
        guard reader.header.kind == .library else {
            throw DocumentError(.invalidSnapshot, "the snapshot is of a project, not a library")
        }
        let state = try Self.readState(&reader)
        let document = reader.header.document
        self.init(id: document, replicaState: try .loaded(from: reader.header, state: state, core: core(document)))
    }

    /// Merges another replica's snapshot of this library.
    /// - Throws: `CodecError`, `DocumentError`; nothing changes then.
    @discardableResult
    package mutating func merge(snapshot bytes: [UInt8]) throws -> [any Error] {
        var reader = try SnapshotReader(bytes)
        guard reader.header.kind == .library, reader.header.document == id else {
            throw DocumentError(.invalidSnapshot, "the snapshot is of another document")
        }
        let other = try Self.readState(&reader)
        return try replicaState.merge(other, header: reader.header)
    }

    private static func readState(_ reader: inout SnapshotReader) throws -> LibraryState {
        let replicas = reader.replicas
        var section = try reader.section("nodes")
        var nodes: [OpID: LibraryNode] = [:]
        for _ in 0..<(try section.readCount("nodes", minimumElementSize: 6)) {
            let id = try section.readOpID(replicas: replicas)
            guard let kind = ObjectKind(rawValue: try section.readByte()), kind == .folder || kind == .projectEntry else {
                throw CodecError(.invalidValue, "library node \(id) has an unknown kind")
            }
            let document =
                try section.readBool("document flag")
                ? DocumentID(high: try section.readFixed64(), low: try section.readFixed64()) : nil
            guard (document != nil) == (kind == .projectEntry) else {
                throw CodecError(.invalidValue, "library node \(id) has a document only if it is a project entry")
            }
            let createdAt = try section.readSigned()
            let updatedAt = try section.readSigned()
            let fields = try section.readFields(replicas: replicas)
            for (key, register) in fields where !key.accepts(register.value, on: kind) {
                // The root of a shared folder carries when it was deleted (`LibraryState.apply`).
                if id == .root, key == .deletedAt, FieldKey.deletedAt.accepts(register.value, on: .project) { continue }
                throw CodecError(.invalidValue, "library node \(id) has a bad \(key) field")
            }
            guard nodes[id] == nil else { throw CodecError(.invalidValue, "library node \(id) repeated") }
            nodes[id] = LibraryNode(kind: kind, fields: fields, document: document, createdAt: createdAt, updatedAt: updatedAt)
        }
        try section.expectEnd("nodes")
        section = try reader.section("lists")
        let containers = try section.readTrees(replicas: replicas)
        try section.expectEnd("lists")
        section = try reader.section("moves")
        var moves: [MoveRecord] = []
        for _ in 0..<(try section.readCount("moves", minimumElementSize: 6)) {
            let id = try section.readOpID(replicas: replicas)
            let node = try section.readOpID(replicas: replicas)
            let parent = try section.readOpID(replicas: replicas)
            guard moves.last.map({ id > $0.id }) ?? true else { throw CodecError(.invalidValue, "moves out of order") }
            moves.append(MoveRecord(id: id, node: node, place: Place(container: parent, entry: id)))
        }
        try section.expectEnd("moves")
        section = try reader.section("purged")
        var purged: Set<OpID> = []
        for _ in 0..<(try section.readCount("purged", minimumElementSize: 2)) {
            purged.insert(try section.readOpID(replicas: replicas))
        }
        try section.expectEnd("purged")
        try reader.expectEnd()
        return try LibraryState(nodes: nodes, containers: containers, moves: moves, purged: purged)
    }
}
