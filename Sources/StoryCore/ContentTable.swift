/// Point blobs by the id of the `addStroke` operation that added them.
///
/// A replica's operations apply in the order of their counters, so each
/// replica's blobs are kept in flat arrays sorted by counter: a new blob is
/// appended, a lookup is a binary search. The arrays come in chunks of
/// `chunkSize`, so growing never copies more than one chunk and never leaves
/// more than one chunk's room unused. 40 bytes a blob (its counter and the
/// blob, which is its byte slice alone), where a dictionary keyed by 128-bit
/// op ids took 56 bytes a bucket at a load factor between 0.38 and 0.75, and
/// rehashed every blob as it grew.
/// A blob that comes out of order (a merge) is inserted in place.
struct ContentTable: Sendable, Sequence {
    /// Blobs of one replica: `counters[i]` is the counter of `blobs[i]`, ascending.
    private struct Chunk: Sendable {
        var counters: [UInt64] = []
        var blobs: [PointsBlob] = []

        init() {
            counters.reserveCapacity(ContentTable.chunkSize)
            blobs.reserveCapacity(ContentTable.chunkSize)
        }
    }

    /// Blobs per chunk before a new one is started.
    static let chunkSize = 1024

    /// The replicas with blobs, and each one's chunks in counter order
    /// (searched linearly: a project has a handful of authors).
    private(set) var replicas: [ReplicaID] = []
    private var columns: [[Chunk]] = []
    /// The number of blobs.
    private(set) var count = 0

    init() {}

    /// The blobs of a dictionary.
    init(_ blobs: [OpID: PointsBlob]) {
        for (id, blob) in blobs.sorted(by: { $0.key < $1.key }) { self[id] = blob }
    }

    var isEmpty: Bool { count == 0 }

    /// The blob added by operation `id`; setting nil removes it.
    subscript(id: OpID) -> PointsBlob? {
        get {
            guard let at = location(of: id) else { return nil }
            return columns[at.column][at.chunk].blobs[at.index]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { remove(id) }
        }
    }

    /// Whether the table holds a blob for operation `id`.
    func contains(_ id: OpID) -> Bool { location(of: id) != nil }

    private func column(of replica: ReplicaID) -> Int? { replicas.firstIndex(of: replica) }

    /// Where the blob of `id` is; nil when the table has none.
    private func location(of id: OpID) -> (column: Int, chunk: Int, index: Int)? {
        guard let column = column(of: id.replica),
            // Newer than the replica's newest (a blob being added): not here, without a search.
            let newest = columns[column].last?.counters.last, id.counter <= newest,
            let (chunk, index) = Self.position(of: id.counter, in: columns[column]),
            index < columns[column][chunk].counters.count, columns[column][chunk].counters[index] == id.counter
        else { return nil }
        return (column, chunk, index)
    }

