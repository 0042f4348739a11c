/// One entry of a project's history as people read it: one author's burst of
/// edits (consecutive changes by the same replica, each within a gap of the
/// one before), named by the version its last change made.
package struct ProjectVersion: Sendable {
    /// The version after the burst: the causal vector of its last change,
    /// which is what its author saw once they had made it. The same on every
    /// machine that has the burst's changes.
    package var vector: VersionVector
    /// The replica that made the burst.
    package var replica: ReplicaID
    /// The burst's changes, oldest first.
    package var changes: [Change]

    /// The short id people type (`VersionVector.shortID`).
    package var id: String { vector.shortID }
    /// Wall time of the first change (informational: the author's clock).
    package var firstTime: Int64 { changes.first?.wallTime ?? 0 }
    /// Wall time of the last change.
    package var lastTime: Int64 { changes.last?.wallTime ?? 0 }

    /// Creates an entry.
    package init(vector: VersionVector, replica: ReplicaID, changes: [Change]) {
        self.vector = vector
        self.replica = replica
        self.changes = changes
    }
}
