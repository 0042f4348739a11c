/// A folder or project entry of the library tree.
struct LibraryNode: Sendable {
    let kind: ObjectKind
    var fields: [FieldKey: Register<FieldValue>] = [:]
    /// The project document a project entry names.
    let document: DocumentID?
    let createdAt: Int64
    var updatedAt: Int64

    func field(_ key: FieldKey) -> FieldValue { fields[key]?.value ?? .null }
}

/// One tree move in the library's move log (Kleppmann et al., "A highly-available
/// move operation for replicated trees", 2021). The log is kept sorted by id;
/// `previous` and `isApplied` are what doing the move found and did, so that a
/// later-arriving earlier move can undo it and redo it on top.
struct MoveRecord: Hashable, Sendable {
    let id: OpID
    let node: OpID
    /// The new parent (container) and the position entry made for it (id = `id`).
    let place: Place
    var previous: Register<Place>? = nil
    var isApplied = false
}

enum LibraryJournalEntry: Sendable {
    case created(node: OpID)
    case entry(container: OpID, entry: OpID)
    case move(OpID)
    /// Where a move or reorder took the node from (for undo only).
    case moved(node: OpID, from: Place?)
    case field(node: OpID, key: FieldKey, previous: Register<FieldValue>?)
    case updated(node: OpID, previous: Int64)
    case purged([OpID])
}

/// The replicated library: a folder tree of projects with the root, the trash
/// and the "Incoming" folder as well-known nodes.
///
/// Moves are applied in id order; one that would put a node inside itself is
/// skipped. A move that arrives late is slotted in by undoing the later moves,
/// doing it, and redoing them, so every replica ends with the same tree whatever
/// the delivery order. Concurrent moves never create a cycle, lose a node or
/// duplicate one. Delete is a move to the trash; purge removes nodes for good
/// (their children that were moved in concurrently show up in the trash).
struct LibraryState: Sendable {
    private(set) var nodes: [OpID: LibraryNode]
    private(set) var containers: [OpID: PositionTree] = [:]
    /// Sorted by id.
    private(set) var moves: [MoveRecord] = []
    /// Where each placed node is now, stamped with the move that put it there.
    private(set) var places: [OpID: Register<Place>] = [:]
    private(set) var purged: Set<OpID> = []

    static let wellKnown: Set<OpID> = [.root, .trash, .incoming]

    init() {
        nodes = [:]
        for id in LibraryState.wellKnown {
            nodes[id] = LibraryNode(kind: .folder, document: nil, createdAt: 0, updatedAt: 0)
        }
        containers[.root, default: PositionTree()].insert(.incoming, object: .incoming, anchor: .root)
        places[.incoming] = Register(value: Place(container: .root, entry: .incoming), stamp: .incoming)
    }

    // MARK: - Applying operations

    mutating func apply(
        _ op: Operation, id: OpID, time: Int64, journal: inout [LibraryJournalEntry]
    ) throws(DocumentError) {
        switch op {
        case .insert(let kind, let container, let anchor):
            guard kind == .folder else { throw DocumentError(.invalidOperation, "a library holds no \(kind)") }
            try create(id, kind: kind, document: nil, container: container, anchor: anchor, time: time, journal: &journal)
        case .insertProjectEntry(let container, let anchor, let document):
            try create(id, kind: .projectEntry, document: document, container: container, anchor: anchor, time: time, journal: &journal)
        case .move(let node, let container, let anchor), .reorder(let node, let container, let anchor):
            try checkMovable(node)
            try checkFolder(container, anchor: anchor, entry: id)
            journal.append(.moved(node: node, from: position(of: node)))
            containers[container, default: PositionTree()].insert(id, object: node, anchor: anchor)
            journal.append(.entry(container: container, entry: id))
            if case .move = op {
                insertMove(MoveRecord(id: id, node: node, place: Place(container: container, entry: id)))
                journal.append(.move(id))
            }
            touch(node, time: time, journal: &journal)
        case .setField(let node, let key, let value):
            // The root of a shared folder (a library document) carries one field:
            // when it was deleted for everyone (null: it is not).
            if node == .root && key == .deletedAt {
                guard nodes[node] != nil, value == .null || FieldKey.deletedAt.accepts(value, on: .project) else {
                    throw DocumentError(.invalidValue, "a library's deletedAt is a time or null")
                }
            } else {
                try checkMovable(node)
            }
            guard node == .root || key.accepts(value, on: nodes[node]!.kind) else {
                throw DocumentError(.invalidValue, "library \(nodes[node]!.kind) has no \(key) field of that type")
            }
            let previous = nodes[node]!.fields[key]
            if previous.map({ id > $0.stamp }) ?? true {
                journal.append(.field(node: node, key: key, previous: previous))
                nodes[node]!.fields[key] = Register(value: value, stamp: id)
            }
            touch(node, time: time, journal: &journal)
        case .purge(let list):
            for node in list { try checkMovable(node) }
            let added = Set(list).subtracting(purged)
            purged.formUnion(added)
            journal.append(.purged(Array(added)))
        case .setDeleted, .addStroke, .putStroke, .eraseStroke, .addTag, .removeTag, .nameVersion:
            throw DocumentError(.invalidOperation, "project operations do not apply to a library")
        case .genesis, .setAccess:
            throw DocumentError(.invalidOperation, "access operations apply to the access list, not the content")
        }
    }

