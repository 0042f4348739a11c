import Foundation
package import StoryCore

/// Configured and pending peers, and what each has acknowledged.
extension Store {
    package func peers() throws -> [PeerRecord] { try database.peers() }

    /// Adds or updates a configured peer (accepting a pending one).
    /// - Parameter addresses: where to dial it, tried in this order; nil or
    ///   empty keeps the addresses it has (none for a new peer: it is dialed
    ///   where local discovery finds it, or waits for it to dial).
    package func addPeer(_ id: PeerID, name: String? = nil, addresses: [String]? = nil, at time: Int64) throws {
        let existing = try database.peer(id)
        let addresses = addresses.flatMap { $0.isEmpty ? nil : $0 } ?? existing?.addresses ?? []
        try database.upsertPeer(
            PeerRecord(
                id: id, name: name ?? existing?.name, address: addresses.first, otherAddresses: Array(addresses.dropFirst()),
                state: .configured, added: existing?.added ?? time, lastSeen: existing?.lastSeen, lastAddress: existing?.lastAddress))
        publish(.peersChanged)
    }

    /// Adds or updates a configured peer with one address (nil keeps the ones it has).
    package func addPeer(_ id: PeerID, name: String? = nil, address: String?, at time: Int64) throws {
        try addPeer(id, name: name, addresses: address.map { [$0] }, at: time)
    }

    /// Records an unknown peer that tried to connect (at most `maximumPendingPeers` are kept).
    package func recordPendingPeer(_ id: PeerID, from address: String, at time: Int64) throws {
        if let existing = try database.peer(id), existing.state == .configured { return }
        let existing = try database.peer(id)
        try database.upsertPeer(
            PeerRecord(id: id, state: .pending, added: existing?.added ?? time, lastSeen: time, lastAddress: address))
        try database.prunePendingPeers(keeping: options.maximumPendingPeers)
        publish(.peerPending(id, address: address))
    }

    /// Whether a peer id is configured (may connect).
    package func isConfigured(_ peer: PeerID) throws -> Bool { try database.peer(peer)?.state == .configured }

    /// Notes that a peer connected.
    package func peerSeen(_ id: PeerID, from address: String, at time: Int64) throws {
        guard var peer = try database.peer(id) else { return }
        peer.lastSeen = time
        peer.lastAddress = address
        try database.upsertPeer(peer)
    }

    /// Keeps the name a peer gave itself in its hello, for when it is not
    /// connected (a peer not in the table is ignored).
    package func setAnnouncedName(_ name: String, of id: PeerID) throws {
        try database.setAnnouncedName(name, of: id)
    }

    package func removePeer(_ id: PeerID) throws {
        try database.removePeer(id)
        publish(.peersChanged)
    }

    /// Records what a peer has acknowledged of a document.
    package func acknowledge(_ version: VersionVector, of document: DocumentID, by peer: PeerID, at time: Int64) throws {
        try database.setAcknowledged(version, of: document, by: peer, at: time)
    }

    package func acknowledged(_ document: DocumentID) throws -> [PeerID: VersionVector] { try database.acknowledged(document) }
}
