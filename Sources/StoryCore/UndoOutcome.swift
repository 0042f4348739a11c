/// What an undo or redo did, in words a person can act on.
package struct UndoOutcome: Sendable {
    /// The change made (nil when nothing was taken back).
    package var change: EncodedChange?
    /// What the edit that was taken back (or found overruled) did: "moved shot 1-2 to scene 2 (now 2-1)".
    package var summary: String?
    /// True when the session's last edit had nothing of its own left: every
    /// part was changed since by someone else. Nothing is done then, unless
    /// the caller asked for `older`.
    package var isOverruled = false
    /// The replicas whose later writes left parts of the edit alone (all of
    /// it, when overruled). A caller maps them to people.
    package var overruledBy: [ReplicaID] = []
    /// Parts (registers) left as they are because someone changed them since.
    package var partsLeftAlone = 0
    /// With `older`: the overruled edits passed over to reach the one taken back.
    package var passedOver: [String] = []

    package init(
        change: EncodedChange? = nil, summary: String? = nil, isOverruled: Bool = false, overruledBy: [ReplicaID] = [],
        partsLeftAlone: Int = 0, passedOver: [String] = []
    ) {
        self.change = change
        self.summary = summary
        self.isOverruled = isOverruled
        self.overruledBy = overruledBy
        self.partsLeftAlone = partsLeftAlone
        self.passedOver = passedOver
    }
}
