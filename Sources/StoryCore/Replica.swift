/// A document as one replica holds it: the shared machinery of
/// `ProjectDocument` and `LibraryDocument` (edits, undo, sync).
struct Replica<Builder: ChangeBuilder>: Sendable {
    var core: ReplicaCore
    var state: Builder.State
    private var history = UndoHistory()

    init(core: ReplicaCore, state: Builder.State) {
        self.core = core
        self.state = state
    }

    /// Not generic in what the edit returns, so callers in other modules run
    /// specialized code (the public generic `edit` is an inlinable shim).
    mutating func edit(
        session: String?, at time: Int64, _ body: (inout Builder) throws -> Void,
        beforeCommit: (EncodedChange) throws -> Void
    ) throws -> EncodedChange? {
        let (change, journal) = try core.edit(
            &state, placeholder: Builder.placeholder, builder: Builder.self, time: time, keepingJournal: session != nil,
            body, beforeCommit: beforeCommit)
        if let session, change != nil {
            history.recordEdit(Builder.undoRecord(journal, in: state), session: session)
        }
        return change
    }

    mutating func undo(session: String, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> EncodedChange? {
        try replay(at: time, popping: { $0.popUndo(session: session) }, beforeCommit: beforeCommit) {
            $0.pushRedo($1, session: session)
        }
    }

    mutating func redo(session: String, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> EncodedChange? {
        try replay(at: time, popping: { $0.popRedo(session: session) }, beforeCommit: beforeCommit) {
            $0.pushUndo($1, session: session)
        }
    }

    func canUndo(session: String) -> Bool { history.canUndo(session: session) }

    func canRedo(session: String) -> Bool { history.canRedo(session: session) }

    mutating func endSession(_ session: String) { history.forget(session: session) }

    /// Pops records until one still has something to invert, and applies it.
    private mutating func replay(
        at time: Int64, popping pop: (inout UndoHistory) -> UndoRecord?,
        beforeCommit: (EncodedChange) throws -> Void, push: (inout UndoHistory, UndoRecord) -> Void
    ) throws -> EncodedChange? {
        while let record = pop(&history) {
            let (change, journal) = try core.edit(
                &state, placeholder: Builder.placeholder, builder: Builder.self, time: time, keepingJournal: true,
                { editor in try editor.invert(record) }, beforeCommit: beforeCommit)
            if let change {
                push(&history, Builder.undoRecord(journal, in: state))
                return change
            }
        }
        return nil
    }

    mutating func apply(_ changes: [(EncodedChange, Change)], beforeCommit: (ApplyReport) throws -> Void) throws -> ApplyReport {
        try core.integrate(changes, into: &state, beforeCommit: beforeCommit)
    }

    /// Merges a decoded snapshot's state and header, then applies held-back
    /// changes that became applicable. Returns the errors of held-back changes
    /// that turned out invalid (they are dropped).
    @discardableResult
    mutating func merge(_ other: Builder.State, header: SnapshotHeader) -> [any Error] {
        state.merge(other)
        core.merge(
            versionVector: header.versionVector, clock: header.clock, lastCounters: header.lastCounters,
            createdAt: header.createdAt, updatedAt: header.updatedAt)
        var rejected: [any Error] = []
        // Each failure drops one change from the buffer, so this ends.
        for _ in 0...core.pendingCount {
            do {
                _ = try core.integrate([], into: &state, beforeCommit: { _ in })
                break
            } catch {
                rejected.append(error)
            }
        }
        return rejected
    }

    func header(kind: SnapshotKind, document: DocumentID) -> SnapshotHeader {
        SnapshotHeader(
            kind: kind, document: document, versionVector: core.versionVector, clock: core.clock,
            lastCounters: core.lastCounters, createdAt: core.createdAt, updatedAt: core.updatedAt)
    }

    static func loaded(from header: SnapshotHeader, state: Builder.State, replica: ReplicaID) -> Replica {
        var core = ReplicaCore(replica: replica)
        core.merge(
            versionVector: header.versionVector, clock: header.clock, lastCounters: header.lastCounters,
            createdAt: header.createdAt, updatedAt: header.updatedAt)
        return Replica(core: core, state: state)
    }
}
