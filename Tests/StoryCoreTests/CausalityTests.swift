import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct CausalityTests {
    /// A replica that made `count` changes, each depending on the previous.
    func author(_ count: Int) throws -> (ProjectDocument, [(EncodedChange, Change)]) {
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        let scene = try doc.edit(at: 0) { try $0.insertScene(at: 0) }.value
        for index in 1..<count { try doc.edit(at: Int64(index)) { try $0.insertShot(in: scene, at: 0) } }
        guard case .changes(let changes) = doc.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        return (doc, try changes.map { ($0, try $0.decoded()) })
    }

    @Test func changesWhoseDependenciesAreMissingAreHeldNotDroppedNorAppliedEarly() throws {
        let (source, changes) = try author(6)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        let report = try doc.apply(Array(changes[3...]))
        #expect(report.applied.isEmpty && report.buffered == 3)
        #expect(doc.pendingChangeCount == 3)
        #expect(doc.scenes.isEmpty)
        let rest = try doc.apply(Array(changes[0..<3]))
        #expect(rest.applied.count == 6 && rest.buffered == 0)
        #expect(doc.view == source.view)
    }

    @Test func crossReplicaDependenciesAreRespected() throws {
        var a = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        var b = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        let scene = try a.edit(at: 0) { try $0.insertScene(at: 0) }.value
        try WireSync.exchange(&a, &b)
        let shot = try b.edit(at: 1) { try $0.insertShot(in: scene, at: 0) }.value
        guard case .changes(let fromB) = b.changes(since: a.versionVector) else { throw SyncTestError.snapshotRequired }
        // A third replica gets b's change before a's scene: it must wait.
        var c = ProjectDocument(id: Board.documentID, replica: ReplicaID(3))
        try c.apply(try fromB.map { ($0, try $0.decoded()) })
        #expect(c.pendingChangeCount == 1 && c.scenes.isEmpty)
        guard case .changes(let fromA) = a.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        try c.apply(try fromA.map { ($0, try $0.decoded()) })
        #expect(c.pendingChangeCount == 0)
        #expect(c.shots(in: scene) == [shot])
    }

    @Test func reDeliveryIsIgnored() throws {
        let (source, changes) = try author(4)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try doc.apply(changes)
        let report = try doc.apply(changes + changes.reversed())
        #expect(report.applied.isEmpty && report.duplicates == 8)
        #expect(doc.view == source.view)
        // Duplicates inside one batch, in any order, are also applied once.
        var other = ProjectDocument(id: Board.documentID, replica: ReplicaID(3))
        try other.apply(changes.reversed() + changes + changes)
        #expect(other.view == source.view && other.pendingChangeCount == 0)
    }

    /// A batch decoded for applying (`decodeReceived`, as the daemon's sync
    /// does) holds what `decode` gives, and applies as decoded changes do:
    /// re-deliveries inside it once, a gap held back and charged to the sender.
    @Test func receivedBatchesApplyAsDecodedChangesDo() throws {
        let (source, changes) = try author(6)
        let encoded = changes.map(\.0)
        let batch = ChangeBatch.encode(Array(encoded[0..<2]) + encoded[0..<2] + encoded[4...])
        let received = try ChangeBatch.decodeReceived(batch[...])
        let decoded = try ChangeBatch.decode(batch[...])
        #expect(received.count == 6 && received.changes.map(\.0) == decoded.map(\.0))
        #expect(received.changes.map(\.1) == decoded.map(\.1))
        #expect(received.newest == VersionVector([ReplicaID(1): 6]))

        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        let report = try doc.apply(received, origin: .peer(7))
        #expect(report.applied.map(\.seq) == [1, 2] && report.duplicates == 2 && report.buffered == 2)
        // Changes 5 and 6 wait for 3 and 4, counted against the peer they came from.
        #expect(doc.heldBackBytes(from: .peer(7)) == encoded[4...].reduce(0) { $0 + $1.bytes.count })
        #expect(doc.heldBackBytes(from: .peer(8)) == 0)
        let rest = try doc.apply(try ChangeBatch.decodeReceived(ChangeBatch.encode(Array(encoded[2..<4]))[...]), origin: .peer(8))
        #expect(rest.applied.map(\.seq) == [3, 4, 5, 6] && doc.pendingChangeCount == 0)
        #expect(doc.view == source.view)

        // A malformed change fails the whole batch, named by its place.
        var broken = batch
        broken[broken.count - 3] ^= 0xFF
        #expect {
            _ = try ChangeBatch.decodeReceived(broken[...])
        } throws: { error in
            (error as? CodecError)?.message.hasPrefix("change 6 of 6") == true
        }
    }

    @Test func aChangeNamingAnUnknownObjectIsRejectedWithNothingApplied() throws {
        let (_, changes) = try author(3)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        let bad = Change(
            replica: ReplicaID(1), seq: 4, startCounter: 100, wallTime: 0, dependencies: VersionVector(),
            operations: [
                .setField(object: .root, key: .title, value: .string("applied?")),
                .setDeleted(object: OpID(counter: 77, replica: ReplicaID(9)), isDeleted: true),
            ])
        let encoded = bad.encoded()
        do {
            try doc.apply(changes + [(encoded, bad)])
            Issue.record("a change naming an unknown object was applied")
        } catch let error as DocumentError {
            #expect(error.code == .notFound)
        }
        // The whole batch rolled back, and the bad change is not left blocking the buffer.
        #expect(doc.versionVector.isEmpty && doc.view.title == nil && doc.pendingChangeCount == 0)
        try doc.apply(changes)
        #expect(doc.versionVector[ReplicaID(1)] == 3)
    }

    /// Strokes drawn, erased and redrawn by changes of a batch that fails
    /// later are undone with it: no stroke entry and no point blob is left.
    @Test func strokesOfABatchThatFailsAreRolledBackWithTheirPoints() throws {
        var source = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        let layer = try source.edit(at: 0) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        guard case .changes(let before) = source.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try doc.apply(try before.map { ($0, try $0.decoded()) })
        let snapshot = doc.snapshot()
        let vector = source.versionVector
        var drawn: [OpID] = []
        for index in 0..<5 {
            let points = (0..<8).map { Point(x: Double($0) / 8, y: Double(index) / 5, pressure: 0.5) }
            drawn.append(try source.edit(at: Int64(index + 1)) { try $0.addStroke(to: layer, brush: Brush(), points: points) }.value)
        }
        try source.edit(at: 9) { try $0.eraseStroke(drawn[1], in: layer) }
        guard case .changes(let strokes) = source.changes(since: vector) else { throw SyncTestError.snapshotRequired }
        let bad = Change(
            replica: ReplicaID(1), seq: source.versionVector[ReplicaID(1)] + 1, startCounter: 1_000, wallTime: 10,
            dependencies: VersionVector(), operations: [.eraseStroke(layer: layer, key: OpID(counter: 999, replica: ReplicaID(9)))])
        #expect(throws: DocumentError.self) { try doc.apply(try strokes.map { ($0, try $0.decoded()) } + [(bad.encoded(), bad)]) }
        #expect(doc.snapshot() == snapshot)
        #expect(doc.strokes(in: layer).isEmpty)
        #expect(drawn.allSatisfy { doc.points(of: $0) == nil })
        // The good changes still apply afterwards, all of them.
        try doc.apply(try strokes.map { ($0, try $0.decoded()) })
        #expect(doc.view == source.view)
        #expect(drawn.allSatisfy { doc.points(of: $0) != nil })
    }

    @Test func aReplicaCannotReuseItsOwnOpIDs() throws {
        let (_, changes) = try author(2)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try doc.apply(changes)
        let replay = Change(
            replica: ReplicaID(1), seq: 3, startCounter: OpID.firstCounter, wallTime: 0, dependencies: VersionVector(),
            operations: [.setField(object: .root, key: .title, value: .string("reused counter"))])
        #expect(throws: DocumentError.self) { try doc.apply([(replay.encoded(), replay)]) }
    }

    @Test func twoDifferentChangesWithOneSequenceNumberAreAConflict() throws {
        let (_, changes) = try author(2)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try doc.apply(changes)
        var forged = changes[1].1
        forged.wallTime += 1
        do {
            try doc.apply([(forged.encoded(), forged)])
            Issue.record("a forked change was accepted")
        } catch let error as DocumentError {
            #expect(error.code == .conflict)
        }
    }

    struct StoreFailure: Error {}

    @Test func aBatchIsAppliedOnlyIfItCommits() throws {
        let (_, changes) = try author(3)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        #expect(throws: StoreFailure.self) {
            try doc.apply(changes) { report in
                #expect(report.applied.count == 3)
                throw StoreFailure()
            }
        }
        #expect(doc.versionVector.isEmpty && doc.scenes.isEmpty)
        var committed: [EncodedChange] = []
        try doc.apply(changes) { committed = $0.applied }
        #expect(committed.map(\.seq) == [1, 2, 3])
    }

    @Test func changesSinceReturnsWhatIsMissingInCausalOrder() throws {
        var docs = try (0..<3).map { try Board().replica(UInt64(20 + $0)) }
        for index in docs.indices { try docs[index].edit(at: 1) { try $0.insertScene(at: 0) } }
        try WireSync.exchange(&docs, 0, 1)
        try docs[2].edit(at: 2) { try $0.insertScene(at: 0) }
        guard case .changes(let missing) = docs[0].changes(since: docs[2].versionVector) else {
            throw SyncTestError.snapshotRequired
        }
        #expect(Set(missing.map(\.replica)) == [docs[0].replica, docs[1].replica])
        #expect(missing.map(\.startCounter) == missing.map(\.startCounter).sorted())
        guard case .changes(let none) = docs[0].changes(since: docs[0].versionVector) else {
            throw SyncTestError.snapshotRequired
        }
        #expect(none.isEmpty)
    }

    @Test func compactedChangesRequireASnapshot() throws {
        let (source, _) = try author(5)
        var compacted = source
        compacted.compactChangeLog(upTo: VersionVector([ReplicaID(1): 3]))
        guard case .snapshotRequired = compacted.changes(since: VersionVector([ReplicaID(1): 1])) else {
            Issue.record("changes before the horizon were served")
            return
        }
        guard case .changes(let tail) = compacted.changes(since: VersionVector([ReplicaID(1): 3])) else {
            Issue.record("changes after the horizon were refused")
            return
        }
        #expect(tail.map(\.seq) == [4, 5])
    }

    @Test func twoDifferentHeldBackChangesWithOneSequenceNumberAreAConflict() throws {
        let (_, changes) = try author(3)
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try doc.apply([changes[2]])  // held back: seq 1 and 2 are missing
        var forged = changes[2].1
        forged.wallTime += 5
        do {
            try doc.apply([(forged.encoded(), forged)])
            Issue.record("a different change with a held-back sequence number was accepted")
        } catch let error as DocumentError {
            #expect(error.code == .conflict)
        }
    }
}
