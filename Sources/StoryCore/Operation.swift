/// One operation of a change. Its id is the change's start counter plus its
/// index, with the change's replica; objects and position entries an
/// operation creates take that id.
package enum Operation: Hashable, Sendable {
    /// Sets a field (last writer wins). `object` is `.root` for the project's
    /// own fields.
    case setField(object: OpID, key: FieldKey, value: FieldValue)
    /// Creates a scene, shot, layer or library folder whose id is this
    /// operation's, placed at a new position entry (same id) in `container`.
    case insert(kind: ObjectKind, container: OpID, anchor: Anchor)
    /// Creates a library entry for a project document.
    case insertProjectEntry(container: OpID, anchor: Anchor, document: DocumentID)
    /// Moves an object into `container` (another scene, shot or folder) at a
    /// new position entry (this operation's id): writes the object's container
    /// register (last writer wins) — the list move of Kleppmann's "Moving
    /// Elements in List CRDTs", or a tree move in the library.
    case move(object: OpID, container: OpID, anchor: Anchor)
    /// Repositions an object within `container`, the one its author saw it in:
    /// a new position entry only. A reorder never takes an object out of a
    /// container it was concurrently moved away from.
    case reorder(object: OpID, container: OpID, anchor: Anchor)
    /// Deletes or restores an object (last writer wins; nothing is destroyed).
    case setDeleted(object: OpID, isDeleted: Bool)
    /// Adds a stroke to a layer; its key and content id are this operation's id.
    case addStroke(layer: OpID, brush: Brush, points: PointsBlob)
    /// Stores a value under a stroke key (lasso move, recolour, restore, copy).
    case putStroke(layer: OpID, key: OpID, value: StrokeValue)
    /// Erases the stroke under a key (a tombstone; last writer wins).
    case eraseStroke(layer: OpID, key: OpID)
    /// Removes library nodes from the trash for good.
    case purge(nodes: [OpID])
    /// Founds the document: its author becomes the owner. Valid only as the
    /// first operation of the document's first change, and only if the
    /// document id derives from the author's identity and this salt
    /// (`Authorship.documentID`), so nobody can claim another's document.
    case genesis(salt: UInt128)
    /// Gives an identity a role in the document (`Role.none` takes its rights
    /// away). Checked against the access list at the change's causal point.
    case setAccess(peer: PeerID, role: Role)
    /// Puts a tag on the project (`.root`) or a shot: a new dot (this
    /// operation's id) of the observed-remove set of that tag (docs/crdt.md,
    /// "Tags"). `tag` is normalized (`Tag.normalized`).
    case addTag(object: OpID, tag: String)
    /// Takes a tag off the project or a shot: removes the dots of the tag its
    /// author had seen (`dots`, at least one). An add it had not seen stays.
    case removeTag(object: OpID, tag: String, dots: [OpID])
    /// Names a version of the project (nil: takes the name away). Last
    /// writer wins per name. Projects only.
    case nameVersion(name: String, version: VersionVector?)
}

/// The operation tags of the change encoding (docs/crdt.md, "Changes").
enum OperationTag: UInt8 {
    case setField = 1
    case insert, move, setDeleted, addStroke, putStroke, eraseStroke, insertProjectEntry, purge, reorder
    case genesis, setAccess
    case addTag, removeTag, nameVersion
}

extension Operation {
    /// Whether the operation changes the access list rather than the content.
    var isAccessOperation: Bool {
        switch self {
        case .genesis, .setAccess: true
        default: false
        }
    }
}

/// A change's operations, in order. Most changes hold one (a stroke drawn, a
/// field set), so the first is kept inline and only the others in an array:
/// a change read from a peer, or made by an edit of one operation, allocates
/// no array for its operations (one per change, with its release, was 6 % of
/// a sync's instructions).
package struct Operations: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The first operation; nil only when there is none.
    private var head: Operation?
    /// The operations after the first; empty when `head` is nil.
    private var tail: [Operation]
    /// Stored, so that counting never reads `head` (testing an optional
    /// operation for nil copied it).
    package private(set) var count: Int

    /// No operations.
    package init() {
        head = nil
        tail = []
        count = 0
    }

    /// The operations of a collection, in its order.
    package init(_ operations: some Collection<Operation>) {
        head = operations.first
        tail = Array(operations.dropFirst())
        count = head == nil ? 0 : tail.count + 1
    }

    /// The operations listed, in order.
    package init(arrayLiteral operations: Operation...) {
        self.init(operations)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package var isEmpty: Bool { count == 0 }
    package var first: Operation? { head }

    package subscript(position: Int) -> Operation {
        precondition(position >= 0 && position < count, "operation index \(position) out of range")
        return position == 0 ? head! : tail[position - 1]
    }

    /// Adds an operation at the end.
    package mutating func append(_ operation: consuming Operation) {
        if count == 0 {
            head = consume operation
        } else {
            tail.append(operation)
        }
        count += 1
    }

    /// Makes room for `count` operations in all (the inline one and the array's).
    package mutating func reserveCapacity(_ count: Int) {
        if count > 1 { tail.reserveCapacity(count - 1) }
    }

    /// Calls `body` with each operation and its index, in order, read where
    /// it is: the inline one unwrapped without a copy (a stored count above
    /// zero means it is there; checked in debug builds), the array's through
    /// its buffer. (Unwrapped by `guard let`, the first was copied and
    /// destroyed: 3.6 % of a sync's instructions.)
    func forEachInPlace<E: Error>(_ body: (Int, Operation) throws(E) -> Void) throws(E) {
        guard count > 0 else { return }
        try body(0, head.unsafelyUnwrapped)
        try tail.withUnsafeBufferPointer { (tail) throws(E) in
            for index in tail.indices { try body(index + 1, tail[index]) }
        }
    }
}
