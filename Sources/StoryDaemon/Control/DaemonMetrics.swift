import CoreMetrics
import Foundation
import Metrics
import Prometheus
import StoryAPI
import StoryCore
import StoryStore
import StorySync
import Synchronization

/// The daemon's metrics, through swift-metrics with swift-prometheus behind
/// it: counters and histograms recorded where things happen (sync bytes in
/// StorySync, edit and sync apply times), gauges of the state set when
/// `/v1/metrics` is read. One registry per process (swift-metrics is
/// bootstrapped once; daemons run in one test process share it).
final class DaemonMetrics: Sendable {
    /// The process's registry, bootstrapped into swift-metrics on first use.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Edits and batches take from well under a millisecond to seconds.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2), .seconds(5),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    private let projects: Prometheus.Gauge
    private let libraries: Prometheus.Gauge
    private let storedChanges: Prometheus.Gauge
    private let configuredPeers: Prometheus.Gauge
    private let pendingPeers: Prometheus.Gauge
    private let connectedPeers: Prometheus.Gauge
    private let uptime: Prometheus.Gauge
    /// `storyteller_peer_up{peer, name}` per configured peer, by its labels
    /// (a renamed or removed peer's old series is unregistered).
    private let peerUp = Mutex<[[String]: Prometheus.Gauge]>([:])

    init() {
        let registry = Self.registry
        func gauge(_ name: String, unit: String = "", _ help: String, _ labels: [(String, String)] = []) -> Prometheus.Gauge {
            let descriptor = MetricNameDescriptor(namespace: "storyteller", metricName: name, unitName: unit, helpText: help)
            return registry.makeGauge(descriptor: descriptor, labels: labels)
        }
        projects = gauge("documents", "Documents in the store.", [("kind", "project")])
        libraries = gauge("documents", "Documents in the store.", [("kind", "library")])
        storedChanges = gauge("stored_changes", "Changes in the change log (not yet compacted).")
        configuredPeers = gauge("peers", "Peers by state.", [("state", "configured")])
        pendingPeers = gauge("peers", "Peers by state.", [("state", "pending")])
        connectedPeers = gauge("peers_connected", "Peers with an established session.")
        uptime = gauge("uptime", unit: "seconds", "Seconds since the daemon started.")
        // The build, as Prometheus exporters say it: a constant 1 with the version as a label.
        gauge("build", unit: "info", "The storytellerd build.", [("version", API.version)]).set(1.0)
        // Registered now, so they show (at 0) before the first byte or edit.
        SyncMetrics.touch()
        _ = Self.editApply
    }

    /// Time to apply and store one edit request (`POST …/edits`).
    static let editApply = Metrics.Timer(label: "storyteller_edit_apply_seconds")

    /// The exposition text, with the state gauges read now.
    func exposition(store: Store, manager: PeerManager, uptimeSeconds: Int) async throws -> String {
        let documents = try await store.foundedDocuments()
        let peers = try await store.peers()
        projects.set(Double(documents.filter { $0.kind == .project && !$0.isDeleted }.count))
        libraries.set(Double(documents.filter { $0.kind == .library }.count))
        storedChanges.set(Double(documents.reduce(0) { $0 + $1.changeCount }))
        configuredPeers.set(Double(peers.filter { $0.state == .configured }.count))
        pendingPeers.set(Double(peers.filter { $0.state == .pending }.count))
        let sessions = await manager.status()
        let connected = Set(sessions.filter(\.isEstablished).map(\.peer))
        connectedPeers.set(Double(connected.count))
        uptime.set(Double(uptimeSeconds))
        let announced = Dictionary(sessions.compactMap { status in status.name.map { (status.peer, $0) } }) { first, _ in first }
        setPeerUp(
            peers.filter { $0.state == .configured }.map { peer in
                (labels: [peer.id.short, peer.name ?? announced[peer.id] ?? ""], up: connected.contains(peer.id))
            })
        return Self.registry.emitToString()
    }

    /// One `storyteller_peer_up` series per configured peer: 1 while a
    /// session with it is established, else 0. Its labels are the peer's
    /// short id (the label of every per-peer series) and its name (the one
    /// given here, else the one it announced), so a query can join names
    /// onto the other series on `peer`.
    private func setPeerUp(_ peers: [(labels: [String], up: Bool)]) {
        peerUp.withLock { gauges in
            let current = Set(peers.map(\.labels))
            for (labels, gauge) in gauges where !current.contains(labels) {
                Self.registry.unregisterGauge(gauge)
                gauges[labels] = nil
            }
            for (labels, up) in peers {
                let gauge =
                    gauges[labels]
                    ?? Self.registry.makeGauge(
                        descriptor: MetricNameDescriptor(
                            namespace: "storyteller", metricName: "peer_up", unitName: "",
                            helpText: "1 while a session with this configured peer is established, else 0."),
                        labels: [("peer", labels[0]), ("name", labels[1])])
                gauges[labels] = gauge
                gauge.set(up ? 1.0 : 0.0)
            }
        }
    }
}
