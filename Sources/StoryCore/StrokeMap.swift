/// The strokes of one layer by key, in key order.
///
/// A layer's strokes are kept as rows sorted by key, in chunks of at most
/// `maximumChunk` rows: a lookup is a binary search, a new stroke (whose key,
/// the id of the operation that drew it, is usually the newest) is appended,
/// and one that comes late moves at most one chunk's rows. A row is 40 bytes
/// (`Row`): a stroke as drawn has its key as its content and both stamps, so
/// only the brush and the erased flag are stored beside the key; a stroke
/// erased, restyled or transformed keeps what differs in a box. (A dictionary
/// keyed by 128-bit op ids took 96 bytes a bucket at a load factor between
/// 0.38 and 0.75, and rehashed every stroke of the layer as it grew; rows of
/// whole entries took 96 bytes.)
struct StrokeMap: Sendable, Sequence, Equatable, ExpressibleByDictionaryLiteral {
    typealias Element = (key: OpID, value: StrokeEntry)

    /// Rows in a chunk before it is split in two.
    static let maximumChunk = 256

    /// One stroke: its key and brush inline, the rest only where it differs
    /// from the key (or the stroke is transformed).
    struct Row: Sendable {
        var key: OpID
        var brush: Brush
        var isErased: Bool
        var rest: Rest?

        /// What a row keeps apart: immutable, shared between copies.
        final class Rest: Sendable {
            let content: OpID
            let valueStamp: OpID
            let stamp: OpID
            let transform: Affine?

            init(content: OpID, valueStamp: OpID, stamp: OpID, transform: Affine?) {
                self.content = content
                self.valueStamp = valueStamp
                self.stamp = stamp
                self.transform = transform
            }
        }

        init(key: OpID, brush: Brush, isErased: Bool, rest: Rest?) {
            self.key = key
            self.brush = brush
            self.isErased = isErased
            self.rest = rest
        }

        init(key: OpID, entry: StrokeEntry) {
            self.key = key
            brush = entry.value.brush
            isErased = entry.isErased
            let transform = entry.value.transform
            if entry.value.content == key && entry.valueStamp == key && entry.stamp == key && transform == nil {
                rest = nil
            } else {
                rest = Rest(content: entry.value.content, valueStamp: entry.valueStamp, stamp: entry.stamp, transform: transform)
            }
        }

        var entry: StrokeEntry {
            guard let rest else {
                var entry = StrokeEntry(value: StrokeValue(content: key, brush: brush), id: key)
                entry.isErased = isErased
                return entry
            }
            var entry = StrokeEntry(value: StrokeValue(content: rest.content, brush: brush, transform: rest.transform), id: rest.valueStamp)
            entry.isErased = isErased
            entry.stamp = rest.stamp
            return entry
        }
    }

    /// Every chunk holds at least one row; chunks are in key order.
    private var chunks: [[Row]] = []
    /// The number of strokes.
    private(set) var count = 0

    init() {}

    init(dictionaryLiteral elements: (OpID, StrokeEntry)...) {
        for (key, entry) in elements { self[key] = entry }
    }

    var isEmpty: Bool { count == 0 }

    /// The entry under `key`; setting nil removes it.
    subscript(key: OpID) -> StrokeEntry? {
        get {
            guard let (chunk, index) = location(of: key) else { return nil }
            return chunks[chunk][index].entry
        }
        set {
            if let newValue { put(newValue, under: key) } else { remove(key) }
        }
    }

