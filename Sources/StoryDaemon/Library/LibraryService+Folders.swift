import Foundation
import Logging
import StoryAPI
import StoryCore
import StoryStore

/// Folder shares: a shared folder is a library document of its own (its root
/// is the folder), listed where the folder was by an entry that names it.
/// Its access list is who it is shared with; every document it lists (and
/// every document the shared folders inside it list) follows that list, so
/// projects created in it, moved into it or filed under it later are shared
/// with its members at once (docs/architecture.md, "Folder shares").
extension LibraryService {
    /// One node of a subtree to copy into another library document.
    private struct Copied: Sendable {
        let id: OpID
        let parent: OpID
        let isFolder: Bool
        let name: String?
        let description: String?
        let document: DocumentID?
    }

    /// The folder document of a folder: the folder itself if it is one,
    /// else a new library document holding a copy of the folder's contents,
    /// listed by an entry where the folder was, with its name, description
    /// and place among its siblings. The folder and its old contents are
    /// purged, not put in the trash (sharing changes nothing a user did not
    /// ask for), and its id names the entry from then on (`LibraryAlias`).
    /// - Throws: `APIError` for something that is not a folder.
    func folderDocument(for place: LibraryPlace, in set: LibrarySet) async throws -> DocumentID {
        if place.node == .root && place.library != set.main { return place.library }
        guard ![OpID.root, .trash, .incoming].contains(place.node), let node = set.node(place), node.kind == .folder, !node.isInTrash
        else {
            throw APIError(.badRequest, "only a folder of the library (not the root, the trash or Incoming) is shared as a folder")
        }
        let name = node.name ?? "Folder"
        let folder = try await store.createDocument(kind: .library, name: name, at: clock.milliseconds)
        let subtree = Self.subtree(of: place.node, in: place.library, of: set)
        try await edit(in: folder) { editor in try Self.copy(subtree, from: place.node, into: .root, with: &editor) }
        let description = node.description
        let entry = try await edit(in: place.library) { editor in
            // Its place among its siblings as the document orders them (the view
            // leaves out an empty Incoming, which the root's order counts).
            let index = editor.children(of: node.parent).firstIndex(of: place.node)
            let entry = try editor.createProjectEntry(named: name, document: folder, in: node.parent, at: index)
            if let description { try editor.describe(entry, as: description) }
            // One change: out of the tree and gone for good (a node moved into it
            // meanwhile on another machine shows up in the trash there, not lost).
            try editor.delete(place.node)
            try editor.purge(place.node)
            return entry
        }
        try await store.addLibraryAlias(LibraryAlias(library: place.library, node: place.node, entry: entry))
        logger.info("folder \(set.path(of: place)) is now a shared folder (document \(folder))")
        // Its members are those of the library that lists it, and then its own.
        try await propagate(from: place.library, documents: [folder])
        return folder
    }

    /// The nodes inside a folder, in display order (parents before children).
    /// Planted entries (`LibrarySet.isPlanted`) are left out: a copy made
    /// here is filed by this daemon, so copying one would launder it into an
    /// entry that shares what its planter was never given.
    private static func subtree(of folder: OpID, in library: DocumentID, of set: LibrarySet) -> [Copied] {
        guard let view = set.views[library] else { return [] }
        var inside: Set<OpID> = [folder]
        var result: [Copied] = []
        for node in view.nodes where inside.contains(node.parent) && !set.isPlanted(node) {
            inside.insert(node.id)
            result.append(
                Copied(
                    id: node.id, parent: node.parent, isFolder: node.kind == .folder, name: node.name, description: node.description,
                    document: node.document))
        }
        return result
    }

    /// Recreates copied nodes under `target` (`source` maps to it).
    private static func copy(_ nodes: [Copied], from source: OpID, into target: OpID, with editor: inout LibraryEditor) throws {
        var mapped: [OpID: OpID] = [source: target]
        for node in nodes {
            guard let parent = mapped[node.parent] else { continue }
            if node.isFolder {
                let copy = try editor.createFolder(named: node.name ?? "Folder", in: parent)
                if let description = node.description { try editor.describe(copy, as: description) }
                mapped[node.id] = copy
            } else if let document = node.document {
                _ = try editor.createProjectEntry(named: node.name ?? "Untitled", document: document, in: parent)
            }
        }
    }

