import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore

/// `projects`: list, create, copy, show, rename, delete, restore, purge.
struct ProjectsController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let library: LibraryService
    let trash: ProjectTrash
    let clock: WallClock
    let blobs: BlobStore
    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects") { request, _ in
            let query = try request.decodeQuery(API.ProjectsQuery.self)
            return .json(try await projects(includingDeleted: query.deleted ?? false, taggedWith: query.tag))
        }
        routes.post("projects") { request, context in
            try await project(try await createProject(try await request.decode(API.CreateProject.self, context: context)), status: .created)
        }
        routes.post("projects/:project/copy") { request, context in
            let source = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decodeIfPresent(API.CopyProject.self, context: context) ?? API.CopyProject()
            return try await project(try await copyProject(source, body), status: .created)
        }
        routes.get("projects/:project") { request, context in
            let query = try request.decodeQuery(API.ProjectQuery.self)
            return try await project(try lookup.documentID(try context.parameter("project")), withPoints: query.points ?? true, at: query.at)
        }
        routes.patch("projects/:project") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            try await renameProject(id, to: try await request.decode(API.CreateProject.self, context: context).name)
            return try await project(id)
        }
        routes.delete("projects/:project") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            _ = try await trash.delete(id)
            return try await project(id)
        }
        routes.post("projects/:project/restore") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            try await trash.restore(id)
            return try await project(id)
        }
        routes.post("projects/:project/purge") { request, context in
            let force = try request.decodeQuery(API.PurgeQuery.self).force ?? false
            let id = try await lookup.existingProject(try context.parameter("project"))
            let purged = try await trash.purge(id, force: force)
            return .json(
                API.PurgeResult(purged: id.description, name: purged.record.name, awaiting: purged.awaiting.map(\.description)))
        }
    }

    /// The projects here, from their records and the store's tag index
    /// (no document is loaded); with `tag`, only those carrying it.
    /// - Throws: `APIError(.badRequest)` for a tag that could not be one.
    func projects(includingDeleted: Bool, taggedWith tag: String? = nil) async throws -> [API.ProjectSummary] {
        var tagged: Set<DocumentID>?
        if let tag {
            let normalized: String
            do { normalized = try Tag.normalized(tag) } catch { throw APIError(.badRequest, error.message) }
            tagged = try await store.projects(taggedWith: normalized)
        }
        let tags = try await store.projectTags()
        return try await store.foundedDocuments().filter {
            $0.kind == .project && (!$0.isDeleted || includingDeleted) && (tagged?.contains($0.id) ?? true)
        }.map {
            API.ProjectSummary(
                id: $0.id.description, name: $0.name, created: $0.created, deleted: $0.isDeleted,
                trash: API.Trash($0, retention: trash.retention, localPeer: identity.peerID), tags: tags[$0.id] ?? [])
        }
    }

    func createProject(_ body: API.CreateProject) async throws -> DocumentID {
        let name = try ControlAPI.projectName(body.name)
        let folder = try await library.folderForNewProject(body.folder)
        let now = clock.milliseconds
        let id = try await store.createDocument(kind: .project, name: name, at: now)
        _ = try await store.editProject(id, at: now) { try $0.set(.title, to: .string(name)) }
        try await library.file(id, named: name, in: folder)
        return id
    }

    func copyProject(_ source: DocumentID, _ body: API.CopyProject) async throws -> DocumentID {
        let name = try body.name.map(ControlAPI.projectName)
        let folder = try await library.folderForNewProject(body.folder)
        let id = try await store.copyProject(source, name: name, at: clock.milliseconds)
        let title = try await store.document(id).name ?? "Untitled"
        try await library.file(id, named: title, in: folder)
        return id
    }

    func renameProject(_ id: DocumentID, to text: String) async throws {
        let name = try ControlAPI.projectName(text)
        // The signed edit first: a read-only project is refused before anything changes.
        _ = try await store.editProject(id, session: ControlAPI.defaultSession, at: clock.milliseconds) { try $0.set(.title, to: .string(name)) }
        try await store.setName(name, of: id)
        let set = try await library.set()
        for (libraryID, view) in set.views {
            let entries = view.nodes.filter { $0.document == id }.map(\.id)
            guard !entries.isEmpty, (try? await store.localRole(of: libraryID)) ?? .none >= .editor else { continue }
            try await library.edit(in: libraryID) { editor in for entry in entries { try editor.rename(entry, to: name) } }
        }
    }

    /// The project as an answer, streamed (bounded memory for any size);
    /// with `at`, as it was at that version (`lookup.projectDocument(_:at:)`).
    func project(_ id: DocumentID, status: HTTPResponse.Status = .ok, withPoints: Bool = true, at: String? = nil) async throws -> Response {
        let record = try await lookup.projectRecord(id)
        let (document, version) = try await lookup.projectDocument(id, at: at)
        var mediaStates: [BlobHash: String] = [:]
        let proven = try await store.provenBlobs(of: id)
        for media in document.view.media { mediaStates[media.hash] = await lookup.blobState(media, proven: proven).state }
        let stream = try ProjectJSONStream(
            record: record, document: document,
            trash: API.Trash(record, retention: trash.retention, localPeer: identity.peerID), withPoints: withPoints,
            mediaStates: mediaStates, version: version)
        return .streaming(stream.stream, contentType: "application/json", status: status)
    }
}

extension LibraryService {
    /// The folder a new project is filed in (a shared folder's too); the root by default.
    func folderForNewProject(_ reference: String?) async throws -> LibraryPlace {
        let set = try await self.set()
        let place = try set.resolve(reference ?? "root")
        guard place.node == .root || place.node == .incoming || set.node(place)?.kind == .folder else {
            throw APIError(.badRequest, "\(set.path(of: place)) is not a folder")
        }
        return place
    }
}
