import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// `peers`: list, add, remove, pending, accept, pause, resume, discovered.
struct PeersController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let manager: PeerManager
    let discovery: LocalDiscovery?
    let name: String
    let clock: WallClock

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("peers") { _, _ in .json(try await peers().filter { $0.state == PeerRecord.State.configured.rawValue }) }
        routes.get("peers/pending") { _, _ in .json(try await peers().filter { $0.state == PeerRecord.State.pending.rawValue }) }
        routes.get("peers/discovered") { _, _ in .json(try await discovered()) }
        routes.post("peers") { request, context in
            .json(try await addPeer(try await request.decode(API.AddPeer.self, context: context)), status: .created)
        }
        routes.post("peers/:peer/accept") { request, context in
            let body = try await request.decodeIfPresent(API.AcceptPeer.self, context: context)
            return .json(try await acceptPeer(try lookup.peerID(try context.parameter("peer")), address: body?.address))
        }
        routes.delete("peers/:peer") { _, context in
            .json(try await removePeer(try lookup.peerID(try context.parameter("peer"))))
        }
        routes.patch("peers/:peer") { request, context in
            let id = try lookup.peerID(try context.parameter("peer"))
            let body = try await request.decode(API.PeerSettings.self, context: context)
            return .json(try await setPeer(id, body))
        }
        routes.post("peers/:peer/pause") { _, context in
            .json(try await setPaused(true, try lookup.peerID(try context.parameter("peer"))))
        }
        routes.post("peers/:peer/resume") { _, context in
            .json(try await setPaused(false, try lookup.peerID(try context.parameter("peer"))))
        }
    }

    func peers() async throws -> [API.Peer] {
        let sessions = await manager.status().filter(\.isEstablished)
        let connected = Set(sessions.map(\.peer))
        var live: [PeerID: PeerStatus] = [:]
        for session in sessions { live[session.peer] = session }
        let paused = await manager.paused
        let pausedByPeers = await manager.pausedByPeers
        let waiting = await manager.waitingForAcceptanceBy
        let upgrades = await manager.upgradeNeeded
        let records = try await store.peers()
        let accepting = await manager.autoAccept(for: records.map(\.id))
        return records.map {
            API.Peer(
                id: $0.id.description, name: $0.name, address: $0.address, addresses: $0.addresses, state: $0.state.rawValue,
                connected: connected.contains($0.id),
                paused: paused.contains($0.id), added: $0.added, lastSeen: $0.lastSeen, lastAddress: $0.lastAddress,
                announcedName: live[$0.id]?.name.flatMap { $0.isEmpty ? nil : $0 } ?? $0.announcedName,
                connection: live[$0.id].map {
                    API.Peer.Connection(
                        address: $0.address, direction: $0.dialed ? "out" : "in", bytesSent: $0.bytesSent, bytesReceived: $0.bytesReceived,
                        idleSeconds: $0.idleSeconds)
                }, autoAccept: accepting[$0.id] ?? true,
                pausedByPeer: pausedByPeers.contains($0.id) && !connected.contains($0.id),
                offersDropped: $0.offersDropped > 0 ? $0.offersDropped : nil,
                waitingForAcceptance: waiting.contains($0.id) && !connected.contains($0.id) ? true : nil,
                upgrade: connected.contains($0.id) ? nil : upgrades[$0.id])
        }
    }

    /// `peers set`: whether its shares are taken without asking, its name,
    /// where to dial it (its dialer, waiting out a backoff, dials at once).
    func setPeer(_ id: PeerID, _ body: API.PeerSettings) async throws -> API.Peer {
        guard let record = try await store.peers().first(where: { $0.id == id && $0.state == .configured }) else {
            throw APIError(.notFound, "no configured peer \(id)")
        }
        guard body.setsAutoAccept || body.name != nil || body.addresses != nil else {
            throw APIError(.badRequest, "give 'autoAccept', 'name' and/or 'addresses'")
        }
        // Everything is checked before anything is stored: a bad field changes nothing.
        let addresses = try body.addresses.map { given in
            guard !given.isEmpty else { throw APIError(.badRequest, "give at least one address (HOST:PORT) in 'addresses'") }
            return try API.PeerAddress.list(given)
        }
        let name = try body.name.map(peerName)
        if body.setsAutoAccept {
            guard !manager.declaresAutoAccept(for: id) else {
                throw APIError(.conflict, "the config file declares auto-accept for \(id.short); change it there")
            }
            try await store.setAutoAccept(body.autoAccept, for: id)
        }
        if name != nil || addresses != nil { try await store.addPeer(id, name: name, addresses: addresses, at: record.added) }
        return try await peer(id)
    }

    func peer(_ id: PeerID) async throws -> API.Peer {
        guard let found = try await peers().first(where: { $0.id == id.description }) else { throw APIError(.notFound, "no peer \(id)") }
        return found
    }

    func addPeer(_ body: API.AddPeer) async throws -> API.Peer {
        let id = try lookup.peerID(body.id)
        let addresses = try API.PeerAddress.list(body.allAddresses)
        guard id != identity.peerID else { throw APIError(.badRequest, "that is this daemon's own peer id") }
        // No address: it is dialed where local discovery hears it (or it dials in).
        // A peer newly added by its id alone is one this daemon reaches only
        // where discovery hears it (or when it dials in), its id likely read
        // off `peers discovered`, which lists what machines say they are: it
        // counts as discovered, and what it shares waits for a user until
        // `peers set --auto-accept on`. One added with an address, accepted
        // from pending (`peers accept`) or declared in the config follows
        // `accept-shares` (docs/operations.md, "Offers").
        let isConfigured = try await store.isConfigured(id)
        let isDiscovered = addresses.isEmpty && !isConfigured && !manager.declaresAutoAccept(for: id)
        let (name, now) = (try body.name.map(peerName), clock.milliseconds)
        try await store.batch { store in
            try store.addPeer(id, name: name, addresses: addresses, at: now)
            if isDiscovered { try store.setAutoAccept(false, for: id) }
        }
        return try await peer(id)
    }

    /// A peer's name as a user gives it: 1 to 64 bytes, no control characters.
    /// - Throws: `APIError(.badRequest)` saying what is wrong.
    func peerName(_ name: String) throws(APIError) -> String { try ControlAPI.name(name, atMost: 64) }

    /// What local discovery hears, with whether each peer is configured here.
    func discovered() async throws -> API.Discovery {
        guard let discovery else {
            return API.Discovery(enabled: false, running: false, port: nil, problem: nil, peers: [], ignoredPackets: 0)
        }
        let status = await discovery.status()
        let configured = Dictionary(try await store.peers().filter { $0.state == .configured }.map { ($0.id, $0) }) { first, _ in first }
        let connected = Set(await manager.status().filter(\.isEstablished).map(\.peer))
        let peers = await discovery.peers().map {
            API.DiscoveredPeer(
                id: $0.peer.description, addresses: $0.addresses, lastSeen: $0.lastSeen, configured: configured[$0.peer] != nil,
                name: configured[$0.peer]?.name, connected: connected.contains($0.peer))
        }
        return API.Discovery(
            enabled: true, running: status.isRunning, port: status.port, problem: status.problem, peers: peers,
            ignoredPackets: status.statistics.packetsMalformed + status.statistics.packetsOversized)
    }

    func acceptPeer(_ id: PeerID, address: String?) async throws -> API.Peer {
        guard try await store.peers().first(where: { $0.id == id })?.state == .pending else {
            throw APIError(.notFound, "no pending peer \(id)")
        }
        // Its source address is an ephemeral port: the address to dial comes with the request, if any.
        let addresses = try API.PeerAddress.list(address.map { [$0] } ?? [])
        try await store.addPeer(id, addresses: addresses, at: clock.milliseconds)
        return try await peer(id)
    }

    func removePeer(_ id: PeerID) async throws -> API.Removed {
        guard try await store.peers().contains(where: { $0.id == id }) else { throw APIError(.notFound, "no peer \(id)") }
        try await store.removePeer(id)
        return API.Removed(removed: id.description)
    }

    func setPaused(_ paused: Bool, _ id: PeerID) async throws -> API.Peer {
        guard try await store.peers().contains(where: { $0.id == id && $0.state == .configured }) else {
            throw APIError(.notFound, "no configured peer \(id)")
        }
        if paused { try await manager.pause(id) } else { try await manager.resume(id) }
        return try await peer(id)
    }
}
