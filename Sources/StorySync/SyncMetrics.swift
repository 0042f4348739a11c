import Metrics
import StoryCore

/// What the sync records through swift-metrics (a no-op unless the process
/// bootstrapped a metrics backend, as the daemon does).
///
/// Per-peer series carry one label, `peer`: the peer id's first group (as
/// the CLI shows it). Names are left out on purpose: a peer announces its
/// own name, so a name label would let a peer (or a rename) start new
/// series without end; the daemon's `storyteller_peer_up{peer, name}` gauge
/// maps ids to names for a query to join on.
package enum SyncMetrics {
    /// Bytes of sync frames sent and received, below TLS, by every connection of the process.
    static let sentBytes = Counter(label: "storyteller_sync_sent_bytes_total")
    static let receivedBytes = Counter(label: "storyteller_sync_received_bytes_total")
    /// Time to check and store one batch of changes received from a peer.
    static let batchApply = Metrics.Timer(label: "storyteller_sync_apply_seconds")

    /// Makes the metrics exist (at 0) before the first byte.
    package static func touch() {
        _ = (sentBytes, receivedBytes, batchApply)
    }

    /// The `peer` label of a peer's series.
    static func dimensions(_ peer: PeerID) -> [(String, String)] { [("peer", peer.short)] }

    /// A Ping until its Pong (sent on a quiet connection, every ping interval).
    static func pingRoundTrip(_ peer: PeerID) -> Metrics.Timer {
        Metrics.Timer(label: "storyteller_peer_ping_rtt_seconds", dimensions: dimensions(peer))
    }

    /// Changes (or a snapshot) sent until the peer acknowledged having stored them.
    static func acknowledgement(_ peer: PeerID) -> Metrics.Timer {
        Metrics.Timer(label: "storyteller_peer_ack_seconds", dimensions: dimensions(peer))
    }

    /// Bytes to and from one peer, below TLS.
    struct PeerBytes: Sendable {
        let sent: Counter
        let received: Counter

        init(_ peer: PeerID) {
            sent = Counter(label: "storyteller_peer_sent_bytes_total", dimensions: SyncMetrics.dimensions(peer))
            received = Counter(label: "storyteller_peer_received_bytes_total", dimensions: SyncMetrics.dimensions(peer))
        }
    }
}
