import StoryCore

/// CRC-32 as PNG, zlib and gzip compute it (ISO 3309: reflected polynomial
/// 0xEDB88320, all-ones start and final complement), eight bytes a step
/// ("slicing-by-8": table k holds the CRC of a byte followed by k zero
/// bytes, so eight lookups fold in eight bytes at once; about five times
/// the one-table-lookup-a-byte loop, which made checking a large PNG's
/// chunks most of an upload's time).
package struct CRC32: Sendable {
    /// Eight tables of 256 entries, one after the other.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[index] = value
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private var state: UInt32 = 0xFFFF_FFFF

    package init() {}

    /// Adds bytes. Cost: O(count).
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds bytes. Cost: O(count).
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        Self.tables.withUnsafeBufferPointer { t in
            let count = bytes.count
            var offset = 0
            while offset + 8 <= count {
                let low = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian ^ crc
                let high = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
                crc =
                    t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                offset += 8
            }
            while offset < count {
                crc = t[Int(UInt8(truncatingIfNeeded: crc) ^ bytes[offset])] ^ (crc >> 8)
                offset += 1
            }
        }
        state = crc
    }

    /// The checksum of the bytes added so far.
    package var checksum: UInt32 { ~state }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.checksum
    }
}

/// The CRC-32 of an Ogg page (RFC 3533): polynomial 0x04C11DB7 not reflected,
/// starting at zero with no final complement, computed with the page's own
/// checksum field as zeros.
struct OggCRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
        return value
    }

    private var state: UInt32 = 0

    /// Adds bytes. Cost: O(count).
    mutating func update(_ bytes: [UInt8]) {
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes { state = table[Int(UInt8(truncatingIfNeeded: state >> 24) ^ byte)] ^ (state << 8) }
        }
    }

    /// The checksum of the bytes added so far.
    var checksum: UInt32 { state }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = OggCRC32()
        crc.update(bytes)
        return crc.checksum
    }
}
