import Foundation
import Logging
import StoryCore
import StoryStore

/// The daemon's library: one library document (a folder tree of project
/// entries) kept beside the projects. Projects created here get an entry in
/// the folder asked for; projects taken from a peer get one in "Incoming"
/// until someone files them elsewhere.
///
/// The library can be shared with peers like a project (one person's
/// machines, or a crew's common library). A daemon whose own library has no
/// folders yet adopts a library a peer shares with it (its projects' entries
/// go into that library's Incoming); one that has folders keeps its own.
/// Which library is in use is kept in the database.
actor LibraryService {
    static let settingKey = "library"
    let store: Store
    let logger: Logger
    private var libraryID: DocumentID?

    init(store: Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Opens the library (the oldest library document, created on first
    /// start) and gives every project without an entry one in the root.
    func prepare() async throws {
        let libraries = try await store.documents().filter { $0.kind == .library }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        let chosen = try await store.setting(Self.settingKey).flatMap { DocumentID($0) }.flatMap { id in
            libraries.contains { $0.id == id } ? id : nil
        }
        let id: DocumentID
        if let existing = chosen ?? libraries.first?.id {
            id = existing
        } else {
            id = try await store.createDocument(kind: .library, name: "Library", at: millisecondsSinceEpoch())
        }
        libraryID = id
        try await store.setSetting(Self.settingKey, to: id.description)
        let library = try await store.library(id)
        let orphans = try await store.documents().filter { $0.kind == .project && library.entries(for: $0.id).isEmpty }
        guard !orphans.isEmpty else { return }
        _ = try await store.editLibrary(id, at: millisecondsSinceEpoch()) { editor in
            for record in orphans { try editor.createProjectEntry(named: record.name ?? "Untitled", document: record.id) }
        }
        logger.info("filed \(orphans.count) project(s) without a library entry in the library's root")
    }

    /// The library document.
    func id() throws -> DocumentID {
        guard let libraryID else { throw ControlError(.internal, "the library is not open") }
        return libraryID
    }

    func view() async throws -> LibraryView { try await store.library(try id()).view }

    /// A document taken from a peer. A project is filed in "Incoming" unless it
    /// has an entry already, or the same peer shares this library (its entry
    /// comes with the library). A library may be adopted (`adopt`).
    func fileIncoming(_ document: DocumentID, kind: DocumentKind, name: String, from peer: String) async {
        guard kind == .project else {
            await adopt(document, from: peer)
            return
        }
        do {
            let id = try id()
            guard try await store.library(id).entries(for: document).isEmpty else { return }
            if try await store.shares(of: id).contains(where: { $0.peer == peer }) { return }
            _ = try await store.editLibrary(id, at: millisecondsSinceEpoch()) {
                try $0.createProjectEntry(named: name.isEmpty ? "Untitled" : name, document: document, in: .incoming)
            }
            logger.info("filed project \(document) (\(name)) from \(peer) in Incoming")
        } catch {
            logger.error("cannot file project \(document) in the library: \(error)")
        }
    }

    /// Switches to a library a peer shares, if this daemon's own holds no
    /// folders yet; this machine's own projects (those not shared with that
    /// peer) get entries in the shared library's Incoming.
    private func adopt(_ document: DocumentID, from peer: String) async {
        guard let current = libraryID, current != document else { return }
        do {
            let view = try await store.library(current).view
            if view.nodes.contains(where: { $0.kind == .folder && $0.id != .incoming && !$0.isInTrash }) {
                logger.warning("\(peer) shares its library \(document); keeping this daemon's own library, which has folders")
                return
            }
            let fromPeer = Set(try await store.shares().filter { $0.peer == peer }.map(\.document))
            let adopted = try await store.library(document)
            let own = view.nodes.filter { node in
                guard node.kind == .projectEntry, !node.isInTrash, let project = node.document else { return false }
                return !fromPeer.contains(project) && adopted.entries(for: project).isEmpty
            }
            if !own.isEmpty {
                _ = try await store.editLibrary(document, at: millisecondsSinceEpoch()) { editor in
                    for node in own {
                        try editor.createProjectEntry(named: node.name ?? "Untitled", document: node.document!, in: .incoming)
                    }
                }
            }
            libraryID = document
            try await store.setSetting(Self.settingKey, to: document.description)
            logger.info("using the library \(peer) shares (\(document)); \(own.count) project(s) of this machine filed in its Incoming")
        } catch {
            logger.error("cannot adopt the library \(document) from \(peer): \(error)")
        }
    }

    /// Runs a library edit, turning a refused edit into a 400/404 that says why.
    @discardableResult
    func edit<Value: Sendable>(_ body: @Sendable (inout LibraryEditor) throws -> Value) async throws -> Value {
        do {
            return try await store.editLibrary(try id(), at: millisecondsSinceEpoch(), body).value
        } catch let error as DocumentError {
            throw ControlError(error.code == .notFound ? .notFound : .badRequest, "library edit refused: \(error.message)")
        }
    }
}

/// A folder or project entry as the control API shows it. Well-known folders
/// are named "root", "trash" and "incoming".
struct LibraryNodeBody: Encodable {
    let id: String
    let kind: String
    let name: String?
    let description: String?
    let parent: String
    let depth: Int
    /// The project document of a project entry.
    let project: String?
    let createdAt: Int64
    let updatedAt: Int64
    let inTrash: Bool
    /// For a project entry: whether the project is on this machine (a shared
    /// library may list projects that were not shared with it).
    let available: Bool?

    init(_ node: LibraryNodeView, documents: Set<DocumentID>) {
        id = LibraryReference.text(of: node.id)
        kind = node.kind == .folder || node.id == .incoming ? "folder" : "project"
        name = node.name
        description = node.description
        parent = LibraryReference.text(of: node.parent)
        depth = node.depth
        project = node.document?.description
        createdAt = node.createdAt
        updatedAt = node.updatedAt
        inTrash = node.isInTrash
        available = node.document.map { documents.contains($0) }
    }
}

struct LibraryBody: Encodable {
    let id: String
    let nodes: [LibraryNodeBody]
}

/// Names a library node in a request: a node id (`12@3f…`), one of the
/// well-known folders (`root`, `trash`, `incoming`), or a path of names from
/// the root (`Films/Shorts`), which must name exactly one node.
enum LibraryReference {
    static let wellKnown: [String: OpID] = ["root": .root, "trash": .trash, "incoming": .incoming]

    static func text(of id: OpID) -> String {
        switch id {
        case .root: "root"
        case .trash: "trash"
        case .incoming: "incoming"
        default: id.description
        }
    }

    /// Resolves a reference; `inTrash` also searches the trash by path.
    static func resolve(_ reference: String, in view: LibraryView, inTrash: Bool = false) throws(ControlError) -> OpID {
        let text = reference.trimmingCharacters(in: .whitespaces)
        if let known = wellKnown[text.lowercased()] { return known }
        if let id = OpID(text) {
            guard view.node(id) != nil else { throw ControlError(.notFound, "no library node \(text)") }
            return id
        }
        let names = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !names.isEmpty else { throw ControlError(.badRequest, "'\(reference)' names no folder or project") }
        var candidates: [OpID] = [inTrash ? .trash : .root]
        for (index, name) in names.enumerated() {
            candidates = candidates.flatMap { parent in
                view.nodes.filter { $0.parent == parent && $0.name == name && (index > 0 || $0.isInTrash == inTrash) }.map(\.id)
            }
        }
        guard let first = candidates.first else { throw ControlError(.notFound, "no folder or project at '\(reference)'") }
        guard candidates.count == 1 else {
            throw ControlError(.conflict, "'\(reference)' names \(candidates.count) nodes; use an id (storyteller tree --json)")
        }
        return first
    }
}
