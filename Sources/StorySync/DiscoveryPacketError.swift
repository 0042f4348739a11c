/// Why a datagram on the discovery port was not taken as an announcement.
/// The daemon counts and logs these (at debug) and carries on.
package struct DiscoveryPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the packet.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Larger than `DiscoveryAnnouncement.maximumBytes`.
        package static let oversized = Code("oversized")
        /// Shorter than its version's fields.
        package static let truncated = Code("truncated")
        /// Another magic: some other program's packet.
        package static let notAnAnnouncement = Code("notAnAnnouncement")
        /// A version this daemon does not read.
        package static let unsupportedVersion = Code("unsupportedVersion")
        /// Port 0, which nobody can dial.
        package static let invalidPort = Code("invalidPort")

        package var description: String { name }
    }

    /// What kind of refusal (counted apart: oversized, or malformed).
    package let code: Code
    /// What was wrong, for the debug log.
    package let message: String

    /// A refusal with its code and words.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "discovery packet \(code): \(message)" }
}
