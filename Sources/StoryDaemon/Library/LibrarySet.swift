import Foundation
import StoryAPI
import StoryCore
import StoryStore

/// A node of one of the library documents here: the main library, or a
/// shared folder (a library document of its own, mounted in another by an
/// entry that names it, or shared with this daemon by a peer).
struct LibraryPlace: Hashable, Sendable {
    var library: DocumentID
    var node: OpID
}

/// Every library document here, read at once: how a folder path or a node id
/// is resolved across shared folders, and how the tree is shown.
///
/// A shared folder is a library document whose root is the folder; the
/// library that holds it lists it with an entry naming the document (as a
/// project entry names a project). A path walks into it there; a folder
/// document no library here lists (a peer shared it with this daemon) is a
/// top-level folder under its own name.
struct LibrarySet: Sendable {
    /// This daemon's own library.
    let main: DocumentID
    /// Each library document here, and its view.
    let views: [DocumentID: LibraryView]
    /// Names, owners and roles of the folder documents (not the main library).
    let folders: [DocumentID: Folder]

    struct Folder: Sendable {
        var name: String
        var owner: PeerID?
        var role: Role
        /// When it was deleted for everyone (it is in the trash), or nil.
        var deletedAt: Int64? = nil
    }

    /// Where each folder document is listed (its first live entry), if anywhere.
    let mounts: [DocumentID: LibraryPlace]
    /// Who may share each document here: its owner and editors, by its access list.
    let sharers: [DocumentID: Set<PeerID>]
    /// This daemon's identity.
    let local: PeerID
    /// A folder's old node id → the entry of the shared folder it became
    /// (`LibraryAlias`), and back: the id the CLI printed keeps naming it.
    let aliasedEntries: [LibraryPlace: OpID]
    let aliases: [LibraryPlace: OpID]

    /// - Parameter sharers: each document's owner and editors (a document
    ///   missing here has none: no entry naming it is entitled).
    init(
        main: DocumentID, views: [DocumentID: LibraryView], folders: [DocumentID: Folder], sharers: [DocumentID: Set<PeerID>],
        local: PeerID, aliases: [LibraryAlias] = []
    ) {
        self.main = main
        self.local = local
        var aliasedEntries: [LibraryPlace: OpID] = [:]
        var aliasesOfEntries: [LibraryPlace: OpID] = [:]
        for alias in aliases where views[alias.library]?.node(alias.entry) != nil {
            aliasedEntries[LibraryPlace(library: alias.library, node: alias.node)] = alias.entry
            aliasesOfEntries[LibraryPlace(library: alias.library, node: alias.entry)] = alias.node
        }
        self.aliasedEntries = aliasedEntries
        self.aliases = aliasesOfEntries
        self.views = views
        self.folders = folders
        self.sharers = sharers
        var mounts: [DocumentID: LibraryPlace] = [:]
        // An entry in the trash still lists its folder (a deleted shared folder is mounted where its entry is).
        for (library, view) in views.sorted(by: { $0.key == main ? true : $1.key == main ? false : $0.key < $1.key }) {
            for node in view.nodes.sorted(by: { !$0.isInTrash && $1.isInTrash }) {
                guard let document = node.document, folders[document] != nil, document != library, mounts[document] == nil,
                    Self.isEntitled(node, sharers: sharers)
                else { continue }
                mounts[document] = LibraryPlace(library: library, node: node.id)
            }
        }
        self.mounts = mounts
    }

    /// Folder documents listed nowhere here and not deleted: shown at the top under their name.
    var topLevelFolders: [DocumentID] {
        folders.keys.filter { mounts[$0] == nil && folders[$0]!.deletedAt == nil }.sorted { (folders[$0]!.name, $0) < (folders[$1]!.name, $1) }
    }

    /// Folder documents listed nowhere here and deleted for everyone: shown in the trash.
    var deletedTopLevelFolders: [DocumentID] {
        folders.keys.filter { mounts[$0] == nil && folders[$0]!.deletedAt != nil }.sorted { (folders[$0]!.name, $0) < (folders[$1]!.name, $1) }
    }

    /// Whether an entry may be expanded into access: whoever filed it may
    /// share the document it names (its owner or an editor, by that
    /// document's access list here). A library entry grants nothing by
    /// itself: an editor of a shared folder who files the id of a project it
    /// was never given (a planted entry) gets nothing when the folder is
    /// shared next, and the entry shows as unavailable, to its owner too.
    func isEntitled(_ node: LibraryNodeView) -> Bool { Self.isEntitled(node, sharers: sharers) }

