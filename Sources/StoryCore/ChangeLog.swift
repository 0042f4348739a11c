/// The changes one replica knows from one author, contiguous by sequence number.
/// Changes before `firstSeq` were compacted away or arrived inside a snapshot.
///
/// Kept slim, since a project's log holds every change of its history. A
/// change is kept as its bytes alone, where they are (the batch it arrived
/// in, or the array it was made in): 32 bytes and a bit (whether this daemon
/// checked its own signature). Its header fields (counters, wall time) are
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
    /// `packSize` changes (the last block: up to that), as slices where they
    /// are, or packed: one after the other in `bytes`, change `i` ending at
    /// `ends[i]` (starting where `i - 1` ends).
    private struct Block: Sendable {
        var slices: [ArraySlice<UInt8>] = []
        var bytes: [UInt8] = []
        var ends: [UInt32] = []

        var isPacked: Bool { !ends.isEmpty }
        var count: Int { isPacked ? ends.count : slices.count }

        func bytes(at row: Int) -> ArraySlice<UInt8> {
            isPacked ? bytes[(row == 0 ? 0 : Int(ends[row - 1]))..<Int(ends[row])] : slices[row]
        }
    }

    /// Changes per block.
    static let packSize = 256

    private(set) var firstSeq: UInt64 = 1
    /// Every block but the last holds `packSize` changes; the first `skipped`
    /// of the first block are before `firstSeq` (compacted away with the
    /// blocks before them).
    private var blocks: [Block] = []
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

    var nextSeq: UInt64 { firstSeq + UInt64(count) }

    /// Changes in blocks not packed yet.
    var unpackedCount: Int { blocks.reduce(0) { $0 + ($1.isPacked ? 0 : $1.count) } - (blocks.first?.isPacked == false ? skipped : 0) }

    /// Whether `packFull` has a block to pack.
    var hasFullUnpackedBlock: Bool {
        firstUnpackedBlock < blocks.count - 1 || (firstUnpackedBlock == blocks.count - 1 && blocks[firstUnpackedBlock].count == Self.packSize)
    }

    /// Appends `change` if it is the log's next one; a log that restarted
    /// after a snapshot skips the changes the snapshot covered. Returns
    /// whether it was appended.
    @discardableResult
    mutating func append(_ change: EncodedChange) -> Bool {
        guard change.seq == nextSeq else { return false }
        let position = positions
        // By index: a copy of the last block held here would make the append copy it.
        if blocks.isEmpty || blocks[blocks.count - 1].count >= Self.packSize {
            // Grown by doubling, the slices would leave a trail of freed
            // arrays in the heap: a block after the first is allocated whole.
            var block = Block()
            if !blocks.isEmpty { block.slices.reserveCapacity(Self.packSize) }
            blocks.append(block)
        }
        blocks[blocks.count - 1].slices.append(change.bytes)
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
            let slices = blocks[index].slices
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
            blocks[last].slices.removeLast(take)
            if blocks[last].count == 0 { blocks.removeLast() }
            firstUnpackedBlock = min(firstUnpackedBlock, blocks.count)
            left -= take
        }
        if blocks.isEmpty { skipped = 0 }
        anchors.removeLast(anchors.count - (positions + 63) / 64)
        if positions % 64 != 0 { anchors[anchors.count - 1] &= (1 << UInt64(positions % 64)) - 1 }
        if !signatures.isEmpty { signatures.removeLast(k) }
    }

    /// The bytes of the change at `index`.
    private func bytes(at index: Int) -> ArraySlice<UInt8> {
        let position = index + skipped
        return blocks[position / Self.packSize].bytes(at: position % Self.packSize)
    }

    /// The bytes of the change with sequence number `seq` (in the log).
    func bytes(ofSeq seq: UInt64) -> ArraySlice<UInt8> { bytes(at: Int(seq - firstSeq)) }

    /// The change at `index` (0: the one with `firstSeq`), by `replica`.
    func change(at index: Int, replica: ReplicaID) -> EncodedChange {
        let position = index + skipped
        let bytes = bytes(at: index)
        let header = EncodedChange.headerFields(of: bytes)
        return EncodedChange(
            bytes: bytes, replica: replica, seq: firstSeq + UInt64(index), startCounter: header.startCounter,
            endCounter: header.endCounter, wallTime: header.wallTime,
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
        if !kept.blocks.isEmpty && !kept.blocks[0].isPacked {
            for row in 0..<kept.skipped { kept.blocks[0].slices[row] = [] }
        }
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