    private mutating func create(
        _ id: OpID, kind: ObjectKind, document: DocumentID?, container: OpID, anchor: Anchor, time: Int64,
        journal: inout [LibraryJournalEntry]
    ) throws(DocumentError) {
        guard nodes[id] == nil else { throw DocumentError(.invalidOperation, "node \(id) already exists") }
        try checkFolder(container, anchor: anchor, entry: id)
        nodes[id] = LibraryNode(kind: kind, document: document, createdAt: time, updatedAt: time)
        journal.append(.created(node: id))
        containers[container, default: PositionTree()].insert(id, object: id, anchor: anchor)
        journal.append(.entry(container: container, entry: id))
        insertMove(MoveRecord(id: id, node: id, place: Place(container: container, entry: id)))
        journal.append(.move(id))
    }

    private mutating func touch(_ node: OpID, time: Int64, journal: inout [LibraryJournalEntry]) {
        let previous = nodes[node]!.updatedAt
        if time > previous {
            journal.append(.updated(node: node, previous: previous))
            nodes[node]!.updatedAt = time
        }
    }

    private func checkMovable(_ node: OpID) throws(DocumentError) {
        guard nodes[node] != nil else { throw DocumentError(.notFound, "no folder or project \(node) in the library") }
        guard !LibraryState.wellKnown.contains(node) else {
            throw DocumentError(.invalidOperation, "the root, trash and Incoming folders cannot be changed")
        }
    }

    private func checkFolder(_ container: OpID, anchor: Anchor, entry: OpID) throws(DocumentError) {
        guard let folder = nodes[container] else { throw DocumentError(.notFound, "no folder \(container)") }
        guard folder.kind == .folder else { throw DocumentError(.wrongKind, "\(container) is not a folder") }
        guard containers[container]?.isValid(anchor) ?? (anchor == .root), anchor.parent.map({ $0 < entry }) ?? true
        else { throw DocumentError(.notFound, "position anchor is not in folder \(container)") }
    }

    /// Slots a move into the id-ordered log: undo the later moves, do this one,
    /// redo them. O(later moves × depth).
    private mutating func insertMove(_ record: MoveRecord) {
        var undone: [MoveRecord] = []
        while let last = moves.last, last.id > record.id {
            undo(last)
            undone.append(moves.removeLast())
        }
        var record = record
        perform(&record)
        moves.append(record)
        for var later in undone.reversed() {
            perform(&later)
            moves.append(later)
        }
    }

    /// Takes a move out of the log again (rolling back a failed change).
    private mutating func removeMove(_ id: OpID) {
        var undone: [MoveRecord] = []
        while let last = moves.last, last.id >= id {
            undo(last)
            let record = moves.removeLast()
            if record.id != id { undone.append(record) }
        }
        for var later in undone.reversed() {
            perform(&later)
            moves.append(later)
        }
    }

    private mutating func perform(_ record: inout MoveRecord) {
        record.previous = places[record.node]
        let parent = record.place.container
        if parent == record.node || isAncestor(record.node, of: parent) {
            record.isApplied = false  // would make a cycle: skipped, on every replica alike
        } else {
            places[record.node] = Register(value: record.place, stamp: record.id)
            record.isApplied = true
        }
    }

