/// A batch of changes on the wire or in a file: a count, then each change
/// length-prefixed, each followed by its signature when it carries one.
package enum ChangeBatch {
    /// Encodes changes in the given order, with the signatures a receiver
    /// checks: of each replica's last change in the batch, and of every change
    /// `Authorship.isCheckedInRun` names (a receiver checks those too). The
    /// others are covered by the chain and stay behind.
    package static func encode(_ changes: [EncodedChange]) -> [UInt8] {
        var last: [ReplicaID: Int] = [:]
        for index in changes.indices { last[changes[index].replica] = index }
        var writer = ByteWriter(capacity: changes.reduce(8) { $0 + $1.bytes.count + 4 } + last.count * 65)
        writer.write(count: changes.count)
        // Read in place through the buffer: a change taken out of the array
        // (`for change in changes`) was copied, a reference count each.
        changes.withUnsafeBufferPointer { changes in
            for index in changes.indices {
                writer.write(lengthPrefixed: changes[index].bytes)
                if let signature = changes[index].signature,
                    last[changes[index].replica] == index
                        || Authorship.isCheckedInRun(seq: changes[index].seq, bytes: changes[index].bytes.count)
                {
                    writer.write(byte: 1)
                    writer.write(raw: signature)
                } else {
                    writer.write(byte: 0)
                }
            }
        }
        return writer.bytes
    }

    /// Cuts changes (in causal order) into batches of about `targetBytes`
    /// each, such that every replica's last change in a batch is one whose own
    /// signature this daemon checked or made (an anchor): the receiver checks
    /// exactly that signature, and an author who signed some changes of a run
    /// badly must not make a good relay look bad. A run is extended to the
    /// next anchor (fewer than `Authorship.anchorInterval` changes of under
    /// `Authorship.anchorBytes` each away), or cut
    /// back before an unchecked tail that has no anchor yet (sent later).
    package static func split(_ changes: [EncodedChange], targetBytes: Int) -> [[EncodedChange]] {
        var byReplica: [ReplicaID: [Int]] = [:]
        for index in changes.indices { byReplica[changes[index].replica, default: []].append(index) }
        var positionInReplica = [Int](repeating: 0, count: changes.count)
        for list in byReplica.values { for (position, index) in list.enumerated() { positionInReplica[index] = position } }
        var taken = [Bool](repeating: false, count: changes.count)
        var batches: [[EncodedChange]] = []
        var cursor = 0
        func isAnchor(_ change: EncodedChange) -> Bool { change.isAnchor }
        while cursor < changes.count {
            var batch: [Int] = []
            var bytes = 0
            while cursor < changes.count && bytes < targetBytes {
                if !taken[cursor] {
                    batch.append(cursor)
                    bytes += changes[cursor].bytes.count
                }
                cursor += 1
            }
            guard !batch.isEmpty else { break }
            var lastOfReplica: [ReplicaID: Int] = [:]
            for index in batch { lastOfReplica[changes[index].replica] = index }
            var dropped: Set<Int> = []
            for (replica, last) in lastOfReplica where !isAnchor(changes[last]) {
                let list = byReplica[replica]!
                if let anchor = list[(positionInReplica[last] + 1)...].first(where: { isAnchor(changes[$0]) }) {
                    for index in list[(positionInReplica[last] + 1)...positionInReplica[anchor]] where !taken[index] { batch.append(index) }
                } else {
                    // No anchor yet after it: hold back this replica's unchecked tail.
                    let inBatch = batch.filter { changes[$0].replica == replica }
                    let keep = inBatch.lastIndex { isAnchor(changes[$0]) }.map { inBatch[...$0] } ?? []
                    dropped.formUnion(inBatch.filter { !keep.contains($0) })
                    for index in list[positionInReplica[last]...] { taken[index] = true }
                }
            }
            batch = batch.filter { !dropped.contains($0) }.sorted()
            for index in batch { taken[index] = true }
            if !batch.isEmpty { batches.append(batch.map { changes[$0] }) }
        }
        return batches
    }

    /// Decodes and validates every change of a batch (all or nothing).
    /// - Throws: `CodecError` naming the first bad change.
    package static func decode(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> [(EncodedChange, Change)] {
        try decode(bytes) { (result, slice, signature) throws(CodecError) in
            result.append(try EncodedChange.decoding(slice, signature: signature))
        }
    }

    /// Decodes and validates every change of a batch (all or nothing) into
    /// the records a document holds while it applies them: each change is
    /// read where it is kept, not copied there (see `Change.read`).
    /// - Throws: `CodecError` naming the first bad change.
    package static func decodeReceived(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> ReceivedChanges {
        var received = ReceivedChanges(
            arrivals: try decode(bytes) { (result, slice, signature) throws(CodecError) in
                result.append(.placeholder)
                try result[result.count - 1].read(slice, signature: signature)
            })
        received.batch = bytes
        return received
    }

    /// Decodes every change of a batch: `append` adds the change whose
    /// bytes and signature it is given to the result.
    private static func decode<Element>(
        _ bytes: ArraySlice<UInt8>, appending append: (inout [Element], consuming ArraySlice<UInt8>, [UInt8]?) throws(CodecError) -> Void
    ) throws(CodecError) -> [Element] {
        var reader = ByteReader(bytes)
        let count = try reader.readCount("changes", minimumElementSize: 3)
        var result: [Element] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let slice = try reader.readLengthPrefixed("change")
            let signature = try reader.readBool("signature flag") ? Array(try reader.readSlice(count: Authorship.signatureBytes)) : nil
            do {
                try append(&result, slice, signature)
            } catch {
                throw CodecError(error.code, "change \(index + 1) of \(count): \(error.message)", offset: error.offset)
            }
        }
        try reader.expectEnd("the batch")
        return result
    }
}
