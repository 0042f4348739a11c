/// The identity and timestamp of one operation: a Lamport counter and the
/// replica that made it.
///
/// OpIDs are totally ordered by counter, then replica. Every last-writer-wins
/// decision compares OpIDs, never wall clocks and never replica ids alone, so
/// a write that causally follows another always wins over it.
package struct OpID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The Lamport counter.
    package var counter: UInt64
    /// The replica that made the operation.
    package var replica: ReplicaID

    /// Creates an id from its two parts.
    package init(counter: UInt64, replica: ReplicaID) {
        self.counter = counter
        self.replica = replica
    }

    /// The project root (the container of the scene list) and the library root.
    package static let root = OpID(counter: 0, replica: .reserved)
    /// The library's trash folder.
    package static let trash = OpID(counter: 1, replica: .reserved)
    /// The library's "Incoming" folder, where projects shared on their own appear.
    package static let incoming = OpID(counter: 2, replica: .reserved)

    /// The smallest counter a real operation may have: counters below it belong
    /// to the well-known objects, so those sort before everything else.
    package static let firstCounter: UInt64 = 3

    /// Whether this is one of the well-known objects of the reserved replica.
    package var isReserved: Bool { replica == .reserved }

    package static func < (lhs: OpID, rhs: OpID) -> Bool {
        lhs.counter != rhs.counter ? lhs.counter < rhs.counter : lhs.replica < rhs.replica
    }

    /// `counter@replica`, e.g. `42@00c0ffee00c0ffee`; parsed back by `init?(_:)`.
    package var description: String { "\(counter)@\(replica)" }

    /// Parses the `counter@replica` form.
    package init?(_ text: some StringProtocol) {
        guard let at = text.firstIndex(of: "@"),
            let counter = UInt64(text[text.startIndex..<at]),
            let replica = ReplicaID(hex: text[text.index(after: at)...])
        else { return nil }
        self.init(counter: counter, replica: replica)
    }
}
