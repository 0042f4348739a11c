/// A register one change wrote, as undo sees it.
enum UndoTarget: Hashable, Sendable {
    case field(OpID, FieldKey)
    /// A scene, shot or layer's place, or a library node's place in the tree.
    case place(OpID)
    case deleted(OpID)
    case stroke(layer: OpID, key: OpID)
}

/// The value a register had before a change.
enum UndoValue: Sendable {
    case field(FieldValue)
    /// Nil: a library node created by the change (undo moves it to the trash).
    case place(Place?)
    case deleted(Bool)
    case stroke(StrokeValue?)
}

/// One register to restore: its earlier value and the id of the change's last
/// write to it. Undo restores only registers whose current stamp is still that
/// id, so it never overwrites what somebody else did since.
struct UndoItem: Sendable {
    let target: UndoTarget
    let previous: UndoValue
    var stamp: OpID
}

/// The inverse of one change, in the order its registers were first written.
struct UndoRecord: Sendable {
    private(set) var items: [UndoItem] = []
    private var indices: [UndoTarget: Int] = [:]

    /// Adds a write; the first write of a register keeps its earlier value,
    /// later ones only move the stamp.
    mutating func add(_ target: UndoTarget, previous: UndoValue, stamp: OpID) {
        if let index = indices[target] {
            items[index].stamp = stamp
        } else {
            indices[target] = items.count
            items.append(UndoItem(target: target, previous: previous, stamp: stamp))
        }
    }

    var isEmpty: Bool { items.isEmpty }
}

/// Undo and redo stacks per control-API session.
struct UndoHistory: Sendable {
    private struct Stacks: Sendable {
        var undo: [UndoRecord] = []
        var redo: [UndoRecord] = []
    }

    private var sessions: [String: Stacks] = [:]
    /// Records kept per session and direction.
    static let depth = 200

    /// Pushes the inverse of a new edit and forgets what could be redone (a new
    /// edit always ends the redo chain, even one with nothing to undo).
    mutating func recordEdit(_ record: UndoRecord, session: String) {
        sessions[session, default: Stacks()].redo.removeAll()
        guard !record.isEmpty else { return }
        sessions[session]!.undo.append(record)
        trim(session)
    }

    mutating func popUndo(session: String) -> UndoRecord? { sessions[session]?.undo.popLast() }

    mutating func popRedo(session: String) -> UndoRecord? { sessions[session]?.redo.popLast() }

    mutating func pushUndo(_ record: UndoRecord, session: String) {
        guard !record.isEmpty else { return }
        sessions[session, default: Stacks()].undo.append(record)
        trim(session)
    }

    mutating func pushRedo(_ record: UndoRecord, session: String) {
        guard !record.isEmpty else { return }
        sessions[session, default: Stacks()].redo.append(record)
        trim(session)
    }

    func canUndo(session: String) -> Bool { !(sessions[session]?.undo.isEmpty ?? true) }

    func canRedo(session: String) -> Bool { !(sessions[session]?.redo.isEmpty ?? true) }

    /// Forgets a session's stacks (the session ended).
    mutating func forget(session: String) { sessions[session] = nil }

    private mutating func trim(_ session: String) {
        if sessions[session]!.undo.count > UndoHistory.depth { sessions[session]!.undo.removeFirst() }
        if sessions[session]!.redo.count > UndoHistory.depth { sessions[session]!.redo.removeFirst() }
    }
}
