/// A value written into a text field: by which operation (its replica is
/// the author's machine) and when.
package struct WrittenValue: Hashable, Sendable {
    package var value: FieldValue
    /// The operation that wrote it; its replica made the change.
    package var operation: OpID
    /// Wall time of the change that wrote it (milliseconds since 1970; nil: unknown).
    package var time: Int64?

    /// The replica that wrote it.
    package var replica: ReplicaID { operation.replica }
}

/// A text field whose kept value overwrote values written concurrently
/// (without their authors having seen each other's): nothing is lost, the
/// overwritten ones stay here until a write that has seen them all.
package struct FieldConflict: Hashable, Sendable {
    /// The scene, shot, layer or project (`.root`) the field belongs to.
    package var object: OpID
    package var key: FieldKey
    /// The value the field shows (the last writer's).
    package var kept: WrittenValue
    /// The values it overwrote, latest first (`--value 1` is the first).
    package var overwritten: [WrittenValue]
}

extension ProjectDocument {
    /// Values newly overwritten by concurrent writes so far in this process:
    /// a change counter (a store compares it around a change to report new conflicts).
    package var overwrites: Int { state.overwrites }

    /// How many text fields have overwritten values still open (what
    /// `fieldConflicts` lists, counted without listing). O(1).
    package var openConflicts: Int { state.openConflicts }

    /// Every field with overwritten values still open, deleted objects'
    /// included, sorted by object then field. O(fields written).
    package var fieldConflicts: [FieldConflict] {
        state.allFieldWrites.filter { !$0.value.overwritten.isEmpty }.keys.sorted().compactMap(state.fieldConflict)
    }

    /// The field's open overwritten values, or nil if it has none.
    package func fieldConflict(_ key: FieldKey, of object: OpID) -> FieldConflict? {
        state.fieldConflict(FieldSlot(object: object, key: key))
    }
}

extension ProjectEditor {
    /// The field's open overwritten values as the edit sees them, or nil if
    /// it has none. Setting the field in this edit resolves them all.
    package func fieldConflict(_ key: FieldKey, of object: OpID) -> FieldConflict? {
        state.fieldConflict(FieldSlot(object: object, key: key))
    }
}

extension ProjectState {
    func fieldConflict(_ slot: FieldSlot) -> FieldConflict? {
        guard let record = fieldWrites[slot], !record.overwritten.isEmpty, let register = object(slot.object)?.fields[slot.key] else {
            return nil
        }
        return FieldConflict(
            object: slot.object, key: slot.key,
            kept: WrittenValue(value: register.value, operation: register.stamp, time: record.keptBy == nil ? nil : record.keptAt),
            overwritten: record.overwritten.map { WrittenValue(value: $0.value, operation: $0.stamp, time: $0.time) })
    }
}

// MARK: - Snapshot section

extension ByteWriter {
    /// The text fields' records (snapshot format 3, ordered latest first
    /// since format 4): who wrote each kept value, and the values it
    /// overwrote concurrently.
    mutating func write(fieldWrites: [FieldSlot: FieldWrites], table: ReplicaTable) {
        let slots = fieldWrites.sorted { $0.key < $1.key }
        write(count: slots.count)
        for (slot, record) in slots {
            write(slot.object, table: table)
            write(byte: slot.key.rawValue)
            write(dot: record.keptBy, table: table)
            write(signed: record.keptAt)
            write(count: record.overwritten.count)
            for overwritten in record.overwritten {
                write(fieldValue: overwritten.value)
                write(overwritten.stamp, table: table)
                write(dot: overwritten.dot, table: table)
                write(signed: overwritten.time)
            }
        }
    }

    private mutating func write(dot: ChangeDot?, table: ReplicaTable) {
        guard let dot else { return write(byte: 0) }
        write(byte: 1)
        write(count: table.index(of: dot.replica))
        write(varint: dot.seq)
    }
}

extension ByteReader {
    /// Reads what `write(fieldWrites:)` wrote.
    /// `latestFirst`: the values are ordered latest first (format 4), not by stamp (format 3).
    mutating func readFieldWrites(replicas: [ReplicaID], latestFirst: Bool) throws(CodecError) -> [FieldSlot: FieldWrites] {
        var result: [FieldSlot: FieldWrites] = [:]
        var previous: FieldSlot?
        for _ in 0..<(try readCount("field records", minimumElementSize: 5)) {
            let object = try readOpID(replicas: replicas)
            guard let key = FieldKey(rawValue: try readByte()), FieldWrites.isTracked(key) else {
                throw CodecError(.invalidValue, "a field record names a field that keeps no overwritten values")
            }
            let slot = FieldSlot(object: object, key: key)
            guard previous.map({ slot > $0 }) ?? true else { throw CodecError(.invalidValue, "field records out of order") }
            previous = slot
            var record = FieldWrites(keptBy: try readDot(replicas: replicas), keptAt: try readSigned())
            let count = try readCount("overwritten values", minimumElementSize: 4)
            guard count <= FieldWrites.maximumOverwritten else {
                throw CodecError(.invalidValue, "\(count) overwritten values of one field (at most \(FieldWrites.maximumOverwritten))")
            }
            for _ in 0..<count {
                let value = try readFieldValue(tag: try readByte())
                guard value == .null || value.string != nil else { throw CodecError(.invalidValue, "an overwritten value is not text") }
                let write = FieldWrite(
                    value: value, stamp: try readOpID(replicas: replicas), dot: try readDot(replicas: replicas), time: try readSigned())
                guard record.overwritten.last.map({ latestFirst ? $0.isLater(than: write) : write.stamp < $0.stamp }) ?? true else {
                    throw CodecError(.invalidValue, "overwritten values out of order")
                }
                record.overwritten.append(write)
            }
            result[slot] = record
        }
        return result
    }

    private mutating func readDot(replicas: [ReplicaID]) throws(CodecError) -> ChangeDot? {
        guard try readBool("change flag") else { return nil }
        let replica = try readReplica(in: replicas)
        let seq = try readVarint()
        guard seq >= 1 else { throw CodecError(.invalidValue, "a change sequence number is 0") }
        return ChangeDot(replica: replica, seq: seq)
    }
}
