import Foundation
import Hummingbird
import Logging
import NIOCore
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// The control API: every service its routes work with, handed out to the
/// per-resource controllers (`<Resource>Controller.swift`), each of which
/// holds only the services it uses and registers its typed handlers in
/// `addRoutes(to:)`. A new route goes in its resource's controller (and in
/// docs/openapi.json, which a test compares).
struct ControlAPI: Sendable {
    let store: Store
    let identity: Identity
    let manager: PeerManager
    /// Local discovery (nil when it is off).
    let discovery: LocalDiscovery?
    let library: LibraryService
    /// Deleting, restoring and purging projects.
    let trash: ProjectTrash
    /// The name told to peers.
    let name: String
    /// When the daemon started (for uptime).
    let started: ContinuousClock.Instant
    let clock: WallClock
    let metrics: DaemonMetrics
    /// The daemon's scratch directory (backup copies on their way out).
    let temporaryDirectory: String
    /// Images' and sounds' bytes.
    let blobs: BlobStore
    /// The media uploads may be (`media-types`).
    let acceptedMediaTypes: Set<StoryCore.MediaType>
    /// Live slideshow previews on loopback ports.
    let previews: PreviewRegistry
    let logger: Logger
    /// Draws panels on a thread of its own, one at a time.
    let renderer = PanelRenderService()
    /// Long exports (animatics), run one at a time by the export service.
    let exports: ExportJobs
    /// Package imports, checked and stored one at a time (each holds its
    /// project's snapshot and log while it checks them: two at once must
    /// not add up).
    let imports = SerialGate()

    /// Request bodies are at most 1 MiB (a stroke of 100,000 points fits).
    static let maximumBodyBytes = 1 << 20

    /// The undo session of edits that name none.
    static let defaultSession = "default"

    /// The router with every route, the middleware in front of them, and the table of routes.
    func makeRouter(
        access: SocketAccess, credentials: @escaping @Sendable (any Channel) async -> PeerCredentials? = { await PeerCredentials.of($0) }
    ) -> (Router<ControlContext>, ControlRouteTable) {
        let router = Router(context: ControlContext.self)
        // The middleware answers 405 from the table, which is complete only
        // once every route is registered (after the middleware, to be behind it).
        let table = SharedRouteTable()
        router.add(middleware: ControlMiddleware(access: access, routes: table, logger: logger, credentials: credentials))
        var builder = ControlRouteBuilder(router: router)
        let lookup = ResourceLookup(store: store, identity: identity, blobs: blobs, clock: clock)
        let edits = EditService(store: store, clock: clock, lookup: lookup)
        SystemController(
            store: store, identity: identity, manager: manager, library: library, trash: trash, name: name,
            temporaryDirectory: temporaryDirectory, logger: logger, started: started
        ).addRoutes(to: &builder)
        PeersController(lookup: lookup, store: store, identity: identity, manager: manager, discovery: discovery, name: name, clock: clock)
            .addRoutes(to: &builder)
        ProjectsController(
            lookup: lookup, store: store, identity: identity, library: library, trash: trash, clock: clock, blobs: blobs
        ).addRoutes(to: &builder)
        SharesController(lookup: lookup, store: store, identity: identity, manager: manager, library: library, clock: clock)
            .addRoutes(to: &builder)
        EditsController(lookup: lookup, edits: edits, store: store, clock: clock).addRoutes(to: &builder)
        HistoryController(lookup: lookup, store: store, identity: identity).addRoutes(to: &builder)
        ConflictsController(lookup: lookup, store: store, identity: identity, clock: clock).addRoutes(to: &builder)
        VersionsController(lookup: lookup, store: store, identity: identity, name: name, clock: clock, exports: exports)
            .addRoutes(to: &builder)
        RenderController(lookup: lookup, name: name, renderer: renderer).addRoutes(to: &builder)
        ExportsController(
            lookup: lookup, library: library, name: name, clock: clock, logger: logger, renderer: renderer, exports: exports
        ).addRoutes(to: &builder)
        LibraryController(lookup: lookup, store: store, library: library, trash: trash, name: name).addRoutes(to: &builder)
        EventsController(lookup: lookup, store: store, manager: manager, library: library, clock: clock).addRoutes(to: &builder)
        MediaController(
            lookup: lookup, edits: edits, store: store, manager: manager, name: name, blobs: blobs,
            acceptedMediaTypes: acceptedMediaTypes, logger: logger
        ).addRoutes(to: &builder)
        PackagesController(
            lookup: lookup, store: store, identity: identity, manager: manager, library: library, clock: clock,
            temporaryDirectory: temporaryDirectory, blobs: blobs, logger: logger, renderer: renderer, exports: exports, imports: imports
        ).addRoutes(to: &builder)
        MetricsController(store: store, manager: manager, metrics: metrics, started: started).addRoutes(to: &builder)
        ExportJobsController(
            lookup: lookup, store: store, name: name, blobs: blobs, logger: logger, renderer: renderer, exports: exports
        ).addRoutes(to: &builder)
        SlideshowController(lookup: lookup, store: store, blobs: blobs, logger: logger, renderer: renderer, exports: exports)
            .addRoutes(to: &builder)
        PreviewsController(lookup: lookup, previews: previews).addRoutes(to: &builder)
        table.set(builder.table)
        return (router, builder.table)
    }

    // MARK: - Names in requests

    static func hasControlCharacters(_ text: String) -> Bool { PrintableText.hasControlCharacters(text) }

    /// A project name: 1 to 200 bytes, no control characters (a NUL would
    /// cut it short in other programs, a newline break listings).
    static func projectName(_ text: String) throws(APIError) -> String { try name(text, atMost: 200) }

    /// A name as given: trimmed, 1 to `limit` bytes, no control characters
    /// (a NUL cuts it short in other programs, a line break or an escape
    /// breaks listings and terminals).
    /// - Throws: `APIError(.badRequest)` saying which.
    static func name(_ text: String, atMost limit: Int) throws(APIError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.utf8.count <= limit else { throw APIError(.badRequest, "name must be 1 to \(limit) bytes") }
        guard !hasControlCharacters(name) else {
            throw APIError(.badRequest, "name must not contain control characters (such as NUL, a line break or an escape)")
        }
        return name
    }

    /// A folder name: 1 to 200 bytes, no `/` (paths use it), no control characters.
    static func nodeName(_ text: String) throws(APIError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.utf8.count <= 200, !name.contains("/"), !hasControlCharacters(name) else {
            throw APIError(.badRequest, "a name must be 1 to 200 bytes without '/' or control characters")
        }
        return name
    }

    /// Whole seconds since `started` (the daemon's uptime).
    static func seconds(since started: ContinuousClock.Instant) -> Int { Int((ContinuousClock.now - started).components.seconds) }
}
