import Foundation
import Hummingbird
import StoryAPI
import StoryStore

/// `metrics`: Prometheus text exposition.
extension ControlAPI {
    func addMetricsRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("metrics") { _, _ in
            let text = try await metrics.exposition(store: store, manager: manager, uptimeSeconds: uptimeSeconds)
            return .bytes(Data(text.utf8), contentType: "text/plain; version=0.0.4")
        }
    }
}
