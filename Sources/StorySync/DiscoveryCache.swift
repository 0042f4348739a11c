package import StoryCore

/// The peers local discovery has heard, each with the addresses it was heard
/// from, forgotten `lifetime` after they were last heard. Pure: the caller
/// gives every time (a monotonic instant for expiry, the wall time in
/// milliseconds for people).
///
/// Bounded: at most `maximumPeers` peers (the one heard least recently makes
/// room for a new one) and `maximumAddressesPerPeer` addresses each (likewise),
/// so announcements made up by the thousand cost a fixed amount of memory.
package struct DiscoveryCache: Sendable {
    /// One address a peer was heard from.
    package struct Sighting: Hashable, Sendable {
        /// `HOST:PORT` to dial: the packet's source and the announced port.
        package var address: String
        /// When it was last heard from there (monotonic, for expiry).
        package var instant: ContinuousClock.Instant
        /// The same moment as wall time (milliseconds since 1970), for people.
        package var milliseconds: Int64
    }

    /// What the cache knows of one peer.
    package struct Entry: Hashable, Sendable {
        /// The peer id it announced (unproven until a TLS handshake).
        package var peer: PeerID
        /// The instance id of its latest announcement (it changes at each start).
        package var instance: UInt64
        /// Where it was heard from, most recent first.
        package var sightings: [Sighting]

        /// The addresses, most recently heard first.
        package var addresses: [String] { sightings.map(\.address) }
        /// When it was last heard (wall time, milliseconds since 1970).
        package var lastSeen: Int64 { sightings.first?.milliseconds ?? 0 }
        var lastInstant: ContinuousClock.Instant? { sightings.first?.instant }
    }

    /// How one announcement changed the cache.
    package enum Observation: Hashable, Sendable {
        /// A peer not in the cache (or forgotten since).
        case newPeer
        /// A known peer with another instance id: it restarted, perhaps on
        /// another port; the addresses of its former instance are dropped.
        case newInstance
        /// A known peer heard from an address it was not known at.
        case newAddress
        /// Nothing new: the same peer, instance and address, heard again.
        case refreshed

        /// Whether the peer's addresses changed (a dialer may want to try them now).
        package var isChange: Bool { self != .refreshed }
    }

    /// How long a peer is kept after it was last heard (three announcement intervals).
    package let lifetime: Duration
    /// Peers held at most.
    package let maximumPeers: Int
    /// Addresses held per peer at most.
    package let maximumAddressesPerPeer: Int
    private var entries: [PeerID: Entry] = [:]
    /// Addresses a peer was heard at whose dial showed another certificate
    /// (or no TLS at all): a false announcement. Not taken again from there
    /// for `lifetime`, so one false announcement costs one dial, and a
    /// stream of them one dial per address per `lifetime`.
    private var discredited: [PeerID: [String: ContinuousClock.Instant]] = [:]

    /// An empty cache with these bounds (both above 0).
    package init(lifetime: Duration = .seconds(90), maximumPeers: Int = 256, maximumAddressesPerPeer: Int = 8) {
        precondition(maximumPeers > 0 && maximumAddressesPerPeer > 0)
        self.lifetime = lifetime
        self.maximumPeers = maximumPeers
        self.maximumAddressesPerPeer = maximumAddressesPerPeer
    }

    /// Records that `peer` (instance `instance`) was heard at `address`.
    /// O(peers) when a new peer has to make room, else O(addresses of the peer).
    package mutating func record(
        _ peer: PeerID, instance: UInt64, at address: String, now: ContinuousClock.Instant, milliseconds: Int64
    ) -> Observation {
        let sighting = Sighting(address: address, instant: now, milliseconds: milliseconds)
        if let since = discredited[peer]?[address], now - since <= lifetime { return .refreshed }
        guard var entry = entries[peer], let last = entry.lastInstant, now - last <= lifetime else {
            if entries[peer] == nil, entries.count >= maximumPeers, let oldest = leastRecentlyHeard() {
                entries[oldest] = nil
            }
            entries[peer] = Entry(peer: peer, instance: instance, sightings: [sighting])
            return .newPeer
        }
        if entry.instance != instance {
            entries[peer] = Entry(peer: peer, instance: instance, sightings: [sighting])
            return .newInstance
        }
        entry.sightings.removeAll { now - $0.instant > lifetime }
        let known = entry.sightings.firstIndex { $0.address == address }
        if let known { entry.sightings.remove(at: known) }
        entry.sightings.insert(sighting, at: 0)
        if entry.sightings.count > maximumAddressesPerPeer { entry.sightings.removeLast(entry.sightings.count - maximumAddressesPerPeer) }
        entries[peer] = entry
        return known == nil ? .newAddress : .refreshed
    }

    /// Forgets what was last heard more than `lifetime` before `now`. O(peers).
    package mutating func expire(now: ContinuousClock.Instant) {
        for (peer, var entry) in entries {
            entry.sightings.removeAll { now - $0.instant > lifetime }
            entries[peer] = entry.sightings.isEmpty ? nil : entry
        }
        for (peer, addresses) in discredited {
            let kept = addresses.filter { now - $0.value <= lifetime }
            discredited[peer] = kept.isEmpty ? nil : kept
        }
    }

    /// A dial of `peer` at `address` showed another certificate, or no TLS:
    /// the sighting is dropped, and announcements of `peer` from `address`
    /// are not taken for `lifetime`. Bounded as the sightings are.
    package mutating func discredit(_ peer: PeerID, at address: String, now: ContinuousClock.Instant) {
        if var entry = entries[peer] {
            entry.sightings.removeAll { $0.address == address }
            entries[peer] = entry.sightings.isEmpty ? nil : entry
        }
        if discredited[peer] == nil, discredited.count >= maximumPeers,
            let oldest = discredited.min(by: {
                ($0.value.values.max() ?? now) < ($1.value.values.max() ?? now)
            })?.key
        {
            discredited[oldest] = nil
        }
        var addresses = discredited[peer] ?? [:]
        addresses[address] = now
        if addresses.count > maximumAddressesPerPeer, let oldest = addresses.min(by: { $0.value < $1.value })?.key { addresses[oldest] = nil }
        discredited[peer] = addresses
    }

    /// Where `peer` was heard, most recent first, less what has expired.
    package func addresses(of peer: PeerID, now: ContinuousClock.Instant) -> [String] {
        entries[peer]?.sightings.filter { now - $0.instant <= lifetime }.map(\.address) ?? []
    }

    /// Every peer heard within `lifetime` of `now`, by peer id. O(peers log peers).
    package func peers(now: ContinuousClock.Instant) -> [Entry] {
        entries.values.compactMap { entry in
            var entry = entry
            entry.sightings.removeAll { now - $0.instant > lifetime }
            return entry.sightings.isEmpty ? nil : entry
        }.sorted { $0.peer < $1.peer }
    }

    /// How many peers are held (expired ones too, until `expire`).
    package var count: Int { entries.count }

    private func leastRecentlyHeard() -> PeerID? {
        entries.values.min { ($0.lastInstant ?? .now) < ($1.lastInstant ?? .now) }?.peer
    }
}