    private static func isEntitled(_ node: LibraryNodeView, sharers: [DocumentID: Set<PeerID>]) -> Bool {
        guard let document = node.document, let filer = node.filedBy else { return false }
        return sharers[document]?.contains(filer) == true
    }

    /// Whether an entry names a document here that whoever filed it was never
    /// given the right to share (another's private project, filed into a
    /// shared folder by an editor of the folder): shown as unavailable,
    /// never expanded into access, never copied when its folder is.
    /// Entries this daemon filed are its user's own doing and show as usual.
    func isPlanted(_ node: LibraryNodeView) -> Bool {
        guard let document = node.document, sharers[document] != nil else { return false }
        return !isEntitled(node) && node.filedBy != local
    }

    /// Every entry naming a document under a place (a folder node, or a
    /// folder document's root), walking into the shared folders it lists
    /// through entitled entries only; entries in the trash are left out.
    func entries(under place: LibraryPlace) -> [(library: DocumentID, node: LibraryNodeView)] {
        var result: [(DocumentID, LibraryNodeView)] = []
        var seen: Set<DocumentID> = [place.library]
        var queue: [LibraryPlace] = [place]
        while let next = queue.popLast() {
            guard let view = views[next.library] else { continue }
            var inside: Set<OpID> = [next.node]
            for node in view.nodes where !node.isInTrash && inside.contains(node.parent) {
                inside.insert(node.id)
                guard let document = node.document else { continue }
                result.append((next.library, node))
                if isFolder(document), isEntitled(node), seen.insert(document).inserted {
                    queue.append(LibraryPlace(library: document, node: .root))
                }
            }
        }
        return result
    }

    /// Whether a document is a shared folder here.
    func isFolder(_ document: DocumentID) -> Bool { folders[document] != nil }

    func node(_ place: LibraryPlace) -> LibraryNodeView? { views[place.library]?.node(place.node) }

    /// An entry naming a folder document opens into that document's root.
    func opened(_ place: LibraryPlace) -> LibraryPlace {
        guard let node = node(place), let document = node.document, isFolder(document), views[document] != nil else { return place }
        return LibraryPlace(library: document, node: .root)
    }

    /// The entry that lists a folder document's root, for operations on "the folder" itself (rename, move, delete).
    func entry(for place: LibraryPlace) -> LibraryPlace? {
        guard place.node == .root, place.library != main else { return place }
        return mounts[place.library]
    }

    /// A node's id as answers show it: plain in the main library, else
    /// `DOCUMENT:NODE` (`…:root` for a folder document's root).
    func text(of place: LibraryPlace) -> String {
        // A shared folder's entry shows the id its folder had before it was shared.
        let node = LibraryReference.text(of: aliases[place] ?? place.node)
        return place.library == main ? node : "\(place.library):\(node)"
    }

    /// Where a node directly in a trash was (the path a restore puts it back
    /// in; "" for a top level), or nil when that folder is gone.
    func formerPath(of place: LibraryPlace) -> String? {
        guard let node = node(place), node.isInTrash, node.parent == .trash else { return nil }
        guard let former = node.formerParent else { return place.library == main ? "" : path(of: LibraryPlace(library: place.library, node: .root)) }
        return path(of: LibraryPlace(library: place.library, node: former))
    }

    /// The folder path of a place, names joined by `/` (for messages).
    func path(of place: LibraryPlace) -> String {
        var names: [String] = []
        var current = place
        for _ in 0..<256 {
            if current.node == .root {
                guard current.library != main else { break }
                guard let mount = mounts[current.library] else {
                    names.append(folders[current.library]?.name ?? "?")
                    break
                }
                current = mount
                continue
            }
            guard let node = node(current) else { break }
            names.append(node.name ?? "?")
            current = LibraryPlace(library: current.library, node: node.parent)
        }
        return names.reversed().joined(separator: "/")
    }

