/// Where a new position entry hangs in its list's Fugue tree: as a left or
/// right child of an existing entry, or as a right child of the list's root.
///
/// Fugue (Weidner & Kleppmann, "The Art of the Fugue", 2023): the list is the
/// in-order traversal of a tree whose same-side siblings are ordered by id.
/// Inserting between neighbours `L` and `R` makes the new entry a right child
/// of `L` when `L` has no right children, else a left child of `R`. Runs of
/// concurrent inserts at one place then never interleave.
package struct Anchor: Hashable, Sendable {
    /// Which side of its parent an entry hangs on.
    package enum Side: UInt8, Sendable {
        case left = 0
        case right = 1
    }

    /// The parent entry, or nil for the list's root.
    package var parent: OpID?
    /// The side of the parent; the root only has right children.
    package var side: Side

    /// Creates an anchor.
    package init(parent: OpID?, side: Side) {
        self.parent = parent
        self.side = side
    }

    /// A right child of the list's root.
    package static let root = Anchor(parent: nil, side: .right)
}
