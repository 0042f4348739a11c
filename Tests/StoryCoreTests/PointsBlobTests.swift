import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct PointsBlobTests {
    @Test func pointsRoundTripWithinQuantization() {
        var random = SeededGenerator(seed: 7)
        for count in [1, 2, 3, 80, 300] {
            let points = randomPoints(count, using: &random)
            let blob = PointsBlob(encoding: points)
            let decoded = blob.points()
            #expect(decoded.count == count)
            for (original, back) in zip(points, decoded) {
                #expect(abs(original.x - back.x) <= 0.5 / 65535 + 1e-12)
                #expect(abs(original.y - back.y) <= 0.5 / 65535 + 1e-12)
                #expect(abs(original.pressure - back.pressure) <= 0.5 / 255 + 1e-12)
                #expect(back == original.quantized)
            }
        }
    }

    /// The count is read from the bytes (a replica keeps a blob per stroke
    /// ever drawn, so a blob is its slice alone), across the varint's widths
    /// and for a blob inside a larger buffer.
    @Test func theCountIsReadFromTheBytes() throws {
        #expect(MemoryLayout<PointsBlob>.stride == 32)
        var random = SeededGenerator(seed: 9)
        for count in [1, 2, 127, 128, 129, 16_383, 16_384, 20_000] {
            let blob = PointsBlob(encoding: randomPoints(count, using: &random))
            #expect(blob.count == count)
            let framed = [0xAB, 0xCD] + Array(blob.bytes) + [0xEF]
            let inside = try PointsBlob(validating: framed[2..<(framed.count - 1)])
            #expect(inside.count == count)
            #expect(inside.points() == blob.points())
        }
    }

    @Test func valuesOutsideTheFrameAreClamped() {
        let blob = PointsBlob(encoding: [Point(x: -3, y: 2, pressure: .nan), Point(x: 1, y: 0, pressure: 7)])
        #expect(blob.points() == [Point(x: 0, y: 1, pressure: 0), Point(x: 1, y: 0, pressure: 1)])
    }

    @Test func jumpsAcrossTheWholeFrameUseTheEscapeCode() throws {
        // Alternating corners: second differences of ±2·65535 need the escape.
        let points = (0..<50).map { (index: Int) -> Point in
            let corner = Double(index % 2)
            return Point(x: corner, y: Double((index / 2) % 2), pressure: corner)
        }
        let blob = PointsBlob(encoding: points)
        #expect(blob.points() == points)
        #expect(try PointsBlob(validating: blob.bytes).count == 50)
    }

    @Test func smoothStrokesTakeAboutTwoBytesAndAHalfPerPoint() {
        // A smooth pen path, as in the benchmark traces.
        var points: [Point] = []
        var x = 0.3
        var y = 0.4
        var heading = 0.0
        for index in 0..<80 {
            heading += 0.03
            x += 0.004 * (1 - heading * heading / 2)
            y += 0.004 * heading
            points.append(Point(x: x, y: y, pressure: 0.5 + 0.2 * Double(index % 10) / 10))
        }
        let blob = PointsBlob(encoding: points)
        #expect(blob.bytes.count < 80 * 3)
    }

    @Test func everyTruncationIsATypedError() {
        var random = SeededGenerator(seed: 11)
        let blob = PointsBlob(encoding: randomPoints(60, using: &random))
        let bytes = Array(blob.bytes)
        for length in 0..<bytes.count {
            #expect(throws: CodecError.self) { try PointsBlob(validating: bytes[0..<length]) }
        }
        #expect(throws: CodecError.self) { try PointsBlob(validating: (bytes + [0])[...]) }
    }

    @Test func randomByteFlipsNeverCrashAndNeverGiveOutOfRangePoints() throws {
        var random = SeededGenerator(seed: 12)
        let original = Array(PointsBlob(encoding: randomPoints(40, using: &random)).bytes)
        var rejected = 0
        for _ in 0..<5000 {
            var bytes = original
            for _ in 0..<random.int(1...3) {
                bytes[random.int(0...(bytes.count - 1))] ^= UInt8.random(in: 1...255, using: &random)
            }
            guard let blob = try? PointsBlob(validating: bytes[...]) else {
                rejected += 1
                continue
            }
            // Whatever passes the structural check decodes to exactly n points in the frame.
            let points = blob.points()
            #expect(points.count == blob.count)
            for point in points {
                #expect((0...1).contains(point.x) && (0...1).contains(point.y) && (0...1).contains(point.pressure))
            }
        }
        // Flips in the header (count, lengths) are caught; flips inside a stream
        // only move points within the frame.
        #expect(rejected > 0 && rejected < 5000)
    }

    /// The quick header read gives what the checked one gives, or nothing:
    /// on blobs of every size the encoder writes (where it must give the
    /// header), with their header bytes flipped, cut short, grown, or padded
    /// with long varints, and on random bytes.
    @Test func theQuickHeaderReadAgreesWithTheCheckedOne() {
        var random = SeededGenerator(seed: 14)
        var quick = 0
        var checked = 0
        func compare(_ bytes: [UInt8]) {
            let fast = PointsBlob.quickHeader(bytes[...])
            guard let slow = try? PointsBlob.checkedHeader(bytes[...]) else {
                #expect(fast == nil, "quick read accepted what the checked read refuses: \(bytes.prefix(16))")
                return
            }
            checked += 1
            guard let fast else { return }
            quick += 1
            #expect(
                fast.count == slow.count && fast.first == slow.first && fast.ks == slow.ks && fast.lengths == slow.lengths
                    && fast.streamsOffset == slow.streamsOffset)
        }
        for count in [1, 2, 3, 80, 300, 5_000, 60_000] {
            let bytes = Array(PointsBlob(encoding: randomPoints(count, using: &random)).bytes)
            compare(bytes)
            #expect(PointsBlob.quickHeader(bytes[...]) != nil, "the encoder's \(count) points take the quick read")
            for _ in 0..<2_000 {
                var mutated = bytes
                switch random.int(0...4) {
                case 0: mutated[random.int(0...min(mutated.count - 1, 16))] ^= UInt8.random(in: 1...255, using: &random)
                case 1: mutated.removeLast(random.int(1...mutated.count))
                case 2: mutated.append(UInt8.random(in: 0...255, using: &random))
                case 3:
                    // A varint of the header made longer (0x80 continuation, same value) or set to a large one.
                    let at = random.int(0...min(mutated.count - 1, 12))
                    if Bool.random(using: &random) {
                        mutated[at] |= 0x80
                        mutated.insert(0, at: at + 1)
                    } else {
                        mutated.replaceSubrange(at..<(at + 1), with: [0xFF, 0xFF, 0xFF, UInt8.random(in: 0...0x7F, using: &random)])
                    }
                default: mutated = (0..<random.int(0...24)).map { _ in UInt8.random(in: 0...255, using: &random) }
                }
                compare(mutated)
            }
        }
        // Both outcomes happened: the test saw the quick read answer and defer.
        #expect(quick > 100 && checked > quick)
    }

    @Test func encodedBlobsAreCanonicalAndFlippedStreamsUsuallyAreNot() {
        var random = SeededGenerator(seed: 13)
        for count in [1, 2, 5, 80, 300] {
            #expect(PointsBlob(encoding: randomPoints(count, using: &random)).isCanonical)
        }
        let blob = PointsBlob(encoding: randomPoints(80, using: &random))
        var bytes = Array(blob.bytes)
        bytes[bytes.count - 1] ^= 0xFF  // the end of the pressure stream
        let flipped = try? PointsBlob(validating: bytes[...])
        #expect(flipped != nil && flipped?.isCanonical == false)
    }

    @Test func aZeroPointCountIsRejected() {
        #expect(throws: CodecError.self) { try PointsBlob(validating: [0][...]) }
        var writer = ByteWriter()
        writer.write(varint: UInt64(PointsBlob.maximumCount) + 1)
        #expect(throws: CodecError.self) { try PointsBlob(validating: writer.bytes[...]) }
    }

    @Test func aFewBytesCannotClaimAMillionPoints() {
        var writer = ByteWriter()
        writer.write(count: PointsBlob.maximumCount)  // n
        writer.write(varint: 0)
        writer.write(varint: 0)
        writer.write(varint: 0)
        writer.write(byte: 0)  // kx, ky
        writer.write(byte: 0)  // kp
        for _ in 0..<3 { writer.write(count: 1) }
        writer.write(raw: [0, 0, 0])
        #expect(throws: CodecError.self) { try PointsBlob(validating: writer.bytes[...]) }
    }

    /// The encoder writes the format docs/crdt.md states, byte for byte: it
    /// is checked against `referenceEncoding`, a bit-by-bit writing of that
    /// text, on strokes of every shape (smooth, jumpy, clamped, NaN, one
    /// point, long). A change here would split peers on different versions.
    @Test func theEncoderWritesTheDocumentedFormatByteForByte() {
        var random = SeededGenerator(seed: 13)
        var strokes: [[Point]] = [[Point(x: 0.5, y: 0.25, pressure: 1)], [Point(x: .nan, y: -1, pressure: 2), Point(x: 1, y: 1, pressure: 0)]]
        for count in [2, 3, 7, 80, 81, 300, 2_000] { strokes.append(randomPoints(count, using: &random)) }
        for _ in 0..<200 {
            let count = Int.random(in: 1...120, using: &random)
            let jumpy = Bool.random(using: &random)  // else a pen held still: every code 0
            strokes.append(
                (0..<count).map { _ in
                    jumpy
                        ? Point(
                            x: Double.random(in: -0.2...1.2, using: &random), y: Double.random(in: -0.2...1.2, using: &random),
                            pressure: Double.random(in: -0.1...1.1, using: &random))
                        : Point(x: 0.5, y: 0.5, pressure: 0.5)
                })
            strokes.append(randomPoints(count, using: &random))
        }
        // Alternating corners: every code escapes.
        strokes.append(
            (0..<50).map { (index: Int) -> Point in
                let corner = Double(index % 2)
                return Point(x: corner, y: Double(index / 2 % 2), pressure: corner)
            })
        for points in strokes {
            #expect(Array(PointsBlob(encoding: points).bytes) == Self.referenceEncoding(points), "\(points.count) points")
        }
    }

    /// docs/crdt.md's "Points", written one bit at a time.
    private static func referenceEncoding(_ points: [Point]) -> [UInt8] {
        func quantize(_ value: Double, _ scale: Double) -> Int64 {
            value.isNaN || value < 0 ? 0 : value > 1 ? Int64(scale) : Int64(value * scale + 0.5)
        }
        var bytes: [UInt8] = []
        func varint(_ value: Int) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        let channels = [points.map { quantize($0.x, 65535) }, points.map { quantize($0.y, 65535) }, points.map { quantize($0.pressure, 255) }]
        varint(points.count)
        for channel in channels { varint(Int(channel[0])) }
        guard points.count > 1 else { return bytes }
        var streams: [[UInt8]] = []
        var parameters: [Int] = []
        for channel in channels {
            var codes: [UInt64] = []
            var previousDelta: Int64 = 0
            for index in 1..<channel.count {
                let delta = channel[index] - channel[index - 1]
                let second = delta - previousDelta
                previousDelta = delta
                codes.append(second >= 0 ? UInt64(2 * second) : UInt64(-2 * second - 1))
            }
            let mean = codes.reduce(0, +) / UInt64(codes.count)
            let k = min(64 - (mean * 69 / 100).leadingZeroBitCount, 15)
            var bits: [Bool] = []
            func low(_ value: UInt64, _ width: Int) {
                for bit in stride(from: width - 1, through: 0, by: -1) { bits.append(value >> UInt64(bit) & 1 == 1) }
            }
            for code in codes {
                let quotient = Int(code >> UInt64(k))
                if quotient < 24 {
                    bits += Array(repeating: true, count: quotient) + [false]
                    low(code, k)
                } else {
                    bits += Array(repeating: true, count: 24)
                    low(code, 18)
                }
            }
            var stream = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
            for (index, bit) in bits.enumerated() where bit { stream[index / 8] |= 0x80 >> UInt8(index % 8) }
            streams.append(stream)
            parameters.append(k)
        }
        bytes.append(UInt8(parameters[0] | parameters[1] << 4))
        bytes.append(UInt8(parameters[2]))
        for stream in streams { varint(stream.count) }
        for stream in streams { bytes += stream }
        return bytes
    }
}
