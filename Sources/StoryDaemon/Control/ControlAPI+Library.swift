import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// `library`: the folder tree, folders, and nodes (show, rename, move, delete, restore).
extension ControlAPI {
    func addLibraryRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("library") { _, _ in .json(try await libraryTree()) }
        routes.post("library/folders") { request, context in
            let body = try await request.decode(API.CreateFolder.self, context: context)
            let name = try nodeName(body.name)
            let parent = try LibraryReference.resolve(body.parent ?? "root", in: try await library.view())
            if let index = body.index, index < 0 { throw APIError(.badRequest, "index must be 0 or more") }
            let id = try await library.edit { try $0.createFolder(named: name, in: parent, at: body.index) }
            return .json(try await node(id), status: .created)
        }
        routes.get("library/nodes/:node") { _, context in
            .json(try await node(try LibraryReference.resolve(try context.parameter("node"), in: try await library.view())))
        }
        routes.patch("library/nodes/:node") { request, context in
            let id = try LibraryReference.resolve(try context.parameter("node"), in: try await library.view())
            let body = try await request.decode(API.UpdateNode.self, context: context)
            guard body.name != nil || body.description != nil else { throw APIError(.badRequest, "give 'name' and/or 'description'") }
            let name = try body.name.map(nodeName)
            guard (body.description?.utf8.count ?? 0) <= 10_000 else { throw APIError(.badRequest, "description is over 10000 bytes") }
            let description = body.description
            try await library.edit { editor in
                if let name { try editor.rename(id, to: name) }
                if let description { try editor.describe(id, as: description) }
            }
            return .json(try await node(id))
        }
        routes.post("library/nodes/:node/move") { request, context in
            .json(try await moveNode(try context.parameter("node"), try await request.decode(API.MoveNode.self, context: context)))
        }
        routes.delete("library/nodes/:node") { _, context in
            let id = try LibraryReference.resolve(try context.parameter("node"), in: try await library.view())
            try await library.edit { try $0.delete(id) }
            return .json(try await node(id))
        }
        routes.post("library/nodes/:node/restore") { _, context in
            let id = try LibraryReference.resolve(try context.parameter("node"), in: try await library.view(), inTrash: true)
            try await library.edit { try $0.restore(id) }
            return .json(try await node(id))
        }
    }

    /// Moves a node into a folder or within its folder; a project in the
    /// virtual Incoming is filed (given an entry).
    func moveNode(_ reference: String, _ body: API.MoveNode) async throws -> API.LibraryNode {
        let view = try await library.view()
        if let index = body.index, index < 0 { throw APIError(.badRequest, "index must be 0 or more") }
        if let project = DocumentID(reference.trimmingCharacters(in: .whitespaces)),
            try await library.incoming().contains(where: { $0.id == project })
        {
            guard let folderText = body.folder else { throw APIError(.badRequest, "give 'folder' to file the project in") }
            let folder = try LibraryReference.resolve(folderText, in: view)
            try await library.shareWithMembers(project)
            let name = try await store.document(project).name ?? "Untitled"
            let entry = try await library.edit { try $0.createProjectEntry(named: name, document: project, in: folder, at: body.index) }
            return try await node(entry)
        }
        let id = try LibraryReference.resolve(reference, in: view)
        if let folderText = body.folder {
            let folder = try LibraryReference.resolve(folderText, in: view)
            try await library.edit { try $0.move(id, to: folder, at: body.index) }
        } else {
            guard let index = body.index else { throw APIError(.badRequest, "give 'folder' to move into, or 'index' to reorder") }
            try await library.edit { try $0.reorder(id, to: index) }
        }
        return try await node(id)
    }

    func node(_ id: OpID) async throws -> API.LibraryNode {
        guard let node = try await library.view().node(id) else { throw APIError(.notFound, "no library node \(id)") }
        return API.LibraryNode(node, documents: Set(try await store.documents().map(\.id)))
    }

    /// The library as shown: this daemon's tree with the virtual Incoming,
    /// and the libraries peers share with it.
    func libraryTree() async throws -> API.Library {
        let documents = Set(try await store.documents().map(\.id))
        var nodes = try await library.view().nodes.map { API.LibraryNode($0, documents: documents) }
        let incoming = try await library.incoming().map { API.LibraryNode(incoming: $0) }
        if !incoming.isEmpty {
            let trashStart = nodes.firstIndex { $0.inTrash } ?? nodes.endIndex
            var insertion = trashStart
            if let folder = nodes.firstIndex(where: { $0.id == "incoming" }) {
                insertion = folder + 1
                while insertion < trashStart && nodes[insertion].depth > nodes[folder].depth { insertion += 1 }
            } else {
                nodes.insert(.incomingFolder, at: insertion)
                insertion += 1
            }
            nodes.insert(contentsOf: incoming, at: insertion)
        }
        var shared: [API.SharedLibrary] = []
        for record in try await library.sharedLibraries() {
            let document = try await store.library(record.id)
            shared.append(
                API.SharedLibrary(
                    id: record.id.description, owner: document.owner?.description, role: document.localRole.description,
                    nodes: document.view.nodes.map { API.LibraryNode($0, documents: documents) }))
        }
        return API.Library(id: try await library.id().description, nodes: nodes, shared: shared)
    }
}
