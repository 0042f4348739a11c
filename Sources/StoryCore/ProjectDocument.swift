/// One storyboard project as a CRDT document held by one replica.
///
/// Edits made here and changes received from other replicas, applied in any
/// causal order with any duplicates, converge to the same document everywhere
/// (docs/crdt.md). A value type: copying a document is cheap until one copy is
/// edited.
///
/// Sync API, independent of any transport: `versionVector`,
/// `changes(since:)`, `apply(_:)`, `snapshot()`, `merge(snapshot:)`.
package struct ProjectDocument: Sendable {
    /// The document's identity, the same on every replica.
    package let id: DocumentID
    var replicaState: Replica<ProjectEditor>

    var core: ReplicaCore { replicaState.core }
    var state: ProjectState { replicaState.state }

    /// A new, empty project held by `replica`.
    package init(id: DocumentID, replica: ReplicaID) {
        self.id = id
        replicaState = Replica(core: ReplicaCore(replica: replica, document: id), state: ProjectState())
    }

    init(id: DocumentID, replicaState: Replica<ProjectEditor>) {
        self.id = id
        self.replicaState = replicaState
    }

    /// The replica holding this copy.
    package var replica: ReplicaID { core.replica }

    /// What this replica has applied.
    package var versionVector: VersionVector { core.versionVector }

    /// Changes received whose dependencies have not arrived yet.
    package var pendingChangeCount: Int { core.pendingCount }

    /// Wall time of the earliest change (informational).
    package var createdAt: Int64? { core.createdAt }
    /// Wall time of the latest change (informational).
    package var updatedAt: Int64? { core.updatedAt }

    /// Whether applied changes are kept in memory to answer `changes(since:)`.
    /// A daemon whose store answers instead can turn this off.
    package var keepsChangeLog: Bool {
        get { core.keepsLog }
        set {
            replicaState.core.keepsLog = newValue
            if !newValue { replicaState.core.logs = [:] }
        }
    }

    // MARK: - Editing

    /// Makes one change from the edits in `body`, applied at once and atomically.
    ///
    /// - Parameters:
    ///   - session: the control-API session making the edit; its undo stack
    ///     records the inverse (nil: not undoable).
    ///   - time: wall time in milliseconds since 1970 (informational).
    ///   - beforeCommit: called with the encoded change before it is committed;
    ///     if it throws (e.g. the store could not persist it), the edit is
    ///     rolled back and the error rethrown.
    /// - Returns: the closure's value and the change (nil if nothing changed).
    /// - Throws: what `body` or `beforeCommit` throws; the document is then unchanged.
    @discardableResult
    @inlinable
    package mutating func edit<Value>(
        session: String? = nil, at time: Int64, _ body: (inout ProjectEditor) throws -> Value,
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
        session: String?, at time: Int64, _ body: (inout ProjectEditor) throws -> Void,
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

    /// The changes a replica at `other` lacks, in causal order, or
    /// `.snapshotRequired` if some were compacted away. O(changes sent).
    package func changes(since other: VersionVector) -> ChangesSince {
        core.changes(since: other)
    }

    /// Applies decoded changes from other replicas (see `ChangeBatch.decode`).
    /// Changes whose dependencies are missing are held back, never dropped and
    /// never applied early; re-deliveries are ignored. All or nothing: if one
    /// change is invalid or `beforeCommit` throws, nothing of this call stays.
    /// - Throws: `DocumentError` for an invalid change, or what `beforeCommit` throws.
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
        // Handed on, not copied: the changes are read and moved out of their
        // array where they are, and a second holder made that a copy of
        // every change (a quarter of applying a batch).
        try replicaState.apply(consume received, origin: origin, limits: limits, beforeCommit: beforeCommit)
    }

    /// Decodes and applies a batch (`ChangeBatch.encode`).
    /// - Throws: `CodecError` for malformed bytes (nothing applied), `DocumentError`.
    @discardableResult
    package mutating func apply(
        batch bytes: ArraySlice<UInt8>, beforeCommit: (ApplyReport) throws -> Void = { _ in }
    ) throws -> ApplyReport {
        try apply(try ChangeBatch.decodeReceived(bytes), beforeCommit: beforeCommit)
    }

    /// Forgets logged changes covered by `horizon` (e.g. a stored snapshot every
    /// peer has acknowledged); replicas further behind then need a snapshot.
    package mutating func compactChangeLog(upTo horizon: VersionVector) {
        replicaState.core.compactLogs(upTo: horizon)
    }

    // MARK: - Reading

    /// The visible storyboard: what a user sees, in order, with labels. O(size).
    /// Every image and sound the project's fields hold, deleted shots and
    /// layers included (they can be restored): what its blobs are.
    package var mediaReferences: [MediaReference] { state.mediaReferences }

    /// Grows whenever a media value is written in this process (see `mediaReferences`).
    package var mediaWrites: Int { state.mediaWrites }

    package var view: ProjectView { ProjectView(state: state, createdAt: core.createdAt, updatedAt: core.updatedAt) }

    /// Whether an object exists and is shown.
    package func isVisible(_ id: OpID) -> Bool { state.isVisible(id) }

    /// The kind of an object, if it exists.
    package func kind(of id: OpID) -> ObjectKind? { state.object(id)?.kind }

    /// The container an object is placed in (the project root, a scene, a shot).
    package func container(of id: OpID) -> OpID? { state.object(id)?.container.value }

    /// A field's value (`.null` when unset).
    package func field(_ key: FieldKey, of id: OpID = .root) -> FieldValue { state.object(id)?.field(key) ?? .null }

    /// Whether an object is deleted (nil if it does not exist).
    package func isDeleted(_ id: OpID) -> Bool? { state.object(id)?.deleted.value }

    /// The tags on the project (`.root`) or a shot, in their shown spellings, sorted.
    package func tags(of object: OpID = .root) -> [String] { state.tagNames(of: object) }

    /// Set while the project itself is deleted for everyone (in the trash),
    /// with who deleted it and when. O(1).
    package var deletion: ProjectDeletion? { state.deletion }

    /// The project's named versions, by name (names taken away left out). O(names).
    package var versionNames: [VersionName] {
        state.versionNames.values.filter { $0.version != nil }.sorted { $0.name < $1.name }
    }

    /// The scenes shown, in order.
    package var scenes: [OpID] { state.children(of: .root) }

    /// The shots shown in a scene, in order.
    package func shots(in scene: OpID) -> [OpID] { state.children(of: scene) }

    /// The layers shown in a shot, in order.
    package func layers(in shot: OpID) -> [OpID] { state.children(of: shot) }

    /// The strokes shown on a layer, in z-order (creation order).
    package func strokes(in layer: OpID) -> [OpID] {
        state.strokeMap(of: layer).compactMap { $0.value.isErased ? nil : $0.key }.sorted()
    }

    /// The value under a stroke key, nil if absent or erased.
    package func stroke(_ key: OpID, in layer: OpID) -> StrokeValue? { state.strokeMap(of: layer)[key]?.visibleValue }

    /// Erased strokes of a layer (restorable), in z-order.
    package func erasedStrokes(in layer: OpID) -> [OpID] {
        state.strokeMap(of: layer).compactMap { $0.value.isErased ? $0.key : nil }.sorted()
    }

    /// The points of a stroke content.
    package func points(of content: OpID) -> PointsBlob? { state.content(content) }

    /// How many objects, point blobs and stroke entries the document holds
    /// (tombstones included).
    package var statistics: (objects: Int, contents: Int, strokeEntries: Int) {
        (state.objectCount, state.contentCount, state.allStrokes.values.reduce(0) { $0 + $1.count })
    }
}
