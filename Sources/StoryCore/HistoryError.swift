/// A point in a project's past that this replica cannot show: its changes
/// were compacted away, it is not in the history at all, or it is before the
/// project existed.
package struct HistoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case compacted, unknownVersion, beforeProject
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Changes needed to rebuild the version were compacted into a snapshot.
        package static let compacted = Code(.compacted)
        /// The version holds changes this replica never had.
        package static let unknownVersion = Code(.unknownVersion)
        /// A time before the project's first change.
        package static let beforeProject = Code(.beforeProject)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human explanation.
    package let message: String
    /// The oldest version this replica can rebuild (with `.compacted`).
    package let oldestAvailable: VersionVector?

    /// Creates an error.
    package init(_ code: Code, _ message: String, oldestAvailable: VersionVector? = nil) {
        self.code = code
        self.message = message
        self.oldestAvailable = oldestAvailable
    }

    package var description: String { "\(code): \(message)" }
}
