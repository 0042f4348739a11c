/// Appends the project's binary encoding: LEB128 varints, zigzag for signed
/// values, length-prefixed byte strings, fixed-width little-endian words.
package struct ByteWriter: Sendable {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8]

    /// An empty writer that reserves `capacity` bytes.
    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Number of bytes written.
    package var count: Int { bytes.count }

    /// Appends one byte.
    @inline(__always)
    package mutating func write(byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends an unsigned LEB128 varint (1–10 bytes).
    @inline(__always)
    package mutating func write(varint value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Appends a varint of a non-negative `Int`.
    @inline(__always)
    package mutating func write(count value: Int) {
        precondition(value >= 0, "counts are never negative")
        write(varint: UInt64(value))
    }

    /// Appends a signed value, zigzag-mapped so small magnitudes stay short.
    @inline(__always)
    package mutating func write(signed value: Int64) {
        write(varint: ByteWriter.zigzag(value))
    }

    /// Appends a 64-bit word, little-endian (for random ids, where varints only grow).
    package mutating func write(fixed64 value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Appends a 32-bit word, little-endian.
    package mutating func write(fixed32 value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    /// Appends a Float32 as its IEEE bits.
    package mutating func write(float value: Float) {
        write(fixed32: value.bitPattern)
    }

    /// Appends a Float64 as its IEEE bits.
    package mutating func write(double value: Double) {
        write(fixed64: value.bitPattern)
    }

    /// Appends raw bytes with no length prefix.
    package mutating func write<C: Collection>(raw: C) where C.Element == UInt8 {
        bytes.append(contentsOf: raw)
    }

    /// Appends a length-prefixed byte string.
    package mutating func write<C: Collection>(lengthPrefixed data: C) where C.Element == UInt8 {
        write(count: data.count)
        bytes.append(contentsOf: data)
    }

    /// Appends a length-prefixed UTF-8 string.
    package mutating func write(string: String) {
        var string = string
        string.withUTF8 { write(lengthPrefixed: $0) }
    }

    /// Appends a Boolean as one byte.
    package mutating func write(bool: Bool) {
        bytes.append(bool ? 1 : 0)
    }

    /// Zigzag mapping of a signed value: 0, -1, 1, -2, … → 0, 1, 2, 3, …
    @inline(__always)
    package static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// The inverse of `zigzag`.
    @inline(__always)
    package static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The number of bytes `write(varint:)` uses for `value`.
    package static func varintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }
}
