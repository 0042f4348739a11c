package import StoryCore

/// Settings of the sync layer, with the defaults the daemon uses.
package struct SyncConfiguration: Sendable {
    /// This daemon's name, sent in Hello.
    package var name: String
    /// Largest frame accepted from a peer; a larger one closes that connection.
    package var maximumFrameBytes = 16 << 20
    /// Changes per Changes message are cut at about this many bytes.
    package var batchBytes = 512 << 10
    /// A snapshot larger than this goes in parts of this size (to a peer that takes parts).
    package var snapshotPartBytes = 4 << 20
    /// Largest snapshot taken from a peer in parts (held whole to be merged).
    package var maximumSnapshotBytes = 1 << 30
    /// Where parts of a snapshot beyond what is kept in memory wait for the
    /// rest (nil: the system's temporary directory); files are unlinked as
    /// soon as they are made.
    package var scratchDirectory: String?
    /// What snapshots arriving in parts may hold at once over the daemon.
    package var snapshotBudget = SnapshotBudget()
    /// A peer lacking at least this many changes of a document gets its
    /// snapshot and the changes after it instead (when this side may send a
    /// snapshot: an owner or editor), applied at disk speed rather than
    /// change by change (a new machine, a month offline).
    package var snapshotCatchUpChanges = 20_000
    /// Bytes queued towards a peer before writes wait (NIO write watermarks).
    package var maximumInFlightBytes = 4 << 20
    package var handshakeTimeout: Duration = .seconds(10)
    package var pingInterval: Duration = .seconds(15)
    package var idleTimeout: Duration = .seconds(45)
    package var connectTimeout: Duration = .seconds(5)
    /// First and largest delay between dial attempts (doubling, with ±25 % jitter).
    package var backoffBase: Duration = .milliseconds(500)
    package var backoffMaximum: Duration = .seconds(60)
    /// Take documents that configured peers share with us (filed as incoming).
    package var acceptsOfferedDocuments = true
    /// Per peer, whether to take what it shares, over `acceptsOfferedDocuments`.
    package var acceptsOffers: [PeerID: Bool] = [:]

    package init(name: String) {
        self.name = name
    }

    /// Whether documents `peer` shares are taken without asking.
    package func acceptsOfferedDocuments(from peer: PeerID) -> Bool { acceptsOffers[peer] ?? acceptsOfferedDocuments }
}

/// Exponential backoff with jitter for redialing a peer.
struct Backoff {
    let base: Duration
    let maximum: Duration
    private var attempt = 0

    init(base: Duration, maximum: Duration) {
        self.base = base
        self.maximum = maximum
    }

    /// The next delay: base·2^attempt capped at maximum, ±25 % at random.
    mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        let exponent = min(attempt, 20)
        attempt += 1
        let raw = min(base * (1 << exponent), maximum)
        return raw * Double.random(in: 0.75...1.25, using: &generator)
    }

    mutating func next() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return next(using: &generator)
    }

    mutating func reset() { attempt = 0 }
}
