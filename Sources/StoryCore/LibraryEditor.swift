/// Makes the operations of one edit of a library. Like `ProjectEditor`, each
/// call applies at once and throws without changing anything when its
/// arguments are wrong. Indices count the children a user sees.
package struct LibraryEditor: ChangeBuilder {
    var state: LibraryState
    var core: EditCore<LibraryJournalEntry>

    init(state: LibraryState, replica: ReplicaID, startCounter: UInt64, time: Int64) {
        self.state = state
        core = EditCore(replica: replica, startCounter: startCounter, time: time)
    }

    static let placeholder = LibraryState()

    // MARK: - Reading inside an edit

    /// The children shown in a folder (`.root`, `.trash`, `.incoming` or a folder).
    package func children(of folder: OpID) -> [OpID] { state.children(of: folder) }

    /// The folder a node is in.
    package func parent(of node: OpID) -> OpID? { state.place(of: node)?.value.container }

    /// A node's kind.
    package func kind(of node: OpID) -> ObjectKind? { state.node(node)?.kind }

    /// A node's name.
    package func name(of node: OpID) -> String? { state.node(node)?.field(.name).string }

    /// Where a node is as this edit sees it: in the library (false), or in
    /// the trash (true, also inside a deleted folder); nil when it is
    /// unknown or purged.
    package func isInTrash(_ node: OpID) -> Bool? {
        switch state.location(of: node) {
        case .library: false
        case .trash: true
        case .purged, nil: nil
        }
    }

    // MARK: - Edits

    /// Creates a folder (at the end of `parent` unless `index` is given).
    @discardableResult
    package mutating func createFolder(named name: String, in parent: OpID = .root, at index: Int? = nil) throws(DocumentError) -> OpID {
        let id = try perform(.insert(kind: .folder, container: parent, anchor: anchor(at: index, in: parent)))
        try perform(.setField(object: id, key: .name, value: .string(name)))
        return id
    }

    /// Creates the library entry of a project document.
    @discardableResult
    package mutating func createProjectEntry(
        named name: String, document: DocumentID, in parent: OpID = .root, at index: Int? = nil
    ) throws(DocumentError) -> OpID {
        let id = try perform(.insertProjectEntry(container: parent, anchor: anchor(at: index, in: parent), document: document))
        try perform(.setField(object: id, key: .name, value: .string(name)))
        return id
    }

    /// Renames a folder or project entry.
    /// Deletes this library document (a shared folder) for everyone who
    /// shares it, or restores it: its root's `deletedAt`, last writer wins.
    package mutating func setDeleted(_ deleted: Bool) throws(DocumentError) {
        try perform(.setField(object: .root, key: .deletedAt, value: deleted ? .number(Double(core.time)) : .null))
    }

    package mutating func rename(_ node: OpID, to name: String) throws(DocumentError) {
        try perform(.setField(object: node, key: .name, value: .string(name)))
    }

    /// Sets the description of a folder or project entry.
    package mutating func describe(_ node: OpID, as description: String) throws(DocumentError) {
        try perform(.setField(object: node, key: .description, value: .string(description)))
    }

    /// Moves a node into a folder (at the end unless `index` is given). A move
    /// into the node itself or one of its descendants is refused here; a cycle
    /// made by concurrent moves elsewhere is resolved by the tree-move CRDT.
    package mutating func move(_ node: OpID, to folder: OpID, at index: Int? = nil) throws(DocumentError) {
        guard state.node(node) != nil, !LibraryState.wellKnown.contains(node) else {
            throw DocumentError(.invalidOperation, "\(naming(node)) cannot be moved")
        }
        guard folder != node, !state.isAncestor(node, of: folder) else {
            throw DocumentError(.invalidOperation, "a folder cannot move into itself or its own subfolder")
        }
        guard state.location(of: folder) != .purged else { throw DocumentError(.notFound, "folder \(folder) was purged") }
        let here = state.place(of: node)?.value.container
        if here == folder, let index, state.children(of: folder).firstIndex(of: node) == index {
            return
        }
        let anchor = try anchor(at: index, in: folder, excluding: node)
        if here == folder {
            try perform(.reorder(object: node, container: folder, anchor: anchor))
        } else {
            try perform(.move(object: node, container: folder, anchor: anchor))
        }
    }

    /// A folder or project as people name it in an error: its kind and name.
    private func naming(_ node: OpID) -> String {
        switch node {
        case .root: return "the library's top"
        case .trash: return "the trash"
        case .incoming: return "the Incoming folder"
        default: break
        }
        guard let entry = state.node(node) else { return "no folder or project \(node)" }
        let kind = entry.kind == .folder ? "folder" : "project"
        guard let name = entry.field(.name).string, !name.isEmpty else { return "\(kind) \(node)" }
        return "\(kind) \"\(PrintableText.escaped(name))\""
    }

    /// Moves a node to another position among the siblings it is shown with
    /// (a node shown in the trash because its folder was purged moves into the
    /// trash for real).
    package mutating func reorder(_ node: OpID, to index: Int) throws(DocumentError) {
        guard let folder = parent(of: node) else { throw DocumentError(.notFound, "no folder or project \(node) in the library") }
        try move(node, to: state.isPurged(folder) ? .trash : folder, at: index)
    }

    /// Moves a node (and what it contains) to the trash.
    package mutating func delete(_ node: OpID) throws(DocumentError) {
        guard state.location(of: node) == .library else {
            throw DocumentError(.invalidOperation, "\(naming(node)) is not in the library (already in the trash?)")
        }
        try move(node, to: .trash)
    }

    /// Moves a node out of the trash, back into the folder it was deleted from
    /// (or the root if that folder is gone). Returns the folder it went to.
    @discardableResult
    package mutating func restore(_ node: OpID) throws(DocumentError) -> OpID {
        guard state.location(of: node) == .trash, !state.isPurged(node) else {
            throw DocumentError(.invalidOperation, "\(naming(node)) is not in the trash")
        }
        let target = state.formerContainer(of: node) ?? .root
        try move(node, to: target)
        return target
    }

    /// Removes a node in the trash, and everything inside it, for good.
    package mutating func purge(_ node: OpID) throws(DocumentError) {
        guard state.location(of: node) == .trash, !LibraryState.wellKnown.contains(node) else {
            throw DocumentError(.invalidOperation, "\(naming(node)) is not in the trash: only what is in the trash can be removed for good")
        }
        var list: [OpID] = []
        var stack = [node]
        while let next = stack.popLast() {
            list.append(next)
            stack += state.children(of: next)
        }
        try perform(.purge(nodes: list))
    }

    // MARK: - Helpers

    /// The anchor for shown position `index` (nil: the end). Positions count
    /// what is shown; in the trash, nodes re-homed from purged folders come
    /// after its own children, so an index among them means the end.
    private func anchor(at index: Int?, in folder: OpID, excluding moving: OpID? = nil) throws(DocumentError) -> Anchor {
        let live = state.liveEntries(of: folder).filter { $0.object != moving }
        let shown = state.children(of: folder).filter { $0 != moving }.count
        let requested = index ?? shown
        guard requested >= 0 && requested <= shown else {
            throw DocumentError(.invalidValue, "index \(requested) outside 0…\(shown)")
        }
        let index = min(requested, live.count)
        guard let tree = state.tree(of: folder) else { return .root }
        return tree.anchor(after: index == 0 ? nil : live[index - 1].entry)
    }

    /// The anchor at the end of a folder's list.
    private func endAnchor(in folder: OpID) -> Anchor {
        guard let tree = state.tree(of: folder) else { return .root }
        return tree.anchor(after: tree.order.last)
    }

    mutating func invert(_ record: UndoRecord) throws(DocumentError) {
        for item in record.items.reversed() {
            switch (item.target, item.previous) {
            case (.field(let node, let key), .field(let value)):
                if state.node(node)?.fields[key]?.stamp == item.stamp {
                    try perform(.setField(object: node, key: key, value: value))
                }
            case (.place(let node), .place(let previous)):
                // Only if the node is still where this change put it.
                guard let current = state.position(of: node), current.entry == item.stamp, !state.isPurged(node) else {
                    continue
                }
                if let previous {
                    guard state.location(of: previous.container) != .purged, previous.container != node,
                        !state.isAncestor(node, of: previous.container), let tree = state.tree(of: previous.container)
                    else { continue }
                    let anchor = tree.anchor(after: previous.entry)
                    if current.container == previous.container {
                        try perform(.reorder(object: node, container: previous.container, anchor: anchor))
                    } else {
                        try perform(.move(object: node, container: previous.container, anchor: anchor))
                    }
                } else {
                    try perform(.move(object: node, container: .trash, anchor: endAnchor(in: .trash)))
                }
            default:
                continue
            }
        }
    }

    static func undoRecord(_ journal: [(OpID, LibraryJournalEntry)], in state: LibraryState) -> UndoRecord {
        var record = UndoRecord()
        for (id, entry) in journal {
            switch entry {
            case .field(let node, let key, let previous):
                record.add(.field(node, key), previous: .field(previous?.value ?? .null), stamp: id, previousStamp: previous?.stamp)
            case .moved(let node, let from):
                record.add(.place(node), previous: .place(from), stamp: id, previousStamp: from?.entry)
            case .created(let node):
                record.add(.place(node), previous: .place(nil), stamp: id, previousStamp: nil)
            case .move, .entry, .updated, .purged:
                continue
            }
        }
        record.summary = EditSummary.library(journal, in: state)
        return record
    }

    /// The stamp a register has now (nil: it does not exist, or was purged).
    static func stamp(of target: UndoTarget, in state: LibraryState) -> OpID? {
        switch target {
        case .field(let node, let key): state.node(node)?.fields[key]?.stamp
        case .place(let node): state.isPurged(node) ? nil : state.position(of: node)?.entry
        case .deleted, .stroke, .tag: nil
        }
    }
}
