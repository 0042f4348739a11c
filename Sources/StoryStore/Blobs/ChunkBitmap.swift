/// Which chunks of a partial blob are here: bit i of byte i/8 (least
/// significant first) is chunk i. The count of set bits is kept.
struct ChunkBitmap: Hashable {
    private(set) var bytes: [UInt8]
    let count: Int
    private(set) var heldCount: Int

    /// Nothing held.
    init(count: Int) {
        self.count = count
        bytes = [UInt8](repeating: 0, count: (count + 7) / 8)
        heldCount = 0
    }

    /// The stored bitmap; nil if it is not the length `count` needs.
    init?(bytes: [UInt8], count: Int) {
        guard bytes.count == (count + 7) / 8 else { return nil }
        self.count = count
        self.bytes = bytes
        // Bits past the last chunk mean nothing: cleared, so the count is right.
        if count % 8 != 0, let last = self.bytes.indices.last { self.bytes[last] &= UInt8((1 << (count % 8)) - 1) }
        heldCount = self.bytes.reduce(0) { $0 + $1.nonzeroBitCount }
    }

    subscript(index: Int) -> Bool {
        get { bytes[index >> 3] & (1 << (index & 7)) != 0 }
        set {
            guard newValue != self[index] else { return }
            if newValue {
                bytes[index >> 3] |= 1 << (index & 7)
                heldCount += 1
            } else {
                bytes[index >> 3] &= ~(1 << (index & 7))
                heldCount -= 1
            }
        }
    }

    var isFull: Bool { heldCount == count }

    /// The chunks not held, in order.
    var missing: [Int] { (0..<count).filter { !self[$0] } }
}
