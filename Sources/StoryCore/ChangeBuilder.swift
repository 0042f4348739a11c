/// The common part of `ProjectEditor` and `LibraryEditor`: operations are
/// applied to the state as they are made, so later calls in the same edit see
/// earlier ones, and the journal lets a failed edit roll everything back.
protocol ChangeBuilder {
    associatedtype State: ReplicatedState

    init(state: State, replica: ReplicaID, startCounter: UInt64, time: Int64)

    var state: State { get set }
    var core: EditCore<State.JournalEntry> { get set }

    /// A shared empty state, swapped in while an editor holds the real one.
    static var placeholder: State { get }

    /// The inverse of an edit's journal, read against the state after the edit.
    static func undoRecord(_ journal: [(OpID, State.JournalEntry)], in state: State) -> UndoRecord

    /// The stamp a register has now (nil: it does not exist).
    static func stamp(of target: UndoTarget, in state: State) -> OpID?

    /// Emits the operations that undo a record, skipping registers that
    /// somebody else has written since.
    mutating func invert(_ record: UndoRecord) throws(DocumentError)
}

/// What every editor records while an edit is open.
struct EditCore<JournalEntry: Sendable>: Sendable {
    let replica: ReplicaID
    let startCounter: UInt64
    let time: Int64
    var operations = Operations()
    var journal: [JournalEntry] = []
    /// The id of the operation each journal entry came from.
    var journalOwners: [OpID] = []

    init(replica: ReplicaID, startCounter: UInt64, time: Int64) {
        self.replica = replica
        self.startCounter = startCounter
        self.time = time
    }

    /// The id the next operation will get.
    var nextID: OpID { OpID(counter: startCounter + UInt64(operations.count), replica: replica) }
}

extension ChangeBuilder {
    /// Applies an operation to the state and adds it to the change.
    /// - Throws: `DocumentError` (nothing of this operation is applied).
    @discardableResult
    mutating func perform(_ op: Operation) throws(DocumentError) -> OpID {
        let id = core.nextID
        // Take the journal out of `core` so `state` and it can be mutated together.
        var journal = core.journal
        core.journal = []
        defer { core.journal = journal }
        let before = journal.count
        try state.apply(op, id: id, time: core.time, journal: &journal)
        core.operations.append(op)
        core.journalOwners += repeatElement(id, count: journal.count - before)
        return id
    }
}

/// What an edit produced.
package struct EditResult<Value> {
    /// What the edit's closure returned.
    package var value: Value
    /// The change made, or nil if the edit did nothing.
    package var change: EncodedChange?

    /// Creates a result.
    @inlinable
    package init(value: Value, change: EncodedChange?) {
        self.value = value
        self.change = change
    }
}

extension EditResult: Sendable where Value: Sendable {}

extension ReplicaCore {
    /// Runs an edit: hands the state to an editor (so mutations stay in place),
    /// then either commits the operations as one change or rolls them back.
    /// Returns the change (nil if nothing changed) and, when `keepingJournal`,
    /// the journal with the id of the operation behind each entry (for undo).
    mutating func edit<Builder: ChangeBuilder>(
        _ state: inout Builder.State, placeholder: Builder.State, builder: Builder.Type, time: Int64,
        keepingJournal: Bool, _ body: (inout Builder) throws -> Void, beforeCommit: (EncodedChange) throws -> Void
    ) throws -> (EncodedChange?, [(OpID, Builder.State.JournalEntry)]) {
        try checkLocalWrite()
        let header = nextLocalChangeHeader()
        let signer = try localSigner(seq: header.seq)
        state.begin(WriteContext(dot: ChangeDot(replica: replica, seq: header.seq), past: nil))
        // The editor takes the state by a swap (a move: no field is retained
        // or released), so the state is held once and mutates in place.
        var editor = Builder(state: placeholder, replica: replica, startCounter: header.startCounter, time: time)
        swap(&state, &editor.state)
        do {
            try body(&editor)
            guard !editor.core.operations.isEmpty else {
                swap(&state, &editor.state)
                return (nil, [])
            }
            guard editor.core.operations.count <= Change.maximumOperations else {
                throw DocumentError(.invalidValue, "an edit of \(editor.core.operations.count) operations (at most \(Change.maximumOperations))")
            }
            let change = Change(
                replica: replica, seq: header.seq, startCounter: header.startCounter, wallTime: time,
                dependencies: header.dependencies, operations: editor.core.operations,
                declaration: declaration(forSeq: header.seq))
            let (encoded, points) = change.encodedSharingPoints(sign: signer?.0)
            try beforeCommit(encoded.markedAnchor(signer != nil))
            // In the editor, which holds the state (once).
            editor.state.adoptPoints(points.map { (change.opID(at: $0.index), $0.bytes) })
            // Back with its only holder, so packing moves blobs in place.
            swap(&state, &editor.state)
            commitLocal(change, encoded: encoded, hash: signer?.1())
            packOwnLog(&state)
            guard keepingJournal else { return (encoded.markedAnchor(signer != nil), []) }
            var journal: [(OpID, Builder.State.JournalEntry)] = []
            journal.reserveCapacity(editor.core.journal.count)
            for index in editor.core.journal.indices {
                journal.append((editor.core.journalOwners[index], editor.core.journal[index]))
            }
            return (encoded.markedAnchor(signer != nil), journal)
        } catch {
            editor.state.rollback(editor.core.journal)
            swap(&state, &editor.state)
            throw error
        }
    }
}
