import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryStore

/// The trash in the store: the record mirrors the project document's deleted
/// flag whatever changed it, a reader's delete is a local flag, deleted
/// projects keep syncing, and purging removes every row of a project but
/// remembers what it held.
@Suite struct StoreTrashTests {
    /// An owner's store and an editor's, sharing one project; both on `clock`.
    static func pair(
        _ directory: TemporaryDirectory, clock: ManualWallClock, role: Role = .editor
    ) async throws -> (owner: Store, other: Store, id: DocumentID, layer: OpID) {
        var options = StoreOptions()
        options.clock = clock.clock
        let owner = try Store(path: directory.file("owner.db"), identity: TestIdentities.signing(), options: options)
        let other = try Store(path: directory.file("other.db"), identity: TestIdentities.signing(1), options: options)
        let (id, layer) = try await makeProject(in: owner)
        try await owner.share(id, with: other.peerID, role: role, at: 3)
        try await other.receiveDocument(id, kind: .project, name: "Board", from: owner.peerID, at: 4)
        try await send(id, from: owner, to: other)
        return (owner, other, id, layer)
    }

    /// What `to` lacks of a project, from `from`, as a peer session sends it.
    static func send(_ id: DocumentID, from: Store, to: Store) async throws {
        let changes = try await from.changes(of: id, since: try await to.version(of: id)).list
        guard !changes.isEmpty else { return }
        try await to.apply(batch: ChangeBatch.encode(changes)[...], to: id, from: from.peerID)
    }

