/// An edit or a change that cannot be applied: it names something that does
/// not exist, has the wrong kind, or breaks a rule of the document.
///
/// A change that fails is rolled back completely; the document is exactly as
/// it was before the call.
package struct DocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notFound, wrongKind, invalidValue, invalidOperation, conflict, snapshotRequired, invalidSnapshot
            case forbidden, unauthenticated, limitExceeded, replicaReused
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// An id names no object, entry, stroke or content of this document.
        package static let notFound = Code(.notFound)
        /// An object exists but is of another kind than the operation needs.
        package static let wrongKind = Code(.wrongKind)
        /// A field value, index, brush or argument is out of range.
        package static let invalidValue = Code(.invalidValue)
        /// The operation is not allowed here (e.g. moving the trash, a cycle).
        package static let invalidOperation = Code(.invalidOperation)
        /// Two different changes claim the same replica and sequence number:
        /// a database was copied or restored without minting a new replica id.
        package static let conflict = Code(.conflict)
        /// The changes asked for were compacted away; send a snapshot instead.
        package static let snapshotRequired = Code(.snapshotRequired)
        /// A snapshot is internally inconsistent or of another document.
        package static let invalidSnapshot = Code(.invalidSnapshot)
        /// The author of a change (or this replica, for a local edit) has no
        /// right to make it at that point: a reader's edit, a share by
        /// someone who may not share, a change to a document with no owner.
        package static let forbidden = Code(.forbidden)
        /// A change whose signature, author declaration or chain does not check out.
        package static let unauthenticated = Code(.unauthenticated)
        /// Held-back changes (waiting for their dependencies) exceed the limits.
        package static let limitExceeded = Code(.limitExceeded)
        /// A peer proved, with a change signed by this replica's own key that
        /// this replica never made, that another copy of this database uses
        /// its replica id: the replica must take a new one.
        package static let replicaReused = Code(.replicaReused)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human explanation.
    package let message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }

    /// The same error with context in front of the message.
    func prefixed(_ context: String) -> DocumentError {
        DocumentError(code, "\(context): \(message)")
    }
}
