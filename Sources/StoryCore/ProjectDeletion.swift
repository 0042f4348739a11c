/// A project deleted for everyone who shares it: in the trash on every
/// replica until someone restores it (docs/crdt.md, "Deleting a project").
///
/// The deleted flag is a last-writer-wins register on the project root: a
/// delete and a concurrent restore resolve by OpID, and edits made meanwhile
/// are kept whatever wins.
package struct ProjectDeletion: Hashable, Sendable {
    /// The operation that deleted it: the stamp of the flag.
    package var operation: OpID
    /// When, in milliseconds since 1970 on the deleting author's clock
    /// (the `deletedAt` field written with the flag); nil if the change gave none.
    package var time: Int64?

    /// The replica whose change deleted it (`author(of:)` names its identity).
    package var replica: ReplicaID { operation.replica }

    package init(operation: OpID, time: Int64?) {
        self.operation = operation
        self.time = time
    }
}
