/// Why a datagram on the discovery port was not taken as an announcement.
/// The daemon counts and logs these (at debug) and carries on.
public struct DiscoveryPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the packet.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Larger than `DiscoveryAnnouncement.maximumBytes`.
        public static let oversized = Code("oversized")
        /// Shorter than its version's fields.
        public static let truncated = Code("truncated")
        /// Another magic: some other program's packet.
        public static let notAnAnnouncement = Code("notAnAnnouncement")
        /// A version this daemon does not read.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// Port 0, which nobody can dial.
        public static let invalidPort = Code("invalidPort")

        public var description: String { name }
    }

    /// What kind of refusal (counted apart: oversized, or malformed).
    public let code: Code
    /// What was wrong, for the debug log.
    public let message: String

    /// A refusal with its code and words.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "discovery packet \(code): \(message)" }
}
