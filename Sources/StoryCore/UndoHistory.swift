/// A register one change wrote, as undo sees it.
enum UndoTarget: Hashable, Sendable {
    case field(OpID, FieldKey)
    /// A scene, shot or layer's place, or a library node's place in the tree.
    case place(OpID)
    case deleted(OpID)
    case stroke(layer: OpID, key: OpID)
    /// One tag (by key) of the project or a shot.
    case tag(OpID, String)
}

/// The value a register had before a change.
enum UndoValue: Sendable {
    case field(FieldValue)
    /// Nil: a library node created by the change (undo moves it to the trash).
    case place(Place?)
    case deleted(Bool)
    case stroke(StrokeValue?)
    /// The tag's spelling before; nil when it was not on the object.
    case tag(String?)
}

/// One register to restore: its earlier value and the id of the change's last
/// write to it. Undo restores only registers whose current stamp is still that
/// id, so it never overwrites what somebody else did since.
struct UndoItem: Sendable {
    let target: UndoTarget
    let previous: UndoValue
    var stamp: OpID
    /// The stamp the register had before the change (nil: it did not exist).
    /// When an undo puts `previous` back, older records of the session that
    /// wrote it with this stamp are re-stamped with the undo's own write, so
    /// they still count as the session's (undo twice takes back two edits).
    let previousStamp: OpID?
}

/// The inverse of one change, in the order its registers were first written,
/// with a sentence saying what the change did ("moved shot 1-2 to scene 2").
struct UndoRecord: Sendable {
    private(set) var items: [UndoItem] = []
    private var indices: [UndoTarget: Int] = [:]
    /// What the change this record inverts did, in words, as it was made.
    var summary = ""

    /// Adds a write; the first write of a register keeps its earlier value,
    /// later ones only move the stamp.
    mutating func add(_ target: UndoTarget, previous: UndoValue, stamp: OpID, previousStamp: OpID?) {
        if let index = indices[target] {
            items[index].stamp = stamp
        } else {
            indices[target] = items.count
            items.append(UndoItem(target: target, previous: previous, stamp: stamp, previousStamp: previousStamp))
        }
    }

    /// Moves the stamps of items whose register `restamps` says was written
    /// again (from → to). Returns whether any item changed.
    mutating func restamp(_ restamps: [UndoTarget: (from: OpID, to: OpID)]) -> Bool {
        var changed = false
        for (target, stamps) in restamps {
            guard let index = indices[target], items[index].stamp == stamps.from else { continue }
            items[index].stamp = stamps.to
            changed = true
        }
        return changed
    }

    var isEmpty: Bool { items.isEmpty }
}

/// Which of a session's two stacks.
package enum UndoStack: UInt8, Sendable {
    case undo = 0
    case redo = 1
}

/// A change to the stored undo history, for a store to write: records are
/// pushed and removed one at a time (O(1) per edit), never rewritten.
package enum UndoStorageChange: Sendable, Equatable {
    /// A record on top of a stack; `position` orders a session's records.
    case push(session: String, stack: UndoStack, position: UInt64, record: [UInt8])
    case remove(session: String, stack: UndoStack, position: UInt64)
    /// A record rewritten in place (its stamps moved after an undo).
    case replace(session: String, stack: UndoStack, position: UInt64, record: [UInt8])
    /// Every record of a stack (a new edit ends the redo chain).
    case clear(session: String, stack: UndoStack)
}

/// Undo and redo stacks per control-API session.
struct UndoHistory: Sendable {
    private struct Entry: Sendable {
        let position: UInt64
        let record: UndoRecord
    }

    private struct Stacks: Sendable {
        var undo: [Entry] = []
        var redo: [Entry] = []
        var nextPosition: UInt64 = 1

        subscript(_ stack: UndoStack) -> [Entry] {
            get { stack == .undo ? undo : redo }
            set { if stack == .undo { undo = newValue } else { redo = newValue } }
        }
    }

    private var sessions: [String: Stacks] = [:]
    /// Records kept per session and direction.
    static let depth = 200

    /// Whether changes are collected for a store (off for documents nobody
    /// stores, so they never pile up).
    var isRecordingStorage = false
    /// What changed since the store last took it.
    private(set) var storageChanges: [UndoStorageChange] = []