    /// Where `counter` is or would go: the chunk and the index in it.
    /// Nil when the column is empty.
    private static func position(of counter: UInt64, in chunks: [Chunk]) -> (Int, Int)? {
        guard let lastChunk = chunks.indices.last else { return nil }
        // The first chunk whose last counter is at least `counter` (appends land in the last chunk).
        var low = 0
        var high = lastChunk
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle].counters.last! < counter { low = middle + 1 } else { high = middle }
        }
        var lowIndex = 0
        var highIndex = chunks[low].counters.count
        while lowIndex < highIndex {
            let middle = (lowIndex + highIndex) / 2
            if chunks[low].counters[middle] < counter { lowIndex = middle + 1 } else { highIndex = middle }
        }
        return (low, lowIndex)
    }

    private mutating func insert(_ blob: PointsBlob, for id: OpID) {
        let column: Int
        if let existing = self.column(of: id.replica) {
            column = existing
        } else {
            replicas.append(id.replica)
            columns.append([])
            column = columns.count - 1
        }
        // The usual case: the first or a newer operation of its replica, at the
        // end. (By index: a copy of the last chunk held here would make the
        // append copy it.)
        let lastChunk = columns[column].count - 1
        if lastChunk < 0 || columns[column][lastChunk].counters.last! < id.counter {
            if lastChunk < 0 || columns[column][lastChunk].counters.count >= Self.chunkSize { columns[column].append(Chunk()) }
            let chunk = columns[column].count - 1
            columns[column][chunk].counters.append(id.counter)
            columns[column][chunk].blobs.append(blob)
            count += 1
            return
        }
        // At or before the newest: its place is inside a chunk.
        let (chunk, index) = Self.position(of: id.counter, in: columns[column])!
        if columns[column][chunk].counters[index] == id.counter {
            columns[column][chunk].blobs[index] = blob
            return
        }
        columns[column][chunk].counters.insert(id.counter, at: index)
        columns[column][chunk].blobs.insert(blob, at: index)
        count += 1
    }

    /// Moves the blobs of `replica`'s changes in `moved` (ascending by
    /// counter, as a log holds them): each blob of a change's `counters` that
    /// lies inside its `old` bytes (the same storage, not merely equal bytes)
    /// to the same offset in `new`. One walk over the blobs of the range.
    mutating func move(replica: ReplicaID, moved: [MovedChange]) {
        guard let first = moved.first, let column = column(of: replica),
            var (chunk, index) = Self.position(of: first.counters.lowerBound, in: columns[column])
        else { return }
        var next = 0
        var current = first
        while chunk < columns[column].count {
            if index >= columns[column][chunk].counters.count {
                (chunk, index) = (chunk + 1, 0)
                continue
            }
            let counter = columns[column][chunk].counters[index]
            while current.counters.upperBound <= counter {
                next += 1
                guard next < moved.count else { return }
                current = moved[next]
            }
            if counter >= current.counters.lowerBound, let offset = columns[column][chunk].blobs[index].bytes.offset(in: current.old) {
                precondition(current.old.count == current.new.count, "bytes move to a place of their size")
                let start = current.new.startIndex + offset
                let length = columns[column][chunk].blobs[index].bytes.count
                columns[column][chunk].blobs[index].share(current.new[start..<(start + length)])
            }
            index += 1
        }
    }

    private mutating func remove(_ id: OpID) {
        guard let (column, chunk, index) = location(of: id) else { return }
        columns[column][chunk].counters.remove(at: index)
        columns[column][chunk].blobs.remove(at: index)
        count -= 1
        if columns[column][chunk].counters.isEmpty { columns[column].remove(at: chunk) }
        if columns[column].isEmpty {
            columns.remove(at: column)
            replicas.remove(at: column)
        }
    }

    func makeIterator() -> Iterator { Iterator(table: self) }

    /// Calls `body` with every blob in `OpID` order (counter, then replica):
    /// the replicas' columns merged as they are read, without a sorted copy
    /// of the table (a snapshot writes them in this order).
    func forEachInOrder(_ body: (OpID, PointsBlob) -> Void) {
        // One cursor per replica's column: (chunk, index).
        var cursors = [(chunk: Int, index: Int)](repeating: (0, 0), count: columns.count)
        while true {
            var best = -1
            var bestID = OpID(counter: 0, replica: .reserved)
            for column in cursors.indices where cursors[column].chunk < columns[column].count {
                let id = OpID(counter: columns[column][cursors[column].chunk].counters[cursors[column].index], replica: replicas[column])
                if best < 0 || id < bestID {
                    best = column
                    bestID = id
                }
            }
            guard best >= 0 else { return }
            let (chunk, index) = cursors[best]
            body(bestID, columns[best][chunk].blobs[index])
            cursors[best] = index + 1 < columns[best][chunk].counters.count ? (chunk, index + 1) : (chunk + 1, 0)
        }
    }

    /// Answers `contains` for ids asked in ascending order within each
    /// replica (as a snapshot lists its contents), walking a cursor forward
    /// through each replica's column instead of searching it for every id:
    /// O(1) amortized and sequential in memory, where a search touched about
    /// 16 places of a large table, most of them cold.
    struct OrderedLookup {
        private let table: ContentTable
        /// Per column: the first place whose counter is not below the last id asked.
        private var cursors: [(chunk: Int, index: Int)]

        init(_ table: ContentTable) {
            self.table = table
            cursors = Array(repeating: (0, 0), count: table.columns.count)
        }

        /// Whether the table holds a blob for `id`.
        /// - Precondition: `id` is above every earlier id of its replica asked here.
        mutating func contains(_ id: OpID) -> Bool {
            guard let column = table.column(of: id.replica) else { return false }
            var (chunk, index) = cursors[column]
            while chunk < table.columns[column].count {
                let counters = table.columns[column][chunk].counters
                while index < counters.count && counters[index] < id.counter { index += 1 }
                if index < counters.count { break }
                (chunk, index) = (chunk + 1, 0)
            }
            cursors[column] = (chunk, index)
            return chunk < table.columns[column].count && table.columns[column][chunk].counters[index] == id.counter
        }
    }

    /// The blobs by replica, each replica's by counter.
    struct Iterator: IteratorProtocol {
        fileprivate let table: ContentTable
        private var column = 0, chunk = 0, index = 0

        fileprivate init(table: ContentTable) { self.table = table }

        mutating func next() -> (key: OpID, value: PointsBlob)? {
            while column < table.columns.count {
                let chunks = table.columns[column]
                if chunk < chunks.count {
                    if index < chunks[chunk].counters.count {
                        defer { index += 1 }
                        return (OpID(counter: chunks[chunk].counters[index], replica: table.replicas[column]), chunks[chunk].blobs[index])
                    }
                    chunk += 1
                    index = 0
                } else {
                    column += 1
                    chunk = 0
                }
            }
            return nil
        }
    }

    var underestimatedCount: Int { count }
}

extension ArraySlice where Element == UInt8 {
    /// Where these bytes start inside `outer`, when they are part of the same
    /// storage (not merely equal bytes); nil otherwise.
    func offset(in outer: ArraySlice<UInt8>) -> Int? {
        withUnsafeBufferPointer { inner in
            outer.withUnsafeBufferPointer { outer in
                guard let innerStart = inner.baseAddress, let outerStart = outer.baseAddress else { return nil }
                let offset = innerStart - outerStart
                return offset >= 0 && offset + inner.count <= outer.count ? offset : nil
            }
        }
    }
}
