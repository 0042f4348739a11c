/// Reads the encoding `ByteWriter` writes, checking every length, count and
/// range against the bytes actually present.
///
/// Every read throws `CodecError` instead of trapping. Counts are checked
/// against the bytes left before anything is allocated, so a forged count
/// cannot make the reader reserve gigabytes.
package struct ByteReader: Sendable {
    /// The bytes being read; slices returned by `readSlice` share its storage.
    package let base: ArraySlice<UInt8>
    /// Index of the next byte in `base`.
    package private(set) var position: Int

    /// A reader over all of `bytes`.
    package init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    /// A reader over a slice; indices stay those of the slice's base array.
    package init(_ slice: ArraySlice<UInt8>) {
        base = slice
        position = slice.startIndex
    }

    /// Bytes not yet read.
    @inline(__always)
    package var remaining: Int { base.endIndex - position }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { position == base.endIndex }

    /// Offset of the next byte from the start of the input (for error messages).
    package var offset: Int { position - base.startIndex }

    /// Throws unless every byte has been read.
    package func expectEnd(_ what: String) throws(CodecError) {
        if position != base.endIndex {
            throw CodecError(.trailingBytes, "\(remaining) unexpected bytes after \(what)", offset: offset)
        }
    }

    /// Reads one byte.
    @inline(__always)
    package mutating func readByte() throws(CodecError) -> UInt8 {
        guard position < base.endIndex else { throw truncated("a byte") }
        let byte = base[position]
        position += 1
        return byte
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes that fits in 64 bits.
    @inline(__always)
    package mutating func readVarint() throws(CodecError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < base.endIndex else { throw truncated("a varint") }
            let byte = base[position]
            position += 1
            if shift == 63 && byte > 1 {
                throw CodecError(.overflow, "varint does not fit in 64 bits", offset: offset - 1)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// Reads a varint that must not exceed `limit`.
    package mutating func readVarint(max limit: UInt64, _ what: String) throws(CodecError) -> UInt64 {
        let start = offset
        let value = try readVarint()
        if value > limit {
            throw CodecError(.overflow, "\(what) \(value) exceeds \(limit)", offset: start)
        }
        return value
    }

    /// Reads a zigzag-mapped signed varint.
    @inline(__always)
    package mutating func readSigned() throws(CodecError) -> Int64 {
        ByteWriter.unzigzag(try readVarint())
    }

    /// Reads an element count. Each element takes at least `minimumElementSize`
    /// bytes, so a count larger than the bytes left can hold is rejected before
    /// any allocation.
    /// (Inlined: called with a label that only an error reads, for every
    /// count of every change, it cost a call and the label's reference count.)
    @inline(__always)
    package mutating func readCount(_ what: String, minimumElementSize: Int = 1) throws(CodecError) -> Int {
        let start = offset
        let value = try readVarint()
        // value × size ≤ remaining, without a division (every count of every change is read here).
        let (bytes, overflow) = value.multipliedReportingOverflow(by: UInt64(max(minimumElementSize, 1)))
        if overflow || bytes > UInt64(remaining) { throw countTooLarge(what, value, at: start) }
        return Int(value)
    }

    private func countTooLarge(_ what: String, _ value: UInt64, at start: Int) -> CodecError {
        CodecError(.overflow, "\(what) count \(value) exceeds the \(remaining) bytes left", offset: start)
    }

    /// Reads a 64-bit little-endian word.
    package mutating func readFixed64() throws(CodecError) -> UInt64 { try readWord("a 64-bit word") }

    /// Reads a 32-bit little-endian word.
    package mutating func readFixed32() throws(CodecError) -> UInt32 { try readWord("a 32-bit word") }

    /// A little-endian word in one load, not a bounds-checked read per byte
    /// (a replica table's ids per change, a brush's colour and width per stroke).
    @inline(__always)
    private mutating func readWord<Word: FixedWidthInteger>(_ what: String) throws(CodecError) -> Word {
        let size = MemoryLayout<Word>.size
        guard remaining >= size else { throw truncated(what) }
        let start = position - base.startIndex
        let value = base.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: start, as: Word.self) }
        position += size
        return Word(littleEndian: value)
    }

    /// Reads a Float32 and rejects NaN and infinities.
    package mutating func readFiniteFloat(_ what: String) throws(CodecError) -> Float {
        let start = offset
        let value = Float(bitPattern: try readFixed32())
        guard value.isFinite else { throw CodecError(.invalidValue, "\(what) is not finite", offset: start) }
        return value
    }

    /// Reads a Float64 and rejects NaN and infinities.
    package mutating func readFiniteDouble(_ what: String) throws(CodecError) -> Double {
        let start = offset
        let value = Double(bitPattern: try readFixed64())
        guard value.isFinite else { throw CodecError(.invalidValue, "\(what) is not finite", offset: start) }
        return value
    }

    /// Reads a Boolean byte (0 or 1 only).
    package mutating func readBool(_ what: String) throws(CodecError) -> Bool {
        let start = offset
        switch try readByte() {
        case 0: return false
        case 1: return true
        case let other: throw CodecError(.invalidValue, "\(what) byte \(other) is not 0 or 1", offset: start)
        }
    }

    /// Reads `count` bytes as a slice sharing the input's storage (no copy).
    package mutating func readSlice(count: Int) throws(CodecError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw truncated("\(count) bytes") }
        let slice = base[position..<position + count]
        position += count
        return slice
    }

    /// Skips `count` bytes.
    package mutating func skip(count: Int) throws(CodecError) {
        guard count >= 0, count <= remaining else { throw truncated("\(count) bytes") }
        position += count
    }

    /// Reads a length-prefixed byte string as a shared slice.
    package mutating func readLengthPrefixed(_ what: String) throws(CodecError) -> ArraySlice<UInt8> {
        let count = try readCount(what)
        return try readSlice(count: count)
    }

    /// Reads a length-prefixed UTF-8 string; invalid UTF-8 is an error, not repaired.
    package mutating func readString(_ what: String) throws(CodecError) -> String {
        let start = offset
        let bytes = try readLengthPrefixed(what)
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw CodecError(.invalidValue, "\(what) is not valid UTF-8", offset: start)
        }
        return string
    }

    private func truncated(_ what: String) -> CodecError {
        CodecError(.truncated, "input ends before \(what)", offset: offset)
    }
}
