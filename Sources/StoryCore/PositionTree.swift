/// The position entries of one ordered list (the scenes of a project, the
/// shots of a scene, the layers of a shot, the children of a library folder),
/// as a Fugue tree.
///
/// Entries are never removed: an entry is shown only while the object it was
/// made for still has it as its place (a later move leaves the old entry as a
/// tombstone). The list order is the in-order traversal: left children (by
/// id), the entry, right children (by id). Traversal is iterative, so a deep
/// chain of entries (a long run typed forwards) cannot exhaust the stack.
struct PositionTree: Sendable {
    struct Entry: Sendable {
        let parent: OpID?
        let side: Anchor.Side
        /// The object this entry was made for.
        let object: OpID
        var left: [OpID] = []
        var right: [OpID] = []
    }

    private(set) var entries: [OpID: Entry] = [:]
    private var rootChildren: [OpID] = []
    /// For each object, its newest entry in this list: where it is shown if the
    /// object's container is this list. Every move or reorder into the list makes
    /// a newer entry, so the newest one is the last-writer-wins position.
    private(set) var latest: [OpID: OpID] = [:]
    /// Every entry in list order (tombstones included).
    private(set) var order: [OpID] = []

    var count: Int { entries.count }

    func contains(_ entry: OpID) -> Bool { entries[entry] != nil }

    func object(at entry: OpID) -> OpID? { entries[entry]?.object }

    /// Whether `anchor` names the root or an entry of this tree.
    func isValid(_ anchor: Anchor) -> Bool {
        guard let parent = anchor.parent else { return anchor.side == .right }
        return entries[parent] != nil
    }

    /// Adds an entry and puts it in the order where the traversal would: a
    /// new entry is a leaf, so its place follows from its parent and siblings.
    /// Neighbours are looked up from the end of the order and the entry is
    /// inserted there, so appending (the common case) is O(1); O(n) at worst.
    /// - Precondition: the id is new and the anchor valid.
    mutating func insert(_ id: OpID, object: OpID, anchor: Anchor) {
        insertWithoutOrdering(id, object: object, anchor: anchor)
        order.insert(id, at: orderIndex(ofLeaf: id, parent: anchor.parent, side: anchor.side))
    }

    /// Where the in-order traversal puts a leaf entry just added.
    private func orderIndex(ofLeaf id: OpID, parent: OpID?, side: Anchor.Side) -> Int {
        func index(of entry: OpID) -> Int { order.lastIndex(of: entry)! }
        /// The last entry of a subtree in list order: follow the last right child down.
        func lastInSubtree(_ root: OpID) -> OpID {
            var current = root
            while let next = entries[current]!.right.last { current = next }
            return current
        }
        /// The first entry of a subtree in list order: follow the first left child down.
        func firstInSubtree(_ root: OpID) -> OpID {
            var current = root
            while let next = entries[current]!.left.first { current = next }
            return current
        }
        let siblings: [OpID]
        if let parent {
            siblings = side == .left ? entries[parent]!.left : entries[parent]!.right
        } else {
            siblings = rootChildren
        }
        let position = siblings.firstIndex(of: id)!
        switch (parent, side) {
        case (nil, _):
            // The root's children come one after the other, each with its subtree.
            return position == 0 ? 0 : index(of: lastInSubtree(siblings[position - 1])) + 1
        case (let parent?, .right):
            // Right children follow the parent, each after the subtree of the one before.
            return position == 0 ? index(of: parent) + 1 : index(of: lastInSubtree(siblings[position - 1])) + 1
        case (let parent?, .left):
            // Left children precede the parent, each before the subtree of the one after.
            return position == siblings.count - 1 ? index(of: parent) : index(of: firstInSubtree(siblings[position + 1]))
        }
    }

    /// Adds an entry without refreshing the order; call `rebuildOrder` after a batch.
    mutating func insertWithoutOrdering(_ id: OpID, object: OpID, anchor: Anchor) {
        precondition(entries[id] == nil && isValid(anchor), "position entry \(id) is a duplicate or unanchored")
        entries[id] = Entry(parent: anchor.parent, side: anchor.side, object: object)
        if latest[object].map({ id > $0 }) ?? true { latest[object] = id }
        if let parent = anchor.parent {
            switch anchor.side {
            case .left: PositionTree.insertSorted(id, into: &entries[parent]!.left)
            case .right: PositionTree.insertSorted(id, into: &entries[parent]!.right)
            }
        } else {
            PositionTree.insertSorted(id, into: &rootChildren)
        }
    }

    /// Removes an entry that has no children (rolling back a failed change).
    mutating func remove(_ id: OpID) {
        guard let entry = entries[id] else { return }
        precondition(entry.left.isEmpty && entry.right.isEmpty, "only a leaf entry can be rolled back")
        entries[id] = nil
        if latest[entry.object] == id {
            latest[entry.object] = entries.filter { $0.value.object == entry.object }.keys.max()
        }
        if let parent = entry.parent {
            switch entry.side {
            case .left: entries[parent]!.left.removeAll { $0 == id }
            case .right: entries[parent]!.right.removeAll { $0 == id }
            }
        } else {
            rootChildren.removeAll { $0 == id }
        }
        rebuildOrder()
    }

    /// Recomputes the list order from the tree. O(n).
    mutating func rebuildOrder() {
        enum Step {
            case visit(OpID)
            case emit(OpID)
        }
        var result: [OpID] = []
        result.reserveCapacity(entries.count)
        var stack: [Step] = rootChildren.reversed().map { .visit($0) }
        while let step = stack.popLast() {
            switch step {
            case .emit(let id):
                result.append(id)
            case .visit(let id):
                let entry = entries[id]!
                for child in entry.right.reversed() { stack.append(.visit(child)) }
                stack.append(.emit(id))
                for child in entry.left.reversed() { stack.append(.visit(child)) }
            }
        }
        order = result
    }

    /// The anchor for a new entry placed right after the entry `left` in list
    /// order (nil: at the very start), following Fugue's rule.
    func anchor(after left: OpID?) -> Anchor {
        let leftIndex = left.flatMap { id in order.firstIndex(of: id) } ?? -1
        let right: OpID? = leftIndex + 1 < order.count ? order[leftIndex + 1] : nil
        guard let left else {
            // At the start: a right child of the root if it has none, else a left
            // child of the first entry (which, being first, has no left children).
            if let right { return Anchor(parent: right, side: .left) }
            return .root
        }
        if entries[left]!.right.isEmpty { return Anchor(parent: left, side: .right) }
        // `left` has right children, so the next entry is the leftmost of its right
        // subtree and has no left children of its own.
        return Anchor(parent: right!, side: .left)
    }

    private static func insertSorted(_ id: OpID, into list: inout [OpID]) {
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < id { low = middle + 1 } else { high = middle }
        }
        list.insert(id, at: low)
    }
}
