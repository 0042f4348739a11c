import StoryCore

/// What local discovery makes of each datagram, apart from the sockets
/// (`LocalDiscovery` performs the actions): refuse what does not decode,
/// ignore this daemon's own announcements, keep the cache, and say when a
/// peer is new or changed so the peer manager can dial it and this daemon can
/// answer with its own announcement.
struct DiscoveryStateMachine {
    /// What the I/O side does after a datagram.
    enum Action: Equatable {
        /// Nothing: this daemon's own announcement, or a peer heard again where it was.
        case none
        /// Count done; log at debug and carry on.
        case refuse(DiscoveryPacketError, from: String)
        /// Another daemon announces this daemon's peer id (a copied data
        /// directory, or a forgery): warn, once per instance.
        case warnSameIdentity(address: String)
        /// A peer was heard somewhere new: tell the peer manager. `answer`:
        /// it is new here (or restarted), so announce this daemon now rather
        /// than at the next interval.
        case discovered(PeerID, address: String, answer: Bool)
    }

    let peerID: PeerID
    let instance: UInt64
    private(set) var cache: DiscoveryCache
    private(set) var statistics = DiscoveryStatistics()
    /// Instances announcing this daemon's id that were warned about (bounded).
    private var warned: [UInt64] = []

    init(peerID: PeerID, instance: UInt64, cache: DiscoveryCache) {
        self.peerID = peerID
        self.instance = instance
        self.cache = cache
    }

    /// This daemon's announcement, for the port it listens for peers on.
    func announcement(port: UInt16) -> DiscoveryAnnouncement {
        DiscoveryAnnouncement(peer: peerID, port: port, instance: instance)
    }

    /// A datagram from `host` (its source address: an IP, with `%interface`
    /// for a link-local IPv6 one), received at `now`.
    mutating func received(
        _ bytes: some Collection<UInt8>, from host: String, now: ContinuousClock.Instant, milliseconds: Int64
    ) -> Action {
        statistics.packetsReceived += 1
        let announcement: DiscoveryAnnouncement
        do {
            announcement = try DiscoveryAnnouncement(decoding: bytes)
        } catch {
            if error.code == .oversized { statistics.packetsOversized += 1 } else { statistics.packetsMalformed += 1 }
            return .refuse(error, from: host)
        }
        // The address is the packet's source, never anything the packet says.
        let address = Self.address(host: host, port: announcement.port)
        if announcement.instance == instance { return .none }
        if announcement.peer == peerID {
            guard !warned.contains(announcement.instance) else { return .none }
            warned.append(announcement.instance)
            if warned.count > 16 { warned.removeFirst() }
            return .warnSameIdentity(address: address)
        }
        statistics.announcementsAccepted += 1
        let observation = cache.record(
            announcement.peer, instance: announcement.instance, at: address, now: now, milliseconds: milliseconds)
        guard observation.isChange else { return .none }
        return .discovered(announcement.peer, address: address, answer: observation != .newAddress)
    }

    /// Counts an announcement sent to `sent` destinations, `failed` of which refused it.
    mutating func announced(sent: Int, failed: Int) {
        statistics.announcementsSent += sent - failed
        statistics.sendFailures += failed
    }

    /// Forgets what has expired.
    mutating func expire(now: ContinuousClock.Instant) { cache.expire(now: now) }

    /// A dial at an address heard for `peer` showed another certificate (`DiscoveryCache.discredit`).
    mutating func discredit(_ peer: PeerID, at address: String, now: ContinuousClock.Instant) {
        cache.discredit(peer, at: address, now: now)
    }

    /// `HOST:PORT` with brackets around an IPv6 host.
    static func address(host: String, port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// What local discovery has received and sent since the daemon started.
package struct DiscoveryStatistics: Hashable, Sendable {
    /// Datagrams on the discovery port.
    package var packetsReceived = 0
    /// Announcements of other daemons taken into the cache.
    package var announcementsAccepted = 0
    /// Datagrams that were not announcements (too short, another magic or version, port 0).
    package var packetsMalformed = 0
    /// Datagrams larger than an announcement may be.
    package var packetsOversized = 0
    /// Announcements sent (one per destination: a broadcast address or an interface's multicast group).
    package var announcementsSent = 0
    /// Sends the system refused (an interface going down, no route).
    package var sendFailures = 0

    /// All zero.
    package init() {}
}