    private mutating func undo(_ record: MoveRecord) {
        if record.isApplied { places[record.node] = record.previous }
    }

    /// Whether `ancestor` is `node`'s parent, grandparent, … Bounded by the node
    /// count, so even a corrupted tree cannot loop forever.
    func isAncestor(_ ancestor: OpID, of node: OpID) -> Bool {
        var current = node
        for _ in 0...nodes.count {
            guard let parent = places[current]?.value.container else { return false }
            if parent == ancestor { return true }
            current = parent
        }
        return true
    }

    mutating func rollback(_ journal: [LibraryJournalEntry]) {
        for entry in journal.reversed() {
            switch entry {
            case .created(let node): nodes[node] = nil
            case .entry(let container, let entry): containers[container]!.remove(entry)
            case .move(let id): removeMove(id)
            case .moved: break
            case .field(let node, let key, let previous): nodes[node]!.fields[key] = previous
            case .updated(let node, let previous): nodes[node]!.updatedAt = previous
            case .purged(let list): purged.subtract(list)
            }
        }
    }

    // MARK: - Reading

    func node(_ id: OpID) -> LibraryNode? { nodes[id] }

    func place(of node: OpID) -> Register<Place>? { places[node] }

    /// The folder a node is in and its newest entry there (its shown position).
    func position(of node: OpID) -> Place? {
        guard let folder = places[node]?.value.container, let entry = containers[folder]?.latest[node] else { return nil }
        return Place(container: folder, entry: entry)
    }

    private func isLive(entry: OpID, in folder: OpID, node: OpID) -> Bool {
        !purged.contains(node) && places[node]?.value.container == folder && containers[folder]?.latest[node] == entry
    }

