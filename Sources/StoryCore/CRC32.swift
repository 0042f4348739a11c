/// CRC-32 as PNG, zlib and gzip compute it (ISO 3309: reflected polynomial
/// 0xEDB88320, all-ones start and final complement), one table lookup a byte.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    /// Adds bytes. Cost: O(count).
    mutating func update(_ bytes: [UInt8]) {
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes { state = table[Int(UInt8(truncatingIfNeeded: state) ^ byte)] ^ (state >> 8) }
        }
    }

    /// The checksum of the bytes added so far.
    var checksum: UInt32 { ~state }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
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
