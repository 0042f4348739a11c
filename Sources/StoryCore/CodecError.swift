/// A decoding failure: the bytes are truncated, out of range, or refer to
/// something that does not exist.
///
/// Decoding never trusts a length, count, index or reference, so malformed
/// input always ends here, never in a crash or a half-applied change.
package struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of malformation was found.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case truncated, overflow, badMagic, unsupportedVersion, invalidValue, badReference, trailingBytes
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The input ended before the value did.
        package static let truncated = Code(.truncated)
        /// A varint, count or length is larger than its type or the input allows.
        package static let overflow = Code(.overflow)
        /// The magic bytes are wrong: this is not what it claims to be.
        package static let badMagic = Code(.badMagic)
        /// A format or protocol version this build does not know.
        package static let unsupportedVersion = Code(.unsupportedVersion)
        /// A tag, enum value or field is not one the format defines.
        package static let invalidValue = Code(.invalidValue)
        /// An index or id refers to something that is not there.
        package static let badReference = Code(.badReference)
        /// Bytes remain after a value that should have used them all.
        package static let trailingBytes = Code(.trailingBytes)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human explanation.
    package let message: String
    /// Byte offset in the input where it was found, when known.
    package let offset: Int?

    /// Creates an error.
    package init(_ code: Code, _ message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    package var description: String {
        if let offset { return "decoding error (\(code)) at byte \(offset): \(message)" }
        return "decoding error (\(code)): \(message)"
    }
}
