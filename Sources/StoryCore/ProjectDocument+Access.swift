/// Authorship and access of a signed ProjectDocument (docs/crdt.md, "Authorship and access").
extension ProjectDocument: AccessControlledDocument {
    package var accessState: AccessState { AccessState(core: core) }

    /// An empty signed document whose local changes `author` makes (a
    /// document received from a peer starts so, and takes its founding
    /// change from the peer).
    package init(id: DocumentID, author: LocalAuthor) {
        self.init(id: id, replicaState: Replica(core: ReplicaCore(author: author, document: id), state: ProjectState()))
    }

    /// Founds a new signed document owned by `author`: the id derives from
    /// the author's identity and `salt`, and the first change says so.
    /// `beforeCommit` gets the id and the founding change to store.
    package static func found(
        by author: LocalAuthor, at time: Int64, salt: UInt128 = .random(in: .min ... .max),
        beforeCommit: (DocumentID, EncodedChange) throws -> Void = { _, _ in }
    ) throws -> (document: ProjectDocument, change: EncodedChange) {
        let (id, replica, change) = try Replica<ProjectEditor>.found(
            by: author, state: ProjectState(), at: time, salt: salt, beforeCommit: beforeCommit)
        return (ProjectDocument(id: id, replicaState: replica), change)
    }

    /// Gives `peer` a role, or takes its rights away with `.none`, as a signed
    /// change checked exactly as every peer will check it.
    /// - Throws: `DocumentError(.forbidden)` if this identity may not, or what
    ///   `beforeCommit` throws; nothing changes then.
    @discardableResult
    package mutating func setAccess(
        _ role: Role, for peer: PeerID, at time: Int64, beforeCommit: (EncodedChange) throws -> Void = { _ in }
    ) throws -> EncodedChange {
        try replicaState.setAccess(role, for: peer, at: time, beforeCommit: beforeCommit)
    }

    /// Takes the content of `other` as the baseline of this newly founded
    /// document (a copy): peers receive it as a snapshot.
    package mutating func adoptContent(of other: ProjectDocument) {
        replicaState.adoptBaseline(other.state, clock: other.core.clock)
    }

    /// Makes a document made before signed authorship this identity's own,
    /// as a legacy document: editable here, never synced (the id does not
    /// derive from the owner, so no peer could check the claim).
    /// - Throws: `DocumentError(.invalidOperation)` if it is open or founded already.
    package mutating func upgradeToLegacyOwnership() throws(DocumentError) {
        try replicaState.core.upgradeToLegacyOwnership()
    }

    /// Forgets the held-back changes that came from `origin`.
    package mutating func dropHeldBack(from origin: ChangeOrigin) { replicaState.core.dropPending(from: origin) }
}
