/// The changes one replica knows from one author, contiguous by sequence number.
/// Changes before `firstSeq` were compacted away or arrived inside a snapshot.
///
/// Kept slim, since a project's log holds every change of its history. A
/// change is kept as its bytes alone, where they are (the batch it arrived
/// in, or the array it was made in): 8 bytes (where it lies there; the
/// batch is held once for the changes that came in it) and a bit (whether
/// this daemon checked its own signature). Its header fields (counters, wall time) are
/// read from the bytes when asked. Changes come in blocks of `packSize`; a
/// full block of changes made here is packed: their bytes are copied into one
/// array of their total size, and the document moves the state's point blobs
/// into it too (`ReplicaCore.packOwnLog`), so each change then costs 4 bytes
/// (where it ends) and its bytes are held once, without the room the encoder
/// left. Received changes are not copied: their batches are held as they
/// came (freeing them for a copy left holes in the heap about the size of
/// what the copy saved, and the copies cost 15-40 % of a sync). Signatures are
/// beside the entries, only once a change comes with one.
struct ChangeLog: Sendable {
    /// `packSize` changes (the last block: up to that), where they are, or
    /// packed: one after the other in `bytes`, change `i` ending at
    /// `ends[i]` (starting where `i - 1` ends).
    private struct Block: Sendable {
        /// Not packed: row `i`'s bytes are `spans[2i]..<spans[2i+1]` in the
        /// slice of its run (`ChangeLog.runs`), counted from the slice's start.
        var spans: [UInt32] = []
        var bytes: [UInt8] = []
        var ends: [UInt32] = []

        var isPacked: Bool { !ends.isEmpty }
        var count: Int { isPacked ? ends.count : spans.count / 2 }

        func packedBytes(at row: Int) -> ArraySlice<UInt8> {
            bytes[(row == 0 ? 0 : Int(ends[row - 1]))..<Int(ends[row])]
        }
    }

    /// Changes not packed lie in runs: from position `start` up to the next
    /// run's, in `owner` (the batch they came in, or the array a change was
    /// made in), held once for the run. One array for the log, not one per
    /// block: grown per block, they left 2-4 MB of small freed arrays in the
    /// heap over the medium trace.
    private struct Run: Sendable {
        var owner: ArraySlice<UInt8>
        var start: Int
    }

    /// Changes per block.
    static let packSize = 256

    private(set) var firstSeq: UInt64 = 1
    /// Every block but the last holds `packSize` changes; the first `skipped`
    /// of the first block are before `firstSeq` (compacted away with the
    /// blocks before them).
    private var blocks: [Block] = []
    /// By `start`; they cover every position of the blocks not packed.
    private var runs: [Run] = []
    private var skipped = 0
    /// Blocks before this one are packed, or too large to pack.
    private var firstUnpackedBlock = 0
    /// Bit `p % 64` of word `p / 64`: whether the change at position `p`
    /// (`index + skipped`) is an anchor.
    private var anchors: [UInt64] = []
    /// Empty until a change with a signature is appended; then one per change.
    private var signatures: [[UInt8]?] = []

    init(firstSeq: UInt64 = 1) { self.firstSeq = firstSeq }

    /// The number of positions (changes and the skipped ones before them).
    private var positions: Int { blocks.isEmpty ? 0 : (blocks.count - 1) * Self.packSize + blocks[blocks.count - 1].count }

    /// The number of changes.
    var count: Int { positions - skipped }

    var nextSeq: UInt64 { seq(atPosition: positions) }

    /// The sequence number of the change at `position` (`index + skipped`).
    private func seq(atPosition position: Int) -> UInt64 { firstSeq + UInt64(position - skipped) }

    /// Changes in blocks not packed yet.
    var unpackedCount: Int { blocks.reduce(0) { $0 + ($1.isPacked ? 0 : $1.count) } - (blocks.first?.isPacked == false ? skipped : 0) }

    /// The runs held (for tests): each has a change not packed, so packed
    /// changes' arrays and batches are let go.
    var runCount: Int { runs.count }

    /// Whether `packFull` has a block to pack.
    var hasFullUnpackedBlock: Bool {
        firstUnpackedBlock < blocks.count - 1 || (firstUnpackedBlock == blocks.count - 1 && blocks[firstUnpackedBlock].count == Self.packSize)
    }

