/// What a signed document says about its authorship and access list, read
/// the same way for projects and libraries (docs/crdt.md, "Authorship and
/// access"). Changing it is each document's own API (`setAccess`).
package protocol AccessControlledDocument {
    /// The replica's authorship and access bookkeeping, read-only.
    var accessState: AccessState { get }
}

/// A read-only view of a replica's authors, chains and access list.
package struct AccessState: Sendable {
    let core: ReplicaCore
}

extension AccessControlledDocument {
    /// Whether changes are signed and checked against the access list.
    package var isSigned: Bool { accessState.core.isSigned }

    /// Whether the document has an owner (its founding change was applied).
    package var isFounded: Bool { accessState.core.access.isFounded }

    /// Founded by the local upgrade of a document made before signed
    /// authorship: it never syncs (`copy` makes one that can).
    package var isLegacy: Bool { accessState.core.access.isLegacy }

    /// The identity that founded the document.
    package var owner: PeerID? { accessState.core.access.owner }

    /// What `peer` may do now.
    package func role(of peer: PeerID) -> Role { accessState.core.access.role(of: peer) }

    /// What this replica's own identity may do (an open document: anything).
    package var localRole: Role {
        let core = accessState.core
        return core.author.map { core.access.role(of: $0.peer) } ?? .owner
    }

    /// The identity that signs a replica's changes (nil: unknown, or an open document).
    package func author(of replica: ReplicaID) -> PeerID? {
        let core = accessState.core
        return replica == core.replica ? core.author?.identity.peer : core.authors[replica]?.peer
    }

    /// Every member with its role, the owner first.
    package var members: [(peer: PeerID, role: Role)] { accessState.core.access.members }

    /// Bytes held back (waiting for dependencies) that came from `origin`.
    package func heldBackBytes(from origin: ChangeOrigin) -> Int { accessState.core.pendingBytes(from: origin) }

    /// Bytes held back in all.
    package var heldBackBytes: Int { accessState.core.pendingBytes }
}
