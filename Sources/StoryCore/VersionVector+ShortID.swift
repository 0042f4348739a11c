extension VersionVector {
    /// A short name for the version (8 hex digits), the same on every
    /// machine: FNV-1a (64 bits) of `encoded()`, mixed by SplitMix64's
    /// finalizer (FNV alone leaves a change of the last byte in a few low
    /// bits, so neighbouring versions shared their first digits), the high
    /// 32 bits. People
    /// type it (`--at 3f9a1c02`, or a unique prefix of 4 or more digits);
    /// among the few thousand versions of a project a collision is unlikely,
    /// and a prefix that names two versions is refused, not guessed.
    package var shortID: String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in encoded() {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 31
        let folded = UInt32(truncatingIfNeeded: hash >> 32)
        let digits = String(folded, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
