/// A document as one replica holds it: the shared machinery of
/// `ProjectDocument` and `LibraryDocument` (edits, undo, sync, access).
struct Replica<Builder: ChangeBuilder>: Sendable {
    var core: ReplicaCore
    var state: Builder.State
    private var history = UndoHistory()

    init(core: ReplicaCore, state: Builder.State) {
        self.core = core
        self.state = state
    }

    /// Not generic in what the edit returns, so callers in other modules run
    /// specialized code (the generic `edit` is an inlinable shim).
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

    mutating func undo(session: String, older: Bool, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> UndoOutcome {
        try replay(from: .undo, to: .redo, session: session, older: older, at: time, beforeCommit: beforeCommit)
    }

    mutating func redo(session: String, older: Bool, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> UndoOutcome {
        try replay(from: .redo, to: .undo, session: session, older: older, at: time, beforeCommit: beforeCommit)
    }

    func canUndo(session: String) -> Bool { history.canUndo(session: session) }

    func canRedo(session: String) -> Bool { history.canRedo(session: session) }

    mutating func endSession(_ session: String) { history.forget(session: session) }

    /// Takes back the record on top of `stack` and pushes its inverse on
    /// `other`. A record none of whose registers is still as it left them
    /// (others wrote every one since) is overruled: it stays and nothing is
    /// done, so an undo never reaches past it to an older, unrelated edit;
    /// with `older`, overruled records are dropped until one can be taken back.
    private mutating func replay(
        from stack: UndoStack, to other: UndoStack, session: String, older: Bool, at time: Int64,
        beforeCommit: (EncodedChange) throws -> Void
    ) throws -> UndoOutcome {
        try core.checkLocalWrite()
        var passedOver: [String] = []
        // Each pass pops one record, so this ends.
        while let record = history.top(stack, session: session) {
            var own: Set<UndoTarget> = []
            let overwriters = record.items.compactMap { item -> OpID? in
                let stamp = Builder.stamp(of: item.target, in: state)
                if stamp == item.stamp { own.insert(item.target) }
                return stamp == item.stamp ? nil : (stamp ?? OpID(counter: 0, replica: .reserved))
            }
            let by = Array(Set(overwriters.map(\.replica).filter { $0 != .reserved && $0 != core.replica })).sorted()
            if overwriters.count == record.items.count {
                guard older else {
                    return UndoOutcome(
                        summary: record.summary, isOverruled: true, overruledBy: by, partsLeftAlone: overwriters.count,
                        passedOver: passedOver)
                }
                history.pop(stack, session: session)
                passedOver.append(record.summary)
                continue
            }
            let (change, journal) = try core.edit(
                &state, placeholder: Builder.placeholder, builder: Builder.self, time: time, keepingJournal: true,
                { editor in try editor.invert(record) }, beforeCommit: beforeCommit)
            history.pop(stack, session: session)
            guard let change else {
                passedOver.append(record.summary)
                continue
            }
            var inverse = Builder.undoRecord(journal, in: state)
            inverse.summary = record.summary
            // Older records of this stack that wrote what was just put back own that write now.
            var restamps: [UndoTarget: (from: OpID, to: OpID)] = [:]
            for item in record.items where own.contains(item.target) {
                guard let from = item.previousStamp, let to = Builder.stamp(of: item.target, in: state), to != item.stamp else { continue }
                restamps[item.target] = (from, to)
            }
            history.restamp(stack, session: session, restamps)
            history.push(inverse, on: other, session: session)
            return UndoOutcome(change: change, summary: record.summary, overruledBy: by, partsLeftAlone: overwriters.count, passedOver: passedOver)
        }
        return UndoOutcome(passedOver: passedOver)
    }

    // MARK: - Stored undo history

    /// Whether undo history changes are collected for a store.
    var recordsUndoStorage: Bool {
        get { history.isRecordingStorage }
        set { history.isRecordingStorage = newValue }
    }

    mutating func takeUndoStorageChanges() -> [UndoStorageChange] { history.takeStorageChanges() }

    mutating func restoreUndo(session: String, stack: UndoStack, records: [(position: UInt64, bytes: [UInt8])]) throws(CodecError) {
        try history.restore(session: session, stack: stack, records: records)
    }

    mutating func apply(
        _ received: consuming ReceivedChanges, origin: ChangeOrigin, limits: HeldBackLimits?,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport {
        try core.integrate(consume received, origin: origin, limits: limits, into: &state, beforeCommit: beforeCommit)
    }

    // MARK: - Access

    /// Founds an empty signed document: its id derives from the author's
    /// identity and a random salt; its first change makes the author the owner.
    static func found(
        by author: LocalAuthor, state: Builder.State, at time: Int64, salt: UInt128,
        beforeCommit: (DocumentID, EncodedChange) throws -> Void
    ) throws -> (DocumentID, Replica, EncodedChange) {
        let id = Authorship.documentID(owner: author.peer, salt: salt, crypto: author.crypto)
        var replica = Replica(core: ReplicaCore(author: author, document: id), state: state)
        let (change, _) = try replica.core.commitAccess([.genesis(salt: salt)], at: time) { try beforeCommit(id, $0) }
        return (id, replica, change)
    }

    /// Gives `peer` a role (or takes it away with `.none`) as a signed change.
    mutating func setAccess(
        _ role: Role, for peer: PeerID, at time: Int64, beforeCommit: (EncodedChange) throws -> Void
    ) throws -> EncodedChange {
        try core.commitAccess([.setAccess(peer: peer, role: role)], at: time, beforeCommit: beforeCommit).0
    }

    /// Takes another document's content as this (just founded) document's
    /// baseline: a pseudo-replica entry in the version vector stands for it,
    /// so a peer that lacks it gets a snapshot (no change carries it).
    mutating func adoptBaseline(_ content: Builder.State, clock: UInt64) {
        guard let author = core.author else { return }
        state.merge(content)
        core.versionVector[Authorship.baselineReplica(of: core.document, crypto: author.crypto)] = 1
        core.clock = max(core.clock, clock)
    }

    // MARK: - Snapshots

    /// Merges a peer's snapshot (state and header), then applies held-back
    /// changes that became applicable. A signed document first checks the
    /// authorship it claims (`ReplicaCore.verify`). Returns the errors of
    /// held-back changes that turned out invalid (they are dropped).
    /// - Throws: `DocumentError` if the snapshot's authorship does not check out; nothing changes then.
    @discardableResult
    mutating func merge(_ other: Builder.State, header: SnapshotHeader) throws -> [any Error] {
        var header = header
        try fillAuthors(&header, verifying: true)
        var access = core.access
        try access.merge(header.access)
        core.access = access
        state.merge(other, ours: core.versionVector, theirs: header.versionVector, known: core.lastCounters)
        core.merge(header)
        var rejected: [any Error] = []
        // Each failure drops one change from the buffer, so this ends.
        for _ in 0...core.pendingCount {
            do {
                _ = try core.integrate(ReceivedChanges(arrivals: []), origin: .store, limits: nil, into: &state, beforeCommit: { _ in })
                break
            } catch {
                rejected.append(error)
            }
        }
        return rejected
    }

    /// Completes the author records a snapshot carries (it stores only the
    /// certificate and nonce), checking them first when `verifying`.
    private func fillAuthors(_ header: inout SnapshotHeader, verifying: Bool) throws(DocumentError) {
        guard let author = core.author else { return }
        if verifying { try core.verify(header) }
        for (replica, record) in header.authors {
            if let known = core.authors[replica] {
                header.authors[replica] = known
            } else {
                header.authors[replica] = try Authorship.verify(
                    AuthorDeclaration(certificate: record.certificate, nonce: record.nonce), of: replica, crypto: author.crypto)
            }
        }
    }

    func header(kind: SnapshotKind, document: DocumentID) -> SnapshotHeader {
        SnapshotHeader(
            kind: kind, document: document, versionVector: core.versionVector, clock: core.clock,
            lastCounters: core.lastCounters, createdAt: core.createdAt, updatedAt: core.updatedAt, authors: core.authors,
            heads: core.heads, frontiers: core.frontiers, access: core.access)
    }

    /// A document loaded from a snapshot this daemon stored (trusted: its
    /// authorship was checked before it was stored).
    static func loaded(from header: SnapshotHeader, state: Builder.State, core: ReplicaCore) throws -> Replica {
        var replica = Replica(core: core, state: state)
        var header = header
        try replica.fillAuthors(&header, verifying: false)
        replica.core.access = header.access
        replica.core.merge(header)
        return replica
    }
}
