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
        var x = 0.3, y = 0.4, heading = 0.0
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
}
