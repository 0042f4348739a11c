import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct LibraryTests {
    static let id = DocumentID(high: 0x11B, low: 1)

    @Test func foldersAndProjectsCanBeCreatedRenamedDescribedAndReordered() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        let document = DocumentID(high: 5, low: 6)
        let (films, project, ads) = try library.edit(at: 1) { editor in
            let films = try editor.createFolder(named: "Films")
            let project = try editor.createProjectEntry(named: "Night Train", document: document, in: films)
            let ads = try editor.createFolder(named: "Ads", at: 0)
            try editor.describe(project, as: "Feature, 2027")
            try editor.rename(films, to: "Feature films")
            return (films, project, ads)
        }.value
        #expect(library.children(of: .root) == [ads, .incoming, films])
        let view = library.view
        #expect(view.nodes.map(\.id) == [ads, films, project])  // Incoming is empty, so not shown
        #expect(view.node(project)?.depth == 1 && view.node(project)?.parent == films)
        #expect(view.node(project)?.description == "Feature, 2027")
        #expect(view.node(films)?.name == "Feature films")
        #expect(library.document(of: project) == document)
        #expect(library.entries(for: document) == [project])
        try library.edit(at: 2) { try $0.reorder(films, to: 0) }
        #expect(library.children(of: .root).first == films)
    }

    /// Issue 36, item 14: refusals name the folder or project as people do,
    /// never "node 4@…".
    @Test func refusalsNameTheFolderOrProject() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        let films = try library.edit(at: 1) { try $0.createFolder(named: "Films") }.value
        func refusal(_ body: (inout LibraryEditor) throws -> Void) -> String {
            do {
                try library.edit(at: 2, body)
                return ""
            } catch let error as DocumentError {
                return error.message
            } catch { return "\(error)" }
        }
        #expect(refusal { try $0.restore(films) } == #"folder "Films" is not in the trash"#)
        #expect(refusal { try $0.purge(films) }.hasPrefix(#"folder "Films" is not in the trash: only what is in the trash"#))
        #expect(refusal { try $0.move(.trash, to: films) } == "the trash cannot be moved")
        #expect(refusal { try $0.delete(.trash) }.hasPrefix("the trash is not in the library"))
        #expect(!refusal { try $0.reorder(OpID(counter: 99, replica: ReplicaID(7)), to: 0) }.contains("node"))
    }

    @Test func deleteMovesToTrashAndRestoreMovesBack() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        let (folder, child) = try library.edit(at: 1) { editor in
            let folder = try editor.createFolder(named: "Shorts")
            return (folder, try editor.createFolder(named: "2026", in: folder))
        }.value
        try library.edit(at: 2) { try $0.delete(child) }
        #expect(library.isInTrash(child) == true)
        #expect(library.view.node(child)?.isInTrash == true)
        let target = try library.edit(at: 3) { try $0.restore(child) }.value
        #expect(target == folder && library.parent(of: child) == folder)
        #expect(throws: DocumentError.self) { try library.edit(at: 4) { try $0.restore(child) } }
    }

    /// A folder deleted on one replica of a shared library is in the trash
    /// on every replica, and restored from any of them it comes back, with
    /// what it held, where it was, on all of them.
    @Test func aFolderDeletedOnOneReplicaIsRestoredFromAnotherOnEveryReplica() throws {
        var replicas = (1...3).map { LibraryDocument(id: Self.id, replica: ReplicaID(UInt64($0))) }
        let (films, shorts, entry) = try replicas[0].edit(at: 1) { editor in
            let films = try editor.createFolder(named: "Films")
            let shorts = try editor.createFolder(named: "Shorts", in: films)
            return (films, shorts, try editor.createProjectEntry(named: "Night Train", document: DocumentID(high: 9, low: 9), in: shorts))
        }.value
        try WireSync.syncAll(&replicas)
        try replicas[1].edit(at: 2) { try $0.delete(shorts) }
        try WireSync.syncAll(&replicas)
        for library in replicas { #expect(library.isInTrash(shorts) == true && library.isInTrash(entry) == true) }
        try replicas[2].edit(at: 3) { try $0.restore(shorts) }
        try WireSync.syncAll(&replicas)
        for library in replicas {
            #expect(library.view == replicas[0].view)
            #expect(library.isInTrash(shorts) == false && library.parent(of: shorts) == films && library.parent(of: entry) == shorts)
        }
    }

    /// A shared folder (a library document) deleted for everyone: its root's
    /// deletedAt, last writer wins, kept in snapshots; other nodes refuse it.
    @Test func aSharedFoldersDeletionIsItsRootsLastWriterWinsField() throws {
        var replicas = (1...2).map { LibraryDocument(id: Self.id, replica: ReplicaID(UInt64($0))) }
        let folder = try replicas[0].edit(at: 1) { try $0.createFolder(named: "Shorts") }.value
        try WireSync.syncAll(&replicas)
        try replicas[0].edit(at: 5) { try $0.setDeleted(true) }
        try replicas[1].edit(at: 6) { try $0.rename(folder, to: "Short films") }
        try WireSync.syncAll(&replicas)
        #expect(replicas.allSatisfy { $0.deletedAt == 5 }, "an edit concurrent with the delete does not undo it")
        let loaded = try LibraryDocument(snapshot: replicas[1].snapshot(), replica: ReplicaID(3))
        #expect(loaded.deletedAt == 5)
        // Concurrent restore and delete: the later one wins everywhere.
        try replicas[1].edit(at: 7) { try $0.setDeleted(false) }
        try replicas[0].edit(at: 8) { for _ in 0..<3 { try $0.describe(folder, as: "bump the clock") } }
        try replicas[0].edit(at: 9) { try $0.setDeleted(true) }
        try WireSync.syncAll(&replicas)
        #expect(replicas[0].deletedAt == 9 && replicas[1].deletedAt == 9)
        #expect(throws: DocumentError.self) {
            try replicas[0].edit(at: 10) { try $0.perform(.setField(object: folder, key: .deletedAt, value: .number(1))) }
        }
    }

    @Test func purgeRemovesATrashedSubtreeForGood() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        let (folder, child) = try library.edit(at: 1) { editor in
            let folder = try editor.createFolder(named: "Old")
            return (folder, try editor.createFolder(named: "Older", in: folder))
        }.value
        #expect(throws: DocumentError.self) { try library.edit(at: 2) { try $0.purge(folder) } }
        try library.edit(at: 2) { try $0.delete(folder) }
        try library.edit(at: 3) { try $0.purge(folder) }
        #expect(library.isPurged(folder) && library.isPurged(child))
        #expect(library.view.nodes.isEmpty)
        #expect(throws: DocumentError.self) { try library.edit(at: 4) { try $0.restore(folder) } }
    }

    @Test func aFolderCannotMoveIntoItselfLocally() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        let (a, b) = try library.edit(at: 1) { editor in
            let a = try editor.createFolder(named: "A")
            return (a, try editor.createFolder(named: "B", in: a))
        }.value
        #expect(throws: DocumentError.self) { try library.edit(at: 2) { try $0.move(a, to: b) } }
        #expect(throws: DocumentError.self) { try library.edit(at: 2) { try $0.move(a, to: a) } }
        #expect(throws: DocumentError.self) { try library.edit(at: 2) { try $0.move(.trash, to: a) } }
    }

    @Test func concurrentMovesThatWouldFormACycleDoNot() throws {
        var docs = [LibraryDocument(id: Self.id, replica: ReplicaID(1))]
        let (a, b) = try docs[0].edit(at: 1) { editor in
            (try editor.createFolder(named: "A"), try editor.createFolder(named: "B"))
        }.value
        docs.append(try LibraryDocument(snapshot: docs[0].snapshot(), replica: ReplicaID(2)))
        try docs[0].edit(at: 2) { try $0.move(a, to: b) }
        try docs[1].edit(at: 2) { try $0.move(b, to: a) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].isWellFormed && docs[1].isWellFormed)
        // Moves apply in op id order: A into B first, then B into A would make a
        // cycle and is skipped, on every replica alike.
        #expect(docs[0].parent(of: a) == b && docs[0].parent(of: b) == .root)
    }

    @Test func aNodeMovedIntoAFolderPurgedConcurrentlyShowsUpInTheTrash() throws {
        var docs = [LibraryDocument(id: Self.id, replica: ReplicaID(1))]
        let (doomed, keeper) = try docs[0].edit(at: 1) { editor in
            let doomed = try editor.createFolder(named: "Doomed")
            let keeper = try editor.createFolder(named: "Keeper")
            try editor.delete(doomed)
            return (doomed, keeper)
        }.value
        docs.append(try LibraryDocument(snapshot: docs[0].snapshot(), replica: ReplicaID(2)))
        try docs[0].edit(at: 2) { try $0.purge(doomed) }
        try docs[1].edit(at: 2) { try $0.move(keeper, to: doomed) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].view.node(keeper)?.isInTrash == true)
        #expect(docs[0].isWellFormed && docs[1].isWellFormed)
        try docs[0].edit(at: 3) { try $0.restore(keeper) }
        #expect(docs[0].isInTrash(keeper) == false)
    }

    @Test func theWellKnownFoldersCannotBeChanged() throws {
        var library = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        #expect(throws: DocumentError.self) { try library.edit(at: 1) { try $0.rename(.incoming, to: "Mine") } }
        #expect(throws: DocumentError.self) { try library.edit(at: 1) { try $0.delete(.trash) } }
        let entry = try library.edit(at: 1) {
            try $0.createProjectEntry(named: "Shared with me", document: DocumentID(high: 1, low: 1), in: .incoming)
        }.value
        #expect(library.view.nodes.map(\.id) == [.incoming, entry])
        #expect(library.view.node(.incoming)?.name == "Incoming")
        #expect(throws: DocumentError.self) {
            try library.edit(at: 2) { try $0.createFolder(named: "inside a project", in: entry) }
        }
    }

    @Test func librarySnapshotsRoundTripAndMerge() throws {
        var a = LibraryDocument(id: Self.id, replica: ReplicaID(1))
        try a.edit(at: 1) { editor in
            let folder = try editor.createFolder(named: "F")
            try editor.createProjectEntry(named: "P", document: DocumentID(high: 3, low: 4), in: folder)
            let trash = try editor.createFolder(named: "T")
            try editor.delete(trash)
        }
        let loaded = try LibraryDocument(snapshot: a.snapshot(), replica: ReplicaID(5))
        #expect(loaded.view == a.view)
        var b = try LibraryDocument(snapshot: a.snapshot(), replica: ReplicaID(2))
        try b.edit(at: 2) { try $0.createFolder(named: "G") }
        try a.edit(at: 2) { try $0.createFolder(named: "H") }
        var merged = a
        try merged.merge(snapshot: b.snapshot())
        var other = b
        try other.merge(snapshot: a.snapshot())
        #expect(merged.view == other.view)
        #expect(merged.view.nodes.map(\.name) == ["F", "P", "H", "G", "T"] || merged.view.nodes.map(\.name) == ["F", "P", "G", "H", "T"])
        var corrupt = a.snapshot()
        corrupt[corrupt.count / 2] ^= 0x40
        #expect(throws: (any Error).self) { try LibraryDocument(snapshot: corrupt, replica: ReplicaID(3)) }
        #expect(throws: (any Error).self) { try ProjectDocument(snapshot: a.snapshot(), replica: ReplicaID(3)) }
    }
}
