import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct SnapshotTests {
    /// A board with strokes, erased strokes, transforms, deleted and moved things.
    static func busyBoard() throws -> Board {
        var board = try Board(scenes: 3, shots: 3, layers: 2)
        var random = SeededGenerator(seed: 99)
        try board.doc.edit(at: 5) { editor in
            try editor.set(.title, to: .string("Saltwater"))
            for (shot, layers) in board.layers {
                for layer in layers {
                    var keys: [OpID] = []
                    for _ in 0..<6 { keys.append(try editor.addStroke(to: layer, brush: pen, points: randomPoints(30, using: &random))) }
                    try editor.eraseStroke(keys[0], in: layer)
                    try editor.transformStrokes([keys[1]], in: layer, by: .scale(x: 0.5, y: 0.5))
                    try editor.restyleStrokes([keys[2]], in: layer) { $0.color = Color(hex: "#FF000080")! }
                    try editor.set(.opacity, to: .number(0.7), on: layer)
                }
                try editor.set(.notes, to: .string("notes of \(shot)"), on: shot)
            }
            try editor.move(board.shots[0][0], to: 0, in: board.scenes[2])
            try editor.delete(board.scenes[1])
            try editor.duplicateShot(board.shots[2][1])
        }
        return board
    }

    @Test func aSnapshotLoadsToTheSameDocument() throws {
        let board = try Self.busyBoard()
        let snapshot = board.doc.snapshot()
        let loaded = try ProjectDocument(snapshot: snapshot, replica: ReplicaID(50))
        #expect(loaded.view == board.doc.view)
        #expect(loaded.versionVector == board.doc.versionVector)
        #expect(loaded.statistics == board.doc.statistics)
        #expect(loaded.snapshot() == snapshot)
        // The loaded replica keeps editing with fresh op ids.
        var editable = loaded
        try editable.edit(at: 9) { try $0.insertScene(at: 0) }
        #expect(editable.versionVector[ReplicaID(50)] == 1)
    }

    @Test func mergingSnapshotsIsIdempotentAndCommutative() throws {
        let board = try Self.busyBoard()
        var a = try board.replica(51)
        var b = try board.replica(52)
        try a.edit(at: 10) { editor in
            try editor.insertScene(at: 0)
            try editor.move(board.shots[2][2], to: 0, in: board.scenes[0])
        }
        try b.edit(at: 10) { editor in
            try editor.move(board.shots[2][2], to: 1, in: board.scenes[0])
            try editor.restore(board.scenes[1])
        }
        var ab = a
        try ab.merge(snapshot: b.snapshot())
        var ba = b
        try ba.merge(snapshot: a.snapshot())
        #expect(ab.view == ba.view)
        let once = ab.view
        try ab.merge(snapshot: b.snapshot())
        try ab.merge(snapshot: ab.snapshot())
        #expect(ab.view == once)
        // Snapshot merge gives what change delivery gives.
        var synced = [a, b]
        try WireSync.syncAll(&synced)
        #expect(synced[0].view == once)
    }

    @Test func aSnapshotPlusLaterChangesEqualsAllChanges() throws {
        let board = try Self.busyBoard()
        var source = board.doc
        let early = source.snapshot()
        try source.edit(at: 20) { editor in
            try editor.insertShot(in: board.scenes[2], at: 0)
            try editor.set(.caption, to: .string("late"), on: board.shots[2][0])
        }
        var target = try ProjectDocument(snapshot: early, replica: ReplicaID(60))
        guard case .changes(let tail) = source.changes(since: target.versionVector) else {
            throw SyncTestError.snapshotRequired
        }
        try target.apply(try tail.map { ($0, try $0.decoded()) })
        #expect(target.view == source.view)
    }

    @Test func heldBackChangesApplyOnceASnapshotBringsTheirDependencies() throws {
        let board = try Self.busyBoard()
        var source = board.doc
        let snapshot = source.snapshot()
        try source.edit(at: 30) { try $0.set(.title, to: .string("after the snapshot")) }
        guard case .changes(let tail) = source.changes(since: board.doc.versionVector) else {
            throw SyncTestError.snapshotRequired
        }
        var target = ProjectDocument(id: Board.documentID, replica: ReplicaID(61))
        try target.apply(try tail.map { ($0, try $0.decoded()) })
        #expect(target.pendingChangeCount == 1)
        try target.merge(snapshot: snapshot)
        #expect(target.pendingChangeCount == 0)
        #expect(target.view == source.view)
    }

    @Test func everyTruncationOfASnapshotIsATypedError() throws {
        var board = try Board(scenes: 1, shots: 1)
        try board.doc.edit(at: 1) { try $0.addStroke(to: board.layers[board.shots[0][0]]![0], brush: pen, points: line()) }
        let snapshot = board.doc.snapshot()
        for length in 0..<snapshot.count {
            #expect(throws: (any Error).self) { try ProjectDocument(snapshot: Array(snapshot[0..<length]), replica: ReplicaID(7)) }
        }
    }

    @Test func randomByteFlipsInASnapshotAreCaught() throws {
        let snapshot = try Self.busyBoard().doc.snapshot()
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            var bytes = snapshot
            bytes[random.int(0...(bytes.count - 1))] ^= UInt8.random(in: 1...255, using: &random)
            #expect(throws: (any Error).self) { try ProjectDocument(snapshot: bytes, replica: ReplicaID(7)) }
        }
    }

    /// Snapshots with a valid checksum but inconsistent contents (as a buggy
    /// peer could send) are refused by the reference checks, not just the checksum.
    @Test func structurallyInconsistentSnapshotsAreRefused() async throws {
        // Seconds of CPU: on a thread of its own, not the pool in-process daemons answer on (`onOwnThread`).
        try await onOwnThread {
            let snapshot = try Self.busyBoard().doc.snapshot()
            var random = SeededGenerator(seed: 8)
            var refused = 0
            for _ in 0..<2000 {
                var bytes = Array(snapshot.dropLast(8))
                bytes[random.int(12...(bytes.count - 1))] ^= UInt8.random(in: 1...255, using: &random)
                var writer = ByteWriter()
                writer.write(fixed64: Checksum.of(bytes[...]))
                bytes += writer.bytes
                do {
                    // Whatever loads must be a usable document: it renders and round-trips.
                    let doc = try ProjectDocument(snapshot: bytes, replica: ReplicaID(7))
                    let view = doc.view
                    for stroke in view.shots.flatMap(\.layers).flatMap(\.strokes) { _ = stroke.points.points() }
                    #expect(try ProjectDocument(snapshot: doc.snapshot(), replica: ReplicaID(8)).view == view)
                } catch {
                    refused += 1
                }
            }
            // Flips in ids, counts and references are refused; flips inside point
            // streams decode to other points in the frame.
            #expect(refused > 0)
        }
    }

    @Test func snapshotsOfAnotherDocumentOrKindAreRefused() throws {
        let board = try Self.busyBoard()
        var other = ProjectDocument(id: DocumentID(high: 1, low: 1), replica: ReplicaID(1))
        #expect(throws: DocumentError.self) { try other.merge(snapshot: board.doc.snapshot()) }
        #expect(throws: CodecError.self) { try ProjectDocument(snapshot: Array("not a snapshot at all".utf8), replica: ReplicaID(1)) }
    }

    @Test func snapshotsStoreAboutTwoAndAHalfBytesPerPoint() throws {
        var board = try Board(scenes: 1, shots: 1)
        var random = SeededGenerator(seed: 4)
        let layer = board.layers[board.shots[0][0]]![0]
        try board.doc.edit(at: 1) { editor in
            for _ in 0..<200 {
                // A smooth pen path: a gently turning arc with varying pressure.
                var x = Double.random(in: 0.2...0.8, using: &random)
                var y = Double.random(in: 0.2...0.8, using: &random)
                var heading = Double.random(in: 0...6, using: &random)
                let points = (0..<80).map { index -> Point in
                    heading += 0.03
                    x += 0.004 * (1 - heading.truncatingRemainder(dividingBy: 1))
                    y += 0.003
                    return Point(x: min(x, 1), y: min(y, 1), pressure: 0.5 + 0.002 * Double(index))
                }
                try editor.addStroke(to: layer, brush: pen, points: points)
            }
        }
        let perPoint = Double(board.doc.snapshot().count) / Double(200 * 80)
        #expect(perPoint < 3.6)
    }
}
