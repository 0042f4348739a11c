/// For each replica, the highest sequence number of its changes applied, with
/// no gaps below it.
///
/// Version vectors form a join-semilattice under `formUnion` (entry-wise max):
/// the state of a replica after merging is the union of what both sides knew.
package struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    /// The (replica, seq) pairs with seq ≥ 1, sorted by replica: a handful of
    /// entries, so a search of an array beats hashing, and the order is the
    /// encoding's.
    private var pairs: [Entry]

    /// One replica's entry.
    private struct Entry: Hashable, Sendable {
        var replica: ReplicaID
        var seq: UInt64
    }

    /// The empty vector: nothing applied.
    package init() {
        pairs = []
    }

    /// The empty vector, with room for `count` entries.
    init(minimumCapacity count: Int) {
        pairs = []
        // Not for none: reserving room for nothing still makes a new buffer
        // (the empty array's is shared), and most changes read have no
        // dependencies.
        if count > 0 { pairs.reserveCapacity(count) }
    }

    /// A vector from explicit entries; zero entries are dropped.
    package init(_ entries: [ReplicaID: UInt64]) {
        pairs = entries.filter { $0.value > 0 }.map { Entry(replica: $0.key, seq: $0.value) }.sorted { $0.replica < $1.replica }
    }

    /// Where `replica`'s entry is, or would be inserted. O(log replicas).
    @inline(__always)
    private func index(of replica: ReplicaID) -> (index: Int, found: Bool) {
        var low = 0
        var high = pairs.count
        while low < high {
            let middle = (low &+ high) &>> 1
            let other = pairs[middle].replica
            if other == replica { return (middle, true) }
            if other < replica { low = middle &+ 1 } else { high = middle }
        }
        return (low, false)
    }

    /// The highest contiguous sequence number applied for `replica` (0 = none).
    package subscript(replica: ReplicaID) -> UInt64 {
        get {
            let (index, found) = index(of: replica)
            return found ? pairs[index].seq : 0
        }
        set {
            let (index, found) = index(of: replica)
            switch (found, newValue) {
            case (true, 0): pairs.remove(at: index)
            case (true, _): pairs[index].seq = newValue
            case (false, 0): break
            case (false, _): pairs.insert(Entry(replica: replica, seq: newValue), at: index)
            }
        }
    }

    /// The entries as a dictionary.
    package var entries: [ReplicaID: UInt64] {
        Dictionary(uniqueKeysWithValues: pairs.lazy.map { ($0.replica, $0.seq) })
    }

    /// The number of replicas with at least one change.
    package var count: Int { pairs.count }

    /// The replicas with at least one change, sorted.
    package var replicas: [ReplicaID] { pairs.map(\.replica) }

    /// The (replica, seq) pairs, sorted by replica.
    package var sortedEntries: [(replica: ReplicaID, seq: UInt64)] { pairs.map { ($0.replica, $0.seq) } }

    /// Calls `body` with each (replica, seq) pair, sorted by replica, without
    /// making an array of them.
    @inline(__always)
    package func forEach(_ body: (_ replica: ReplicaID, _ seq: UInt64) throws -> Void) rethrows {
        for entry in pairs { try body(entry.replica, entry.seq) }
    }

    /// Whether no change at all is covered.
    package var isEmpty: Bool { pairs.isEmpty }

    /// The total number of changes covered. O(replicas).
    package var totalChanges: UInt64 { pairs.reduce(0) { $0 + $1.seq } }

    /// Raises every entry to at least the other vector's. O(replicas of both).
    package mutating func formUnion(_ other: VersionVector) {
        // The usual case, nothing of `other` is new: no write, so no copy.
        if other.isCovered(by: self) { return }
        var merged: [Entry] = []
        merged.reserveCapacity(pairs.count + other.pairs.count)
        var i = 0
        var j = 0
        while i < pairs.count || j < other.pairs.count {
            if j == other.pairs.count || (i < pairs.count && pairs[i].replica < other.pairs[j].replica) {
                merged.append(pairs[i])
                i += 1
            } else if i == pairs.count || other.pairs[j].replica < pairs[i].replica {
                merged.append(other.pairs[j])
                j += 1
            } else {
                merged.append(Entry(replica: pairs[i].replica, seq: max(pairs[i].seq, other.pairs[j].seq)))
                i += 1
                j += 1
            }
        }
        pairs = merged
    }

    /// Entry-wise maximum.
    package func union(_ other: VersionVector) -> VersionVector {
        var result = self
        result.formUnion(other)
        return result
    }

    /// Whether every change covered by `self` is also covered by `other`. O(replicas of both).
    package func isCovered(by other: VersionVector) -> Bool {
        // Both sorted: one forward walk of `other`.
        var j = 0
        for entry in pairs {
            while j < other.pairs.count && other.pairs[j].replica < entry.replica { j += 1 }
            guard j < other.pairs.count, other.pairs[j].replica == entry.replica, other.pairs[j].seq >= entry.seq else { return false }
        }
        return true
    }

    /// Whether `self` covers every change covered by `other`.
    package func covers(_ other: VersionVector) -> Bool { other.isCovered(by: self) }

    /// `{replica:seq, …}` sorted by replica.
    package var description: String {
        "{" + pairs.map { "\($0.replica):\($0.seq)" }.joined(separator: ", ") + "}"
    }
}

extension VersionVector {
    /// The binary encoding: count, then (replica as 8 bytes, seq varint) sorted by replica.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 2 + pairs.count * 11)
        writer.write(count: pairs.count)
        for entry in pairs {
            writer.write(fixed64: entry.replica.rawValue)
            writer.write(varint: entry.seq)
        }
        return writer.bytes
    }

    /// Decodes `encoded()`; replicas must be sorted, unique, non-reserved, seqs ≥ 1.
    /// - Throws: `CodecError`.
    package init(decoding bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd("the version vector")
    }

    /// Reads a version vector from the middle of a message.
    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init()
        var previous: ReplicaID?
        for _ in 0..<(try reader.readCount("version vector", minimumElementSize: 9)) {
            let replica = ReplicaID(try reader.readFixed64())
            let seq = try reader.readVarint()
            guard replica != .reserved, seq >= 1, previous.map({ replica > $0 }) ?? true else {
                throw CodecError(.invalidValue, "version vector entries must be sorted, unique and non-zero")
            }
            previous = replica
            // Sorted, so each entry goes at the end.
            pairs.append(Entry(replica: replica, seq: seq))
        }
    }
}
