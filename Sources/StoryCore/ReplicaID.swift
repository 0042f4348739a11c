/// The identity of one database of one daemon: 64 random bits.
///
/// A replica id is never shared by two databases. A restored or copied database
/// mints a new one, so that it can never reuse sequence numbers (DESIGN.md,
/// "Identity and time"). Zero is reserved for the well-known objects every
/// document starts with (the project root, the library's root and trash).
package struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 64-bit value.
    package let rawValue: UInt64

    /// Wraps a raw value; zero is the reserved replica of well-known objects.
    package init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The reserved replica that owns the well-known objects.
    package static let reserved = ReplicaID(0)

    /// A fresh random replica id (never the reserved zero).
    package static func random<G: RandomNumberGenerator>(using generator: inout G) -> ReplicaID {
        while true {
            let value = generator.next()
            if value != 0 { return ReplicaID(value) }
        }
    }

    /// A fresh random replica id from the system generator.
    package static func random() -> ReplicaID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    package static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Sixteen lowercase hex digits.
    package var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Parses the sixteen-hex-digit form printed by `description`.
    package init?(hex: some StringProtocol) {
        guard hex.count == 16, let value = UInt64(hex, radix: 16) else { return nil }
        self.init(value)
    }
}
