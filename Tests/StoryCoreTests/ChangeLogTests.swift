import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct ChangeLogTests {
    private static let replica = ReplicaID(7)

    /// A change of the log's replica, encoded, with header fields of its own:
    /// dependencies, an author declaration sometimes, 1 to 40 operations, a
    /// signature beside it sometimes. (Packed changes' fields are read back
    /// from their bytes.)
    private static func change(seq: UInt64, random: inout SeededGenerator) -> EncodedChange {
        let start = seq * 20 + UInt64.random(in: 0..<10, using: &random)
        var dependencies = VersionVector()
        for other in 0..<Int.random(in: 0...3, using: &random) {
            dependencies[ReplicaID(UInt64(100 + other))] = UInt64.random(in: 1...90_000, using: &random)
        }
        let operations = (0..<Int.random(in: 1...40, using: &random)).map { index in
            Operation.setDeleted(
                object: OpID(counter: UInt64(index + 1), replica: ReplicaID(UInt64(100 + index % 4))), isDeleted: Bool.random(using: &random))
        }
        let declaration =
            Int.random(in: 0..<5, using: &random) == 0
            ? AuthorDeclaration(
                certificate: (0..<Int.random(in: 1...300, using: &random)).map { UInt8($0 % 256) },
                nonce: UInt64.random(in: 0...UInt64.max, using: &random))
            : nil
        let change = Change(
            replica: replica, seq: seq, startCounter: start, wallTime: Int64.random(in: -5...1_000_000_000, using: &random),
            dependencies: dependencies, operations: operations, declaration: declaration)
        return change.encoded()
            .withSignature(Bool.random(using: &random) && seq % 3 == 0 ? (0..<64).map { _ in UInt8(seq % 251) } : nil)
            .markedAnchor(Bool.random(using: &random))
    }

    /// Appends changes as they would come: one by one in arrays of their
    /// own, or (half the time) in a batch: their bytes copied one after the
    /// other, with framing bytes between, into one array, each appended as a
    /// slice of it within the batch's slice (a few without it, as a
    /// change held back from an earlier batch would be).
    private static func append(_ changes: [EncodedChange], to log: inout ChangeLog, random: inout SeededGenerator) {
        guard Bool.random(using: &random) else {
            for change in changes { log.append(change) }
            return
        }
        var array: [UInt8] = [0xFE, 0xED]
        var ranges: [Range<Int>] = []
        for change in changes {
            array.append(UInt8(change.bytes.count % 256))
            let start = array.count
            array += change.bytes
            ranges.append(start..<array.count)
        }
        array.append(0xEE)
        let batch = array[1...]
        for (change, range) in zip(changes, ranges) {
            let inBatch = EncodedChange(
                bytes: batch[range], replica: change.replica, seq: change.seq, startCounter: change.startCounter,
                signature: change.signature, isAnchor: change.isAnchor)
            log.append(inBatch, within: Int.random(in: 0..<10, using: &random) == 0 ? [] : batch)
        }
    }

    /// `ChangeLog.changes(from:replica:)` reads `model[from...]`.
    private static func expectWalk(of log: ChangeLog, from: Int, matches model: [EncodedChange]) {
        let tail = log.changes(from: from, replica: replica)
        #expect(tail.count == model.count - from)
        for (offset, (read, expected)) in zip(tail, model[from...]).enumerated() where !same(read, expected) {
            Issue.record("change \(from + offset) of \(model.count), read in a walk from \(from), differs")
            break
        }
    }

    private static func same(_ a: EncodedChange, _ b: EncodedChange) -> Bool {
        a.bytes == b.bytes && a.replica == b.replica && a.seq == b.seq && a.startCounter == b.startCounter
            && a.endCounter == b.endCounter && a.wallTime == b.wallTime && a.signature == b.signature && a.isAnchor == b.isAnchor
    }

    /// Appends (alone, or in batches the log holds once), removals of the
    /// newest (a rolled-back apply), packing (some
    /// blocks too large to pack, left as they are) and compaction
    /// (dropping a prefix, inside a pack or past them all), with signatures
    /// coming late or never: every change read back is the one appended, and
    /// packing hands back each packed change's old and new bytes.
    @Test(arguments: 0..<8)
    func everyChangeReadBackIsTheOneAppended(seed: Int) async throws {
        // Seconds of CPU: on a thread of its own, not the pool in-process daemons answer on (`onOwnThread`).
        try await onOwnThread {
            var random = SeededGenerator(seed: UInt64(seed))
            let start = UInt64.random(in: 1...50, using: &random)
            var log = ChangeLog(firstSeq: start)
            var model: [EncodedChange] = []
            var firstSeq = start
            for _ in 0..<300 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0:
                    // An apply that appends, then rolls back some of what it appended.
                    let appended = Int.random(in: 0...300, using: &random)
                    let changes = (0..<appended).map { Self.change(seq: firstSeq + UInt64(model.count + $0), random: &random) }
                    Self.append(changes, to: &log, random: &random)
                    model += changes
                    let k = Int.random(in: 0...appended, using: &random)
                    log.removeLast(k)
                    model.removeLast(k)
                case 1 where !model.isEmpty:
                    let seq = firstSeq + UInt64.random(in: 0...UInt64(model.count), using: &random)
                    log = log.dropping(before: seq, replica: Self.replica)
                    model.removeFirst(Int(seq - firstSeq))
                    firstSeq = seq
                case 2, 3:
                    let unpacked = log.unpackedCount
                    // Sometimes small enough that a block's bytes exceed it.
                    let limit = Bool.random(using: &random) ? Int(UInt32.max) : Int.random(in: 1_000...60_000, using: &random)
                    let moved = log.packFull(maximumPackBytes: limit)
                    #expect(!log.hasFullUnpackedBlock)
                    #expect(log.unpackedCount <= unpacked - moved.count)
                    // What moved is each change's bytes, in order, to a copy of its own size.
                    var next = 0
                    for (old, new, counters) in moved.map({ ($0.old, $0.new, $0.counters) }) {
                        while next < model.count, model[next].bytes != old { next += 1 }
                        guard next < model.count else {
                            Issue.record("a moved change is not one of the log's")
                            break
                        }
                        #expect(new == old && new.withUnsafeBufferPointer { $0.baseAddress } != old.withUnsafeBufferPointer { $0.baseAddress })
                        #expect(counters == model[next].startCounter..<(model[next].endCounter + 1))
                        next += 1
                    }
                default:
                    // In up to three batches.
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        let changes = (0..<Int.random(in: 1...300, using: &random)).map {
                            Self.change(seq: firstSeq + UInt64(model.count + $0), random: &random)
                        }
                        Self.append(changes, to: &log, random: &random)
                        model += changes
                    }
                }
                #expect(log.count == model.count)
                // Only changes not packed hold their arrays (a run each at most).
                #expect(log.runCount <= log.unpackedCount)
                #expect(log.firstSeq == firstSeq)
                #expect(log.nextSeq == firstSeq + UInt64(model.count))
                // Now and then, read in one walk from a change among the newest
                // (across the last packed block and those not packed yet); from the
                // first at the end.
                if Int.random(in: 0..<4, using: &random) == 0 {
                    Self.expectWalk(of: log, from: max(0, model.count - Int.random(in: 0...600, using: &random)), matches: model)
                }
            }
            // Every change read in one walk, and each one's bytes by its seq alone.
            Self.expectWalk(of: log, from: 0, matches: model)
            for (index, expected) in model.enumerated() where log.bytes(ofSeq: expected.seq) != expected.bytes {
                Issue.record("the bytes of change \(index) of \(model.count), read by its seq, differ")
            }
        }
    }

    /// A document sends the changes a peer lacks in causal order (by first
    /// counter, then replica), merged from its replicas' logs.
    @Test(arguments: 0..<4)
    func changesSinceAVectorComeInCausalOrder(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let id = DocumentID(high: 3, low: UInt64(seed))
        var docs = (1...3).map { ProjectDocument(id: id, replica: ReplicaID(UInt64($0))) }
        let layer = try docs[0].edit(at: 0) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        var lacking = VersionVector()
        for step in 0..<400 {
            let index = Int.random(in: 0..<3, using: &random)
            if Int.random(in: 0..<6, using: &random) == 0 {
                let other = (index + Int.random(in: 1...2, using: &random)) % 3
                guard case .changes(let changes) = docs[other].changes(since: docs[index].versionVector) else {
                    Issue.record("a log was compacted")
                    return
                }
                try docs[index].apply(batch: ChangeBatch.encode(changes)[...])
            } else if docs[index].versionVector[ReplicaID(1)] > 0 {
                try docs[index].edit(at: Int64(step)) {
                    try $0.addStroke(to: layer, brush: Brush(), points: [Point(x: 0.5, y: Double(step) / 400, pressure: 0.5)])
                }
            }
            if step == 200 { lacking = docs[0].versionVector }
        }
        for (doc, since) in docs.flatMap({ doc in [(doc, VersionVector()), (doc, lacking)] }) {
            guard case .changes(let changes) = doc.changes(since: since) else {
                Issue.record("a log was compacted")
                return
            }
            #expect(changes == changes.sorted(by: EncodedChange.causalOrder))
            let expected = doc.versionVector.entries.reduce(0) { $0 + Int($1.value - min(since[$1.key], $1.value)) }
            #expect(changes.count == expected)
            #expect(changes.allSatisfy { $0.seq > since[$0.replica] })
        }
    }

    /// Every `ChangeLog.packSize` changes made here, the log moves their bytes
    /// into one array and the strokes' points move with them: the changes
    /// read back, the points, a snapshot and a peer that syncs all stay the
    /// same, and each stroke's points are inside the packed change's bytes
    /// (one copy, not two). Strokes of two and three at a time, erased ones,
    /// and edits without points in between.
    @Test(arguments: 0..<3)
    func changesMadeHereArePackedAndTheirPointsMoveWithThem(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(100 + seed))
        let id = DocumentID(high: 4, low: UInt64(seed))
        var doc = ProjectDocument(id: id, replica: ReplicaID(1))
        let setUp = try doc.edit(at: 0) { try $0.insertShot(in: try $0.insertScene(at: 0), at: 0) }
        let shot = setUp.value
        let layered = try doc.edit(at: 0) { try $0.insertLayer(in: shot, at: 0) }
        let layer = layered.value
        var made = [setUp.change!, layered.change!]
        var drawn: [OpID: [Point]] = [:]
        for step in 0..<(2 * ChangeLog.packSize + 77) {
            let result = try doc.edit(at: Int64(step)) { editor -> [(OpID, [Point])] in
                switch Int.random(in: 0..<8, using: &random) {
                case 0:
                    try editor.set(.caption, to: .string("step \(step)"), on: shot)
                    return []
                case 1 where !drawn.isEmpty:
                    try editor.eraseStroke(drawn.keys.min()!, in: layer)
                    return []
                default:
                    return try (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        let points = randomPoints(Int.random(in: 1...200, using: &random), using: &random)
                        return (try editor.addStroke(to: layer, brush: Brush(), points: points), points)
                    }
                }
            }
            made.append(result.change!)
            for (stroke, points) in result.value { drawn[stroke] = points.map(\.quantized) }
        }
        let log = try #require(doc.replicaState.core.logs[ReplicaID(1)])
        #expect(log.unpackedCount < ChangeLog.packSize)
        #expect(log.runCount == log.unpackedCount, "each change not packed holds its own array, and only those")

        guard case .changes(let logged) = doc.changes(since: VersionVector()) else {
            Issue.record("the log was compacted")
            return
        }
        #expect(logged.map(\.bytes) == made.map(\.bytes))
        let packed = made.count - log.unpackedCount
        for (stroke, points) in drawn {
            let blob = try #require(doc.points(of: stroke))
            #expect(blob.points() == points)
            let seq = try #require(logged.first { $0.startCounter <= stroke.counter && stroke.counter <= $0.endCounter }).seq
            #expect(blob.bytes.offset(in: log.bytes(ofSeq: seq)) != nil, "stroke \(stroke)'s points are not inside change \(seq)'s bytes")
        }
        // A pack's changes lie one after the other in one array; the rest each have their own.
        func address(_ bytes: ArraySlice<UInt8>) -> Int { bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) } }
        for seq in UInt64(1)..<UInt64(made.count) {
            let (this, next) = (log.bytes(ofSeq: seq), log.bytes(ofSeq: seq + 1))
            let samePack = seq % UInt64(ChangeLog.packSize) != 0 && seq < UInt64(packed)
            #expect((address(next) == address(this) + this.count) == samePack, "changes \(seq) and \(seq + 1)")
            #expect((next.startIndex == this.endIndex) == samePack)
        }

        let copy = try ProjectDocument(snapshot: doc.snapshot(), replica: ReplicaID(2))
        #expect(copy.view == doc.view)
        var peer = ProjectDocument(id: id, replica: ReplicaID(3))
        try peer.apply(batch: ChangeBatch.encode(logged)[...])
        #expect(peer.view == doc.view)
        for (stroke, points) in drawn { #expect(peer.points(of: stroke)?.points() == points) }
    }

    /// Changes received from peers are kept where they arrived (the batches'
    /// arrays), with only their bytes: their header fields read back from
    /// them are the ones sent, each stroke's points are inside its change's
    /// bytes (one copy, not two), and what the receiver sends on and
    /// snapshots is unchanged.
    @Test(arguments: 0..<3)
    func receivedChangesAreKeptWhereTheyArrived(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(200 + seed))
        let id = DocumentID(high: 5, low: UInt64(seed))
        var authors = (1...2).map { ProjectDocument(id: id, replica: ReplicaID(UInt64($0))) }
        var receiver = ProjectDocument(id: id, replica: ReplicaID(9))
        let layer = try authors[0].edit(at: 0) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        try authors[1].apply(batch: ChangeBatch.encode(authors[0].allChanges())[...])
        var drawn: [OpID: [Point]] = [:]
        for step in 0..<(3 * ChangeLog.packSize) {
            let author = Int.random(in: 0..<2, using: &random)
            let points = randomPoints(Int.random(in: 1...120, using: &random), using: &random)
            let stroke = try authors[author].edit(at: Int64(step)) { try $0.addStroke(to: layer, brush: Brush(), points: points) }.value
            drawn[stroke] = points.map(\.quantized)
            // Batches of every size, some ending inside a pack.
            if Int.random(in: 0..<9, using: &random) == 0 || step == 3 * ChangeLog.packSize - 1 {
                for index in authors.indices {
                    guard case .changes(let missing) = authors[index].changes(since: receiver.versionVector) else {
                        Issue.record("a log was compacted")
                        return
                    }
                    if !missing.isEmpty { try receiver.apply(batch: ChangeBatch.encode(missing)[...]) }
                }
            }
        }
        for replica in [ReplicaID(1), ReplicaID(2)] {
            let log = try #require(receiver.replicaState.core.logs[replica])
            #expect(log.unpackedCount == log.count)
            #expect(log.count > ChangeLog.packSize)
        }
        let received = try receiver.allChanges()
        for (stroke, points) in drawn {
            let blob = try #require(receiver.points(of: stroke))
            #expect(blob.points() == points)
            let change = try #require(
                received.first { $0.replica == stroke.replica && $0.startCounter <= stroke.counter && stroke.counter <= $0.endCounter })
            let log = try #require(receiver.replicaState.core.logs[stroke.replica])
            #expect(blob.bytes.offset(in: log.bytes(ofSeq: change.seq)) != nil, "stroke \(stroke)'s points are not inside its change's bytes")
        }
        for replica in [ReplicaID(1), ReplicaID(2)] {
            let sent = try authors[replica == ReplicaID(1) ? 0 : 1].allChanges().filter { $0.replica == replica }
            let kept = received.filter { $0.replica == replica }
            #expect(kept.map(\.bytes) == sent.map(\.bytes))
            #expect(kept.map(\.startCounter) == sent.map(\.startCounter))
            #expect(kept.map(\.endCounter) == sent.map(\.endCounter))
            #expect(kept.map(\.wallTime) == sent.map(\.wallTime))
        }
        var next = ProjectDocument(id: id, replica: ReplicaID(10))
        try next.apply(batch: ChangeBatch.encode(received)[...])
        #expect(next.view == receiver.view)
        #expect(try ProjectDocument(snapshot: receiver.snapshot(), replica: ReplicaID(11)).view == receiver.view)
    }
}

extension ProjectDocument {
    /// Every change the document holds, in causal order.
    fileprivate func allChanges() throws -> [EncodedChange] {
        guard case .changes(let changes) = changes(since: VersionVector()) else { throw CodecError(.invalidValue, "a log was compacted") }
        return changes
    }
}