    /// Appends `change` if it is the log's next one; a log that restarted
    /// after a snapshot skips the changes the snapshot covered. Returns
    /// whether it was appended.
    /// `container`: the batch the change came in (its bytes a slice of it),
    /// held once for a run of changes that came in it; empty for none.
    @discardableResult
    mutating func append(_ change: EncodedChange, within container: ArraySlice<UInt8> = []) -> Bool {
        let position = positions
        guard change.seq == seq(atPosition: position) else { return false }
        // By index: a copy of the last block held here would make the append copy it.
        if blocks.isEmpty || blocks[blocks.count - 1].count >= Self.packSize {
            // Grown by doubling, the spans would leave a trail of freed
            // arrays in the heap: a block after the first is allocated whole.
            var block = Block()
            if !blocks.isEmpty { block.spans.reserveCapacity(2 * Self.packSize) }
            blocks.append(block)
        }
        // The owner is copied (a reference count) only when a run starts.
        let inContainer = container.count <= Int(UInt32.max) && change.bytes.offset(in: container) != nil
        let continuesRun =
            !runs.isEmpty
            && (inContainer ? Self.isSame(runs[runs.count - 1].owner, container) : Self.isSame(runs[runs.count - 1].owner, change.bytes))
        if !continuesRun { runs.append(Run(owner: inContainer ? container : change.bytes, start: position)) }
        let base = runs[runs.count - 1].owner.startIndex
        blocks[blocks.count - 1].spans.append(UInt32(change.bytes.startIndex - base))
        blocks[blocks.count - 1].spans.append(UInt32(change.bytes.endIndex - base))
        if position / 64 >= anchors.count { anchors.append(0) }
        if change.isAnchor { anchors[position / 64] |= 1 << UInt64(position % 64) }
        if let signature = change.signature {
            if signatures.isEmpty { signatures = Array(repeating: nil, count: count - 1) }
            signatures.append(signature)
        } else if !signatures.isEmpty {
            signatures.append(nil)
        }
        return true
    }

    /// Packs every full block not packed yet, and returns each packed
    /// change's old and new bytes with its counters (ascending), so that what
    /// shares the old bytes (a stroke's points) can move too. A block whose
    /// bytes exceed `maximumPackBytes` (at most 4 GiB: the offsets are
    /// 32-bit) stays as it is.
    mutating func packFull(maximumPackBytes: Int = Int(UInt32.max))
        -> [MovedChange]
    {
        precondition(maximumPackBytes <= Int(UInt32.max), "pack offsets are 32-bit")
        var moved: [MovedChange] = []
        defer { firstUnpackedBlock = blocks.isEmpty || blocks[blocks.count - 1].count == Self.packSize ? blocks.count : blocks.count - 1 }
        for index in firstUnpackedBlock..<blocks.count where !blocks[index].isPacked && blocks[index].count == Self.packSize {
            // The first block may hold changes compacted away (empty slices).
            var slices: [ArraySlice<UInt8>] = []
            slices.reserveCapacity(Self.packSize)
            forEachBytes(inPositions: (index * Self.packSize)..<((index + 1) * Self.packSize)) { _, bytes in slices.append(bytes) }
            let total = slices.reduce(0) { $0 + $1.count }
            guard total <= maximumPackBytes else { continue }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(total)
            var ends: [UInt32] = []
            ends.reserveCapacity(Self.packSize)
            for slice in slices {
                bytes.append(contentsOf: slice)
                ends.append(UInt32(bytes.count))
            }
            moved.reserveCapacity(moved.count + Self.packSize)
            var offset = 0
            for slice in slices where !slice.isEmpty {
                let new = bytes[offset..<(offset + slice.count)]
                offset += slice.count
                let header = EncodedChange.headerFields(of: slice)
                moved.append(MovedChange(old: slice, new: new, counters: header.startCounter..<(header.endCounter + 1)))
            }
            blocks[index] = Block(bytes: bytes, ends: ends)
        }
        dropRunsOfPackedBlocks()
        return moved
    }

    /// Removes the newest `k` changes.
    /// - Precondition: they are not packed (a rolled-back apply removes the
    ///   changes it appended; packing comes after an apply commits).
    mutating func removeLast(_ k: Int) {
        precondition(k <= count, "removing more changes than the log holds")
        var left = k
        while left > 0 {
            let last = blocks.count - 1
            precondition(!blocks[last].isPacked, "removing packed changes")
            let take = min(left, blocks[last].count)
            blocks[last].spans.removeLast(2 * take)
            if blocks[last].count == 0 { blocks.removeLast() }
            firstUnpackedBlock = min(firstUnpackedBlock, blocks.count)
            left -= take
        }
        if blocks.isEmpty { skipped = 0 }
        dropRunsOfPackedBlocks()
        anchors.removeLast(anchors.count - (positions + 63) / 64)
        if positions % 64 != 0 { anchors[anchors.count - 1] &= (1 << UInt64(positions % 64)) - 1 }
        if !signatures.isEmpty { signatures.removeLast(k) }
    }