    /// Where `key` is or would go: the chunk and the index in it. Nil when empty.
    private func position(of key: OpID) -> (Int, Int)? {
        guard let lastChunk = chunks.indices.last else { return nil }
        var low = 0
        var high = lastChunk
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle][chunks[middle].count - 1].key < key { low = middle + 1 } else { high = middle }
        }
        var lowIndex = 0
        var highIndex = chunks[low].count
        while lowIndex < highIndex {
            let middle = (lowIndex + highIndex) / 2
            if chunks[low][middle].key < key { lowIndex = middle + 1 } else { highIndex = middle }
        }
        return (low, lowIndex)
    }

    /// Where the entry under `key` is; nil when the map has none.
    private func location(of key: OpID) -> (Int, Int)? {
        // Newer than the newest (a stroke being drawn): not here, without a search.
        guard let newest = chunks.last?.last?.key, key <= newest,
            let (chunk, index) = position(of: key), index < chunks[chunk].count, chunks[chunk][index].key == key
        else { return nil }
        return (chunk, index)
    }

    /// Puts `entry` under `key`; returns the entry that was there.
    @discardableResult
    mutating func put(_ entry: StrokeEntry, under key: OpID) -> StrokeEntry? {
        put(Row(key: key, entry: entry))
    }

    /// Puts the stroke drawn by operation `key` with `brush` (its own content,
    /// not erased: `StrokeEntry(value:id:)`); returns the entry that was there.
    mutating func putDrawn(with brush: Brush, under key: OpID) -> StrokeEntry? {
        put(Row(key: key, brush: brush, isErased: false, rest: nil))
    }

    private mutating func put(_ row: consuming Row) -> StrokeEntry? {
        let key = row.key
        // The usual case: the first or the newest key, at the end, in a new
        // chunk once the last is full (so that chunks filled in order stay
        // full). By index: a copy of the last chunk held here would make the
        // append copy it.
        let lastChunk = chunks.count - 1
        if lastChunk < 0 || chunks[lastChunk][chunks[lastChunk].count - 1].key < key {
            if lastChunk < 0 || chunks[lastChunk].count >= Self.maximumChunk { chunks.append([]) }
            makeRoom(inChunk: chunks.count - 1)
            chunks[chunks.count - 1].append(consume row)
            count += 1
            return nil
        }
        // At or before the newest: its place is inside a chunk.
        let (chunk, index) = position(of: key)!
        if chunks[chunk][index].key == key {
            let previous = chunks[chunk][index].entry
            chunks[chunk][index] = consume row
            return previous
        }
        makeRoom(inChunk: chunk)
        chunks[chunk].insert(consume row, at: index)
        count += 1
        if chunks[chunk].count > Self.maximumChunk {
            // Both halves at their size: the lower one would keep the whole chunk's room.
            let lower = Array(chunks[chunk][..<(Self.maximumChunk / 2)])
            let upper = Array(chunks[chunk][(Self.maximumChunk / 2)...])
            chunks[chunk] = lower
            chunks.insert(upper, at: chunk + 1)
        }
        return nil
    }

    /// Makes room for one more row in a full chunk, growing it by a quarter
    /// (at least 4 rows) where an array would double: a layer's strokes sit
    /// mostly in one chunk, which doubling would leave a third empty on
    /// average. The extra copies are of at most `maximumChunk` rows.
    private mutating func makeRoom(inChunk chunk: Int) {
        let rows = chunks[chunk].count
        guard rows == chunks[chunk].capacity else { return }
        chunks[chunk].reserveCapacity(rows + Swift.max(4, rows / 4))
    }

    private mutating func remove(_ key: OpID) {
        guard let (chunk, index) = location(of: key) else { return }
        chunks[chunk].remove(at: index)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// The rows the chunks have room for, and the number of chunks (what the
    /// map holds in memory, for tests).
    var reserved: (rows: Int, chunks: Int) { (chunks.reduce(0) { $0 + $1.capacity }, chunks.count) }

    /// The keys, in order.
    var keys: [OpID] { chunks.flatMap { $0.map(\.key) } }

    static func == (lhs: StrokeMap, rhs: StrokeMap) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs) { $0.key == $1.key && $0.value == $1.value }
    }

    func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    var underestimatedCount: Int { count }

    /// The strokes in key order.
    struct Iterator: IteratorProtocol {
        fileprivate let chunks: [[Row]]
        private var chunk = 0, index = 0

        fileprivate init(chunks: [[Row]]) { self.chunks = chunks }

        mutating func next() -> Element? {
            while chunk < chunks.count {
                if index < chunks[chunk].count {
                    defer { index += 1 }
                    return (chunks[chunk][index].key, chunks[chunk][index].entry)
                }
                chunk += 1
                index = 0
            }
            return nil
        }
    }
}
