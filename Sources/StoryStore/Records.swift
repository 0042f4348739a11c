package import StoryCore

/// What kind of document a row holds.
package enum DocumentKind: Int64, Sendable, CustomStringConvertible {
    case project = 1
    case library = 2

    package var description: String { self == .project ? "project" : "library" }
}

/// A document as listed, without loading it.
package struct DocumentRecord: Hashable, Sendable {
    package var id: DocumentID
    package var kind: DocumentKind
    package var name: String?
    /// Milliseconds since 1970.
    package var created: Int64
    /// In the trash on this machine: deleted for everyone, or hidden here.
    package var isDeleted: Bool { isDeletedForEveryone || isHidden }
    /// Deleted for everyone who shares it: the project document's own flag
    /// (docs/crdt.md, "Deleting a project"), mirrored here whenever changes
    /// apply, so listings need not load the document.
    package var isDeletedForEveryone: Bool
    /// Who deleted it for everyone (the identity that signed the change), when known.
    package var deletedBy: PeerID?
    /// When it was deleted for everyone, on the deleting author's clock
    /// (milliseconds since 1970, the document's `deletedAt`).
    package var deletedTime: Int64?
    /// When this machine learned it was deleted for everyone (its own clock).
    package var deletedSeen: Int64?
    /// Hidden on this machine only: a reader's `projects delete`, or a
    /// library put aside by an upgrade. Never synced.
    package var isHidden: Bool
    /// When it was hidden here.
    package var hiddenAt: Int64?
    /// Changes stored, and the version vector of the stored snapshot (if any).
    package var changeCount: Int
    package var snapshotVersion: VersionVector?
    /// The peer this document was taken from, while its founding change has
    /// not arrived yet (it is synced with that peer until then).
    package var origin: String?

    /// Taken from a peer, its founding change not arrived (or not checked
    /// out) yet: an offer of a name, not a project. Listings leave it out
    /// until it is founded (a peer that offers 10,000 made-up projects
    /// shows none of them).
    package var isAwaitingFounding: Bool { origin != nil }
}

extension DocumentRecord {
    /// When the retention of a project deleted for everyone starts: the
    /// later of the delete's own time and when this machine learned of it,
    /// so neither a clock ahead elsewhere nor a long time offline shortens
    /// the time a person here has to notice it. Nil when not deleted for everyone.
    package var retentionStart: Int64? {
        guard isDeletedForEveryone else { return nil }
        let times = [deletedTime, deletedSeen].compactMap { $0 }
        return times.max()
    }
}

/// What this machine remembers of a project it purged: enough to tell an
/// offer of the same project that has nothing new (ignored) from one that
/// has changes made since (taken back, into the trash if it is still
/// deleted there).
package struct PurgedRecord: Hashable, Sendable {
    package var id: DocumentID
    package var kind: DocumentKind
    package var name: String?
    /// What it held when it was purged.
    package var version: VersionVector
    /// It was hidden here (it stays hidden if it comes back).
    package var wasHidden: Bool
    /// Milliseconds since 1970.
    package var purged: Int64
}

/// A configured peer, or one that tried to connect and awaits acceptance.
package struct PeerRecord: Hashable, Sendable {
    package enum State: String, Sendable {
        case configured, pending
    }

    /// The peer id (base32 of the SHA-256 of its certificate).
    package var id: PeerID
    package var name: String?
    /// Where to dial it (`host:port`), for configured peers: the first of `addresses`.
    package var address: String?
    /// Further addresses to try in turn when `address` does not answer.
    package var otherAddresses: [String]
    package var state: State
    package var added: Int64
    package var lastSeen: Int64?
    /// Where it last connected from.
    package var lastAddress: String?
    /// The name it gave itself in its last hello (its `--name`); kept when it disconnects.
    package var announcedName: String?
    /// Its offers dropped, oldest first, to keep at most
    /// `StoreOptions.maximumOffersPerPeer` waiting for a user.
    package var offersDropped: Int = 0

    package init(
        id: PeerID, name: String? = nil, address: String? = nil, otherAddresses: [String] = [], state: State, added: Int64,
        lastSeen: Int64? = nil, lastAddress: String? = nil, announcedName: String? = nil, offersDropped: Int = 0
    ) {
        self.offersDropped = offersDropped
        self.id = id
        self.name = name
        self.address = address
        self.otherAddresses = address == nil ? [] : otherAddresses
        self.state = state
        self.added = added
        self.lastSeen = lastSeen
        self.lastAddress = lastAddress
        self.announcedName = announcedName
    }

    /// Every address to dial it at, in the order they are tried.
    package var addresses: [String] { (address.map { [$0] } ?? []) + otherAddresses }
}

/// How a document is shared with a peer, in the words of the control API:
/// read-write is the `editor` role, read-only the `reader` role.
package enum ShareMode: String, Sendable {
    /// Changes flow both ways.
    case readWrite = "read-write"
    /// The peer receives changes; its changes to this document are refused by every daemon.
    case readOnly = "read-only"

    /// The role this mode gives.
    package var role: Role { self == .readWrite ? .editor : .reader }

    /// The mode of a role (the owner's is read-write; nobody's is none).
    package init?(role: Role) {
        switch role {
        case .owner, .editor: self = .readWrite
        case .reader: self = .readOnly
        case .none: return nil
        }
    }
}

/// A member of a document's access list, as the store mirrors it.
package struct MemberRecord: Hashable, Sendable {
    package var document: DocumentID
    package var peer: PeerID
    package var role: Role

    package init(document: DocumentID, peer: PeerID, role: Role) {
        self.document = document
        self.peer = peer
        self.role = role
    }
}

/// A document a peer offered that this daemon did not take (yet).
package struct OfferRecord: Hashable, Sendable {
    package var document: DocumentID
    package var peer: PeerID
    package var kind: DocumentKind
    package var name: String?
    /// Milliseconds since 1970.
    package var received: Int64
}

extension DocumentID {
    var blob: SQLValue {
        var bytes: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift))) }
        return .blob(bytes)
    }

    init?(blob bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(high: high, low: low)
    }
}

extension ReplicaID {
    /// SQLite integers are signed: ids are stored bit for bit.
    var sql: SQLValue { .integer(Int64(bitPattern: rawValue)) }

    init(sql value: Int64) {
        self.init(UInt64(bitPattern: value))
    }
}
