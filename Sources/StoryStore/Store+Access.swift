import Foundation
import StoryCore

/// Who may do what with a document: shares, members and offers.
extension Store {
    /// Gives `peer` a role in a document (`.none` takes its rights away), as
    /// a signed change every peer checks. Sharing is an act of a daemon
    /// entitled to it: the owner, or an editor giving rights.
    /// - Throws: `DocumentError(.forbidden)` when this daemon may not,
    ///   `DocumentError(.invalidOperation)` for a legacy document.
    public func share(_ id: DocumentID, with peer: PeerID, role: Role, at time: Int64) throws {
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
        noteChanges(1, in: id)
        publish(.accessChanged(id))
    }

    /// The members of one document or of all, as the access lists say.
    public func members(of document: DocumentID? = nil) throws -> [MemberRecord] { try database.members(of: document) }

    /// What this daemon may do with a document.
    public func localRole(of id: DocumentID) throws -> Role { try loadedDocument(id).localRole }

    /// The documents to sync with a peer: those it is a member of, and those
    /// taken from it whose founding change has not arrived yet. Projects in
    /// the trash too: deleted for everyone, a project still syncs, so a
    /// restore (or an edit) made anywhere arrives; hidden here, it still
    /// follows the others. (A legacy document has no member but this daemon.)
    public func sharedDocuments(with peer: PeerID) throws -> [(record: DocumentRecord, role: Role)] {
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

    /// Keeps an offer this daemon did not take (not accepting offers from that peer).
    public func recordOffer(_ document: DocumentID, kind: DocumentKind, name: String?, from peer: PeerID, at time: Int64) throws {
        try database.recordOffer(OfferRecord(document: document, peer: peer, kind: kind, name: name, received: time))
    }

    /// Offers kept, oldest first.
    public func offers() throws -> [OfferRecord] { try database.offers() }
}
