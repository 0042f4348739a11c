import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Synchronization
import Testing

@testable import StoryStore

@Suite struct StoreTests {
    @Test func aDocumentLoadsFromItsSnapshotAndTheChangesAfterIt() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let (id, layer): (DocumentID, OpID)
        var expected: ProjectView
        do {
            let store = try Store(path: path, identity: TestIdentities.signing())
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
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        // Read from the snapshot's version and the log, before the document is loaded.
        let stored = try await reopened.storedVersion(of: id)
        let loaded = try await reopened.project(id)
        #expect(stored == loaded.versionVector && stored.totalChanges == 48)  // founding, layer, 45 strokes, title
        #expect(loaded.view == expected)
        #expect(loaded.strokes(in: layer).count == 45)
        #expect(loaded.replica == (await reopened.replicaID))
    }

    @Test func documentsAreListedWithoutLoadingThem() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let library = try await store.createDocument(kind: .library, name: "Library", at: 0)
        let (project, _) = try await makeProject(in: store, name: "Night Train")
        let listed = try await store.documents()
        #expect(listed.map(\.id) == [library, project])
        #expect(listed.map(\.kind) == [.library, .project])
        #expect(listed[1].changeCount == 2)  // founding and layer
        await #expect(throws: StoreError.self) { try await store.library(project) }
    }

    @Test func aBatchIsCommittedInOneTransactionOrNotAtAll() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        // Another identity, an editor here, makes changes that arrive as one batch.
        try await store.share(id, with: TestIdentities.signing(1).peer, role: .editor, at: 3)
        var remote = ProjectDocument(id: id, author: TestIdentities.author(1))
        try remote.apply(batch: ChangeBatch.encode(try await store.changes(of: id, since: VersionVector()).list)[...])
        for index in 0..<20 { try remote.edit(at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) } }
        let batch = ChangeBatch.encode(remote.changes(since: try await store.project(id).versionVector).list)
        // The disk refuses the 15th change: nothing of the batch may stay, in memory or on disk.
        try await store.failInserts(ofSeq: 15)
        let before = try await store.project(id).view
        await #expect(throws: StoreError.self) { try await store.apply(batch: batch[...], to: id) }
        #expect(try await store.project(id).view == before)
        #expect(try await store.document(id).changeCount == 3)
        try await store.stopFailingInserts()
        let report = try await store.apply(batch: batch[...], to: id)
        #expect(report.applied.count == 20)
        #expect(try await store.document(id).changeCount == 23)
        #expect(try await store.project(id).view == remote.view)
    }

    @Test func anInvalidChangeLeavesTheStoreUntouched() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        // Unsigned: refused before anything is looked at.
        let bad = Change(
            replica: ReplicaID(5), seq: 1, startCounter: 10, wallTime: 0, dependencies: VersionVector(),
            operations: [.setDeleted(object: OpID(counter: 999, replica: ReplicaID(6)), isDeleted: true)])
        await #expect(throws: DocumentError.self) { try await store.apply([(bad.encoded(), bad)], to: id) }
        // Signed by an editor, then altered on the way: the signature no longer checks out.
        try await store.share(id, with: TestIdentities.signing(1).peer, role: .editor, at: 3)
        var remote = ProjectDocument(id: id, author: TestIdentities.author(1))
        try remote.apply(batch: ChangeBatch.encode(try await store.changes(of: id, since: VersionVector()).list)[...])
        let drawn = try remote.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }.change!
        var bytes = Array(drawn.bytes)
        bytes[bytes.count - 6] ^= 1  // a point
        let tampered = try EncodedChange.decoding(bytes[...], signature: drawn.signature)
        do {
            try await store.apply([tampered], to: id)
            Issue.record("an altered change was accepted")
        } catch let error as DocumentError {
            #expect(error.code == .unauthenticated)
        }
        #expect(try await store.project(id).strokes(in: layer).isEmpty)
        #expect(try await store.document(id).changeCount == 3)
    }

    @Test func aLocalEditThatCannotBeStoredIsNotApplied() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        try await store.failInserts(ofSeq: 3)
        await #expect(throws: StoreError.self) {
            try await store.editProject(id, at: 3) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }
        }
        #expect(try await store.project(id).strokes(in: layer).isEmpty)
        try await store.stopFailingInserts()
        let change = try await store.editProject(id, at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }.change
        #expect(change?.seq == 3)
        // The failed edit left no trace in the chain: the next one verifies.
        await store.unload(id)
        #expect(try await store.project(id).strokes(in: layer).count == 1)
    }

    @Test func compactionDropsAcknowledgedChangesAndKeepsEveryStroke() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let store = try Store(path: path, identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        let peer = TestIdentities.signing(1).peer
        try await store.addPeer(peer, address: "127.0.0.1:1", at: 1)
        try await store.share(id, with: peer, role: .editor, at: 2)
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
        // The peer acknowledged up to change 21; the snapshot covers all 44.
        try await store.acknowledge(VersionVector([replica: 21]), of: id, by: peer, at: 60)
        try await store.writeSnapshot(of: id, at: 61)
        #expect(try await store.document(id).changeCount == 23)
        // A peer behind the horizon needs the snapshot; one after it gets changes.
        guard case .snapshotRequired = try await store.changes(of: id, since: VersionVector([replica: 5])) else {
            Issue.record("changes before the horizon were served")
            return
        }
        #expect(try await store.changes(of: id, since: VersionVector([replica: 30])).list.map(\.seq) == Array(31...44))
        #expect(try await store.changes(of: id, since: VersionVector([replica: 21])).list.count == 23)
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
        // Long enough that no stall of a loaded machine makes the quiet one idle by itself.
        options.snapshotAfterIdle = .seconds(3_600)
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing(), options: options)
        let (busy, layer) = try await makeProject(in: store)
        let (quiet, _) = try await makeProject(in: store)
        for index in 0..<9 {
            _ = try await store.editProject(busy, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        #expect(await store.documentsDueForSnapshot() == [busy].sorted())  // 2 + 9 changes
        #expect(await store.documentsDueForSnapshot(now: .now + .seconds(3_601)).sorted() == [busy, quiet].sorted())
        let written = try await store.runMaintenance(at: 100)
        #expect(written == [busy])
        #expect(try await store.document(busy).snapshotVersion == (try await store.project(busy).versionVector))
        #expect(await store.documentsDueForSnapshot().isEmpty)
    }

    @Test func editsContinueWhileASnapshotIsWritten() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<200 {
            _ = try await store.editProject(id, at: Int64(index)) {
                try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index, count: 80))
            }
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
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<10 {
            _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        try await store.backup(to: directory.file("backup.db"))
        await #expect(throws: StoreError.self) { try await store.backup(to: directory.file("backup.db")) }
        _ = try await store.editProject(id, at: 20) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(20)) }
        let original = await store.replicaID
        try Store.restore(backup: directory.file("backup.db"), to: directory.file("restored.db"))
        #expect(throws: StoreError.self) { try Store.restore(backup: directory.file("backup.db"), to: directory.file("restored.db")) }
        let restored = try Store(path: directory.file("restored.db"), identity: TestIdentities.signing())
        let minted = await restored.replicaID
        #expect(minted != original)
        let doc = try await restored.project(id)
        #expect(doc.strokes(in: layer).count == 10)
        // New edits never reuse the old replica's sequence numbers.
        let change = try await restored.editProject(id, at: 30) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(30)) }.change
        #expect(change?.replica == minted && change?.seq == 1)
        #expect(try await restored.integrityProblems().isEmpty)
    }

    /// The backup copies on its own connection and thread: an edit made
    /// while it is midway completes (the store's actor is not held), and the
    /// copy is the state of the backup's start, whole and healthy.
    @Test func editsGoOnWhileABackupIsMidway() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<200 {
            _ = try await store.editProject(id, at: Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        let midway = DispatchSemaphore(value: 0)
        let editDone = DispatchSemaphore(value: 0)
        let editCompletedMidway = Mutex<Bool?>(nil)
        let backupPath = directory.file("backup.db")
        let backup = Task {
            // Two pages per step: the copy takes many steps; after the first,
            // it waits (at most 10 s) for an edit to complete meanwhile.
            try await store.backup(
                to: backupPath,
                betweenSteps: { _ in
                    guard editCompletedMidway.withLock({ $0 }) == nil else { return }
                    midway.signal()
                    let completed = editDone.wait(timeout: .now() + 10) == .success
                    editCompletedMidway.withLock { $0 = completed }
                }, pagesPerStep: 2)
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                midway.wait()
                continuation.resume()
            }
        }
        _ = try await store.editProject(id, at: 500) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(500)) }
        editDone.signal()
        try await backup.value
        #expect(editCompletedMidway.withLock { $0 } == true, "an edit completed while the backup was midway")
        let copy = try Store(path: directory.file("backup.db"), identity: TestIdentities.signing())
        #expect(try await copy.integrityProblems().isEmpty)
        #expect(try await copy.project(id).strokes(in: layer).count == 200, "the state of the backup's start")
        #expect(try await store.project(id).strokes(in: layer).count == 201)
    }

    @Test func aBackupThatIsNotHealthyIsNotRestored() throws {
        let directory = try TemporaryDirectory()
        let bogus = directory.file("bogus.db")
        _ = FileManager.default.createFile(atPath: bogus, contents: Data("not sqlite".utf8))
        #expect(throws: StoreError.self) { try Store.restore(backup: bogus, to: directory.file("restored.db")) }
        #expect(!FileManager.default.fileExists(atPath: directory.file("restored.db")))
    }

    @Test func peersAreConfiguredOrPending() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let stranger = TestIdentities.signing(5).peer
        try await store.recordPendingPeer(stranger, from: "127.0.0.1:5555", at: 1)
        try await store.addPeer(stranger, name: "Art dept", address: "127.0.0.1:7777", at: 2)
        let peers = try await store.peers()
        #expect(peers.map(\.state) == [.configured] && peers[0].lastAddress == "127.0.0.1:5555")
        try await store.recordPendingPeer(stranger, from: "127.0.0.1:6666", at: 3)  // stays configured
        #expect(try await store.peers().map(\.state) == [.configured])
        try await store.removePeer(stranger)
        #expect(try await store.peers().isEmpty)
    }

    @Test func sharingWritesTheAccessListAndTheMirrorOfIt() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let store = try Store(path: path, identity: TestIdentities.signing())
        let (id, _) = try await makeProject(in: store)
        let (reader, editor) = (TestIdentities.signing(1).peer, TestIdentities.signing(2).peer)
        try await store.share(id, with: reader, role: .reader, at: 3)
        try await store.share(id, with: editor, role: .editor, at: 4)
        let roles = { (members: [MemberRecord]) in Dictionary(uniqueKeysWithValues: members.map { ($0.peer, $0.role) }) }
        #expect(roles(try await store.members(of: id)) == [store.peerID: .owner, reader: .reader, editor: .editor])
        #expect(try await store.sharedDocuments(with: reader).map(\.role) == [.reader])
        try await store.share(id, with: reader, role: .none, at: 5)
        #expect(try await store.sharedDocuments(with: reader).isEmpty)
        // The mirror and the document agree after a reload too.
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        #expect(roles(try await reopened.members(of: id)) == [store.peerID: .owner, editor: .editor])
        #expect(try await reopened.project(id).role(of: reader) == .none)
        #expect(try await reopened.localRole(of: id) == .owner)
    }

    @Test func aReadOnlyDocumentRefusesLocalEditsBeforeStoringAnything() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Store(path: directory.file("owner.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: owner)
        let readerIdentity = TestIdentities.signing(1)
        try await owner.share(id, with: readerIdentity.peer, role: .reader, at: 3)
        let reader = try Store(path: directory.file("reader.db"), identity: readerIdentity)
        try await reader.receiveDocument(id, kind: .project, name: "Board", from: owner.peerID, at: 4)
        try await reader.apply(
            batch: ChangeBatch.encode(try await owner.changes(of: id, since: VersionVector()).list)[...], to: id, from: owner.peerID)
        #expect(try await reader.localRole(of: id) == .reader)
        let before = try await reader.document(id).changeCount
        do {
            _ = try await reader.editProject(id, at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }
            Issue.record("a reader's edit was accepted")
        } catch let error as DocumentError {
            #expect(error.code == .forbidden && error.message.hasPrefix("read-only"))
        }
        await #expect(throws: DocumentError.self) { _ = try await reader.undo(id, session: "default", at: 6) }
        // A reader may not share either, not even read-only.
        await #expect(throws: DocumentError.self) { try await reader.share(id, with: TestIdentities.signing(2).peer, role: .reader, at: 7) }
        #expect(try await reader.document(id).changeCount == before)
    }

    @Test func heldBackChangesAreBoundedAndNothingOfARefusedBatchStays() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.heldBackPerDocument = HeldBackLimits(changes: 5, bytes: 1 << 20)
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing(), options: options)
        let (id, layer) = try await makeProject(in: store)
        try await store.share(id, with: TestIdentities.signing(1).peer, role: .editor, at: 3)
        try await store.share(id, with: TestIdentities.signing(2).peer, role: .editor, at: 3)
        // Editor 2 draws on top of editor 1's changes; the store gets 2's but never 1's.
        let founding = ChangeBatch.encode(try await store.changes(of: id, since: VersionVector()).list)
        var one = ProjectDocument(id: id, author: TestIdentities.author(1))
        var two = ProjectDocument(id: id, author: TestIdentities.author(2))
        try one.apply(batch: founding[...])
        try two.apply(batch: founding[...])
        for index in 0..<3 { try one.edit(at: 10) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) } }
        try WireSync.send(from: one, to: &two)
        for index in 0..<10 { try two.edit(at: 11) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) } }
        let fromTwo = two.changes(since: one.versionVector).list
        let peer = TestIdentities.signing(2).peer
        // Four held back: within the limit, kept (not stored, not acknowledged).
        let report = try await store.apply(batch: ChangeBatch.encode(Array(fromTwo.prefix(4)))[...], to: id, from: peer)
        #expect(report.buffered == 4 && report.applied.isEmpty)
        #expect(try await store.version(of: id)[two.replica] == 0)
        // Ten would be over it: refused as a whole, and the four stay as they were.
        do {
            try await store.apply(batch: ChangeBatch.encode(fromTwo)[...], to: id, from: peer)
            Issue.record("the held-back limit was not enforced")
        } catch let error as DocumentError {
            #expect(error.code == .limitExceeded)
        }
        #expect(try await store.project(id).pendingChangeCount == 4)
        // The peer went away: what it left held back is dropped.
        await store.dropHeldBack(from: peer)
        #expect(try await store.project(id).pendingChangeCount == 0)
        #expect(await store.heldBackBytes == 0)
        // With what they depend on, all apply.
        try await store.apply(batch: ChangeBatch.encode(one.changes(since: try await store.version(of: id)).list)[...], to: id)
        try await store.apply(batch: ChangeBatch.encode(fromTwo)[...], to: id, from: peer)
        #expect(try await store.project(id).view == two.view)
    }

    @Test func aMergedSnapshotIsStoredWithTheDocumentAndOnlyEditorsMaySendOne() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        let (editor, reader) = (TestIdentities.signing(1).peer, TestIdentities.signing(2).peer)
        try await store.share(id, with: editor, role: .editor, at: 3)
        try await store.share(id, with: reader, role: .reader, at: 3)
        var remote = ProjectDocument(id: id, author: TestIdentities.author(1))
        try WireSync.send(from: try await store.project(id), to: &remote)
        try remote.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(5)) }
        await #expect(throws: DocumentError.self) { try await store.merge(snapshot: remote.snapshot(), into: id, from: reader, at: 6) }
        try await store.merge(snapshot: remote.snapshot(), into: id, from: editor, at: 6)
        await store.unload(id)
        #expect(try await store.project(id).view == remote.view)
    }

    @Test func aSnapshotReachingAnEmptyCopyIsStoredAsSentAndOneMergedIntoContentAsMerged() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Store(path: directory.file("owner.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: owner)
        for index in 0..<5 {
            _ = try await owner.editProject(id, at: Int64(10 + index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        let editor = try Store(path: directory.file("editor.db"), identity: TestIdentities.signing(1))
        try await owner.share(id, with: editor.peerID, role: .editor, at: 20)
        try await editor.receiveDocument(id, kind: .project, name: "Board", from: owner.peerID, at: 21)
        let sent = try await owner.snapshot(of: id)
        try await editor.merge(snapshot: sent, into: id, from: owner.peerID, at: 22)
        // (Stored as it came, without an encode: the same bytes an encode of the merge makes.)
        #expect(try await editor.storedSnapshot(of: id)?.bytes == sent, "an empty copy stores the snapshot it was sent")
        let reopened = try Store(path: directory.file("editor.db"), identity: TestIdentities.signing(1))
        #expect(try await reopened.project(id).snapshot() == (try await owner.project(id).snapshot()))
        // Edited there meanwhile: the merge makes something else, which is encoded.
        _ = try await reopened.editProject(id, at: 30) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(9)) }
        _ = try await owner.editProject(id, at: 31) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(8)) }
        try await reopened.merge(snapshot: try await owner.snapshot(of: id), into: id, from: owner.peerID, at: 32)
        let merged = try await reopened.project(id)
        #expect(merged.strokes(in: layer).count == 7)
        #expect(try await reopened.storedSnapshot(of: id)?.bytes == merged.snapshot())
    }

    @Test func aCopyIsANewProjectOwnedHereWithTheSameContent() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        _ = try await store.editProject(id, at: 3) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(3)) }
        let copy = try await store.copyProject(id, name: "Board, take 2", at: 4)
        #expect(copy != id)
        let copied = try await store.project(copy)
        #expect(copied.owner == store.peerID && !copied.isLegacy)
        #expect(copied.view.title == "Board, take 2")
        #expect(copied.view.shots.map(\.layers) == (try await store.project(id)).view.shots.map(\.layers))
        // Its content came as a baseline: a peer needs a snapshot of it.
        guard case .snapshotRequired = try await store.changes(of: copy, since: VersionVector()) else {
            Issue.record("a copy's baseline was offered as changes")
            return
        }
        await store.unload(copy)
        #expect(try await store.project(copy).view == copied.view)
    }

    /// A database written before signed authorship opens with every document
    /// kept: each is now owned by this daemon as a legacy document (edited
    /// here as before, never synced), its unsigned changes folded into a snapshot.
    @Test func aDatabaseFromBeforeSignedAuthorshipIsUpgradedWithNothingLost() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let id = DocumentID(high: 0xAB, low: 0xCD)
        var old = ProjectDocument(id: id, replica: ReplicaID(0x1234))
        var changes: [EncodedChange] = []
        let layer = try old.edit(at: 1) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }
        changes.append(layer.change!)
        for index in 0..<5 {
            changes.append(
                try old.edit(at: Int64(2 + index)) { try $0.addStroke(to: layer.value, brush: Brush(), points: strokePoints(index)) }.change!)
        }
        do {
            // The schema before authorship, with changes in the first change format.
            let database = try StoreDatabase.open(path: path, migrations: 2)
            try database.connection.run("INSERT INTO documents (id, kind, name, created) VALUES (?, 1, 'Old board', 1)", [id.blob])
            let statement = try database.connection.prepare("INSERT INTO changes (doc, replica, seq, counter, bytes) VALUES (?, ?, ?, ?, ?)")
            for change in changes {
                let version1 = [UInt8(1)] + Array(change.bytes.dropFirst(2))  // format 1: no flags byte
                try statement.bind([id.blob, change.replica.sql, .integer(Int64(change.seq)), .integer(Int64(change.startCounter)), .blob(version1)])
                while try statement.step() {}
            }
        }
        let store = try Store(path: path, identity: TestIdentities.signing())
        let upgraded = try await store.project(id)
        #expect(upgraded.view == old.view)
        #expect(upgraded.isLegacy && upgraded.owner == store.peerID && upgraded.localRole == .owner)
        #expect(try await store.document(id).changeCount == 0)
        // Still edited here, as a signed document.
        _ = try await store.editProject(id, at: 10) { try $0.addStroke(to: layer.value, brush: Brush(), points: strokePoints(9)) }
        await store.unload(id)
        #expect(try await store.project(id).strokes(in: layer.value).count == 6)
        // Never shared: a copy can be.
        await #expect(throws: DocumentError.self) { try await store.share(id, with: TestIdentities.signing(1).peer, role: .reader, at: 11) }
        let copy = try await store.copyProject(id, name: nil, at: 12)
        try await store.share(copy, with: TestIdentities.signing(1).peer, role: .reader, at: 13)
        #expect(try await store.project(copy).strokes(in: layer.value).count == 6)
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

