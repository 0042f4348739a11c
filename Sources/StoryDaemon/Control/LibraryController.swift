import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// `library`: the folder tree (with the shared folders in it), folders, and
/// nodes (show, rename, move, delete, restore, share).
struct LibraryController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let library: LibraryService
    let trash: ProjectTrash
    let name: String

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("library") { _, _ in .json(try await libraryTree()) }
        routes.post("library/folders") { request, context in
            let body = try await request.decode(API.CreateFolder.self, context: context)
            let name = try ControlAPI.nodeName(body.name)
            let set = try await library.set()
            let parent = try LibraryService.folder(try set.resolve(body.parent ?? "root"), in: set)
            if let index = body.index, index < 0 { throw APIError(.badRequest, "index must be 0 or more") }
            let id = try await library.edit(in: parent.library) { try $0.createFolder(named: name, in: parent.node, at: body.index) }
            return .json(try await node(LibraryPlace(library: parent.library, node: id)), status: .created)
        }
        routes.get("library/nodes/:node") { _, context in
            .json(try await node(try await library.set().resolve(try context.parameter("node"))))
        }
        routes.patch("library/nodes/:node") { request, context in
            let set = try await library.set()
            let place = try editable(try set.resolve(try context.parameter("node")), in: set)
            let body = try await request.decode(API.UpdateNode.self, context: context)
            guard body.name != nil || body.description != nil else { throw APIError(.badRequest, "give 'name' and/or 'description'") }
            let name = try body.name.map(ControlAPI.nodeName)
            guard (body.description?.utf8.count ?? 0) <= 10_000 else { throw APIError(.badRequest, "description is over 10000 bytes") }
            let description = body.description
            try await library.edit(in: place.library) { editor in
                if let name { try editor.rename(place.node, to: name) }
                if let description { try editor.describe(place.node, as: description) }
            }
            return .json(try await node(place))
        }
        routes.post("library/nodes/:node/move") { request, context in
            .json(try await moveNode(try context.parameter("node"), try await request.decode(API.MoveNode.self, context: context)))
        }
        routes.delete("library/nodes/:node") { _, context in
            let set = try await library.set()
            let resolved = try set.resolve(try context.parameter("node"))
            if resolved.node == .root && resolved.library != set.main {
                try await library.delete(folder: resolved.library, in: set)
                return .json(try await node(resolved))
            }
            let place = try editable(resolved, in: set)
            try await library.edit(in: place.library) { try $0.delete(place.node) }
            return .json(try await node(place))
        }
        routes.post("library/nodes/:node/restore") { _, context in
            let set = try await library.set()
            let place = try set.resolve(try context.parameter("node"), inTrash: true)
            if place.node == .root && place.library != set.main {
                try await library.restore(folder: place.library, in: set)
                return .json(try await node(place))
            }
            try await library.edit(in: place.library) { try $0.restore(place.node) }
            return .json(try await node(place))
        }
        routes.get("library/nodes/:node/shares") { _, context in
            let set = try await library.set()
            let place = try set.resolve(try context.parameter("node"))
            guard place.node == .root, place.library != set.main else { return .json([API.Share]()) }
            return .json(try await lookup.shares(of: place.library))
        }
        routes.put("library/nodes/:node/shares/:peer") { request, context in
            let set = try await library.set()
            let place = try set.resolve(try context.parameter("node"))
            let peer = try await lookup.configuredPeer(try context.parameter("peer"))
            let mode = try await SharesController.shareMode(request, context)
            let outcome = try await library.share(folder: place, with: peer, role: mode.role)
            return .json(
                API.Share(
                    project: outcome.document.description, peer: peer.description, mode: mode.rawValue, role: mode.role.description,
                    shared: outcome.shared, notShared: outcome.notShared))
        }
        routes.delete("library/nodes/:node/shares/:peer") { _, context in
            let set = try await library.set()
            let place = try set.resolve(try context.parameter("node"))
            let peer = try lookup.peerID(try context.parameter("peer"))
            guard place.node == .root, place.library != set.main,
                try await store.members(of: place.library).contains(where: { $0.peer == peer && $0.role != .owner })
            else {
                throw APIError(.notFound, "\(set.path(of: place)) is not shared with \(peer)")
            }
            try await library.unshare(folder: place, from: peer)
            return .json(API.Unshared(unshared: peer.description))
        }
    }

    /// The node an operation on `place` changes: a shared folder's root is
    /// changed through the entry that lists it.
    private func editable(_ place: LibraryPlace, in set: LibrarySet) throws -> LibraryPlace {
        guard let entry = set.entry(for: place) else {
            throw APIError(.badRequest, "\(set.path(of: place)) was shared with this machine; it is not in a library here to change it")
        }
        return entry
    }

    /// Moves a node (or files a project from Incoming): `LibraryService.move(_:into:at:)`.
    func moveNode(_ reference: String, _ body: API.MoveNode) async throws -> API.LibraryNode {
        try await node(try await library.move(reference, into: body.folder, at: body.index))
    }

    func node(_ place: LibraryPlace) async throws -> API.LibraryNode {
        let set = try await library.set()
        let documents = Set(try await store.foundedDocuments().map(\.id))
        if place.node == .root && place.library != set.main {
            if let entry = set.entry(for: place), let node = set.node(entry) {
                return API.LibraryNode(
                    node, in: entry.library, set: set, depth: node.depth,
                    parent: set.text(of: LibraryPlace(library: entry.library, node: node.parent)), documents: documents)
            }
            let folder = set.folders[place.library]
            return API.LibraryNode(
                id: set.text(of: place), kind: "folder", name: folder?.name, description: nil, parent: "root", depth: 0, project: nil,
                createdAt: 0, updatedAt: 0, inTrash: false, available: true, folder: place.library.description, library: place.library.description)
        }
        guard let node = set.node(place) else { throw APIError(.notFound, "no folder or project entry \(set.text(of: place))") }
        return API.LibraryNode(
            node, in: place.library, set: set, depth: node.depth, parent: set.text(of: LibraryPlace(library: place.library, node: node.parent)),
            documents: documents)
    }

    /// The library as shown: this daemon's tree, with the contents of the
    /// shared folders it lists in place and the virtual Incoming; then the
    /// shared folders and libraries peers share with it that no library here lists.
    func libraryTree() async throws -> API.Library {
        let set = try await library.set()
        let documents = Set(try await store.foundedDocuments().map(\.id))
        var nodes = expanded(set.main, in: set, depth: 0, documents: documents)
        // What the shared folders listed here lost to their trash, after this library's trash.
        for (folder, mount) in set.mounts.sorted(by: { set.path(of: $0.value) < set.path(of: $1.value) }) where set.node(mount)?.isInTrash == false {
            nodes += expanded(folder, in: set, depth: 0, documents: documents).filter(\.inTrash)
        }
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
        for folder in set.topLevelFolders + set.deletedTopLevelFolders {
            let info = set.folders[folder]
            shared.append(
                API.SharedLibrary(
                    id: folder.description, owner: info?.owner?.description, role: info?.role.description ?? "none",
                    nodes: expanded(folder, in: set, depth: 0, documents: documents), name: info?.name, deletedAt: info?.deletedAt))
        }
        return API.Library(id: set.main.description, nodes: nodes, shared: shared)
    }

    /// A library document's nodes in display order, each shared folder's
    /// contents after its entry (deeper by its depth); `visiting` stops a
    /// folder that lists itself through others.
    private func expanded(
        _ library: DocumentID, in set: LibrarySet, depth: Int, documents: Set<DocumentID>, visiting: Set<DocumentID> = [],
        rootParent: String? = nil
    ) -> [API.LibraryNode] {
        guard let view = set.views[library] else { return [] }
        var result: [API.LibraryNode] = []
        for node in view.nodes {
            // The contents of a shared folder hang under the entry that lists it.
            let parent =
                node.parent == .root && library != set.main
                ? rootParent ?? set.text(of: LibraryPlace(library: library, node: .root))
                : set.text(of: LibraryPlace(library: library, node: node.parent))
            result.append(API.LibraryNode(node, in: library, set: set, depth: depth + node.depth, parent: parent, documents: documents))
            if !node.isInTrash, let folder = node.document, set.isFolder(folder), !visiting.contains(folder), set.mounts[folder]?.node == node.id,
                set.mounts[folder]?.library == library
            {
                result += expanded(
                    folder, in: set, depth: depth + node.depth + 1, documents: documents, visiting: visiting.union([library]),
                    rootParent: set.text(of: LibraryPlace(library: library, node: node.id))
                ).filter { !$0.inTrash }
            }
        }
        return result
    }
}
