import Foundation
package import StoryCore

/// Who may do what with a document: shares, members and offers.
extension Store {
    /// Gives `peer` a role in a document (`.none` takes its rights away), as
    /// a signed change every peer checks. Sharing is an act of a daemon
    /// entitled to it: the owner, or an editor giving rights.
    /// - Throws: `DocumentError(.forbidden)` when this daemon may not,
    ///   `DocumentError(.invalidOperation)` for a legacy document.
    package func share(_ id: DocumentID, with peer: PeerID, role: Role, at time: Int64) throws {
        let current = try loadedDocument(id)
        guard !current.isLegacy else {
            throw DocumentError(
                .invalidOperation, "this document was made before signed authorship and cannot be shared; share a copy of it")
        }
        var members = current.members.filter { $0.peer != peer }
        if role > .none { members.append((peer, role)) }
        _ = try mutate(id) { document in
            try document.setAccess(role, for: peer, at: time) { change in
                try self.database.connection.transaction {
                    try self.database.append([change], to: id)
                    try self.database.setMembers(members, of: id)
                    if role == .none { try self.database.forgetAcknowledged(id, by: peer) }
                }
            }
        }
        // A peer that loses its rights is told when it next advertises the
        // document (it may be away now): the version that says so is kept.
        let previous = current.members.first { $0.peer == peer }?.role ?? .none
        if role == .none, previous > .none {
            try database.setFarewell(try loadedDocument(id).versionVector, of: id, to: peer)
        } else if role > .none {
            try database.setFarewell(nil, of: id, to: peer)
        }
        noteChanges(1, in: id)
        publish(.accessChanged(id))
    }

    /// The version that took `peer`'s rights to a document while it may not
    /// have heard, if any; `forget` once it has it.
    package func farewell(of document: DocumentID, to peer: PeerID) throws -> VersionVector? { try database.farewell(of: document, to: peer) }

    package func forgetFarewell(of document: DocumentID, to peer: PeerID) throws { try database.setFarewell(nil, of: document, to: peer) }

    /// For each document: its record (nil if not here), this daemon's role and
    /// whether it was made before signed authorship; one call for a folder's worth.
    package func shareability(of ids: [DocumentID]) throws -> [(id: DocumentID, record: DocumentRecord?, role: Role, isLegacy: Bool)] {
        try ids.map { id in
            guard let record = try database.document(id), !record.isDeleted else { return (id, nil, .none, false) }
            let document = try loadedDocument(id)
            return (id, record, document.localRole, document.isLegacy)
        }
    }

    /// The members of one document or of all, as the access lists say.
    package func members(of document: DocumentID? = nil) throws -> [MemberRecord] { try database.members(of: document) }

    /// What this daemon may do with a document.
    package func localRole(of id: DocumentID) throws -> Role { try loadedDocument(id).localRole }

    /// The documents to sync with a peer: those it is a member of, and those
    /// taken from it whose founding change has not arrived yet. Projects in
    /// the trash too: deleted for everyone, a project still syncs, so a
    /// restore (or an edit) made anywhere arrives; hidden here, it still
    /// follows the others. (A legacy document has no member but this daemon.)
    package func sharedDocuments(with peer: PeerID) throws -> [(record: DocumentRecord, role: Role)] {
        var result: [(DocumentRecord, Role)] = []
        var seen: Set<DocumentID> = []
        for member in try database.documents(sharedWith: peer) {
            guard let record = try database.document(member.document) else { continue }
            seen.insert(record.id)
            result.append((record, member.role))
        }
        for record in try database.documents() where record.origin == peer.description && !seen.contains(record.id) {
            result.append((record, .none))
        }
        return result
    }

    /// How one document is synced with `peer`, by the rule of
    /// `sharedDocuments(with:)`: with its role as a member, with `.none` for
    /// the peer the document was taken from; nil when it is not synced with it.
    package func sharedRole(of record: DocumentRecord, with peer: PeerID) throws -> Role? {
        if let member = try database.members(of: record.id).first(where: { $0.peer == peer }) { return member.role }
        return record.origin == peer.description ? Role.none : nil
    }