/// Undo and redo stacks are stored with the document: a restart (a new
/// `Store` on the same file), a snapshot and compaction keep them.
@Suite struct StoredUndoTests {
    @Test func undoAndRedoSurviveAReopenAndCompaction() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let (id, layer): (DocumentID, OpID)
        do {
            let store = try Store(path: path, identity: TestIdentities.signing())
            (id, layer) = try await makeProject(in: store)
            for index in 0..<3 {
                _ = try await store.editProject(id, session: "tablet", at: Int64(10 + index)) {
                    try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index))
                }
            }
            _ = try await store.editProject(id, session: "laptop", at: 20) { try $0.set(.title, to: .string("Night Train")) }
            let undone = try await store.undo(id, session: "tablet", at: 21)
            #expect(undone.change != nil && undone.summary == "drew 1 stroke on a layer in 1-1")
            try await store.writeSnapshot(of: id, at: 22)
            try await store.compact(id)
        }
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await reopened.project(id).strokes(in: layer).count == 2)
        // The redo stack came back, and so did the two strokes left to undo.
        #expect(try await reopened.redo(id, session: "tablet", at: 30).summary == "drew 1 stroke on a layer in 1-1")
        #expect(try await reopened.project(id).strokes(in: layer).count == 3)
        for _ in 0..<3 { #expect(try await reopened.undo(id, session: "tablet", at: 31).change != nil) }
        #expect(try await reopened.undo(id, session: "tablet", at: 32).change == nil, "three strokes, three undos")
        #expect(try await reopened.project(id).strokes(in: layer).isEmpty)
        // Another session's stack is its own.
        let title = try await reopened.undo(id, session: "laptop", at: 33)
        let titleNow = try await reopened.project(id).view.title
        #expect(title.summary == "set the project's title" && titleNow == nil)
        // Once more across a reopen: nothing left behind or doubled.
        let again = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await again.undo(id, session: "tablet", at: 40).change == nil)
        #expect(try await again.redo(id, session: "laptop", at: 41).summary == "set the project's title")
    }

    @Test func aDamagedStoredRecordDropsItsStackButTheDocumentLoads() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let id: DocumentID
        do {
            let store = try Store(path: path, identity: TestIdentities.signing())
            let (project, layer) = try await makeProject(in: store)
            id = project
            _ = try await store.editProject(id, session: "s", at: 3) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }
        }
        try Connection(path: path).run("UPDATE undo_records SET record = x'01ff'")
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await reopened.project(id).view.shots.count == 1)
        #expect(try await reopened.undo(id, session: "s", at: 4).change == nil)
        #expect(try Connection(path: path).query("SELECT count(*) FROM undo_records", [], { $0.int64(0) }) == [0], "the damaged rows are gone")
    }
}

