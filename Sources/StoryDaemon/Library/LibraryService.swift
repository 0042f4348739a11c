import Foundation
import Logging
import StoryAPI
import StoryCore
import StoryStore

/// The daemon's library: one library document (a folder tree of project
/// entries) owned by this daemon, beside the projects.
///
/// Sharing follows the documents' access lists (docs/threat-model.md):
/// - Projects taken from peers are not filed in the library: they show in a
///   virtual "Incoming" (projects on this machine with no entry in any
///   library here) until a user files them. Filing is an explicit act, so
///   nothing received ends up in a library that is shared onwards.
/// - Sharing the library shares every project it lists (so a share reveals
///   only what it shares), and a project filed in a shared library later is
///   shared with its members too; a project this daemon may not share
///   cannot be filed there.
/// - A library a peer shares is shown beside this one, never adopted: this
///   daemon's own projects are never filed in another's library by itself.
actor LibraryService {
    static let settingKey = "library"
    let store: Store
    let clock: WallClock
    let logger: Logger
    private var libraryID: DocumentID?

    init(store: Store, clock: WallClock, logger: Logger) {
        self.clock = clock
        self.store = store
        self.logger = logger
    }

    /// Opens this daemon's library (the one in the settings if this daemon
    /// owns it, else the oldest it owns, else a new one), upgrades one made
    /// before signed authorship into a new library it owns, and files this
    /// daemon's own projects that have no entry in the root.
    func prepare() async throws {
        let now = clock.milliseconds
        let owned = Set(try await store.members().filter { $0.peer == store.peerID && $0.role == .owner }.map(\.document))
        let libraries = try await store.documents().filter { $0.kind == .library && owned.contains($0.id) && !$0.isDeleted }
            .sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        let chosen = try await store.setting(Self.settingKey).flatMap { DocumentID($0) }.flatMap { id in
            libraries.contains { $0.id == id } ? id : nil
        }
        var id: DocumentID
        if let existing = chosen ?? libraries.first?.id {
            id = existing
        } else {
            id = try await store.createDocument(kind: .library, name: "Library", at: now)
        }
        if try await store.library(id).isLegacy {
            let legacy = id
            id = try await store.copyLibrary(legacy, at: now)
            try await store.setHidden(true, of: legacy, at: now)
            logger.notice("upgraded the library to signed authorship (\(legacy) is now \(id))")
        }
        libraryID = id
        try await store.setSetting(Self.settingKey, to: id.description)
        let library = try await store.library(id)
        let mine = Set(try await store.members().filter { $0.peer == store.peerID && $0.role == .owner }.map(\.document))
        let orphans = try await store.documents().filter {
            $0.kind == .project && mine.contains($0.id) && library.entries(for: $0.id).isEmpty
        }
        guard !orphans.isEmpty else { return }
        for chunk in stride(from: 0, to: orphans.count, by: 1_000).map({ Array(orphans[$0..<min($0 + 1_000, orphans.count)]) }) {
            _ = try await store.editLibrary(id, at: now) { editor in
                for record in chunk { try editor.createProjectEntry(named: record.name ?? "Untitled", document: record.id) }
            }
        }
        logger.info("filed \(orphans.count) project(s) of this machine without a library entry in the library's root")
    }

    /// The library document.
    func id() throws -> DocumentID {
        guard let libraryID else { throw APIError(.internal, "the library is not open") }
        return libraryID
    }

    func view() async throws -> LibraryView { try await store.library(try id()).view }

    /// Projects on this machine that no library document here lists (the
    /// main library, shared folders, libraries peers share): the virtual Incoming.
    func incoming() async throws -> [DocumentRecord] {
        let set = try await set()
        var filed: Set<DocumentID> = []
        for view in set.views.values {
            for node in view.nodes where node.kind == .projectEntry {
                if let document = node.document { filed.insert(document) }
            }
        }
        return try await store.foundedDocuments().filter { $0.kind == .project && !$0.isDeleted && !filed.contains($0.id) }
    }

    /// A document taken from a peer: shown at once (a project in Incoming, a
    /// library beside this one); nothing is filed.
    func fileIncoming(_ document: DocumentID, kind: DocumentKind, name: String, from peer: PeerID) async {
        logger.info("received \(kind) \(document) (\(name)) from \(peer)")
    }

    /// Shares the library and what it lists with `peer`: every project and
    /// shared folder this daemon may share whose entry was filed by someone
    /// who may share it; the rest is left and named in the answer.
    /// - Throws: `.forbidden` if this daemon may not share the library.
    func share(with peer: PeerID, role: Role) async throws -> ShareOutcome {
        let library = try id()
        let projects = try await listedDocuments()
        var shareable: [DocumentID] = []
        for record in projects {
            let localRole = try await store.localRole(of: record.id)
            let legacy = record.kind == .project ? try await store.project(record.id).isLegacy : false
            let current = try await store.members(of: record.id).first { $0.peer == peer }?.role ?? .none
            // An editor cannot lower what the owner gave: that one keeps what it has.
            if !legacy && (localRole == .owner || (localRole == .editor && current <= role)) { shareable.append(record.id) }
        }
        let now = clock.milliseconds
        let ids = shareable
        // One transaction for the library and all its projects (one disk sync, not one each).
        try await store.batch { store in
            try store.share(library, with: peer, role: role, at: now)
            for id in ids where try store.members(of: id).first(where: { $0.peer == peer })?.role ?? .none != role {
                try store.share(id, with: peer, role: role, at: now)
            }
        }
        let outcome = try await outcome(of: LibraryPlace(library: library, node: .root), for: peer)
        logger.info("shared the library with \(peer.short) as \(role): \(outcome.shared.count) document(s), \(outcome.notShared.count) left out")
        return outcome
    }

    /// Stops sharing the library with `peer`, and the projects it lists that
    /// this daemon owns.
    func unshare(from peer: PeerID) async throws {
        let now = clock.milliseconds
        let library = try id()
        let ids = try await listedDocuments().map(\.id)
        try await store.batch { store in
            try store.share(library, with: peer, role: .none, at: now)
            for id in ids {
                let current = try store.members(of: id).first { $0.peer == peer }?.role ?? .none
                if try store.localRole(of: id) == .owner && current > .none && current != .owner {
                    try store.share(id, with: peer, role: .none, at: now)
                }
            }
        }
    }

    /// Records of the documents on this machine the library lists: its
    /// projects, its shared folders and what those list.
    private func listedDocuments() async throws -> [DocumentRecord] {
        let listed = Set(try await set().listed(in: try id()))
        return try await store.documents().filter { listed.contains($0.id) && !$0.isDeleted }
    }

    /// Runs an edit of the main library, turning a refused edit into a 400/404 that says why.
    @discardableResult
    func edit<Value: Sendable>(_ body: @Sendable (inout LibraryEditor) throws -> Value) async throws -> Value {
        try await edit(in: try id(), body)
    }

    /// Runs an edit of a library document (the main library or a shared
    /// folder), turning a refused edit into a 400/403/404 that says why.
    @discardableResult
    func edit<Value: Sendable>(in library: DocumentID, _ body: @Sendable (inout LibraryEditor) throws -> Value) async throws -> Value {
        do {
            return try await store.editLibrary(library, at: clock.milliseconds, body).value
        } catch let error as DocumentError {
            switch error.code {
            case .notFound: throw APIError(.notFound, "library edit refused: \(error.message)")
            case .forbidden: throw APIError(.readOnly, "this machine may only read that shared folder: \(error.message)")
            default: throw APIError(.badRequest, "library edit refused: \(error.message)")
            }
        }
    }

    /// Files a project in a folder (a new entry there) and shares it with the
    /// members of the library document holding the folder.
    /// - Throws: `APIError(.conflict)` when this daemon may not share it with
    ///   them (the entry stays: the project is filed, and private).
    @discardableResult
    func file(_ project: DocumentID, named name: String, in folder: LibraryPlace, at index: Int? = nil) async throws -> OpID {
        let entry = try await edit(in: folder.library) { try $0.createProjectEntry(named: name, document: project, in: folder.node, at: index) }
        let refused = try await propagate(from: folder.library, documents: [project])
        guard refused.isEmpty else {
            throw APIError(
                .conflict,
                "the folder is shared, and this machine may not share that project with the people it is shared with: \(refused.joined(separator: "; "))"
            )
        }
        return entry
    }

    /// Moves a node into a folder (of the same library document or another:
    /// into or out of a shared folder) or within its folder; a project in the
    /// virtual Incoming (named by its id) is filed (given an entry).
    /// - Returns: where the node is now.
    /// - Throws: `APIError` for a reference that names nothing or several
    ///   things, a target that is not a folder, or a refused edit.
    func move(_ reference: String, into folderReference: String?, at index: Int?) async throws -> LibraryPlace {
        let set = try await set()
        if let index, index < 0 { throw APIError(.badRequest, "index must be 0 or more") }
        if let project = DocumentID(reference.trimmingCharacters(in: .whitespaces)), try await incoming().contains(where: { $0.id == project }) {
            guard let folderReference else { throw APIError(.badRequest, "give 'folder' to file the project in") }
            let folder = try Self.folder(try set.resolve(folderReference), in: set)
            let name = try await store.document(project).name ?? "Untitled"
            return LibraryPlace(library: folder.library, node: try await file(project, named: name, in: folder, at: index))
        }
        let resolved = try set.resolve(reference)
        guard let place = set.entry(for: resolved) else {
            throw APIError(.badRequest, "\(set.path(of: resolved)) was shared with this machine; it is not in a library here to change it")
        }
        if let folderReference {
            let folder = try Self.folder(try set.resolve(folderReference), in: set)
            if folder.library == place.library {
                try await edit(in: place.library) { try $0.move(place.node, to: folder.node, at: index) }
                return place
            }
            return try await move(place, acrossTo: folder, at: index)
        }
        guard let index else { throw APIError(.badRequest, "give 'folder' to move into, or 'index' to reorder") }
        try await edit(in: place.library) { try $0.reorder(place.node, to: index) }
        return place
    }

    /// A place new things go in: a folder, the root, Incoming or a shared folder's root.
    /// - Throws: `APIError(.badRequest)` for anything else.
    static func folder(_ place: LibraryPlace, in set: LibrarySet) throws -> LibraryPlace {
        guard place.node == .root || place.node == .incoming || set.node(place)?.kind == .folder else {
            throw APIError(.badRequest, "\(set.path(of: place)) is not a folder")
        }
        return place
    }

    /// Every library document here (see `LibrarySet`).
    func set() async throws -> LibrarySet {
        let main = try id()
        var views: [DocumentID: LibraryView] = [main: try await store.library(main).view]
        var folders: [DocumentID: LibrarySet.Folder] = [:]
        for record in try await store.foundedDocuments() where record.kind == .library && record.id != main && !record.isDeleted {
            let document = try await store.library(record.id)
            guard !document.isLegacy else { continue }
            views[record.id] = document.view
            folders[record.id] = LibrarySet.Folder(
                name: record.name ?? "Shared folder", owner: document.owner, role: document.localRole, deletedAt: document.deletedAt)
        }
        var sharers: [DocumentID: Set<PeerID>] = [:]
        for member in try await store.members() where member.role >= .editor { sharers[member.document, default: []].insert(member.peer) }
        return LibrarySet(
            main: main, views: views, folders: folders, sharers: sharers, local: store.peerID, aliases: try await store.libraryAliases())
    }
}
