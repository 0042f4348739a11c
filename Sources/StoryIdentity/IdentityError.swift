import COpenSSL
import Foundation

/// The identity's key or certificate cannot be read, written, parsed or made.
/// Carries OpenSSL's error queue as text.
package struct IdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unreadable, unwritable, invalid, internalError
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A key or certificate file cannot be read.
        package static let unreadable = Code(.unreadable)
        /// A key or certificate file cannot be written.
        package static let unwritable = Code(.unwritable)
        /// The files hold no key or certificate, or they do not belong together.
        package static let invalid = Code(.invalid)
        /// OpenSSL failed in a way it should not (out of memory, bad state).
        package static let internalError = Code(.internalError)

        package var description: String { base.rawValue }
    }

    package let code: Code
    /// What failed, in words ("/var/lib/storyteller/identity/key.pem holds no private key").
    package let message: String
    /// OpenSSL's reasons (its error queue as text), for the log; empty when OpenSSL gave none.
    package let reasons: [String]

    package init(_ code: Code, _ message: String, reasons: [String] = []) {
        self.code = code
        self.message = message
        self.reasons = reasons
    }

    package var description: String {
        "identity \(code): \(message)" + (reasons.isEmpty ? "" : ": \(reasons.joined(separator: "; "))")
    }

    /// An error with OpenSSL's queued errors appended; reads (and clears) the
    /// queue of this thread, so call it right after the failing call.
    static func fromQueue(_ code: Code, _ what: String) -> IdentityError {
        IdentityError(code, what, reasons: OpenSSLErrors.drain())
    }
}

extension IdentityError: LocalizedError {
    /// The failure as one sentence for the person starting the daemon, with
    /// what to do; no code names or OpenSSL reasons (`description` has those).
    package var errorDescription: String? {
        if code == .unreadable || code == .invalid {
            "this machine's identity cannot be used: \(message); put back the identity directory from a backup, "
                + "or move it away to make a new identity (its peers must then add this machine's new peer id)"
        } else if code == .unwritable {
            "cannot save this machine's new identity: \(message); give this user write access to the state directory"
        } else {
            "OpenSSL failed while making this machine's identity: \(message)"
        }
    }
}

/// OpenSSL's per-thread error queue.
package enum OpenSSLErrors {
    /// Empties this thread's queue, returning what it held as text. Called
    /// before an OpenSSL call whose failure is read from the queue, so a stale
    /// error left by another connection on this thread cannot be mistaken for
    /// its own, and after it to report the reasons.
    @discardableResult
    package static func drain() -> [String] {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons
    }
}
