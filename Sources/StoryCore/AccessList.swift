/// What an identity may do with a document.
package enum Role: UInt8, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not a member: receives nothing, may change nothing.
    case none = 0
    /// Receives the document; its changes are refused.
    case reader = 1
    /// Receives and changes the document; may share it (give rights, not take them).
    case editor = 2
    /// Founded the document (its id derives from the owner's identity); may do anything.
    case owner = 3

    package static func < (lhs: Role, rhs: Role) -> Bool { lhs.rawValue < rhs.rawValue }

    package var description: String {
        switch self {
        case .none: "none"
        case .reader: "reader"
        case .editor: "editor"
        case .owner: "owner"
        }
    }

    /// Parses `description`.
    package init?(name: String) {
        guard let role = Role.allCases.first(where: { $0.description == name }) else { return nil }
        self = role
    }

    /// Whether the role may change the document.
    package var canWrite: Bool { self >= .editor }
}

/// One `setAccess` operation as the access list keeps it.
struct AccessGrant: Hashable, Sendable {
    /// The operation's id (its replica is the author's).
    var id: OpID
    /// The sequence number of the change holding it.
    var seq: UInt64
    var author: PeerID
    var target: PeerID
    var role: Role
}

/// Who may do what with a document: replicated state of the document itself
/// (DESIGN.md, "Rights are checked where a change lands").
///
/// The owner is the identity whose founding change's salt derives the
/// document id, so nobody else can claim ownership. Every other member's role
/// is the last (by op id) `setAccess` for it among those in the causal past of
/// the point asked about, so every replica computes the same role for the
/// same change. Grants are kept for good: they are few, and each one decides
/// rights at later causal points.
struct AccessList: Hashable, Sendable {
    var owner: PeerID?
    /// The replica whose first change founded the document (nil when legacy).
    var ownerReplica: ReplicaID?
    var salt: UInt128?
    /// Founded by a local upgrade of a document made before signed
    /// authorship: the id does not derive from the owner, so it never syncs.
    var isLegacy = false
    private(set) var grants: [PeerID: [AccessGrant]] = [:]

    var isFounded: Bool { owner != nil }

    var allGrants: [AccessGrant] { grants.values.flatMap { $0 }.sorted { $0.id < $1.id } }

    /// The role of `peer` after everything applied (`vector` nil), or at the
    /// causal point `vector`.
    func role(of peer: PeerID, at vector: VersionVector? = nil) -> Role {
        if peer == owner, vector.map({ vector in ownerReplica.map { vector[$0] >= 1 } ?? true }) ?? true {
            return .owner
        }
        guard let list = grants[peer] else { return .none }
        var best: AccessGrant?
        for grant in list where vector.map({ $0[grant.id.replica] >= grant.seq }) ?? true {
            if best.map({ grant.id > $0.id }) ?? true { best = grant }
        }
        return best?.role ?? .none
    }

    /// Every identity with a role above none now, the owner first.
    var members: [(peer: PeerID, role: Role)] {
        var result: [(PeerID, Role)] = []
        if let owner { result.append((owner, .owner)) }
        for peer in grants.keys.sorted() where peer != owner {
            let role = role(of: peer)
            if role > .none { result.append((peer, role)) }
        }
        return result
    }

    /// Checks that `author` may set `target`'s role to `role` at `vector`.
    /// - Throws: `DocumentError(.forbidden)`.
    func check(_ role: Role, for target: PeerID, by author: PeerID, at vector: VersionVector) throws(DocumentError) {
        guard let owner else { throw DocumentError(.forbidden, "the document has no owner yet") }
        guard target != owner else { throw DocumentError(.forbidden, "the owner's rights cannot be changed") }
        guard role != .owner else { throw DocumentError(.forbidden, "ownership cannot be given") }
        switch self.role(of: author, at: vector) {
        case .owner:
            return
        case .editor:
            guard role > self.role(of: target, at: vector) else {
                throw DocumentError(.forbidden, "an editor may give rights but not take them (only the owner may)")
            }
        case .reader, .none:
            throw DocumentError(.forbidden, "only the owner and editors may share")
        }
    }

    mutating func add(_ grant: AccessGrant) {
        grants[grant.target, default: []].append(grant)
    }

    /// Joins another replica's list (grants are facts; the owner must agree).
    mutating func merge(_ other: AccessList) throws(DocumentError) {
        if let theirs = other.owner {
            if let owner, owner != theirs || ownerReplica != other.ownerReplica {
                throw DocumentError(.invalidSnapshot, "the snapshot names another owner")
            }
            owner = theirs
            ownerReplica = other.ownerReplica
            salt = other.salt
            isLegacy = other.isLegacy
        }
        for (target, list) in other.grants {
            var mine = grants[target] ?? []
            let known = Set(mine.map(\.id))
            mine += list.filter { !known.contains($0.id) }
            grants[target] = mine
        }
    }
}
