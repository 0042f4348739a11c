/// Authorship and access of a signed ProjectDocument (docs/crdt.md, "Authorship and access").
extension ProjectDocument {
    /// An empty signed document whose local changes `author` makes (a
    /// document received from a peer starts so, and takes its founding
    /// change from the peer).
    public init(id: DocumentID, author: LocalAuthor) {
        self.init(id: id, replicaState: Replica(core: ReplicaCore(author: author, document: id), state: ProjectState()))
    }

    /// Founds a new signed document owned by `author`: the id derives from
    /// the author's identity and `salt`, and the first change says so.
    /// `beforeCommit` gets the id and the founding change to store.
    public static func found(
        by author: LocalAuthor, at time: Int64, salt: UInt128 = .random(in: .min ... .max),
        beforeCommit: (DocumentID, EncodedChange) throws -> Void = { _, _ in }
    ) throws -> (document: ProjectDocument, change: EncodedChange) {
        let (id, replica, change) = try Replica<ProjectEditor>.found(
            by: author, state: ProjectState(), at: time, salt: salt, beforeCommit: beforeCommit)
        return (ProjectDocument(id: id, replicaState: replica), change)
    }

    /// Whether changes are signed and checked against the access list.
    public var isSigned: Bool { core.isSigned }

    /// Whether the document has an owner (its founding change was applied).
    public var isFounded: Bool { core.access.isFounded }

    /// Founded by the local upgrade of a document made before signed
    /// authorship: it never syncs (`copy` makes one that can).
    public var isLegacy: Bool { core.access.isLegacy }

    /// The identity that founded the document.
    public var owner: PeerID? { core.access.owner }

    /// What `peer` may do now.
    public func role(of peer: PeerID) -> Role { core.access.role(of: peer) }

    /// What this replica's own identity may do (an open document: anything).
    public var localRole: Role { core.author.map { core.access.role(of: $0.peer) } ?? .owner }

    /// The identity that signs a replica's changes (nil: unknown, or an open document).
    public func author(of replica: ReplicaID) -> PeerID? {
        replica == core.replica ? core.author?.identity.peer : core.authors[replica]?.peer
    }

    /// Every member with its role, the owner first.
    public var members: [(peer: PeerID, role: Role)] { core.access.members }

    /// Gives `peer` a role, or takes its rights away with `.none`, as a signed
    /// change checked exactly as every peer will check it.
    /// - Throws: `DocumentError(.forbidden)` if this identity may not, or what
    ///   `beforeCommit` throws; nothing changes then.
    @discardableResult
    public mutating func setAccess(
        _ role: Role, for peer: PeerID, at time: Int64, beforeCommit: (EncodedChange) throws -> Void = { _ in }
    ) throws -> EncodedChange {
        try replicaState.setAccess(role, for: peer, at: time, beforeCommit: beforeCommit)
    }

    /// Takes the content of `other` as the baseline of this newly founded
    /// document (a copy): peers receive it as a snapshot.
    public mutating func adoptContent(of other: ProjectDocument) {
        replicaState.adoptBaseline(other.state, clock: other.core.clock)
    }

    /// Makes a document made before signed authorship this identity's own,
    /// as a legacy document: editable here, never synced (the id does not
    /// derive from the owner, so no peer could check the claim).
    /// - Throws: `DocumentError(.invalidOperation)` if it is open or founded already.
    public mutating func upgradeToLegacyOwnership() throws(DocumentError) {
        guard let author = core.author, !core.access.isFounded else {
            throw DocumentError(.invalidOperation, "only an unfounded signed document can be upgraded")
        }
        replicaState.core.access.owner = author.identity.peer
        replicaState.core.access.isLegacy = true
    }

    /// Bytes held back (waiting for dependencies) that came from `origin`.
    public func heldBackBytes(from origin: ChangeOrigin) -> Int { core.pendingBytes(from: origin) }

    /// Bytes held back in all.
    public var heldBackBytes: Int { core.pendingBytes }

    /// Forgets the held-back changes that came from `origin`.
    public mutating func dropHeldBack(from origin: ChangeOrigin) { replicaState.core.dropPending(from: origin) }
}
