/// For each replica, the highest sequence number of its changes applied, with
/// no gaps below it.
///
/// Version vectors form a join-semilattice under `formUnion` (entry-wise max):
/// the state of a replica after merging is the union of what both sides knew.
public struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    private(set) var entries: [ReplicaID: UInt64]

    /// The empty vector: nothing applied.
    public init() {
        entries = [:]
    }

    /// A vector from explicit entries; zero entries are dropped.
    public init(_ entries: [ReplicaID: UInt64]) {
        self.entries = entries.filter { $0.value > 0 }
    }

    /// The highest contiguous sequence number applied for `replica` (0 = none).
    public subscript(replica: ReplicaID) -> UInt64 {
        get { entries[replica] ?? 0 }
        set {
            if newValue == 0 { entries[replica] = nil } else { entries[replica] = newValue }
        }
    }

    /// The replicas with at least one change, sorted.
    public var replicas: [ReplicaID] { entries.keys.sorted() }

    /// The (replica, seq) pairs, sorted by replica.
    public var sortedEntries: [(replica: ReplicaID, seq: UInt64)] {
        var sorted = entries.map { (replica: $0.key, seq: $0.value) }
        sorted.sort { $0.replica < $1.replica }
        return sorted
    }

    /// Whether no change at all is covered.
    public var isEmpty: Bool { entries.isEmpty }

    /// The total number of changes covered. O(replicas).
    public var totalChanges: UInt64 { entries.values.reduce(0, +) }

    /// Raises every entry to at least the other vector's.
    public mutating func formUnion(_ other: VersionVector) {
        for (replica, seq) in other.entries where seq > (entries[replica] ?? 0) {
            entries[replica] = seq
        }
    }

    /// Entry-wise maximum.
    public func union(_ other: VersionVector) -> VersionVector {
        var result = self
        result.formUnion(other)
        return result
    }

    /// Whether every change covered by `self` is also covered by `other`.
    public func isCovered(by other: VersionVector) -> Bool {
        entries.allSatisfy { other[$0.key] >= $0.value }
    }

    /// Whether `self` covers every change covered by `other`.
    public func covers(_ other: VersionVector) -> Bool { other.isCovered(by: self) }

    /// `{replica:seq, …}` sorted by replica.
    public var description: String {
        "{" + sortedEntries.map { "\($0.replica):\($0.seq)" }.joined(separator: ", ") + "}"
    }
}

extension VersionVector {
    /// The binary encoding: count, then (replica as 8 bytes, seq varint) sorted by replica.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 2 + entries.count * 11)
        writer.write(count: entries.count)
        for (replica, seq) in sortedEntries {
            writer.write(fixed64: replica.rawValue)
            writer.write(varint: seq)
        }
        return writer.bytes
    }

    /// Decodes `encoded()`; replicas must be sorted, unique, non-reserved, seqs ≥ 1.
    /// - Throws: `CodecError`.
    public init(decoding bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd("the version vector")
    }

    /// Reads a version vector from the middle of a message.
    public init(from reader: inout ByteReader) throws(CodecError) {
        self.init()
        var previous: ReplicaID?
        for _ in 0..<(try reader.readCount("version vector", minimumElementSize: 9)) {
            let replica = ReplicaID(try reader.readFixed64())
            let seq = try reader.readVarint()
            guard replica != .reserved, seq >= 1, previous.map({ replica > $0 }) ?? true else {
                throw CodecError(.invalidValue, "version vector entries must be sorted, unique and non-zero")
            }
            previous = replica
            entries[replica] = seq
        }
    }
}