    /// Pushes the inverse of a new edit and forgets what could be redone (a new
    /// edit always ends the redo chain, even one with nothing to undo).
    mutating func recordEdit(_ record: UndoRecord, session: String) {
        if !(sessions[session]?.redo.isEmpty ?? true) {
            sessions[session]!.redo.removeAll()
            note(.clear(session: session, stack: .redo))
        }
        push(record, on: .undo, session: session)
    }

    /// The record on top of a stack.
    func top(_ stack: UndoStack, session: String) -> UndoRecord? { sessions[session]?[stack].last?.record }

    /// Removes the record on top of a stack.
    mutating func pop(_ stack: UndoStack, session: String) {
        guard let entry = sessions[session]?[stack].popLast() else { return }
        note(.remove(session: session, stack: stack, position: entry.position))
    }

    mutating func push(_ record: UndoRecord, on stack: UndoStack, session: String) {
        guard !record.isEmpty else { return }
        var stacks = sessions[session] ?? Stacks()
        let position = stacks.nextPosition
        stacks.nextPosition += 1
        stacks[stack].append(Entry(position: position, record: record))
        if isRecordingStorage { note(.push(session: session, stack: stack, position: position, record: record.encoded())) }
        if stacks[stack].count > UndoHistory.depth {
            let oldest = stacks[stack].removeFirst()
            note(.remove(session: session, stack: stack, position: oldest.position))
        }
        sessions[session] = stacks
    }

    /// After the top record of `stack` was taken back: older records of the
    /// stack that wrote a register it restored now own the restoring write.
    mutating func restamp(_ stack: UndoStack, session: String, _ restamps: [UndoTarget: (from: OpID, to: OpID)]) {
        guard !restamps.isEmpty, var stacks = sessions[session] else { return }
        var entries = stacks[stack]
        for index in entries.indices.reversed() {
            var record = entries[index].record
            guard record.restamp(restamps) else { continue }
            entries[index] = Entry(position: entries[index].position, record: record)
            if isRecordingStorage {
                note(.replace(session: session, stack: stack, position: entries[index].position, record: record.encoded()))
            }
        }
        stacks[stack] = entries
        sessions[session] = stacks
    }

    func canUndo(session: String) -> Bool { !(sessions[session]?.undo.isEmpty ?? true) }

    func canRedo(session: String) -> Bool { !(sessions[session]?.redo.isEmpty ?? true) }

    /// Forgets a session's stacks (the session ended).
    mutating func forget(session: String) {
        guard let stacks = sessions.removeValue(forKey: session) else { return }
        if !stacks.undo.isEmpty { note(.clear(session: session, stack: .undo)) }
        if !stacks.redo.isEmpty { note(.clear(session: session, stack: .redo)) }
    }

    /// Hands over the storage changes collected so far.
    mutating func takeStorageChanges() -> [UndoStorageChange] {
        defer { storageChanges = [] }
        return storageChanges
    }

    /// Puts back stored records (oldest first), as `UndoStorageChange.push` gave them.
    /// - Throws: `CodecError` for a record that does not decode; nothing changes then.
    mutating func restore(session: String, stack: UndoStack, records: [(position: UInt64, bytes: [UInt8])]) throws(CodecError) {
        var entries: [Entry] = []
        for (position, bytes) in records.sorted(by: { $0.position < $1.position }).suffix(UndoHistory.depth) {
            entries.append(Entry(position: position, record: try UndoRecord(decoding: bytes)))
        }
        var stacks = sessions[session] ?? Stacks()
        stacks[stack] = entries
        stacks.nextPosition = max(stacks.nextPosition, (entries.last?.position ?? 0) + 1)
        sessions[session] = stacks
    }

    private mutating func note(_ change: UndoStorageChange) {
        if isRecordingStorage { storageChanges.append(change) }
    }
}

// MARK: - Encoding

private enum UndoTag: UInt8 {
    case field = 1
    case place = 2
    case deleted = 3
    case stroke = 4
    case tag = 5
}