/// `Store.batch`: many operations, one transaction; each all or nothing on its own.
@Suite struct StoreBatchTests {
    @Test func operationsInABatchCommitTogetherAndAFailedOneLeavesTheOthers() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let store = try Store(path: path, identity: TestIdentities.signing())
        let (first, firstLayer) = try await makeProject(in: store, name: "First")
        let (second, secondLayer) = try await makeProject(in: store, name: "Second")
        let events = await store.events()
        let outcomes = try await store.batch { store in
            [
                Result { try store.editProject(first, at: 10) { try $0.addStroke(to: firstLayer, brush: Brush(), points: strokePoints(1)) } },
                // An edit that fails (a layer that does not exist): rolled back alone.
                Result {
                    try store.editProject(first, at: 11) {
                        try $0.addStroke(to: OpID(counter: 999_999, replica: firstLayer.replica), brush: Brush(), points: strokePoints(2))
                    }
                },
                Result { try store.editProject(second, at: 12) { try $0.addStroke(to: secondLayer, brush: Brush(), points: strokePoints(3)) } },
            ].map { $0.map { _ in true } }
        }
        #expect(outcomes.map { (try? $0.get()) == true } == [true, false, true])
        // Published after the commit, one per stored change.
        var changed: [DocumentID] = []
        for await event in events {
            if case .documentChanged(let id, _, _) = event { changed.append(id) }
            if changed.count == 2 { break }
        }
        #expect(changed == [first, second])
        // Both are on disk: a second store reads them.
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await reopened.project(first).strokes(in: firstLayer).count == 1)
        #expect(try await reopened.project(second).strokes(in: secondLayer).count == 1)
    }

    @Test func aBatchThatThrowsKeepsNothingInMemoryOrOnDisk() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: store)
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await store.batch { store in
                _ = try store.editProject(id, at: 10) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(1)) }
                throw Stop()
            }
        }
        #expect(try await store.project(id).strokes(in: layer).isEmpty, "the document was reloaded from what the disk has")
        #expect(try await store.storedVersion(of: id) == store.project(id).versionVector)
    }
}

