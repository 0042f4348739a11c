import Foundation
import Logging
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StoryTestSupport
import Testing

@testable import StoryDaemon

/// Folder planting as a property (docs/threat-model.md, "A paired peer"):
/// an honest owner files projects into folders, moves them, shares folders
/// and projects with three peers in random modes; a hostile peer, an editor
/// of whatever folders it was given read-write, files the ids of random
/// projects of the owner (private ones among them) into those folders, as
/// signed library changes the owner's store takes. After every step, each
/// member of each project must be one the owner meant to give it to: shared
/// with directly, or given a folder that held the project when (or after)
/// the owner filed it there. A planted entry never counts, and shows as
/// planted.
@Suite struct FolderPlantingPropertyTests {
    /// The owner's folders: a path and its ancestors (each path is one folder).
    static let folders = ["F1", "F1/F2", "F3"]
    static let places = ["root"] + folders

    static func ancestors(of path: String) -> [String] {
        guard path != "root" else { return [] }
        let names = path.split(separator: "/")
        return (1...names.count).map { names.prefix($0).joined(separator: "/") }
    }

    @Test(arguments: 0..<10)
    func plantedEntriesNeverGiveAnyoneAProjectNoEntitledMemberSharedWithThem(seed: Int) async throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let owner = TestIdentities.signing(20)
        let store = try Store(path: home.path + "/store.db", identity: owner)
        let clock = ManualWallClock(milliseconds: 1_000)
        let library = LibraryService(store: store, clock: clock.clock, logger: Logger(label: "planting"))
        try await library.prepare()
        let hostile = TestIdentities.identity(21)
        let peers = [hostile.peerID, TestIdentities.identity(22).peerID, TestIdentities.identity(23).peerID]
        for peer in peers { try await store.addPeer(peer, name: nil, address: nil, at: 1) }
        try await library.edit { editor in
            let f1 = try editor.createFolder(named: "F1")
            _ = try editor.createFolder(named: "F2", in: f1)
            _ = try editor.createFolder(named: "F3")
        }

        var projects: [DocumentID] = []
        // Where the owner filed each project (every place it was ever in).
        var placements: [DocumentID: Set<String>] = [:]
        var folderShares: [String: Set<PeerID>] = [:]
        var directShares: [DocumentID: Set<PeerID>] = [:]
        var plants: [(folder: DocumentID, project: DocumentID, path: String)] = []
        var replicaNonce: UInt64 = 1
        // What happened, for a failure's message.
        var trace: [String] = []
        func name(_ id: DocumentID) -> String { "P\(projects.firstIndex(of: id) ?? -1)" }
        func who(_ peer: PeerID) -> String { ["h", "c", "d"][peers.firstIndex(of: peer) ?? 0] }

        func place(_ path: String) async throws -> LibraryPlace {
            try await library.set().resolve(path)
        }

        // Whether the owner gave `peer` the project: directly, or through a
        // folder that held it when (or after) the owner filed it there.
        func given(_ peer: PeerID, _ project: DocumentID) -> Bool {
            if directShares[project]?.contains(peer) == true { return true }
            return (placements[project] ?? []).contains { path in
                Self.ancestors(of: path).contains { folderShares[$0]?.contains(peer) == true }
            }
        }
        // An editor may share on what it was given: an entry the hostile peer
        // filed counts once it was given the project read-write (`editors`:
        // the projects it is an editor of now). Nothing else it files does.
        func mayHave(_ peer: PeerID, _ project: DocumentID, editors: Set<DocumentID>) -> Bool {
            if given(peer, project) { return true }
            guard editors.contains(project), given(hostile.peerID, project) else { return false }
            return plants.contains { plant in
                plant.project == project && Self.ancestors(of: plant.path).contains { folderShares[$0]?.contains(peer) == true }
            }
        }

