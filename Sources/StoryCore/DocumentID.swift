/// The identity of one document (a project or a library): 128 random bits.
package struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// High 64 bits.
    package let high: UInt64
    /// Low 64 bits.
    package let low: UInt64

    /// Creates an id from its two halves.
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random id.
    package static func random<G: RandomNumberGenerator>(using generator: inout G) -> DocumentID {
        DocumentID(high: generator.next(), low: generator.next())
    }

    /// A fresh random id from the system generator.
    package static func random() -> DocumentID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    package static func < (lhs: DocumentID, rhs: DocumentID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Thirty-two lowercase hex digits.
    package var description: String { ReplicaID(high).description + ReplicaID(low).description }

    /// Parses the thirty-two-hex-digit form.
    package init?(_ text: some StringProtocol) {
        guard text.count == 32 else { return nil }
        let middle = text.index(text.startIndex, offsetBy: 16)
        guard let high = UInt64(text[text.startIndex..<middle], radix: 16),
            let low = UInt64(text[middle...], radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }
}
