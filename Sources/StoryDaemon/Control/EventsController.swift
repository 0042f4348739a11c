import Hummingbird
import StoryAPI
import StoryCore
import StoryStore
import StorySync

/// `events`: NDJSON, or server-sent events for `Accept: text/event-stream` or `?format=sse`.
struct EventsController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let manager: PeerManager
    let library: LibraryService
    let clock: WallClock

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("events") { request, _ in
            let query = try request.decodeQuery(API.EventsQuery.self)
            var project: DocumentID?
            if let text = query.project { project = try await lookup.existingProject(text) }
            let sse = query.format == "sse" || (request.headers[.accept]?.contains("text/event-stream") ?? false)
            let (stream, finish) = await EventStream.make(
                store: store, manager: manager, library: try await library.id(), project: project, sse: sse, clock: clock)
            return .streaming(stream, contentType: sse ? "text/event-stream" : "application/x-ndjson", endOnShutdown: finish)
        }
    }
}