    @Test func theRecordMirrorsTheDocumentsFlagWhetherTheChangeIsMadeHereOrArrives() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 1_000_000)
        let (owner, editor, id, _) = try await Self.pair(directory, clock: clock)
        #expect(try await !owner.document(id).isDeleted)

        #expect(try await owner.setDeletedForEveryone(true, project: id, at: 900_000))
        let deleted = try await owner.document(id)
        #expect(deleted.isDeleted && deleted.isDeletedForEveryone && !deleted.isHidden)
        #expect(deleted.deletedBy == owner.peerID && deleted.deletedTime == 900_000 && deleted.deletedSeen == 1_000_000)
        #expect(deleted.retentionStart == 1_000_000, "the later of the delete's time and when this machine saw it")
        #expect(try await !owner.setDeletedForEveryone(true, project: id, at: 900_001), "deleting what is deleted changes nothing")

        // It keeps syncing: the editor still gets it, and its record follows.
        #expect(try await owner.sharedDocuments(with: editor.peerID).map(\.record.id) == [id])
        clock.advance(by: 5_000)
        try await Self.send(id, from: owner, to: editor)
        let arrived = try await editor.document(id)
        #expect(arrived.isDeletedForEveryone && arrived.deletedBy == owner.peerID && arrived.deletedSeen == 1_005_000)

        // The editor restores it; the owner's record follows, and a reopened store agrees.
        try await editor.setDeletedForEveryone(false, project: id, at: 1_006_000)
        try await Self.send(id, from: editor, to: owner)
        let restored = try await owner.document(id)
        #expect(!restored.isDeleted && restored.deletedBy == nil && restored.deletedSeen == nil)
        let reopened = try Store(path: directory.file("owner.db"), identity: TestIdentities.signing())
        #expect(try await reopened.document(id) == restored)
        #expect(try await reopened.project(id).deletion == nil)
    }

    @Test func aMergedSnapshotBringsTheDeletionIntoTheRecord() async throws {
        let directory = try TemporaryDirectory()
        let (owner, editor, id, _) = try await Self.pair(directory, clock: ManualWallClock(milliseconds: 50))
        try await owner.setDeletedForEveryone(true, project: id, at: 40)
        try await editor.merge(snapshot: try await owner.snapshot(of: id), into: id, from: owner.peerID, at: 60)
        let record = try await editor.document(id)
        #expect(record.isDeletedForEveryone && record.deletedBy == owner.peerID && record.deletedTime == 40)
    }

    @Test func aReaderHidesItsCopyOnlyAndTheProjectStillSyncsToIt() async throws {
        let directory = try TemporaryDirectory()
        let (owner, reader, id, layer) = try await Self.pair(directory, clock: ManualWallClock(milliseconds: 10), role: .reader)
        await #expect(throws: DocumentError.self) { try await reader.setDeletedForEveryone(true, project: id, at: 5) }
        try await reader.setHidden(true, of: id, at: 6)
        let hidden = try await reader.document(id)
        #expect(hidden.isDeleted && hidden.isHidden && !hidden.isDeletedForEveryone && hidden.hiddenAt == 6)
        #expect(hidden.retentionStart == nil, "a hidden project is never purged by time")
        #expect(try await reader.sharedDocuments(with: owner.peerID).map(\.record.id) == [id])
        #expect(try await !owner.document(id).isDeleted, "nothing reached the owner")
        _ = try await owner.editProject(id, at: 7) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(7)) }
        try await Self.send(id, from: owner, to: reader)
        #expect(try await reader.project(id).strokes(in: layer).count == 1)
        try await reader.setHidden(false, of: id, at: 8)
        #expect(try await !reader.document(id).isDeleted)
    }

    @Test func aPurgeRemovesEveryRowOfTheProjectAndRemembersWhatItHeld() async throws {
        let directory = try TemporaryDirectory()
        let (owner, editor, id, layer) = try await Self.pair(directory, clock: ManualWallClock(milliseconds: 10))
        _ = try await owner.editProject(id, session: "s", at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(5)) }
        try await owner.addPeer(editor.peerID, address: "127.0.0.1:9", at: 5)
        try await Self.send(id, from: owner, to: editor)
        try await owner.acknowledge(try await editor.version(of: id), of: id, by: editor.peerID, at: 6)
        try await owner.writeSnapshot(of: id, at: 7)
        await #expect(throws: DocumentError.self) { try await owner.purge(id, at: 8) }  // not in the trash
        try await owner.setDeletedForEveryone(true, project: id, at: 9)
        try await Self.send(id, from: owner, to: editor)
        let version = try await owner.version(of: id)
        let purged = try await owner.purge(id, at: 10)
        #expect(purged.version == version && purged.kind == .project && !purged.wasHidden)
        #expect(try await owner.documentIfPresent(id) == nil)
        let connection = try Connection(path: directory.file("owner.db"), readOnly: true, create: false)
        for table in ["changes", "snapshots", "members", "undo_records", "peer_versions", "documents"] {
            let rows = try connection.scalar("SELECT count(*) FROM \(table) WHERE \(table == "documents" ? "id" : "doc") = ?", [id.blob])
            #expect(rows?.integer == 0, "\(table) keeps nothing of it")
        }
        #expect(try await owner.purgedDocument(id) == purged)
        #expect(try await owner.sharedDocuments(with: editor.peerID).isEmpty)

        // The editor draws in the trash: its offer now has something new, and is
        // taken back, a document again, the memory of the purge gone. This
        // replica's own old changes come back with it: it takes a new replica
        // id first, so they are not mistaken for a copy of its database.
        _ = try await editor.editProject(id, at: 11) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(11)) }
        #expect(try await !editor.version(of: id).isCovered(by: purged.version))
        let replica = await owner.replicaID
        try await owner.receiveDocument(id, kind: .project, name: "Board", from: editor.peerID, at: 12)
        #expect(try await owner.purgedDocument(id) == nil)
        #expect(await owner.replicaID != replica)
        try await Self.send(id, from: editor, to: owner)
        #expect(try await owner.document(id).isDeletedForEveryone, "still deleted there: back in the trash, not as new")
        #expect(try await owner.project(id).strokes(in: layer).count == 2)
        #expect(try await owner.localRole(of: id) == .owner)
        try await owner.setDeletedForEveryone(false, project: id, at: 13)
        try await Self.send(id, from: owner, to: editor)
        #expect(try await editor.project(id).deletion == nil, "the owner's new replica goes on editing it")
    }

    @Test func aHiddenProjectPurgedAndTakenBackStaysHidden() async throws {
        let directory = try TemporaryDirectory()
        let (owner, reader, id, _) = try await Self.pair(directory, clock: ManualWallClock(milliseconds: 10), role: .reader)
        try await reader.setHidden(true, of: id, at: 5)
        #expect(try await reader.purge(id, at: 6).wasHidden)
        try await reader.receiveDocument(id, kind: .project, name: "Board", from: owner.peerID, at: 7)
        try await Self.send(id, from: owner, to: reader)
        let record = try await reader.document(id)
        #expect(record.isHidden && !record.isDeletedForEveryone)
    }

    @Test func theRetentionWaitsUntilEveryConfiguredMemberHasTheDelete() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 100_000)
        let (owner, editor, id, _) = try await Self.pair(directory, clock: clock)
        // A member that is not a configured peer (never paired here) does not hold the trash.
        try await owner.share(id, with: TestIdentities.signing(3).peer, role: .reader, at: 4)
        try await owner.addPeer(editor.peerID, address: "127.0.0.1:9", at: 5)
        try await owner.setDeletedForEveryone(true, project: id, at: 100_000)
        #expect(try await owner.expiredProjects(retention: 60_000, now: 150_000).isEmpty, "not yet due")
        let due = try await owner.expiredProjects(retention: 60_000, now: 170_000)
        #expect(due.map(\.record.id) == [id] && due.first?.awaiting == [editor.peerID], "due, but the editor never had the delete")
        // The editor acknowledges everything up to the delete.
        try await Self.send(id, from: owner, to: editor)
        try await owner.acknowledge(try await editor.version(of: id), of: id, by: editor.peerID, at: 160_000)
        #expect(try await owner.expiredProjects(retention: 60_000, now: 170_000).first?.awaiting == [])
        #expect(try await owner.peersAwaitingDeletion(of: id).isEmpty)
    }

    @Test func aDatabaseWhoseDeletesWereLocalKeepsThemHiddenHere() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let id = DocumentID(high: 1, low: 1)
        do {
            // The schema just before the trash migration.
            let trash = try #require(Schema.migrations.firstIndex { $0.id == "2026-11-30-project-trash" })
            let old = try StoreDatabase.open(path: path, migrations: trash)
            try old.createDocument(id, kind: .project, name: "Gone", created: 1)
            try old.connection.run("UPDATE documents SET deleted = 1 WHERE id = ?", [id.blob])
        }
        let database = try StoreDatabase.open(path: path)
        let record = try #require(try database.document(id))
        #expect(record.isHidden && !record.isDeletedForEveryone && record.isDeleted && record.hiddenAt != nil)
    }
}
