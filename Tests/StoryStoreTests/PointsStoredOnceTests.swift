import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryStore

/// With history retention, a project's snapshot leaves the point blobs its
/// kept changes hold in the change log (each stored once); loading, the past,
/// compaction and a far-behind peer still see every point.
@Suite struct PointsStoredOnceTests {
    static let day: Int64 = 86_400_000

    static func store(_ path: String, identity: Int, clock: ManualWallClock, retention: Int64) throws -> Store {
        var options = StoreOptions()
        options.clock = clock.clock
        options.historyRetention = retention
        return try Store(path: path, identity: TestIdentities.signing(identity), options: options)
    }

    /// A project of one layer in a store of its own keeping `retention` of history, at a fixed time.
    struct Board {
        let directory: TemporaryDirectory
        let clock = ManualWallClock(milliseconds: 1_800_000_000_000)
        let path: String
        let store: Store
        let id: DocumentID
        let layer: OpID

        init(retention: Int64, file: String = "store.db") async throws {
            directory = try TemporaryDirectory()
            path = directory.file(file)
            store = try PointsStoredOnceTests.store(path, identity: 0, clock: clock, retention: retention)
            (id, layer) = try await makeProject(in: store)
        }

        /// One stroke a change, for each index, made now.
        func draw(_ indices: Range<Int>, points: Int = 30) async throws {
            let layer = layer
            for index in indices {
                _ = try await store.editProject(id, at: clock.milliseconds) {
                    try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index, count: points))
                }
            }
        }
    }

    /// Whether every stroke of the layer draws points the project holds.
    static func everyStrokeHasItsPoints(_ project: ProjectDocument, in layer: OpID) -> Bool {
        project.strokes(in: layer).allSatisfy { project.stroke($0, in: layer).flatMap { project.points(of: $0.content) } != nil }
    }

    @Test func aSnapshotLeavesThePointsOfKeptChangesInTheLogAndLoadsWhole() async throws {
        let board = try await Board(retention: 30 * Self.day)
        let (store, id, clock, path) = (board.store, board.id, board.clock, board.path)
        try await board.draw(0..<40, points: 200)
        let before = try await store.project(id)
        try await store.writeSnapshot(of: id, at: clock.milliseconds)
        let stored = try #require(try await store.storedSnapshot(of: id))
        #expect(stored.pointsInLog != nil && stored.version == before.versionVector)
        #expect(stored.bytes.count * 5 < before.snapshot().count, "\(stored.bytes.count) bytes against \(before.snapshot().count) with points")
        // Every change is still in the log, with its points.
        // The 40 strokes' changes are kept (making the project, at time 1 and 2, is past the window).
        let logged = try await store.document(id).changeCount
        #expect(logged == 40, "\(logged) changes stored of \(before.versionVector)")

        // Loaded again (by a store without retention too): every point is back.
        await store.unload(id)
        #expect(try await store.project(id).snapshot() == before.snapshot())
        let reopened = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await reopened.project(id).snapshot() == before.snapshot())
        // The past from the snapshot as a base, and a far-behind peer's snapshot, have every point.
        #expect(try await reopened.projectHistory(id).document(at: before.versionVector).snapshot() == before.snapshot())
        let catchUp = try #require(try await store.catchUpSnapshot(of: id))
        #expect(try ProjectDocument(snapshot: catchUp.bytes, author: TestIdentities.author()).snapshot() == before.snapshot())
    }

    @Test func compactionPastTheWindowPutsThePointsOfDroppedChangesBackIntoTheSnapshot() async throws {
        let board = try await Board(retention: 2 * Self.day)
        let (store, id, clock) = (board.store, board.id, board.clock)
        try await board.draw(0..<10)
        try await store.writeSnapshot(of: id, at: clock.milliseconds)
        let thin = try #require(try await store.storedSnapshot(of: id)?.pointsInLog)
        clock.advance(by: 5 * Self.day)
        try await board.draw(10..<13)
        let before = try await store.project(id)
        try await store.writeSnapshot(of: id, at: clock.milliseconds)
        // The first twelve changes went (older than the window); the snapshot now holds their points.
        #expect(try await store.document(id).changeCount == 3)
        let stored = try #require(try await store.storedSnapshot(of: id))
        let replica = await store.replicaID
        #expect(try #require(stored.pointsInLog)[replica] > thin[replica], "the log holds the points of the kept changes only")
        let reopened = try Store(path: board.path, identity: TestIdentities.signing())
        let loaded = try await reopened.project(id)
        #expect(loaded.snapshot() == before.snapshot())
        #expect(Self.everyStrokeHasItsPoints(loaded, in: board.layer))
    }

    @Test func aStoreWhoseRetentionIsTurnedOffPutsEveryPointBackWhenItCompacts() async throws {
        let board = try await Board(retention: 30 * Self.day)
        let (store, id, path) = (board.store, board.id, board.path)
        try await board.draw(0..<5)
        try await store.writeSnapshot(of: id, at: board.clock.milliseconds)
        let before = try await store.project(id)
        #expect(try await store.storedSnapshot(of: id)?.pointsInLog != nil)
        // Reopened without retention: compaction drops every change, and the snapshot takes their points.
        let plain = try Store(path: path, identity: TestIdentities.signing())
        try await plain.compact(id)
        #expect(try await plain.document(id).changeCount == 0)
        #expect(try await plain.storedSnapshot(of: id)?.pointsInLog == nil)
        let again = try Store(path: path, identity: TestIdentities.signing())
        #expect(try await again.project(id).snapshot() == before.snapshot())
    }

    @Test func aReplicaWithAGapInTheLogKeepsItsPointsInTheSnapshot() async throws {
        let board = try await Board(retention: 30 * Self.day)
        let (store, id) = (board.store, board.id)
        try await board.draw(0..<6)
        let replica = await store.replicaID
        let version = try await store.version(of: id)
        func runStart() async throws -> UInt64? {
            try await store.withDatabase { try $0.unbrokenLogRuns(of: id, upTo: version) }[replica]?.seq
        }
        func drop(_ condition: String) async throws {
            try await store.withDatabase {
                try $0.connection.run("DELETE FROM changes WHERE doc = ? AND replica = ? AND \(condition)", [id.blob, replica.sql])
            }
        }
        #expect(try await runStart() == 1)
        // A change in the middle missing (as after a merged snapshot): no run of that replica.
        try await drop("seq = 4")
        #expect(try await runStart() == nil)
        // The run from after the gap counts.
        try await drop("seq < 4")
        #expect(try await runStart() == 5)
    }

    @Test func signaturesStayOnlyWhereARunMayEndAndAPeerStillTakesEveryChange() async throws {
        let board = try await Board(retention: 30 * Self.day, file: "a.db")
        let (owner, id, clock, path, directory) = (board.store, board.id, board.clock, board.path, board.directory)
        try await board.draw(0..<600, points: 8)
        // What a peer took before: the first 100 changes, each signed by its author.
        let early = try await owner.changes(of: id, since: VersionVector()).list.filter { $0.seq <= 100 }
        try await owner.writeSnapshot(of: id, at: clock.milliseconds)
        let signed = try await owner.withDatabase { database in
            try database.connection.query("SELECT seq FROM changes WHERE doc = ? AND signature IS NOT NULL ORDER BY seq", [id.blob]) {
                UInt64($0.int64(0))
            }
        }
        // (Making the project, at time 1 and 2, is past the window: its two changes went.)
        #expect(signed == [256, 512, 602], "every 256th and the newest keep their signatures")

        // Reopened, the changes come from the database: a peer that had the
        // first 100 takes the rest (and the share, change 603) in small batches, each cut where a signature is.
        let reopened = try Self.store(path, identity: 0, clock: clock, retention: 30 * Self.day)
        let reader = try Store(path: directory.file("b.db"), identity: TestIdentities.signing(1))
        try await reopened.share(id, with: reader.peerID, role: .reader, at: clock.milliseconds)
        try await reader.receiveDocument(id, kind: .project, name: "Board", from: reopened.peerID, at: 4)
        try await reader.apply(batch: ChangeBatch.encode(early)[...], to: id, from: reopened.peerID)
        let rest = try await reopened.changes(of: id, since: try await reader.version(of: id)).list
        let signedRest = rest.filter { $0.signature != nil }.map(\.seq)
        #expect(rest.first?.seq == 101 && signedRest == [256, 512, 602, 603], "\(signedRest.prefix(10)) \(signedRest.count)")
        let batches = ChangeBatch.split(rest, targetBytes: 2_000)
        #expect(batches.count >= 3 && batches.allSatisfy { $0.last?.signature != nil })
        for batch in batches { try await reader.apply(batch: ChangeBatch.encode(batch)[...], to: id, from: reopened.peerID) }
        #expect(try await reader.project(id).snapshot() == (try await reopened.project(id).snapshot()))
    }

    /// Random edits on two replicas, changes and snapshots exchanged, days
    /// passing, snapshots and compaction, and stores reopened at random: a
    /// reopened store always holds the same project, every point included.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func reopenedStoresHoldEveryPointWhateverTheHistory(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 1_800_000_000_000)
        let paths = [directory.file("a.db"), directory.file("b.db")]
        let retention = 3 * Self.day
        var stores = [
            try Self.store(paths[0], identity: 0, clock: clock, retention: retention),
            try Self.store(paths[1], identity: 1, clock: clock, retention: retention),
        ]
        let (id, layer) = try await makeProject(in: stores[0])
        try await stores[0].addPeer(stores[1].peerID, address: "127.0.0.1:1", at: 1)
        try await stores[1].addPeer(stores[0].peerID, address: "127.0.0.1:1", at: 1)
        try await stores[0].share(id, with: stores[1].peerID, role: .editor, at: 3)
        try await stores[1].receiveDocument(id, kind: .project, name: "Board", from: stores[0].peerID, at: 4)
        try await StoreTrashTests.send(id, from: stores[0], to: stores[1])
        var thinSeen = 0
        var compactedSeen = 0
        for step in 0..<60 {
            let side = Int.random(in: 0...1, using: &random)
            let other = 1 - side
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let sizes = (0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 5...80, using: &random) }
                _ = try await stores[side].editProject(id, at: clock.milliseconds) { editor in
                    for (index, size) in sizes.enumerated() {
                        try editor.addStroke(to: layer, brush: Brush(), points: strokePoints(step * 3 + index, count: size))
                    }
                }
            case 4:
                let project = try await stores[side].project(id)
                if let key = project.strokes(in: layer).randomElement(using: &random) {
                    _ = try await stores[side].editProject(id, at: clock.milliseconds) { try $0.eraseStroke(key, in: layer) }
                }
            case 5:
                try await StoreTrashTests.send(id, from: stores[side], to: stores[other])
                try await stores[side].acknowledge(try await stores[other].version(of: id), of: id, by: stores[other].peerID, at: clock.milliseconds)
            case 6:
                // A far-behind peer's way: the other's snapshot merged (its changes never in this log).
                try await stores[side].merge(
                    snapshot: try await stores[other].snapshot(of: id), into: id, from: stores[other].peerID, at: clock.milliseconds)
            case 7:
                clock.advance(by: Int64.random(in: 1...2, using: &random) * Self.day)
            case 8:
                let logged = try await stores[side].document(id).changeCount
                try await stores[side].writeSnapshot(of: id, at: clock.milliseconds)
                if try await stores[side].storedSnapshot(of: id)?.pointsInLog != nil { thinSeen += 1 }
                if try await stores[side].document(id).changeCount < logged { compactedSeen += 1 }
            default:
                let before = try await stores[side].project(id).snapshot()
                stores[side] = try Self.store(paths[side], identity: side, clock: clock, retention: retention)
                #expect(try await stores[side].project(id).snapshot() == before, "step \(step): store \(side) reopened")
            }
        }
        try await StoreTrashTests.send(id, from: stores[0], to: stores[1])
        try await StoreTrashTests.send(id, from: stores[1], to: stores[0])
        for side in 0...1 { try await stores[side].writeSnapshot(of: id, at: clock.milliseconds) }
        let views = try await [stores[0].project(id).view, stores[1].project(id).view]
        #expect(views[0] == views[1])
        for side in 0...1 {
            let before = try await stores[side].project(id).snapshot()
            let reopened = try Self.store(paths[side], identity: side, clock: clock, retention: retention)
            let loaded = try await reopened.project(id)
            #expect(loaded.snapshot() == before)
            #expect(Self.everyStrokeHasItsPoints(loaded, in: layer))
        }
        #expect(thinSeen > 0 && compactedSeen > 0, "snapshots leaving points in the log: \(thinSeen), compactions: \(compactedSeen)")
    }
}