    /// Gives the members of a library document their rights to what it lists
    /// (`documents`, or all it lists; shared folders among them pass them on
    /// to what they list). Rights are only raised, never lowered, and an
    /// editor's role at most (ownership is never given). Documents this
    /// daemon may not share are left and named in the answer.
    @discardableResult
    func propagate(from library: DocumentID, documents: [DocumentID]? = nil) async throws -> [String] {
        let me = store.peerID
        let members = try await store.members(of: library).filter { $0.peer != me && $0.role >= .reader }
        guard !members.isEmpty else { return [] }
        let set = try await set()
        // Only what the library lists through entitled entries: a planted entry grants nothing.
        let entitled = Set(set.listed(in: library))
        var targets: [DocumentID] = []
        for document in documents ?? set.listed(in: library) where entitled.contains(document) {
            targets.append(document)
            if set.isFolder(document) { targets += set.listed(in: document) }
        }
        let grants = members.map { ($0.peer, min($0.role, Role.editor)) }
        let now = clock.milliseconds
        let documents = targets
        let refused: [String] = try await store.batch { store in
            var refused: [String] = []
            for document in documents {
                guard let record = try store.documentIfPresent(document), !record.isDeleted else { continue }
                let current = try store.members(of: document)
                for (peer, role) in grants where (current.first { $0.peer == peer }?.role ?? .none) < role {
                    do {
                        try store.share(document, with: peer, role: role, at: now)
                    } catch {
                        refused.append("\(record.name ?? document.description) with \(peer.short): \(error)")
                    }
                }
            }
            return refused
        }
        if !refused.isEmpty { logger.warning("not shared with the members of \(library): \(refused.joined(separator: "; "))") }
        return refused
    }

    /// What a folder or library share gave a peer, exactly, and what it did not.
    struct ShareOutcome: Sendable {
        var document: DocumentID
        var shared: [API.SharedDocument]
        var notShared: [API.NotShared]
    }

    /// Shares a folder (making it a shared folder if it is not one) and what
    /// it lists with `peer`: each project and shared folder in it that this
    /// daemon may share and whose entry was filed by someone who may share
    /// it. The rest is left and named in the answer, with why.
    /// - Throws: `.badRequest` for something not a folder, `.forbidden` if
    ///   this daemon may not share the folder.
    func share(folder place: LibraryPlace, with peer: PeerID, role: Role) async throws -> ShareOutcome {
        let set = try await set()
        let folder = try await folderDocument(for: place, in: set)
        let previous = try await store.members(of: folder).first { $0.peer == peer }?.role ?? .none
        let now = clock.milliseconds
        do {
            try await store.share(folder, with: peer, role: role, at: now)
        } catch let error as DocumentError {
            throw APIError(.forbidden, "this machine may not share that folder: \(error.message)")
        }
        try await store.setDirectShare(true, of: folder, with: peer)
        if role < previous {
            // Made read-only: what the peer has only through this folder follows it down.
            let listed = try await self.set().listed(in: folder)
            try await lower(listed, for: peer, to: role, leaving: [folder])
        }
        try await propagate(from: folder)
        let outcome = try await outcome(of: LibraryPlace(library: folder, node: .root), for: peer)
        logger.info(
            "shared folder \(set.path(of: place)) with \(peer.short) as \(role): \(outcome.shared.count) document(s), \(outcome.notShared.count) left out"
        )
        return outcome
    }

    /// What `peer` has of what a folder lists, and why it lacks the rest.
    func outcome(of place: LibraryPlace, for peer: PeerID) async throws -> ShareOutcome {
        let set = try await set()
        var roles: [DocumentID: Role] = [:]
        for member in try await store.members() where member.peer == peer { roles[member.document] = member.role }
        let entries = set.entries(under: place)
        let documents = entries.compactMap(\.node.document)
        var facts: [DocumentID: (record: DocumentRecord?, role: Role, isLegacy: Bool)] = [:]
        for fact in try await store.shareability(of: Array(Set(documents))) { facts[fact.id] = (fact.record, fact.role, fact.isLegacy) }
        var shared: [API.SharedDocument] = []
        var notShared: [API.NotShared] = []
        var seen: Set<DocumentID> = []
        for (library, node) in entries {
            guard let document = node.document, seen.insert(document).inserted else { continue }
            let path = set.path(of: LibraryPlace(library: library, node: node.id))
            let name = node.name
            let role = roles[document] ?? .none
            if !set.isEntitled(node) {
                let reason: String
                if facts[document]?.record == nil {
                    reason = "not on this machine"
                } else if node.filedBy == set.local {
                    reason =
                        facts[document]?.isLegacy == true
                        ? "made before signed authorship: share a copy" : "this machine may only read it (its owner or an editor can share it)"
                } else {
                    reason = "filed here by \(node.filedBy.map(\.short) ?? "an unknown author"), who was never given it to share"
                }
                notShared.append(API.NotShared(document: document.description, name: name, path: path, reason: reason))
            } else if role > .none {
                shared.append(
                    API.SharedDocument(
                        document: document.description, kind: set.isFolder(document) ? "folder" : "project", name: name, path: path,
                        role: role.description))
            } else {
                let localRole = facts[document]?.role ?? .none
                let reason =
                    facts[document]?.record == nil
                    ? "not on this machine"
                    : facts[document]?.isLegacy == true
                        ? "made before signed authorship: share a copy"
                        : localRole < .editor
                            ? "this machine may only read it (its owner or an editor can share it)"
                            : "it could not be shared (see the daemon's log)"
                notShared.append(API.NotShared(document: document.description, name: name, path: path, reason: reason))
            }
        }
        return ShareOutcome(document: place.library, shared: shared, notShared: notShared)
    }

