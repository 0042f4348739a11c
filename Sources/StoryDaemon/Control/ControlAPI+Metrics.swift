import Foundation
import Hummingbird
import StoryAPI
import StoryStore

/// `metrics`: Prometheus text exposition.
extension ControlAPI {
    func addMetricsRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("metrics") { _, _ in
            .bytes(Data(try await metricsText().utf8), contentType: "text/plain; version=0.0.4")
        }
    }

    /// The daemon's gauges and counters in the Prometheus text format.
    func metricsText() async throws -> String {
        let documents = try await store.documents()
        let peers = try await store.peers()
        let sessions = await manager.status()
        let bytes = await manager.totalBytes
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for (labels, value) in samples { lines.append("\(name)\(labels) \(value)") }
        }
        metric("storyteller_documents", "gauge", "Documents in the store.", [
            ("{kind=\"project\"}", documents.filter { $0.kind == .project && !$0.isDeleted }.count),
            ("{kind=\"library\"}", documents.filter { $0.kind == .library }.count),
        ])
        metric("storyteller_stored_changes", "gauge", "Changes in the change log (not yet compacted).", [("", documents.reduce(0) { $0 + $1.changeCount })])
        metric("storyteller_peers", "gauge", "Peers by state.", [
            ("{state=\"configured\"}", peers.filter { $0.state == .configured }.count),
            ("{state=\"pending\"}", peers.filter { $0.state == .pending }.count),
        ])
        metric("storyteller_peers_connected", "gauge", "Peers with an established session.", [("", sessions.filter(\.isEstablished).count)])
        metric("storyteller_sync_sent_bytes_total", "counter", "Bytes of sync frames sent (below TLS).", [("", bytes.sent)])
        metric("storyteller_sync_received_bytes_total", "counter", "Bytes of sync frames received (below TLS).", [("", bytes.received)])
        metric("storyteller_uptime_seconds", "gauge", "Seconds since the daemon started.", [("", uptimeSeconds)])
        return lines.joined(separator: "\n") + "\n"
    }
}
