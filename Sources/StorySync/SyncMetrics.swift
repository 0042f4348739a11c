import Metrics

/// What the sync records through swift-metrics (a no-op unless the process
/// bootstrapped a metrics backend, as the daemon does).
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
}