    /// Resolves what a request names: a node id (`12@3f…`), `DOCUMENT:NODE`,
    /// a well-known folder (`root`, `trash`, `incoming`), or a path of names
    /// from the top (`Films/Shorts`, walking into shared folders), which must
    /// name exactly one node. A shared folder resolves to its document's root.
    /// - Throws: `APIError` (404 none, 409 several, 400 an empty path).
    func resolve(_ reference: String, inTrash: Bool = false) throws(APIError) -> LibraryPlace {
        let text = reference.trimmingCharacters(in: .whitespaces)
        if let known = LibraryReference.wellKnown[text.lowercased()] { return LibraryPlace(library: main, node: known) }
        if let colon = text.firstIndex(of: ":"), let document = DocumentID(String(text[..<colon])) {
            let rest = String(text[text.index(after: colon)...])
            guard let view = views[document] else { throw APIError(.notFound, "no library or shared folder \(document) here") }
            var node = LibraryReference.wellKnown[rest.lowercased()] ?? OpID(rest)
            if let old = node, view.node(old) == nil { node = aliasedEntries[LibraryPlace(library: document, node: old)] ?? old }
            guard let node, node == .root || node == .trash || view.node(node) != nil else {
                throw APIError(.notFound, "no folder or project entry \(text)")
            }
            return opened(LibraryPlace(library: document, node: node))
        }
        if var id = OpID(text) {
            if views[main]?.node(id) == nil, let entry = aliasedEntries[LibraryPlace(library: main, node: id)] { id = entry }
            guard views[main]?.node(id) != nil else { throw APIError(.notFound, "no folder or project entry \(text)") }
            return opened(LibraryPlace(library: main, node: id))
        }
        let names = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !names.isEmpty else { throw APIError(.badRequest, "'\(reference)' names no folder or project") }
        var candidates: [LibraryPlace] = []
        for (index, name) in names.enumerated() {
            if index == 0 {
                candidates = children(of: LibraryPlace(library: main, node: inTrash ? .trash : .root), inTrash: inTrash, named: name)
                candidates += (inTrash ? deletedTopLevelFolders : topLevelFolders).filter { folders[$0]?.name == name }
                    .map { LibraryPlace(library: $0, node: .root) }
            } else {
                candidates = candidates.flatMap { children(of: $0, inTrash: false, named: name) }
            }
        }
        if inTrash && candidates.isEmpty && names.count > 1 {
            // A path as it was: the folder it was in (still there, perhaps a
            // shared folder), then its name among what that folder lost to the trash.
            let folder = try resolve(names.dropLast().joined(separator: "/"))
            candidates = (views[folder.library]?.nodes ?? []).filter {
                $0.isInTrash && $0.parent == .trash && $0.name == names.last && $0.formerParent == folder.node
            }.map { LibraryPlace(library: folder.library, node: $0.id) }
        }
        guard let first = candidates.first else { throw APIError(.notFound, "no folder or project at '\(reference)'") }
        guard candidates.count == 1 else {
            throw APIError(
                .conflict,
                "'\(reference)' names \(candidates.count) folders or projects; give its path from the top, or its id (storyteller tree --json)")
        }
        return first
    }

    /// The children of a folder with a name (entries of shared folders opened).
    private func children(of place: LibraryPlace, inTrash: Bool, named name: String) -> [LibraryPlace] {
        guard let view = views[place.library] else { return [] }
        return view.nodes.filter { $0.parent == place.node && $0.name == name && $0.isInTrash == inTrash }
            .map { opened(LibraryPlace(library: place.library, node: $0.id)) }
    }

    /// The documents a library document lists (entries not in its trash), and
    /// recursively those of the shared folders it lists: only entries that
    /// are entitled (`isEntitled`), so a planted entry is never expanded
    /// into access, whoever shares the folder.
    func listed(in library: DocumentID) -> [DocumentID] {
        var result: [DocumentID] = []
        var seen: Set<DocumentID> = [library]
        var queue = [library]
        while let next = queue.popLast() {
            for node in views[next]?.nodes ?? [] where !node.isInTrash && isEntitled(node) {
                guard let document = node.document, seen.insert(document).inserted else { continue }
                result.append(document)
                if isFolder(document) { queue.append(document) }
            }
        }
        return result
    }

    /// The library documents that list a document (directly).
    func libraries(listing document: DocumentID) -> [DocumentID] {
        views.compactMap { library, view in view.nodes.contains { !$0.isInTrash && $0.document == document && isEntitled($0) } ? library : nil }
            .sorted()
    }
}
