import Foundation
import Hummingbird
import StoryAPI
import StoryStore
import StorySync

/// `metrics`: Prometheus text exposition.
struct MetricsController: Sendable {
    let store: Store
    let manager: PeerManager
    let metrics: DaemonMetrics
    let started: ContinuousClock.Instant

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("metrics") { _, _ in
            let text = try await metrics.exposition(store: store, manager: manager, uptimeSeconds: ControlAPI.seconds(since: started))
            return .bytes(Data(text.utf8), contentType: "text/plain; version=0.0.4")
        }
    }
}
