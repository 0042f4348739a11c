import Foundation
import Hummingbird
import Logging
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// The control API's handlers and what they work with. Routes are grouped
/// per resource in `ControlAPI+<Resource>.swift`, each registering its typed
/// handlers in `add<Resource>Routes(to:)`; a new route goes in its
/// resource's file (and in docs/openapi.json, which a test compares).
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
    /// Which of a project's pictures and sounds it may use here (one rule for every output).
    var media: ProjectMedia { ProjectMedia(store: store, blobs: blobs) }
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
    func makeRouter(access: SocketAccess) -> (Router<ControlContext>, ControlRouteTable) {
        let router = Router(context: ControlContext.self)
        // The middleware answers 405 from the table, which is complete only
        // once every route is registered (after the middleware, to be behind it).
        let table = SharedRouteTable()
        router.add(middleware: ControlMiddleware(access: access, routes: table, logger: logger))
        var builder = ControlRouteBuilder(router: router)
        addSystemRoutes(to: &builder)
        addPeerRoutes(to: &builder)
        addProjectRoutes(to: &builder)
        addShareRoutes(to: &builder)
        addEditRoutes(to: &builder)
        addHistoryRoutes(to: &builder)
        addConflictRoutes(to: &builder)
        addVersionRoutes(to: &builder)
        addRenderRoutes(to: &builder)
        addExportRoutes(to: &builder)
        addLibraryRoutes(to: &builder)
        addEventRoutes(to: &builder)
        addMediaRoutes(to: &builder)
        addPackageRoutes(to: &builder)
        addMetricsRoutes(to: &builder)
        addExportJobRoutes(to: &builder)
        addSlideshowRoutes(to: &builder)
        addPreviewRoutes(to: &builder)
        table.set(builder.table)
        return (router, builder.table)
    }

    // MARK: - Shared checks

    /// A peer id in a request.
    func peerID(_ text: String) throws(APIError) -> PeerID {
        guard let id = PeerID(text) else {
            throw APIError(.badRequest, "'\(text)' is not a peer id (8 groups of 7 characters, with check characters)")
        }
        return id
    }

    func documentID(_ text: String) throws(APIError) -> DocumentID {
        guard let id = DocumentID(text) else { throw APIError(.badRequest, "'\(text)' is not a project or folder id (32 hex digits)") }
        return id
    }

    /// A project id that names a stored project.
    @inline(never)
    func existingProject(_ text: String) async throws -> DocumentID {
        try await projectRecord(try documentID(text)).id
    }

    /// What each peer is called here, for words people read ("made bob an
    /// editor"): its name, else the name it announced, else its short id;
    /// this daemon is "this machine".
    func peerNames() async -> @Sendable (PeerID) -> String {
        var names: [PeerID: String] = [:]
        for peer in (try? await store.peers()) ?? [] {
            if let name = peer.name ?? peer.announcedName { names[peer.id] = PrintableText.escaped(name) }
        }
        let (known, me) = (names, identity.peerID)
        return { peer in peer == me ? "this machine" : known[peer] ?? peer.short }
    }

    /// The record of a stored project; a store failure is a 5xx, only a missing project a 404.
    @inline(never)
    func projectRecord(_ id: DocumentID) async throws -> DocumentRecord {
        do {
            let record = try await store.document(id)
            guard record.kind == .project else { throw APIError(.notFound, "no project \(id)") }
            guard !record.isAwaitingFounding else {
                throw APIError(.notFound, "project \(id) was offered by a peer and has not arrived yet (storyteller status shows when it syncs)")
            }
            return record
        } catch let error as StoreError where error.code == .notFound {
            throw APIError(.notFound, "no project \(id)")
        }
    }

    /// A peer this daemon has configured (added, or accepted).
    func configuredPeer(_ text: String) async throws -> PeerID {
        let peer = try peerID(text)
        guard try await store.peers().contains(where: { $0.id == peer && $0.state == .configured }) else {
            throw APIError(.notFound, "no configured peer \(peer): add it first")
        }
        return peer
    }

    static func hasControlCharacters(_ text: String) -> Bool { PrintableText.hasControlCharacters(text) }

    /// A project name: 1 to 200 bytes, no control characters (a NUL would
    /// cut it short in other programs, a newline break listings).
    func projectName(_ text: String) throws(APIError) -> String { try Self.name(text, atMost: 200) }

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
    func nodeName(_ text: String) throws(APIError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.utf8.count <= 200, !name.contains("/"), !Self.hasControlCharacters(name) else {
            throw APIError(.badRequest, "a name must be 1 to 200 bytes without '/' or control characters")
        }
        return name
    }

    /// Seconds since the daemon started.
    var uptimeSeconds: Int { Int((ContinuousClock.now - started).components.seconds) }
}
