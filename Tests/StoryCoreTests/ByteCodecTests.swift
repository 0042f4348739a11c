import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct ByteCodecTests {
    @Test(arguments: [UInt64(0), 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max])
    func varintsRoundTrip(_ value: UInt64) throws {
        var writer = ByteWriter()
        writer.write(varint: value)
        #expect(writer.count == ByteWriter.varintSize(value))
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readVarint() == value)
        #expect(reader.isAtEnd)
    }

    @Test(arguments: [Int64.min, -65_536, -1, 0, 1, 63, 64, Int64.max])
    func zigzagRoundTripsAndKeepsSmallMagnitudesShort(_ value: Int64) throws {
        #expect(ByteWriter.unzigzag(ByteWriter.zigzag(value)) == value)
        var writer = ByteWriter()
        writer.write(signed: value)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readSigned() == value)
        if value.magnitude < 64 { #expect(writer.count == 1) }
    }

    @Test func varintLongerThan64BitsIsAnOverflow() {
        var reader = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02])
        #expect(throws: CodecError.self) { try reader.readVarint() }
        var endless = ByteReader([UInt8](repeating: 0x80, count: 20))
        #expect(throws: CodecError.self) { try endless.readVarint() }
    }

    @Test func truncatedInputThrowsTruncated() {
        var reader = ByteReader([0x80])
        do {
            _ = try reader.readVarint()
            Issue.record("a varint with a continuation bit and no next byte decoded")
        } catch {
            #expect(error.code == .truncated)
        }
        var short = ByteReader([1, 2, 3])
        #expect(throws: CodecError.self) { try short.readFixed64() }
    }

    @Test func countsLargerThanTheInputAreRejectedBeforeAllocating() {
        var writer = ByteWriter()
        writer.write(varint: 1 << 40)
        writer.write(byte: 0)
        var reader = ByteReader(writer.bytes)
        do {
            _ = try reader.readCount("items", minimumElementSize: 1)
            Issue.record("a count of 2^40 with one byte left was accepted")
        } catch {
            #expect(error.code == .overflow)
        }
    }

    /// A count is accepted exactly when its elements, at their smallest,
    /// fit in the bytes left, whatever the size (and a count times the size
    /// that overflows 64 bits is refused, not wrapped).
    @Test(arguments: [1, 3, 8, 10])
    func aCountIsAcceptedExactlyWhenItsElementsFit(size: Int) throws {
        for left in [0, 1, 7, 24, 30] {
            for count in [left / size, left / size + 1] {
                var writer = ByteWriter()
                writer.write(varint: UInt64(count))
                writer.write(raw: [UInt8](repeating: 0, count: left))
                var reader = ByteReader(writer.bytes)
                if count * size <= left {
                    #expect(try reader.readCount("items", minimumElementSize: size) == count)
                } else {
                    #expect(throws: CodecError.self) { try reader.readCount("items", minimumElementSize: size) }
                }
            }
        }
        var writer = ByteWriter()
        writer.write(varint: UInt64.max / 4)
        writer.write(raw: [UInt8](repeating: 0, count: 16))
        var reader = ByteReader(writer.bytes)
        #expect(throws: CodecError.self) { try reader.readCount("items", minimumElementSize: size) }
    }

    @Test func stringsMustBeValidUTF8() throws {
        var writer = ByteWriter()
        writer.write(string: "INT. CAFÉ – DAY 🎬")
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readString("title") == "INT. CAFÉ – DAY 🎬")

        var bad = ByteReader([2, 0xC3, 0x28])
        #expect(throws: CodecError.self) { try bad.readString("title") }
    }

    @Test func slicesShareTheInputAndKeepItsIndices() throws {
        let bytes: [UInt8] = [3, 10, 11, 12, 99]
        var reader = ByteReader(bytes)
        let slice = try reader.readLengthPrefixed("blob")
        #expect(Array(slice) == [10, 11, 12])
        #expect(slice.startIndex == 1)
        #expect(throws: CodecError.self) { try reader.expectEnd("the blob") }
        #expect(try reader.readByte() == 99)
        #expect(throws: Never.self) { try reader.expectEnd("the input") }
    }

    @Test func booleansAndFloatsAreChecked() {
        var bool = ByteReader([2])
        #expect(throws: CodecError.self) { try bool.readBool("flag") }
        var writer = ByteWriter()
        writer.write(double: .nan)
        var nan = ByteReader(writer.bytes)
        #expect(throws: CodecError.self) { try nan.readFiniteDouble("value") }
    }

    @Test func versionVectorsRoundTripAndRejectUnsortedEntries() throws {
        let vector = VersionVector([ReplicaID(5): 3, ReplicaID(2): 9])
        #expect(try VersionVector(decoding: vector.encoded()[...]) == vector)
        #expect(try VersionVector(decoding: VersionVector().encoded()[...]).isEmpty)

        var writer = ByteWriter()
        writer.write(count: 2)
        writer.write(fixed64: 5)
        writer.write(varint: 1)
        writer.write(fixed64: 2)
        writer.write(varint: 1)
        #expect(throws: CodecError.self) { try VersionVector(decoding: writer.bytes[...]) }
    }

    @Test func versionVectorsJoinEntryWise() {
        var a = VersionVector([ReplicaID(1): 4, ReplicaID(2): 1])
        let b = VersionVector([ReplicaID(2): 7, ReplicaID(3): 2])
        a.formUnion(b)
        #expect(a == VersionVector([ReplicaID(1): 4, ReplicaID(2): 7, ReplicaID(3): 2]))
        #expect(b.isCovered(by: a))
        #expect(!a.isCovered(by: b))
        #expect(a.totalChanges == 13)
    }

    @Test func idsPrintAndParse() {
        let id = OpID(counter: 42, replica: ReplicaID(0x00C0_FFEE))
        #expect(OpID(id.description) == id)
        #expect(OpID("42@zz") == nil)
        let document = DocumentID(high: 1, low: 0xABC)
        #expect(DocumentID(document.description) == document)
        #expect(Color(hex: "#1B1B1BFF") == Color(rgba: 0x1B1B_1BFF))
        #expect(Color(hex: "#C0392B")?.description == "#C0392B")
        #expect(Color(hex: "#12345") == nil)
    }

    @Test func coloursParseFromSixOrEightHexDigitsWithOrWithoutTheHash() {
        #expect(Color(hex: "c0392b") == Color(rgba: 0xC039_2BFF), "lowercase, no '#': opaque")
        #expect(Color(hex: "#c0392B80") == Color(rgba: 0xC039_2B80), "mixed case, alpha given")
        #expect(Color(hex: Substring("x#00FF00").dropFirst()) == Color(rgba: 0x00FF_00FF), "a substring")
        for bad in ["", "#", "#1234567", "#123456789", "##123456", "#12345G", "#12 456", "#１２３４５６", "123456#", "#+12345"] {
            #expect(Color(hex: bad) == nil, "\(bad)")
        }
        for rgba: UInt32 in [0, 0xFFFF_FFFF, 0x1234_5678, 0xABCD_EF01] {
            #expect(Color(hex: Color(rgba: rgba).description) == Color(rgba: rgba), "prints and parses back")
        }
    }

    @Test func brushNamesAreTheLowercaseCaseNamesAndParseBack() {
        #expect(Brush.Tool.allCases.map(\.name) == ["pen", "marker", "pencil", "eraser", "brush", "highlighter"])
        #expect(Brush.Cap.allCases.map(\.name) == ["round", "butt", "square"])
        #expect(Brush.Join.allCases.map(\.name) == ["round", "miter", "bevel"])
        for tool in Brush.Tool.allCases { #expect(Brush.Tool(name: tool.name) == tool) }
        for cap in Brush.Cap.allCases { #expect(Brush.Cap(name: cap.name) == cap) }
        for join in Brush.Join.allCases { #expect(Brush.Join(name: join.name) == join) }
        for bad in ["", "Pen", "pens", " pen", "round "] {
            #expect(Brush.Tool(name: bad) == nil && Brush.Cap(name: bad) == nil && Brush.Join(name: bad) == nil, "\(bad)")
        }
    }

    @Test func opIDsOrderByCounterThenReplica() {
        let a = OpID(counter: 2, replica: ReplicaID(9))
        let b = OpID(counter: 3, replica: ReplicaID(1))
        let c = OpID(counter: 3, replica: ReplicaID(2))
        #expect(a < b && b < c)
    }
}
