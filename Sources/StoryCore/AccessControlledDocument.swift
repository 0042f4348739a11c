/// What a signed document says about its authorship and access list, read
/// the same way for projects and libraries (docs/crdt.md, "Authorship and
/// access"). Changing it is each document's own API (`setAccess`).
public protocol AccessControlledDocument {
    /// The replica's authorship and access bookkeeping, read-only.
    var accessState: AccessState { get }
}

/// A read-only view of a replica's authors, chains and access list.
public struct AccessState: Sendable {
    let core: ReplicaCore
}

extension AccessControlledDocument {
    /// Whether changes are signed and checked against the access list.
    public var isSigned: Bool { accessState.core.isSigned }

    /// Whether the document has an owner (its founding change was applied).
    public var isFounded: Bool { accessState.core.access.isFounded }

    /// Founded by the local upgrade of a document made before signed
    /// authorship: it never syncs (`copy` makes one that can).
    public var isLegacy: Bool { accessState.core.access.isLegacy }

    /// The identity that founded the document.
    public var owner: PeerID? { accessState.core.access.owner }

    /// What `peer` may do now.
    public func role(of peer: PeerID) -> Role { accessState.core.access.role(of: peer) }

    /// What this replica's own identity may do (an open document: anything).
    public var localRole: Role {
        let core = accessState.core
        return core.author.map { core.access.role(of: $0.peer) } ?? .owner
    }

    /// The identity that signs a replica's changes (nil: unknown, or an open document).
    public func author(of replica: ReplicaID) -> PeerID? {
        let core = accessState.core
        return replica == core.replica ? core.author?.identity.peer : core.authors[replica]?.peer
    }

    /// Every member with its role, the owner first.
    public var members: [(peer: PeerID, role: Role)] { accessState.core.access.members }

    /// Bytes held back (waiting for dependencies) that came from `origin`.
    public func heldBackBytes(from origin: ChangeOrigin) -> Int { accessState.core.pendingBytes(from: origin) }

    /// Bytes held back in all.
    public var heldBackBytes: Int { accessState.core.pendingBytes }
}