        for step in 0..<40 {
            clock.advance(by: 10)
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 25 || projects.count < 3 {
                // The owner creates a project somewhere (the root: private until shared).
                let path = Self.places.randomElement(using: &random)!
                let id = try await store.createDocument(kind: .project, name: "P\(step)", at: clock.milliseconds)
                projects.append(id)
                placements[id, default: []].insert(path)
                trace.append("\(step): create \(name(id)) in \(path)")
                try await library.file(id, named: "P\(step)", in: try await place(path))
            } else if roll < 40 {
                // The owner moves one of its entries elsewhere.
                let project = projects.randomElement(using: &random)!
                let path = Self.places.randomElement(using: &random)!
                let set = try await library.set()
                guard
                    let entry = set.views.flatMap({ library, view in
                        view.nodes.filter { $0.document == project && !$0.isInTrash && $0.filedBy == owner.peer }
                            .map { LibraryPlace(library: library, node: $0.id) }
                    }).first
                else { continue }
                placements[project, default: []].insert(path)
                trace.append("\(step): move \(name(project)) to \(path)")
                _ = try await library.move(set.text(of: entry), into: path, at: nil)
            } else if roll < 60 {
                // The owner shares a folder with a peer.
                let path = Self.folders.randomElement(using: &random)!
                let peer = peers.randomElement(using: &random)!
                let role: Role = Bool.random(using: &random) ? .editor : .reader
                // A folder once shared read-write keeps the rights it gave (only lowered through
                // the folder); the model over-approximates: once given, allowed.
                folderShares[path, default: []].insert(peer)
                trace.append("\(step): share \(path) with \(who(peer)) as \(role)")
                let outcome = try await library.share(folder: try await place(path), with: peer, role: role)
                let editors = Set(try await store.members().filter { $0.peer == hostile.peerID && $0.role >= .editor }.map(\.document))
                for shared in outcome.shared {
                    let id = try #require(DocumentID(shared.document))
                    if !(try await library.set().isFolder(id)) {
                        #expect(
                            mayHave(peer, id, editors: editors),
                            "seed \(seed) step \(step): the share's answer names \(shared.name ?? "?"), which the owner never shared")
                    }
                }
            } else if roll < 70 {
                // The owner shares a project directly.
                let project = projects.randomElement(using: &random)!
                let peer = peers.randomElement(using: &random)!
                directShares[project, default: []].insert(peer)
                trace.append("\(step): share \(name(project)) with \(who(peer))")
                try await store.share(project, with: peer, role: .reader, at: clock.milliseconds)
                try await store.setDirectShare(true, of: project, with: peer)
            } else {
                // The hostile peer plants a project of the owner in a folder it may edit.
                let set = try await library.set()
                let editable = set.folders.keys.filter { folder in set.sharers[folder]?.contains(hostile.peerID) == true }.sorted()
                guard let folder = editable.randomElement(using: &random) else { continue }
                let project = projects.randomElement(using: &random)!
                guard case .changes(let encoded) = try await store.changes(of: folder, since: VersionVector()) else {
                    Issue.record("no changes of a folder")
                    continue
                }
                replicaNonce += 1
                guard let author = LocalAuthor(identity: try hostile.signingIdentity, nonce: replicaNonce) else { continue }
                var copy = LibraryDocument(id: folder, author: author)
                try copy.apply(batch: ChangeBatch.encode(encoded)[...])
                #expect(copy.localRole == .editor)
                let subfolders = copy.view.nodes.filter { $0.kind == .folder && !$0.isInTrash }.map(\.id)
                let parent = ([OpID.root] + subfolders).randomElement(using: &random)!
                let edit = try copy.edit(at: clock.milliseconds) { try $0.createProjectEntry(named: "planted", document: project, in: parent) }
                let change = try #require(edit.change)
                try await store.apply(batch: ChangeBatch.encode([change])[...], to: folder, from: hostile.peerID)
                let parentPath = set.path(of: LibraryPlace(library: folder, node: parent))
                plants.append((folder, project, parentPath))
                trace.append(
                    "\(step): h plants \(name(project)) in \(set.path(of: LibraryPlace(library: folder, node: .root)))/\(parent == .root ? "" : "sub")"
                )
                // The owner's next share of that folder may follow at once.
                if Bool.random(using: &random) {
                    let path = set.path(of: LibraryPlace(library: folder, node: .root))
                    try #require(Self.folders.contains(path), "seed \(seed): a shared folder at \(path) the model does not know")
                    let peer = peers.randomElement(using: &random)!
                    folderShares[path, default: []].insert(peer)
                    trace.append("\(step): share \(path) with \(who(peer)) as editor")
                    _ = try await library.share(folder: LibraryPlace(library: folder, node: .root), with: peer, role: .editor)
                }
            }
            // Every member of every project is one the owner meant to give it to.
            let editors = Set(try await store.members().filter { $0.peer == hostile.peerID && $0.role >= .editor }.map(\.document))
            for project in projects {
                for member in try await store.members(of: project) where member.peer != owner.peer && member.role > .none {
                    #expect(
                        mayHave(member.peer, project, editors: editors),
                        "seed \(seed) step \(step): \(who(member.peer)) is \(member.role) of \(name(project)), which the owner never shared with it, after:\n\(trace.joined(separator: "\n"))"
                    )
                }
            }
        }
        // Every planted entry of a project its planter may not share shows as planted.
        let set = try await library.set()
        for (folder, project, _) in plants
        where !(try await store.members(of: project)).contains(where: { $0.peer == hostile.peerID && $0.role >= .editor }) {
            let entries = set.views[folder]?.nodes.filter { $0.document == project && $0.filedBy == hostile.peerID } ?? []
            // (A plant inside a subfolder the owner shared since is gone: the folder was purged where it was, its copy leaves plants out.)
            #expect(entries.allSatisfy(set.isPlanted), "seed \(seed): a planted entry of \(project) is not shown as planted")
        }
    }
}