    /// The bytes at consecutive positions, in order (empty before `skipped`:
    /// compacted away): the run of the first position not packed is found by
    /// bisection, the later ones by walking forward, instead of a bisection
    /// through the runs each (a log of local edits has a run per change).
    private func forEachBytes(inPositions positions: Range<Int>, _ body: (Int, ArraySlice<UInt8>) -> Void) {
        var run = -1
        for position in positions {
            let block = position / Self.packSize
            let row = position % Self.packSize
            if blocks[block].isPacked {
                body(position, blocks[block].packedBytes(at: row))
                continue
            }
            guard position >= skipped else {
                body(position, [])
                continue
            }
            if run < 0 {
                run = runIndex(of: position)
            } else {
                while run + 1 < runs.count && runs[run + 1].start <= position { run += 1 }
            }
            let base = runs[run].owner.startIndex
            body(position, runs[run].owner[(base + Int(blocks[block].spans[2 * row]))..<(base + Int(blocks[block].spans[2 * row + 1]))])
        }
    }

    /// The last run that starts at or before a position not packed.
    private func runIndex(of position: Int) -> Int {
        var low = 0
        var high = runs.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if runs[middle].start <= position { low = middle } else { high = middle }
        }
        return low
    }

    /// Lets go of the runs with no change left that is not packed.
    private mutating func dropRunsOfPackedBlocks() {
        var kept: [Run] = []
        for index in runs.indices {
            let start = max(runs[index].start, skipped)
            let end = min(index + 1 < runs.count ? runs[index + 1].start : positions, positions)
            guard start < end else { continue }
            let first = start / Self.packSize
            let last = (end - 1) / Self.packSize
            if (first...last).contains(where: { !blocks[$0].isPacked }) { kept.append(runs[index]) }
        }
        runs = kept
    }

    /// Whether two slices are the same bytes of the same storage.
    private static func isSame(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.count == b.count && a.offset(in: b) == 0
    }

    /// The bytes of the change with sequence number `seq` (in the log).
    func bytes(ofSeq seq: UInt64) -> ArraySlice<UInt8> {
        let position = Int(seq - firstSeq) + skipped
        var found: ArraySlice<UInt8> = []
        forEachBytes(inPositions: position..<(position + 1)) { found = $1 }
        return found
    }

    /// The changes from `index` (0: the one with `firstSeq`) to the end, by `replica`.
    func changes(from index: Int, replica: ReplicaID) -> [EncodedChange] {
        var changes: [EncodedChange] = []
        changes.reserveCapacity(count - index)
        forEachBytes(inPositions: (index + skipped)..<positions) { position, bytes in
            changes.append(change(at: position - skipped, bytes: bytes, replica: replica))
        }
        return changes
    }

    private func change(at index: Int, bytes: ArraySlice<UInt8>, replica: ReplicaID) -> EncodedChange {
        let position = index + skipped
        return EncodedChange(
            bytes: bytes, replica: replica, seq: firstSeq + UInt64(index), startCounter: EncodedChange.startCounter(of: bytes),
            signature: signatures.isEmpty ? nil : signatures[index],
            isAnchor: anchors[position / 64] >> UInt64(position % 64) & 1 == 1)
    }

    /// The same log without the changes before `seq`. Blocks wholly before
    /// `seq` are dropped; a packed block that `seq` falls inside is kept
    /// whole (up to `packSize - 1` dropped changes' bytes), and in a block
    /// not packed the dropped changes' slices are let go.
    func dropping(before seq: UInt64, replica: ReplicaID) -> ChangeLog {
        precondition(seq >= firstSeq && seq <= nextSeq, "dropping changes the log does not hold")
        let drop = Int(seq - firstSeq)
        var kept = self
        kept.firstSeq = seq
        if !kept.signatures.isEmpty { kept.signatures.removeFirst(drop) }
        let position = drop + skipped
        let dropBlocks = min(position / Self.packSize, blocks.count)
        kept.blocks.removeFirst(dropBlocks)
        kept.firstUnpackedBlock = max(firstUnpackedBlock - dropBlocks, 0)
        kept.anchors.removeFirst(dropBlocks * Self.packSize / 64)
        kept.skipped = kept.blocks.isEmpty ? 0 : position % Self.packSize
        // The runs of the changes kept, counted from the first kept block; a
        // run that began before the first kept change begins with it.
        let shift = dropBlocks * Self.packSize
        kept.runs = []
        for index in runs.indices {
            let end = index + 1 < runs.count ? runs[index + 1].start : positions
            guard end > position else { continue }
            kept.runs.append(Run(owner: runs[index].owner, start: max(runs[index].start, position) - shift))
        }
        kept.dropRunsOfPackedBlocks()
        return kept
    }
}

/// A change `ChangeLog.packFull` moved: its bytes before and after (equal
/// bytes, other storage) and its operations' counters. A struct, not a
/// tuple: an array of labelled tuples of slices was copied through the
/// runtime's generic witnesses, a third of the cost of packing.
struct MovedChange {
    let old: ArraySlice<UInt8>
    let new: ArraySlice<UInt8>
    let counters: Range<UInt64>
}
