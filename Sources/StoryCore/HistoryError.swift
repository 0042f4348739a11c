/// A point in a project's past that this replica cannot show: its changes
/// were compacted away, it is not in the history at all, or it is before the
/// project existed.
public struct HistoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case compacted, unknownVersion, beforeProject
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Changes needed to rebuild the version were compacted into a snapshot.
        public static let compacted = Code(.compacted)
        /// The version holds changes this replica never had.
        public static let unknownVersion = Code(.unknownVersion)
        /// A time before the project's first change.
        public static let beforeProject = Code(.beforeProject)

        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// A human explanation.
    public let message: String
    /// The oldest version this replica can rebuild (with `.compacted`).
    public let oldestAvailable: VersionVector?

    /// Creates an error.
    public init(_ code: Code, _ message: String, oldestAvailable: VersionVector? = nil) {
        self.code = code
        self.message = message
        self.oldestAvailable = oldestAvailable
    }

    public var description: String { "\(code): \(message)" }
}
