/// A fast 64-bit checksum that catches corrupted snapshot bytes (not an
/// adversary: peers are authenticated by TLS). Eight bytes per step, about a
/// gigabyte a second in a release build.
enum Checksum {
    static func of(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        let p1: UInt64 = 0x9E37_79B1_85EB_CA87
        let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        var hash: UInt64 = 0x2745_9D6F_1C3B_58A1 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                hash = ((hash ^ (word &* p2)) << 31 | (hash ^ (word &* p2)) >> 33) &* p1
                offset += 8
            }
            while offset < raw.count {
                hash = (hash ^ UInt64(raw[offset])) &* p1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= p2
        hash ^= hash >> 29
        return hash
    }
}