    /// Keeps an offer this daemon did not take (not accepting offers from that peer).
    package func recordOffer(_ document: DocumentID, kind: DocumentKind, name: String?, from peer: PeerID, at time: Int64) throws {
        try database.recordOffer(OfferRecord(document: document, peer: peer, kind: kind, name: name, received: time))
    }

    /// Drops a peer's oldest offers beyond `maximumOffersPerPeer` (they are
    /// counted on its record).
    /// - Returns: how many were dropped.
    @discardableResult
    package func pruneOffers(from peer: PeerID) throws -> Int {
        try database.pruneOffers(from: peer, keeping: options.maximumOffersPerPeer)
    }

    /// Offers kept for a user to decide (not declined), oldest first.
    package func offers() throws -> [OfferRecord] { try database.offers() }

    /// Declines an offer: it is not listed, and the peer offering it again is ignored.
    /// - Throws: `StoreError(.notFound)` if there is no such offer.
    package func declineOffer(of document: DocumentID, from peer: PeerID) throws {
        guard try database.offers().contains(where: { $0.document == document && $0.peer == peer }) else {
            throw StoreError(.notFound, "\(peer.short) offers no document \(document)", path: path)
        }
        try database.declineOffer(of: document, from: peer)
    }

    /// Whether a user declined this peer's offer of this document.
    package func isDeclined(_ document: DocumentID, from peer: PeerID) throws -> Bool { try database.isDeclined(document, from: peer) }

    /// Per peer set at run time: whether what it shares is taken without asking.
    package func autoAcceptSettings() throws -> [PeerID: Bool] { try database.autoAccept() }

    /// Sets (or, with nil, clears) whether what `peer` shares is taken without asking.
    package func setAutoAccept(_ value: Bool?, for peer: PeerID) throws {
        try database.setAutoAccept(value, for: peer)
        publish(.peersChanged)
    }

    /// Notes that a document was shared with a peer directly (not through a
    /// folder), or no longer is: a project moved out of a shared folder keeps
    /// the peers it was shared with directly.
    package func setDirectShare(_ shared: Bool, of document: DocumentID, with peer: PeerID) throws {
        try database.setDirectShare(shared, of: document, with: peer)
    }

    /// Documents shared with peers directly.
    package func directShares() throws -> [(document: DocumentID, peer: PeerID)] { try database.directShares() }
}

/// A folder's old node id, kept as another name of the entry that lists the
/// shared folder it became (`library_aliases`).
package struct LibraryAlias: Hashable, Sendable {
    /// The library document holding both the old node and the entry.
    package var library: DocumentID
    /// The folder's node id before it was shared.
    package var node: OpID
    /// The entry naming the shared folder now.
    package var entry: OpID

    package init(library: DocumentID, node: OpID, entry: OpID) {
        self.library = library
        self.node = node
        self.entry = entry
    }
}

extension Store {
    /// Every alias of a shared folder's entry.
    package func libraryAliases() throws -> [LibraryAlias] {
        try database.connection.query("SELECT library, node, entry FROM library_aliases") { row in
            (DocumentID(blob: row.bytes(0)), OpID(row.text(1) ?? ""), OpID(row.text(2) ?? ""))
        }.compactMap { library, node, entry in
            guard let library, let node, let entry else { return nil }
            return LibraryAlias(library: library, node: node, entry: entry)
        }
    }

    /// Records that `node` of `library` now names `entry` (a folder became a shared folder).
    package func addLibraryAlias(_ alias: LibraryAlias) throws {
        try database.connection.run(
            "INSERT OR REPLACE INTO library_aliases (library, node, entry) VALUES (?, ?, ?)",
            [alias.library.blob, .text(alias.node.description), .text(alias.entry.description)])
    }
}