    func move(_ id: OpID) -> MoveRecord? {
        var low = 0
        var high = moves.count
        while low < high {
            let middle = (low + high) / 2
            if moves[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < moves.count && moves[low].id == id ? moves[low] : nil
    }

    func tree(of container: OpID) -> PositionTree? { containers[container] }

    func isPurged(_ node: OpID) -> Bool { purged.contains(node) }

    /// The children shown in a folder, in order. The trash also shows, after its
    /// own children, nodes whose parent was purged while they were moved into it.
    func children(of folder: OpID) -> [OpID] {
        var result: [OpID] = []
        if let tree = containers[folder] {
            for entry in tree.order {
                let node = tree.entries[entry]!.object
                if isLive(entry: entry, in: folder, node: node) { result.append(node) }
            }
        }
        if folder == .trash { result += rehomedOrphans() }
        return result
    }

    /// Non-purged nodes whose parent is purged, by id.
    func rehomedOrphans() -> [OpID] {
        places.compactMap { node, place in
            !purged.contains(node) && purged.contains(place.value.container) ? node : nil
        }.sorted()
    }

    /// The live entries of a folder with their nodes (for computing anchors).
    func liveEntries(of folder: OpID) -> [(entry: OpID, object: OpID)] {
        guard let tree = containers[folder] else { return [] }
        return tree.order.compactMap { entry in
            let node = tree.entries[entry]!.object
            return isLive(entry: entry, in: folder, node: node) ? (entry, node) : nil
        }
    }

    /// Where a node is shown: under the root, in the trash, or nowhere (purged).
    enum Location: Equatable { case library, trash, purged }

    func location(of node: OpID) -> Location? {
        guard nodes[node] != nil else { return nil }
        if node == .root || node == .incoming { return .library }
        if node == .trash { return .trash }
        if purged.contains(node) { return .purged }
        var current = node
        for _ in 0...nodes.count {
            guard let parent = places[current]?.value.container else { return nil }
            if parent == .root { return .library }
            if parent == .trash || purged.contains(parent) { return .trash }
            current = parent
        }
        return nil
    }

    var nodeCount: Int { nodes.count }

    var allNodes: [OpID: LibraryNode] { nodes }

    var allContainers: [OpID: PositionTree] { containers }

    var allMoves: [MoveRecord] { moves }

    /// The folder a node in the trash was in before it went there: the place
    /// before the latest applied move into the trash that came from outside
    /// it. Two machines may each move a node to the trash (a project deleted
    /// on one, its entries following on both): the later move's previous
    /// place is the trash itself, and restoring to it would lose where the
    /// node was. Nil when that folder is gone, in the trash, or inside the
    /// node. O(moves).
    func formerContainer(of node: OpID) -> OpID? {
        for move in moves.reversed() where move.node == node && move.isApplied && move.place.container == .trash {
            guard let before = move.previous?.value.container else { return nil }
            if before == .trash { continue }
            return location(of: before) == .library && !isAncestor(node, of: before) && before != node ? before : nil
        }
        return nil
    }

    var allPurged: Set<OpID> { purged }

    // MARK: - Merging states

    /// Joins another library into this one: the union of nodes, entries, moves
    /// and purges, then the tree replayed from the merged move log.
    mutating func merge(_ other: LibraryState) {
        for (id, theirs) in other.nodes {
            guard var mine = nodes[id] else {
                nodes[id] = theirs
                continue
            }
            for (key, register) in theirs.fields where mine.fields[key].map({ register.stamp > $0.stamp }) ?? true {
                mine.fields[key] = register
            }
            mine.updatedAt = max(mine.updatedAt, theirs.updatedAt)
            nodes[id] = mine
        }
        for (container, theirs) in other.containers {
            var mine = containers[container] ?? PositionTree()
            var added = false
            for entry in theirs.entries.keys.sorted() where !mine.contains(entry) {
                let source = theirs.entries[entry]!
                mine.insertWithoutOrdering(entry, object: source.object, anchor: Anchor(parent: source.parent, side: source.side))
                added = true
            }
            if added { mine.rebuildOrder() }
            containers[container] = mine
        }
        purged.formUnion(other.purged)
        var byID: [OpID: MoveRecord] = [:]
        for record in moves + other.moves { byID[record.id] = MoveRecord(id: record.id, node: record.node, place: record.place) }
        replay(byID.values.sorted { $0.id < $1.id })
    }

    /// Rebuilds the tree from a move log. O(moves × depth).
    private mutating func replay(_ log: [MoveRecord]) {
        places = [.incoming: Register(value: Place(container: .root, entry: .incoming), stamp: .incoming)]
        moves = []
        moves.reserveCapacity(log.count)
        for var record in log {
            perform(&record)
            moves.append(record)
        }
    }

    /// Builds a library from decoded parts (a snapshot), checking its references.
    init(
        nodes: [OpID: LibraryNode], containers: [OpID: PositionTree], moves: [MoveRecord], purged: Set<OpID>
    ) throws(DocumentError) {
        self.init()
        for (id, node) in nodes where !LibraryState.wellKnown.contains(id) { self.nodes[id] = node }
        // The root keeps its one field: when a shared folder was deleted.
        if let deleted = nodes[.root]?.fields[.deletedAt] { self.nodes[.root]?.fields[.deletedAt] = deleted }
        for (id, tree) in containers { self.containers[id] = tree }
        guard self.containers[.root]?.entries[.incoming]?.object == .incoming else {
            throw DocumentError(.invalidSnapshot, "the root list lacks the Incoming folder")
        }
        self.purged = purged
        for record in moves {
            guard self.nodes[record.node] != nil, !LibraryState.wellKnown.contains(record.node),
                self.nodes[record.place.container]?.kind == .folder,
                self.containers[record.place.container]?.entries[record.place.entry]?.object == record.node
            else { throw DocumentError(.invalidSnapshot, "move \(record.id) names unknown nodes or entries") }
        }
        for node in purged where self.nodes[node] == nil || LibraryState.wellKnown.contains(node) {
            throw DocumentError(.invalidSnapshot, "purged node \(node) is unknown or well known")
        }
        let moved = Set(moves.map(\.node))
        for id in self.nodes.keys where !LibraryState.wellKnown.contains(id) && !moved.contains(id) {
            throw DocumentError(.invalidSnapshot, "library node \(id) has no creating move")
        }
        for (id, tree) in self.containers {
            guard self.nodes[id]?.kind == .folder else { throw DocumentError(.invalidSnapshot, "entries in non-folder \(id)") }
            for (_, entry) in tree.entries where self.nodes[entry.object] == nil {
                throw DocumentError(.invalidSnapshot, "an entry of \(id) names an unknown node")
            }
        }
        replay(moves.sorted { $0.id < $1.id })
    }
}
