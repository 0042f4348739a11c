/// What a user sees of a library: every node in display order (pre-order:
/// the library's tree, then the trash's), each with its parent and depth.
///
/// Flat rather than nested, so a deep tree cannot exhaust the stack when the
/// view is built or encoded.
package struct LibraryView: Hashable, Sendable {
    /// The nodes in display order. The root and the trash themselves are not
    /// listed; the Incoming folder is listed when it holds something.
    package var nodes: [LibraryNodeView]

    /// The nodes directly inside a folder.
    package func children(of folder: OpID) -> [LibraryNodeView] { nodes.filter { $0.parent == folder } }

    /// The node with that id, if shown.
    package func node(_ id: OpID) -> LibraryNodeView? { nodes.first { $0.id == id } }

    /// - Parameter filer: the identity that signed the change creating a
    ///   node (nil: unknown), recorded on project entries as `filedBy`.
    init(state: LibraryState, filer: (OpID) -> PeerID? = { _ in nil }) {
        var result: [LibraryNodeView] = []
        for top in [OpID.root, .trash] {
            var stack: [(OpID, OpID, Int)] = state.children(of: top).reversed().map { ($0, top, 0) }
            while let (id, parent, depth) = stack.popLast() {
                let children = state.children(of: id)
                if id == .incoming && children.isEmpty { continue }
                let node = state.node(id)!
                result.append(
                    LibraryNodeView(
                        id: id, parent: parent, depth: depth, kind: node.kind,
                        name: id == .incoming ? (node.field(.name).string ?? "Incoming") : node.field(.name).string,
                        description: node.field(.description).string, document: node.document,
                        createdAt: node.createdAt, updatedAt: node.updatedAt, isInTrash: top == .trash,
                        filedBy: node.document == nil ? nil : filer(id),
                        formerParent: top == .trash && parent == .trash ? state.formerContainer(of: id) : nil))
                stack += children.reversed().map { ($0, id, depth + 1) }
            }
        }
        nodes = result
    }
}

/// A folder or project entry as shown.
package struct LibraryNodeView: Hashable, Sendable {
    package var id: OpID
    /// The folder it is shown in (`.root`, `.trash`, `.incoming` or a folder).
    package var parent: OpID
    /// 0 for nodes directly in the root or the trash.
    package var depth: Int
    package var kind: ObjectKind
    package var name: String?
    package var description: String?
    /// The project document of a project entry.
    package var document: DocumentID?
    package var createdAt: Int64
    package var updatedAt: Int64
    package var isInTrash: Bool
    /// For an entry naming a document: who filed it (the identity that
    /// signed the change creating the entry; nil when unknown). An entry
    /// grants nothing by itself: a share expands it into access only when
    /// this identity may share the document it names (docs/threat-model.md).
    package var filedBy: PeerID? = nil
    /// For a node directly in the trash: the folder it was in, where a
    /// restore puts it back (nil: that folder is gone; the root then).
    package var formerParent: OpID? = nil
}
