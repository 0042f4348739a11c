/// The changes one replica knows from one author, contiguous by sequence number.
/// Changes before `firstSeq` were compacted away or arrived inside a snapshot.
///
/// Kept slim, since a project's log holds every change of its history: an
/// entry is the change's bytes and the header fields a sync needs (56 bytes;
/// the author and the sequence number are the log's own), the signatures are
/// beside them only once a change comes with one, and entries are stored in
/// chunks of `chunkSize`, so the log never copies more than one chunk as it
/// grows or holds more than one chunk of unused room.
struct ChangeLog: Sendable {
    private struct Entry: Sendable {
        var bytes: ArraySlice<UInt8>
        var startCounter: UInt64
        var wallTime: Int64
        var counterSpan: UInt32
        var isAnchor: Bool
    }

    /// Entries per chunk.
    static let chunkSize = 1024

    private(set) var firstSeq: UInt64 = 1
    /// Every chunk but the last holds `chunkSize` entries.
    private var chunks: [[Entry]] = []
    /// Empty until a change with a signature is appended; then one per entry.
    private var signatures: [[UInt8]?] = []
    private(set) var count = 0

    init(firstSeq: UInt64 = 1) { self.firstSeq = firstSeq }

    var nextSeq: UInt64 { firstSeq + UInt64(count) }

    /// Appends `change` if it is the log's next one; a log that restarted
    /// after a snapshot skips the changes the snapshot covered. Returns
    /// whether it was appended.
    @discardableResult
    mutating func append(_ change: EncodedChange) -> Bool {
        guard change.seq == nextSeq else { return false }
        // By index: a copy of the last chunk held here would make the append copy it.
        if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.chunkSize {
            var chunk: [Entry] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(
            Entry(
                bytes: change.bytes, startCounter: change.startCounter, wallTime: change.wallTime,
                counterSpan: UInt32(change.endCounter - change.startCounter), isAnchor: change.isAnchor))
        if let signature = change.signature {
            if signatures.isEmpty { signatures = Array(repeating: nil, count: count) }
            signatures.append(signature)
        } else if !signatures.isEmpty {
            signatures.append(nil)
        }
        count += 1
        return true
    }

    /// Changes this replica makes are packed this many at a time.
    static let packSize = 256

    /// Moves the bytes of the newest `k` changes into one array of their
    /// total size, and returns each change's old and new bytes with its
    /// counters, so that what shares the old bytes (a stroke's points) can
    /// move too. A change made here is encoded into an array of its own: the
    /// encoder's unused room (about 70 bytes), a 32-byte header and malloc's
    /// rounding on about 210 bytes, which packing leaves behind once
    /// everything that held the old arrays has moved.
    mutating func packLast(_ k: Int) -> [(old: ArraySlice<UInt8>, new: ArraySlice<UInt8>, counters: Range<UInt64>)] {
        let first = count - Swift.min(k, count)
        guard first < count else { return [] }
        var total = 0
        for index in first..<count { total += entry(at: index).bytes.count }
        var packed: [UInt8] = []
        packed.reserveCapacity(total)
        for index in first..<count { packed.append(contentsOf: entry(at: index).bytes) }
        var moved: [(old: ArraySlice<UInt8>, new: ArraySlice<UInt8>, counters: Range<UInt64>)] = []
        moved.reserveCapacity(count - first)
        var offset = 0
        for index in first..<count {
            let (chunk, row) = (index / Self.chunkSize, index % Self.chunkSize)
            let old = chunks[chunk][row].bytes
            let new = packed[offset..<(offset + old.count)]
            chunks[chunk][row].bytes = new
            offset += old.count
            let start = chunks[chunk][row].startCounter
            // `endCounter` (start + span) is the change's last counter.
            moved.append((old, new, start..<(start + UInt64(chunks[chunk][row].counterSpan) + 1)))
        }
        return moved
    }

    /// Removes the newest `k` changes.
    mutating func removeLast(_ k: Int) {
        precondition(k <= count, "removing more changes than the log holds")
        var left = k
        while left > 0 {
            let last = chunks.count - 1
            let take = min(left, chunks[last].count)
            chunks[last].removeLast(take)
            if chunks[last].isEmpty { chunks.removeLast() }
            left -= take
        }
        if !signatures.isEmpty { signatures.removeLast(k) }
        count -= k
    }

    private func entry(at index: Int) -> Entry { chunks[index / Self.chunkSize][index % Self.chunkSize] }

    /// The bytes of the change with sequence number `seq` (in the log).
    func bytes(ofSeq seq: UInt64) -> ArraySlice<UInt8> { entry(at: Int(seq - firstSeq)).bytes }

    /// The change at `index` (0: the one with `firstSeq`), by `replica`.
    func change(at index: Int, replica: ReplicaID) -> EncodedChange {
        let entry = entry(at: index)
        return EncodedChange(
            bytes: entry.bytes, replica: replica, seq: firstSeq + UInt64(index), startCounter: entry.startCounter,
            endCounter: entry.startCounter + UInt64(entry.counterSpan), wallTime: entry.wallTime,
            signature: signatures.isEmpty ? nil : signatures[index], isAnchor: entry.isAnchor)
    }

    /// The first counter of the change at `index`.
    func startCounter(at index: Int) -> UInt64 { entry(at: index).startCounter }

    /// The same log without the changes before `seq`.
    func dropping(before seq: UInt64, replica: ReplicaID) -> ChangeLog {
        var kept = ChangeLog(firstSeq: seq)
        for index in Int(seq - firstSeq)..<count { kept.append(change(at: index, replica: replica)) }
        return kept
    }
}
