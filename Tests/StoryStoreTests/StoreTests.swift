import Foundation
import StoryCore
import Testing

@testable import StoryStore

@Suite struct StoreTests {
    @Test func aDocumentLoadsFromItsSnapshotAndTheChangesAfterIt() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let (id, layer): (DocumentID, OpID)
        var expected: ProjectView
        do {
            let store = try Store(path: path)
            (id, layer) = try await makeProject(in: store)
            for index in 0..<30 {
                _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
            }
            try await store.writeSnapshot(of: id, at: 100)
            for index in 30..<45 {
                _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
            }
            _ = try await store.editProject(id, at: 50) { editor in
                let scene = editor.scenes[0]
                try editor.set(.title, to: .string("After the snapshot"), on: scene)
            }
            expected = try await store.project(id).view
            #expect(try await store.document(id).snapshotVersion != nil)
            #expect(try await store.storedVersion(of: id) == store.project(id).versionVector)
        }
        let reopened = try Store(path: path)
        // Read from the snapshot's version and the log, before the document is loaded.
        let stored = try await reopened.storedVersion(of: id)
        let loaded = try await reopened.project(id)
        #expect(stored == loaded.versionVector && stored.totalChanges == 47)
        #expect(loaded.view == expected)
        #expect(loaded.strokes(in: layer).count == 45)
        #expect(loaded.replica == (await reopened.replicaID))
    }

    @Test func documentsAreListedWithoutLoadingThem() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let library = try await store.createDocument(kind: .library, name: "Library", at: 0)
        let (project, _) = try await makeProject(in: store, name: "Night Train")
        let listed = try await store.documents()
        #expect(listed.map(\.id) == [library, project])
        #expect(listed.map(\.kind) == [.library, .project])
        #expect(listed[1].changeCount == 1)
        await #expect(throws: StoreError.self) { try await store.library(project) }
    }

    @Test func aBatchIsCommittedInOneTransactionOrNotAtAll() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, layer) = try await makeProject(in: store)
        // Another replica makes changes that arrive as one batch.
        var remote = ProjectDocument(id: id, replica: ReplicaID(77))
        try remote.apply(batch: ChangeBatch.encode(try await store.changes(of: id, since: VersionVector()).list)[...])
        for index in 0..<20 { try remote.edit(at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) } }
        let batch = ChangeBatch.encode(remote.changes(since: try await store.project(id).versionVector).list)
        // The disk refuses the 15th change: nothing of the batch may stay, in memory or on disk.
        try await store.failInserts(ofSeq: 15)
        let before = try await store.project(id).view
        await #expect(throws: StoreError.self) { try await store.apply(batch: batch[...], to: id) }
        #expect(try await store.project(id).view == before)
        #expect(try await store.document(id).changeCount == 1)
        try await store.stopFailingInserts()
        let report = try await store.apply(batch: batch[...], to: id)
        #expect(report.applied.count == 20)
        #expect(try await store.document(id).changeCount == 21)
        #expect(try await store.project(id).view == remote.view)
    }

    @Test func anInvalidChangeLeavesTheStoreUntouched() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, _) = try await makeProject(in: store)
        let bad = Change(
            replica: ReplicaID(5), seq: 1, startCounter: 10, wallTime: 0, dependencies: VersionVector(),
            operations: [.setDeleted(object: OpID(counter: 999, replica: ReplicaID(6)), isDeleted: true)])
        await #expect(throws: DocumentError.self) { try await store.apply([(bad.encoded(), bad)], to: id) }
        #expect(try await store.document(id).changeCount == 1)
    }

    @Test func aLocalEditThatCannotBeStoredIsNotApplied() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, layer) = try await makeProject(in: store)
        try await store.failInserts(ofSeq: 2)
        await #expect(throws: StoreError.self) {
            try await store.editProject(id, at: 3) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }
        }
        #expect(try await store.project(id).strokes(in: layer).isEmpty)
        try await store.stopFailingInserts()
        let change = try await store.editProject(id, at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }.change
        #expect(change?.seq == 2)
    }

    @Test func compactionDropsAcknowledgedChangesAndKeepsEveryStroke() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let store = try Store(path: path)
        let (id, layer) = try await makeProject(in: store)
        try await store.addPeer("PEER", address: "127.0.0.1:1", at: 1)
        try await store.share(id, with: "PEER", mode: .readWrite)
        var keys: [OpID] = []
        for index in 0..<40 {
            let key = try await store.editProject(id, at: Int64(index)) {
                try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index))
            }.value
            keys.append(key)
        }
        let first = keys[0]
        _ = try await store.editProject(id, at: 50) { try $0.eraseStroke(first, in: layer) }
        let replica = await store.replicaID
        // The peer acknowledged up to change 21; the snapshot covers all 42.
        try await store.acknowledge(VersionVector([replica: 21]), of: id, by: "PEER", at: 60)
        try await store.writeSnapshot(of: id, at: 61)
        #expect(try await store.document(id).changeCount == 21)
        // A peer behind the horizon needs the snapshot; one after it gets changes.
        guard case .snapshotRequired = try await store.changes(of: id, since: VersionVector([replica: 5])) else {
            Issue.record("changes before the horizon were served")
            return
        }
        #expect(try await store.changes(of: id, since: VersionVector([replica: 30])).list.map(\.seq) == Array(31...42))
        #expect(try await store.changes(of: id, since: VersionVector([replica: 21])).list.count == 21)
        let view = try await store.project(id).view
        await store.unload(id)
        let reloaded = try await store.project(id)
        #expect(reloaded.view == view)
        #expect(reloaded.strokes(in: layer) == Array(keys.dropFirst()))
        #expect(reloaded.erasedStrokes(in: layer) == [keys[0]])
    }

    @Test func snapshotsAreDueAfterEnoughChangesOrIdleTime() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.snapshotEveryChanges = 10
        options.snapshotAfterIdle = .seconds(60)
        let store = try Store(path: directory.file("store.db"), options: options)
        let (busy, layer) = try await makeProject(in: store)
        let (quiet, _) = try await makeProject(in: store)
        for index in 0..<9 {
            _ = try await store.editProject(busy, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        #expect(await store.documentsDueForSnapshot() == [busy].sorted())  // 1 + 9 changes
        #expect(await store.documentsDueForSnapshot(now: .now + .seconds(61)).sorted() == [busy, quiet].sorted())
        let written = try await store.runMaintenance(at: 100)
        #expect(written == [busy])
        #expect(try await store.document(busy).snapshotVersion == (try await store.project(busy).versionVector))
        #expect(await store.documentsDueForSnapshot().isEmpty)
    }

    @Test func editsContinueWhileASnapshotIsWritten() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<200 {
            _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index, count: 80)) }
        }
        async let snapshot: Void = store.writeSnapshot(of: id, at: 300)
        for index in 200..<220 {
            _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        try await snapshot
        let expected = try await store.project(id).view
        await store.unload(id)
        #expect(try await store.project(id).view == expected)
        #expect(expected.counts.strokes == 220)
    }

    @Test func backupWhileInUseAndRestoreWithANewReplicaID() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<10 {
            _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        try await store.backup(to: directory.file("backup.db"))
        await #expect(throws: StoreError.self) { try await store.backup(to: directory.file("backup.db")) }
        _ = try await store.editProject(id, at: 20) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(20)) }
        let original = await store.replicaID
        let minted = try Store.restore(backup: directory.file("backup.db"), to: directory.file("restored.db"))
        #expect(minted != original)
        #expect(throws: StoreError.self) { try Store.restore(backup: directory.file("backup.db"), to: directory.file("restored.db")) }
        let restored = try Store(path: directory.file("restored.db"))
        #expect(await restored.replicaID == minted)
        let doc = try await restored.project(id)
        #expect(doc.strokes(in: layer).count == 10)
        // New edits never reuse the old replica's sequence numbers.
        let change = try await restored.editProject(id, at: 30) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(30)) }.change
        #expect(change?.replica == minted && change?.seq == 1)
        #expect(try await restored.integrityProblems().isEmpty)
    }

    @Test func aBackupThatIsNotHealthyIsNotRestored() throws {
        let directory = try TemporaryDirectory()
        let bogus = directory.file("bogus.db")
        _ = FileManager.default.createFile(atPath: bogus, contents: Data("not sqlite".utf8))
        #expect(throws: StoreError.self) { try Store.restore(backup: bogus, to: directory.file("restored.db")) }
        #expect(!FileManager.default.fileExists(atPath: directory.file("restored.db")))
    }

    @Test func peersAreConfiguredOrPendingAndSharesNeedAConfiguredPeer() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, _) = try await makeProject(in: store)
        try await store.recordPendingPeer("STRANGER", from: "127.0.0.1:5555", at: 1)
        await #expect(throws: StoreError.self) { try await store.share(id, with: "STRANGER", mode: .readOnly) }
        try await store.addPeer("STRANGER", name: "Art dept", address: "127.0.0.1:7777", at: 2)
        try await store.share(id, with: "STRANGER", mode: .readOnly)
        let peers = try await store.peers()
        #expect(peers.map(\.state) == [.configured] && peers[0].lastAddress == "127.0.0.1:5555")
        #expect(try await store.shares(of: id).map(\.mode) == [.readOnly])
        try await store.recordPendingPeer("STRANGER", from: "127.0.0.1:6666", at: 3)  // stays configured
        #expect(try await store.peers().map(\.state) == [.configured])
        try await store.unshare(id, with: "STRANGER")
        try await store.removePeer("STRANGER")
        #expect(try await store.peers().isEmpty)
    }

    @Test func aMergedSnapshotIsStoredWithTheDocument() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"))
        let (id, layer) = try await makeProject(in: store)
        var remote = try await store.project(id)
        remote = try ProjectDocument(snapshot: remote.snapshot(), replica: ReplicaID(88))
        try remote.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(5)) }
        try await store.merge(snapshot: remote.snapshot(), into: id, at: 6)
        await store.unload(id)
        #expect(try await store.project(id).view == remote.view)
    }
}

extension ChangesSince {
    var list: [EncodedChange] {
        if case .changes(let changes) = self { return changes }
        return []
    }
}

extension Store {
    /// Makes the database refuse to store changes with this sequence number (a
    /// trigger), to test what happens when a commit fails.
    func failInserts(ofSeq seq: Int) throws {
        try database.connection.execute(
            "CREATE TEMP TRIGGER fail_insert BEFORE INSERT ON changes WHEN NEW.seq = \(seq) BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
    }

    func stopFailingInserts() throws {
        try database.connection.execute("DROP TRIGGER IF EXISTS temp.fail_insert")
    }
}