    /// Stops sharing a shared folder with `peer`, and the documents in it this
    /// daemon owns that the peer has no other reason to have (shared with it
    /// directly, or through another folder or library it is a member of).
    func unshare(folder place: LibraryPlace, from peer: PeerID) async throws {
        let set = try await set()
        guard place.node == .root, place.library != set.main else {
            throw APIError(.notFound, "\(set.path(of: place)) is not a shared folder")
        }
        let folder = place.library
        let now = clock.milliseconds
        try await store.share(folder, with: peer, role: .none, at: now)
        try await store.setDirectShare(false, of: folder, with: peer)
        try await revoke(set.listed(in: folder), from: [peer], leaving: [folder] + set.listed(in: folder).filter(set.isFolder))
    }

    /// Why `peer` has `document` besides a direct share: the library
    /// documents here that list it (through entitled entries) and that the
    /// peer is a member of, each with the role it gives (at most editor).
    func reasons(for document: DocumentID, peer: PeerID) async throws -> [(library: DocumentID, path: String, role: Role)] {
        let set = try await set()
        var result: [(DocumentID, String, Role)] = []
        for library in set.views.keys.sorted() where set.listed(in: library).contains(document) {
            guard let member = try await store.members(of: library).first(where: { $0.peer == peer }), member.role >= .reader else { continue }
            let path = library == set.main ? "library" : "folder " + set.path(of: LibraryPlace(library: library, node: .root))
            result.append((library, path, min(member.role, .editor)))
        }
        return result
    }

    /// Takes `peers`' rights to `documents` this daemon owns, unless a peer
    /// has another reason to have one: a direct share, or membership of a
    /// library document (other than those in `leaving`) that lists it.
    func revoke(_ documents: [DocumentID], from peers: [PeerID], leaving: [DocumentID]) async throws {
        guard !documents.isEmpty, !peers.isEmpty else { return }
        let set = try await set()
        let direct = Set(try await store.directShares().map { "\($0.document)/\($0.peer)" })
        var reasons: [PeerID: Set<DocumentID>] = [:]
        for library in set.views.keys where !leaving.contains(library) {
            let members = try await store.members(of: library)
            for member in members where peers.contains(member.peer) {
                reasons[member.peer, default: []].formUnion(set.listed(in: library))
                reasons[member.peer, default: []].insert(library)
            }
        }
        let now = clock.milliseconds
        let kept = reasons
        try await store.batch { store in
            for document in documents where try store.localRole(of: document) == .owner {
                let members = try store.members(of: document)
                for peer in peers where members.contains(where: { $0.peer == peer && $0.role != .owner }) {
                    if direct.contains("\(document)/\(peer)") || kept[peer]?.contains(document) == true { continue }
                    try store.share(document, with: peer, role: .none, at: now)
                }
            }
        }
    }

    /// Lowers `peer`'s rights to the `documents` this daemon owns to `role`
    /// (a folder share made read-only), unless the peer has another reason to
    /// hold more: a direct share (kept as it is), or membership of another
    /// library document listing it (the role that gives, at most editor).
    /// Documents this daemon only edits keep what their owner gave: only an
    /// owner takes rights away.
    func lower(_ documents: [DocumentID], for peer: PeerID, to role: Role, leaving: [DocumentID]) async throws {
        guard !documents.isEmpty else { return }
        let set = try await set()
        let direct = Set(try await store.directShares().filter { $0.peer == peer }.map(\.document))
        var kept: [DocumentID: Role] = [:]
        for library in set.views.keys where !leaving.contains(library) {
            guard let member = try await store.members(of: library).first(where: { $0.peer == peer }), member.role > role else { continue }
            for document in set.listed(in: library) + [library] { kept[document] = max(kept[document] ?? .none, min(member.role, .editor)) }
        }
        let (now, floors) = (clock.milliseconds, kept)
        try await store.batch { store in
            for document in documents where !direct.contains(document) {
                guard try store.localRole(of: document) == .owner,
                    let current = try store.members(of: document).first(where: { $0.peer == peer })?.role, current != .owner
                else { continue }
                let target = max(role, floors[document] ?? .none)
                if target < current { try store.share(document, with: peer, role: target, at: now) }
            }
        }
    }

