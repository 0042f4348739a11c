import StoryIdentity

/// A TLS failure: OpenSSL refused a handshake, a certificate or a key, or the
/// peer broke the protocol. Carries OpenSSL's error queue as text.
package struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case handshakeFailed, noPeerCertificate, wrongProtocol, identity, closed, io, internalError
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The TLS handshake failed (version, cipher, certificate, alert).
        package static let handshakeFailed = Code(.handshakeFailed)
        /// The peer presented no certificate, or more than one.
        package static let noPeerCertificate = Code(.noPeerCertificate)
        /// The peer does not speak `storyteller/1` (ALPN).
        package static let wrongProtocol = Code(.wrongProtocol)
        /// The key or certificate files cannot be read, written or parsed.
        package static let identity = Code(.identity)
        /// The connection was closed.
        package static let closed = Code(.closed)
        /// Reading or writing encrypted data failed.
        package static let io = Code(.io)
        /// OpenSSL failed in a way it should not (out of memory, bad state).
        package static let internalError = Code(.internalError)

        package var description: String { base.rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "TLS \(code): \(message)" }

    /// An error with OpenSSL's queued errors appended; reads (and clears) the
    /// queue of this thread, so call it right after the failing call.
    static func fromQueue(_ code: Code, _ what: String) -> TLSError {
        let reasons = OpenSSLErrors.drain()
        return TLSError(code, reasons.isEmpty ? what : "\(what): \(reasons.joined(separator: "; "))")
    }
}
