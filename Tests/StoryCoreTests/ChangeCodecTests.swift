import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct ChangeCodecTests {
    static let alice = ReplicaID(0xA11CE)
    static let bob = ReplicaID(0xB0B)

    /// A change with every kind of operation.
    static func sampleChange() -> Change {
        let layer = OpID(counter: 7, replica: bob)
        let points = PointsBlob(encoding: [Point(x: 0.1, y: 0.2, pressure: 0.3), Point(x: 0.15, y: 0.25, pressure: 0.5)])
        let operations: [Operation] = [
            .setField(object: .root, key: .title, value: .string("Night Train")),
            .setField(object: layer, key: .opacity, value: .number(0.5)),
            .setField(object: layer, key: .group, value: .id(OpID(counter: 3, replica: bob))),
            .setField(object: layer, key: .transform, value: .transform(.rotation(0.3))),
            .setField(object: layer, key: .visible, value: .bool(false)),
            .setField(object: OpID(counter: 5, replica: bob), key: .background, value: .color(Color(rgba: 0x1122_33FF))),
            .setField(object: OpID(counter: 5, replica: bob), key: .notes, value: .null),
            .setField(object: OpID(counter: 5, replica: bob), key: .dialogue, value: .string("Last call!")),
            .setField(
                object: OpID(counter: 5, replica: bob), key: .sound,
                value: .media(
                    MediaReference(hash: BlobHash(Array(repeating: 7, count: 32))!, type: .wav, byteCount: 48_044, duration: 3, offset: 0.5))),
            .setField(
                object: layer, key: .image,
                value: .media(MediaReference(hash: BlobHash(Array(0..<32))!, type: .jpeg, byteCount: 123_456, pixelWidth: 1920, pixelHeight: 1080))),
            .setField(object: layer, key: .fit, value: .string("cover")),
            .insert(kind: .scene, container: .root, anchor: .root),
            .insert(kind: .shot, container: OpID(counter: 2, replica: bob), anchor: Anchor(parent: OpID(counter: 3, replica: bob), side: .left)),
            .move(object: OpID(counter: 5, replica: bob), container: OpID(counter: 2, replica: alice), anchor: .root),
            .reorder(
                object: OpID(counter: 5, replica: bob), container: OpID(counter: 2, replica: alice),
                anchor: Anchor(parent: OpID(counter: 4, replica: alice), side: .right)),
            .setDeleted(object: OpID(counter: 5, replica: bob), isDeleted: true),
            .addStroke(
                layer: layer, brush: Brush(tool: .marker, color: Color(rgba: 0xF4D0_3F80), width: 0.02, cap: .square, join: .bevel), points: points),
            .putStroke(
                layer: layer, key: OpID(counter: 9, replica: bob),
                value: StrokeValue(content: OpID(counter: 9, replica: bob), brush: Brush(), transform: .translation(x: 0.1, y: 0))),
            .putStroke(
                layer: layer, key: OpID(counter: 9, replica: bob), value: StrokeValue(content: OpID(counter: 9, replica: bob), brush: Brush())),
            .eraseStroke(layer: layer, key: OpID(counter: 9, replica: bob)),
            .insertProjectEntry(container: .incoming, anchor: .root, document: DocumentID(high: 1, low: 2)),
            .purge(nodes: [OpID(counter: 11, replica: alice), OpID(counter: 12, replica: bob)]),
        ]
        return Change(
            replica: alice, seq: 3, startCounter: 40, wallTime: 1_700_000_000_123,
            dependencies: VersionVector([bob: 6]), operations: operations)
    }

    @Test func everyOperationRoundTrips() throws {
        let change = Self.sampleChange()
        let encoded = change.encoded()
        #expect(encoded.replica == Self.alice && encoded.seq == 3 && encoded.startCounter == 40)
        #expect(encoded.endCounter == 40 + UInt64(change.operations.count) - 1)
        #expect(try encoded.decoded() == change)
    }

    /// A change's operations keep the first inline and the others in an
    /// array; every way of building them reads the same, in order.
    @Test func operationsReadTheSameHoweverBuilt() throws {
        let all = Array(Self.sampleChange().operations)
        for count in [0, 1, 2, all.count] {
            let list = Array(all.prefix(count))
            var appended = Operations()
            appended.reserveCapacity(count)
            for operation in list { appended.append(operation) }
            let fromArray = Operations(list)
            #expect(appended == fromArray && appended.hashValue == fromArray.hashValue)
            #expect(appended.count == count && appended.isEmpty == (count == 0) && Array(appended) == list)
            #expect(appended.first == list.first)
            var visited: [(Int, Operation)] = []
            appended.forEachInPlace { index, operation in visited.append((index, operation)) }
            #expect(visited.map(\.0) == Array(0..<count) && visited.map(\.1) == list)
            let change = Change(
                replica: Self.alice, seq: 1, startCounter: 10, wallTime: 5, dependencies: VersionVector(), operations: appended)
            if count > 0 {
                let decoded = try change.encoded().decoded()
                #expect(decoded.operations == appended && decoded.endCounter == 10 + UInt64(count) - 1)
            }
        }
        #expect(Operations(all.prefix(1)) != Operations(all.prefix(2)))
    }

    @Test func batchesRoundTrip() throws {
        let first = Self.sampleChange()
        var second = first
        second.seq = 4
        second.startCounter = 100
        second.dependencies = VersionVector()
        let bytes = ChangeBatch.encode([first.encoded(), second.encoded()])
        let decoded = try ChangeBatch.decode(bytes[...])
        #expect(decoded.map(\.1) == [first, second])
        #expect(try ChangeBatch.decode(ChangeBatch.encode([])[...]).isEmpty)
    }

    @Test func everyTruncationOfAChangeIsATypedError() {
        let bytes = Array(Self.sampleChange().encoded().bytes)
        for length in 0..<bytes.count {
            #expect(throws: CodecError.self) { try Change(decoding: bytes[0..<length]) }
        }
    }

    @Test func everyTruncationOfABatchIsATypedError() {
        let bytes = ChangeBatch.encode([Self.sampleChange().encoded()])
        for length in 0..<bytes.count {
            #expect(throws: CodecError.self) { try ChangeBatch.decode(bytes[0..<length]) }
        }
        #expect(throws: CodecError.self) { try ChangeBatch.decode((bytes + [7])[...]) }
    }

    @Test func randomByteFlipsGiveAnErrorOrAValidChangeNeverACrash() throws {
        var random = SeededGenerator(seed: 21)
        let original = Array(Self.sampleChange().encoded().bytes)
        var rejected = 0
        for _ in 0..<10_000 {
            var bytes = original
            for _ in 0..<random.int(1...4) {
                bytes[random.int(0...(bytes.count - 1))] ^= UInt8.random(in: 1...255, using: &random)
            }
            do {
                let change = try Change(decoding: bytes[...])
                // Whatever decodes must encode again and decode to the same change.
                #expect(try change.encoded().decoded() == change)
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 1000)
    }

    @Test func oversizedCountsAreRejected() {
        var writer = ByteWriter()
        writer.write(byte: Change.formatVersion)
        writer.write(varint: 1 << 50)  // replica table count
        writer.write(fixed64: 1)
        #expect(throws: CodecError.self) { try Change(decoding: writer.bytes[...]) }

        var batch = ByteWriter()
        batch.write(varint: UInt64.max)
        #expect(throws: CodecError.self) { try ChangeBatch.decode(batch.bytes[...]) }
    }

    @Test func unknownVersionsTagsAndReplicaIndicesAreRejected() {
        var bytes = Array(Self.sampleChange().encoded().bytes)
        bytes[0] = 9
        do {
            _ = try Change(decoding: bytes[...])
            Issue.record("format 9 accepted")
        } catch {
            #expect(error.code == .unsupportedVersion)
        }
        let tiny = Change(
            replica: Self.alice, seq: 1, startCounter: 3, wallTime: 0, dependencies: VersionVector(),
            operations: [.setDeleted(object: OpID(counter: 3, replica: Self.alice), isDeleted: true)])
        var encoded = Array(tiny.encoded().bytes)
        // Layout: version, flags, table count, 8-byte replica, seq, counter, time, deps, ops count, tag, replica index…
        let tagIndex = 1 + 1 + 1 + 8 + 1 + 1 + 1 + 1 + 1
        #expect(encoded[tagIndex] == OperationTag.setDeleted.rawValue)
        encoded[tagIndex] = 0xEE
        #expect(throws: CodecError.self) { try Change(decoding: encoded[...]) }
        encoded[tagIndex] = OperationTag.setDeleted.rawValue
        encoded[tagIndex + 1] = 5  // replica index outside a table of one
        #expect(throws: CodecError.self) { try Change(decoding: encoded[...]) }
    }

    @Test func theAuthorCannotBeTheReservedReplica() {
        let change = Change(
            replica: .reserved, seq: 1, startCounter: 3, wallTime: 0, dependencies: VersionVector(),
            operations: [.setField(object: .root, key: .title, value: .string("x"))])
        #expect(throws: CodecError.self) { try change.encoded().decoded() }
    }

    @Test func aStrokeChangeIsSmallOnTheWire() throws {
        var doc = ProjectDocument(id: DocumentID(high: 1, low: 1), replica: Self.alice)
        let layer = try doc.edit(at: 0) { editor in
            let scene = try editor.insertScene(at: 0)
            let shot = try editor.insertShot(in: scene, at: 0)
            return try editor.insertLayer(in: shot, at: 0)
        }.value
        var random = SeededGenerator(seed: 5)
        let points = randomPoints(80, using: &random)
        let change = try doc.edit(at: 1) { try $0.addStroke(to: layer, brush: Brush(), points: points) }.change!
        #expect(change.bytes.count < 1024)
    }
}
