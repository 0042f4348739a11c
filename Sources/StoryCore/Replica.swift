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
        try core.checkLocalWrite()
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

    mutating func apply(
        _ changes: [(EncodedChange, Change)], origin: ChangeOrigin, limits: HeldBackLimits?,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport {
        try core.integrate(changes, origin: origin, limits: limits, into: &state, beforeCommit: beforeCommit)
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
        state.merge(other)
        core.merge(header)
        var rejected: [any Error] = []
        // Each failure drops one change from the buffer, so this ends.
        for _ in 0...core.pendingCount {
            do {
                _ = try core.integrate([], origin: .store, limits: nil, into: &state, beforeCommit: { _ in })
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
