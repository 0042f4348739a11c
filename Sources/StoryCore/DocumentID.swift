/// The identity of one document (a project or a library): 128 random bits.
public struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// High 64 bits.
    public let high: UInt64
    /// Low 64 bits.
    public let low: UInt64

    /// Creates an id from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random id.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> DocumentID {
        DocumentID(high: generator.next(), low: generator.next())
    }

    /// A fresh random id from the system generator.
    public static func random() -> DocumentID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Thirty-two lowercase hex digits.
    public var description: String { ReplicaID(high).description + ReplicaID(low).description }

    /// Parses the thirty-two-hex-digit form.
    public init?(_ text: some StringProtocol) {
        guard text.count == 32 else { return nil }
        let middle = text.index(text.startIndex, offsetBy: 16)
        guard let high = UInt64(text[text.startIndex..<middle], radix: 16),
            let low = UInt64(text[middle...], radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }
}