    /// Moves a node (a folder, a project entry or a shared folder's entry)
    /// into a folder of another library document: a copy there, the original
    /// to the trash; what it lists follows the new place's members and leaves
    /// the old place's (unless they have another reason to have it).
    func move(_ place: LibraryPlace, acrossTo target: LibraryPlace, at index: Int?) async throws -> LibraryPlace {
        let set = try await set()
        guard let node = set.node(place) else { throw APIError(.notFound, "no such folder or project entry") }
        guard !set.isPlanted(node) else {
            throw APIError(
                .forbidden,
                "\(node.name ?? "that entry") was filed by \(node.filedBy.map(\.short) ?? "an unknown author"), who may not share that project; it cannot be moved, only deleted"
            )
        }
        let copied = Copied(
            id: node.id, parent: node.parent, isFolder: node.kind == .folder, name: node.name, description: node.description,
            document: node.document)
        let inside = Self.subtree(of: place.node, in: place.library, of: set)
        let created: OpID? = try await edit(in: target.library) { editor in
            let copy: OpID
            if copied.isFolder {
                copy = try editor.createFolder(named: copied.name ?? "Folder", in: target.node, at: index)
                if let description = copied.description { try editor.describe(copy, as: description) }
                try Self.copy(inside, from: copied.id, into: copy, with: &editor)
            } else if let document = copied.document {
                copy = try editor.createProjectEntry(named: copied.name ?? "Untitled", document: document, in: target.node, at: index)
            } else {
                return nil
            }
            return copy
        }
        guard let created else { throw APIError(.badRequest, "that entry cannot be moved") }
        try await edit(in: place.library) { editor in try editor.delete(place.node) }
        let documents = ([copied.document].compactMap { $0 } + inside.compactMap(\.document))
        var moved: [DocumentID] = []
        for document in documents {
            moved.append(document)
            if set.isFolder(document) { moved += set.listed(in: document) }
        }
        try await propagate(from: target.library, documents: documents)
        let leaving = try await store.members(of: place.library).map(\.peer).filter { $0 != store.peerID }
        try await revoke(moved, from: leaving, leaving: [place.library])
        return LibraryPlace(library: target.library, node: created)
    }

    /// Deletes a shared folder: for everyone who shares it (its document says
    /// so; they see it in their trash) when this daemon may edit it, and its
    /// entry here goes to the trash.
    /// - Throws: `APIError(.readOnly)` when this daemon may only read it and no library here lists it.
    func delete(folder: DocumentID, in set: LibrarySet) async throws {
        let role = try await store.localRole(of: folder)
        let entry = set.mounts[folder]
        var entryEditable = false
        if let entry { entryEditable = try await store.localRole(of: entry.library) >= .editor }
        guard role >= .editor || entryEditable else {
            throw APIError(
                .readOnly, "\(set.folders[folder]?.name ?? "that folder") was shared with this machine read-only; it cannot delete it for the others")
        }
        if role >= .editor { try await edit(in: folder) { try $0.setDeleted(true) } }
        if let entry, entryEditable, set.node(entry)?.isInTrash == false { try await edit(in: entry.library) { try $0.delete(entry.node) } }
    }

    /// Restores a deleted shared folder for everyone (and its entry here).
    func restore(folder: DocumentID, in set: LibrarySet) async throws {
        let role = try await store.localRole(of: folder)
        guard role >= .editor else {
            throw APIError(.readOnly, "\(set.folders[folder]?.name ?? "that folder") was shared with this machine read-only; it cannot restore it")
        }
        try await edit(in: folder) { try $0.setDeleted(false) }
        if let entry = set.mounts[folder], set.node(entry)?.isInTrash == true, try await store.localRole(of: entry.library) >= .editor {
            try await edit(in: entry.library) { _ = try $0.restore(entry.node) }
        }
    }

    /// A shared folder deleted or restored elsewhere: its entries in the
    /// libraries here this daemon may edit follow it into or out of the trash.
    func followFolderTrash(_ folder: DocumentID) async {
        do {
            guard folder != (try id()), let record = try await store.documentIfPresent(folder), record.kind == .library else { return }
            let deleted = try await store.library(folder).deletedAt != nil
            let set = try await set()
            for (libraryID, view) in set.views where libraryID != folder {
                let entries = view.nodes.filter { $0.document == folder && $0.isInTrash != deleted && (deleted || $0.parent == .trash) }
                guard !entries.isEmpty, try await store.localRole(of: libraryID) >= .editor else { continue }
                try await edit(in: libraryID) { editor in
                    for entry in entries { if deleted { try editor.delete(entry.id) } else { _ = try editor.restore(entry.id) } }
                }
            }
        } catch {
            logger.error("cannot move the entries of shared folder \(folder) with it to or from the trash: \(error)")
        }
    }
}