/// Documents load on use and the least recently used are dropped beyond a
/// bound; a dropped one loads again with all it had (undo history too).
@Suite struct LoadedDocumentLimitTests {
    @Test func memoryHoldsAtMostTheLimitAndADroppedDocumentLoadsAgainWhole() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.loadedDocumentLimit = 3
        let store = try Store(path: directory.file("store.db"), identity: TestIdentities.signing(), options: options)
        var projects: [(DocumentID, OpID)] = []
        for index in 0..<8 {
            let (id, layer) = try await makeProject(in: store, name: "P\(index)")
            _ = try await store.editProject(id, session: "s", at: 10) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
            projects.append((id, layer))
            #expect(await store.loadedDocumentCount <= 3)
        }
        for (index, (id, layer)) in projects.enumerated() {
            let strokes = try await store.project(id).strokes(in: layer)
            #expect(strokes.count == 1, "P\(index) loads again with its stroke")
            #expect(await store.loadedDocumentCount <= 3)
        }
        // The first project was dropped long ago; its undo stack was not.
        let undone = try await store.undo(projects[0].0, session: "s", at: 20)
        #expect(undone.change != nil && undone.summary == "drew 1 stroke on a layer in 1-1")
        #expect(try await store.project(projects[0].0).strokes(in: projects[0].1).isEmpty)
    }
}
