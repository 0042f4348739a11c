/// A panel that cannot be rendered: a width, height or onion count out of
/// range, or cairo failing (out of memory, a write error).
package struct RenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case outOfRange, cairo
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The requested width, the height it gives at the shot's aspect ratio, or the onion count is
        /// out of range (the request's mistake).
        package static let outOfRange = Code(.outOfRange)
        /// cairo reported an error while drawing or writing the file.
        package static let cairo = Code(.cairo)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human explanation.
    package let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