extension UndoRecord {
    /// Format 1: summary, count, then per item a tag, its target, stamp and value.
    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(byte: 1)
        writer.write(string: summary)
        writer.write(count: items.count)
        for item in items {
            switch (item.target, item.previous) {
            case (.field(let object, let key), .field(let value)):
                writer.write(byte: UndoTag.field.rawValue)
                writer.write(undoID: object)
                writer.write(byte: key.rawValue)
                if case .id(let id) = value {
                    writer.write(byte: 1)
                    writer.write(undoID: id)
                } else {
                    writer.write(byte: 0)
                    writer.write(fieldValue: value)
                }
            case (.place(let object), .place(let place)):
                writer.write(byte: UndoTag.place.rawValue)
                writer.write(undoID: object)
                writer.write(bool: place != nil)
                if let place {
                    writer.write(undoID: place.container)
                    writer.write(undoID: place.entry)
                }
            case (.deleted(let object), .deleted(let isDeleted)):
                writer.write(byte: UndoTag.deleted.rawValue)
                writer.write(undoID: object)
                writer.write(bool: isDeleted)
            case (.stroke(let layer, let key), .stroke(let value)):
                writer.write(byte: UndoTag.stroke.rawValue)
                writer.write(undoID: layer)
                writer.write(undoID: key)
                writer.write(bool: value != nil)
                if let value {
                    writer.write(undoID: value.content)
                    writer.write(brush: value.brush)
                    writer.write(bool: value.transform != nil)
                    if let transform = value.transform { writer.write(affine: transform) }
                }
            case (.tag(let object, let key), .tag(let spelling)):
                writer.write(byte: UndoTag.tag.rawValue)
                writer.write(undoID: object)
                writer.write(string: key)
                writer.write(bool: spelling != nil)
                if let spelling { writer.write(string: spelling) }
            default:
                preconditionFailure("an undo item's target and value are always of one kind")
            }
            writer.write(undoID: item.stamp)
            writer.write(bool: item.previousStamp != nil)
            if let previousStamp = item.previousStamp { writer.write(undoID: previousStamp) }
        }
        return writer.bytes
    }

    /// Decodes `encoded()`.
    /// - Throws: `CodecError` for bytes that are not a record.
    init(decoding bytes: [UInt8]) throws(CodecError) {
        var reader = ByteReader(bytes[...])
        guard try reader.readByte() == 1 else { throw CodecError(.invalidValue, "unknown undo record format", offset: 0) }
        self.init()
        summary = try reader.readString("summary")
        let count = try reader.readCount("undo items", minimumElementSize: 3)
        for _ in 0..<count {
            let start = reader.offset
            guard let tag = UndoTag(rawValue: try reader.readByte()) else {
                throw CodecError(.invalidValue, "unknown undo item", offset: start)
            }
            let target: UndoTarget
            let previous: UndoValue
            switch tag {
            case .field:
                let object = try reader.readUndoID()
                guard let key = FieldKey(rawValue: try reader.readByte()) else {
                    throw CodecError(.invalidValue, "unknown field key", offset: reader.offset - 1)
                }
                target = .field(object, key)
                previous = .field(try reader.readBool("id flag") ? .id(try reader.readUndoID()) : try reader.readFieldValue())
            case .place:
                let object = try reader.readUndoID()
                target = .place(object)
                previous = .place(
                    try reader.readBool("place flag") ? Place(container: try reader.readUndoID(), entry: try reader.readUndoID()) : nil)
            case .deleted:
                target = .deleted(try reader.readUndoID())
                previous = .deleted(try reader.readBool("deleted flag"))
            case .stroke:
                target = .stroke(layer: try reader.readUndoID(), key: try reader.readUndoID())
                if try reader.readBool("stroke flag") {
                    let content = try reader.readUndoID()
                    let brush = try reader.readBrush()
                    let transform = try reader.readBool("transform flag") ? try reader.readAffine() : nil
                    previous = .stroke(StrokeValue(content: content, brush: brush, transform: transform))
                } else {
                    previous = .stroke(nil)
                }
            case .tag:
                target = .tag(try reader.readUndoID(), try reader.readString("tag key"))
                previous = .tag(try reader.readBool("tag flag") ? try reader.readString("tag") : nil)
            }
            let stamp = try reader.readUndoID()
            add(target, previous: previous, stamp: stamp, previousStamp: try reader.readBool("stamp flag") ? try reader.readUndoID() : nil)
        }
        guard reader.isAtEnd else { throw CodecError(.invalidValue, "bytes after an undo record", offset: reader.offset) }
    }
}

extension ByteWriter {
    /// An id with its whole replica (undo records have no replica table).
    fileprivate mutating func write(undoID id: OpID) {
        write(fixed64: id.replica.rawValue)
        write(varint: id.counter)
    }
}

extension ByteReader {
    fileprivate mutating func readUndoID() throws(CodecError) -> OpID {
        let replica = ReplicaID(try readFixed64())
        return OpID(counter: try readVarint(), replica: replica)
    }
}
