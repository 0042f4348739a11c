/// A sync failure: a malformed or oversized frame, a message that breaks the
/// protocol, a refused change. Closes that connection only.
package struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; the raw values are the wire's error codes.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: UInt64
        private let name: String
        private init(_ rawValue: UInt64, _ name: String) {
            self.rawValue = rawValue
            self.name = name
        }

        /// The peer speaks another protocol version.
        package static let protocolVersion = Code(1, "protocolVersion")
        /// Bytes that do not decode as a message, or a message out of turn.
        package static let malformed = Code(2, "malformed")
        /// Changes to a document the receiver shares read-only with the sender.
        package static let readOnly = Code(3, "readOnly")
        /// A message about a document that is not shared with the sender.
        package static let notShared = Code(4, "notShared")
        /// Changes that do not apply (unknown references, a fork).
        package static let invalidChange = Code(5, "invalidChange")
        /// A frame larger than the receiver accepts.
        package static let frameTooLarge = Code(6, "frameTooLarge")
        /// The peer knows more of our own changes than we do: this database
        /// was copied or restored; it takes a new replica id.
        package static let replicaConflict = Code(7, "replicaConflict")
        /// Nothing was received for too long.
        package static let timeout = Code(8, "timeout")
        /// The receiver failed internally (disk full, database error).
        package static let internalError = Code(9, "internal")
        /// An unknown peer: not configured here.
        package static let unknownPeer = Code(10, "unknownPeer")
        /// The sender left more changes held back (waiting for changes they
        /// depend on) than the receiver keeps.
        package static let heldBackLimit = Code(11, "heldBackLimit")
        /// A change or snapshot whose author (or sender) has no right to it,
        /// or whose signature, author or chain does not check out.
        package static let forbidden = Code(12, "forbidden")

        /// The code with this wire value (unknown values keep their number).
        package init(rawValue: UInt64) {
            let known: [Code] = [
                .protocolVersion, .malformed, .readOnly, .notShared, .invalidChange, .frameTooLarge,
                .replicaConflict, .timeout, .internalError, .unknownPeer, .heldBackLimit, .forbidden,
            ]
            self = known.first { $0.rawValue == rawValue } ?? Code(rawValue, "code \(rawValue)")
        }

        package var description: String { name }

        package static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        package func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "sync \(code): \(message)" }
}
