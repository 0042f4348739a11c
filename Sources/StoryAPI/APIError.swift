/// The one error shape of the control API: `{"error":{"code":"…","message":"…"}}`,
/// with the HTTP status that goes with the code.
package struct APIError: Error, Codable, Sendable, CustomStringConvertible {
    /// What kind of failure: a stable string clients can test.
    package struct Code: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The request is malformed or a value is out of range (400).
        package static let badRequest = Code(rawValue: "bad_request")
        /// No such object or route (404). Never a store failure.
        package static let notFound = Code(rawValue: "not_found")
        /// The path has no such method (405, with `Allow`).
        package static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        /// The request contradicts the current state (409).
        package static let conflict = Code(rawValue: "conflict")
        /// A stroke edit on a layer that is locked (409): unlock it first.
        package static let layerLocked = Code(rawValue: "layer_locked")
        /// The request body is too large (413).
        package static let tooLarge = Code(rawValue: "too_large")
        /// An upload that is not an image or sound Storyteller takes, or not
        /// the kind the route wants (415).
        package static let unsupportedMedia = Code(rawValue: "unsupported_media")
        /// This caller may not do that (403).
        package static let forbidden = Code(rawValue: "forbidden")
        /// A change to a document this daemon may only read (403).
        package static let readOnly = Code(rawValue: "read_only")
        /// The daemon failed (500); the message says what, the log says more.
        package static let `internal` = Code(rawValue: "internal")
        /// The store (disk or database) failed (500).
        package static let storeFailure = Code(rawValue: "store_failure")
        /// The daemon has as much of this work under way as it takes at once (503,
        /// with `Retry-After`); ask again shortly.
        package static let busy = Code(rawValue: "busy")
        /// The disk is full (507).
        package static let insufficientStorage = Code(rawValue: "insufficient_storage")
        /// A project package that is cut off, altered, foreign or of a newer
        /// format, or whose content does not check out (422); nothing was stored.
        package static let invalidPackage = Code(rawValue: "invalid_package")
        /// A program the request needs is not installed where the daemon runs
        /// (ffmpeg for an animatic); the message says how to install it (503).
        package static let unavailable = Code(rawValue: "unavailable")
        /// A version (id, name or time) that is not in the project's history
        /// here, or a time before the project existed (404).
        package static let unknownVersion = Code(rawValue: "unknown_version")
        /// The changes needed to show that version were compacted away on
        /// this machine; the message names the oldest it can show (410).
        package static let historyCompacted = Code(rawValue: "history_compacted")

        package var description: String { rawValue }

        /// The HTTP status of an answer with this code.
        package var status: Int {
            switch self {
            case .badRequest: 400
            case .notFound: 404
            case .methodNotAllowed: 405
            case .conflict, .layerLocked: 409
            case .tooLarge: 413
            case .unsupportedMedia: 415
            case .forbidden, .readOnly: 403
            case .busy: 503
            case .insufficientStorage: 507
            case .invalidPackage: 422
            case .unavailable: 503
            case .unknownVersion: 404
            case .historyCompacted: 410
            default: 500
            }
        }
    }

    package struct Detail: Codable, Sendable {
        package let code: Code
        /// The whole sentence, as a person reads it.
        package let message: String
        /// What in the request the error is about, as a path into its JSON
        /// body (`ops[2].brush.color`, `name`), a `set` operation's value
        /// named by the key it sets (`ops[0].duration`); nil when the error
        /// is not about one field. Clients that took the value from
        /// somewhere else (the CLI's `--color`) say it in their own words.
        package let field: String?
        /// The message without the field it names (`must be a colour like
        /// "#000000"`), given with `field`.
        package let problem: String?
    }

    package let error: Detail
    /// For 405: the methods the path has (sent as `Allow`, RFC 9110); not in the JSON.
    package var allowed: [String] = []

    private enum CodingKeys: String, CodingKey { case error }

    package init(_ code: Code, _ message: String, allowed: [String] = []) {
        error = Detail(code: code, message: message, field: nil, problem: nil)
        self.allowed = allowed
    }

    /// An error about one field of the request: `message` says it whole,
    /// `field` and `problem` let a client put it in its own words.
    package init(_ code: Code, field: String, problem: String, message: String) {
        error = Detail(code: code, message: message, field: field, problem: problem)
    }

    /// A 400 about one field: "'`field`' `problem`".
    package static func badField(_ field: String, _ problem: String) -> APIError {
        APIError(.badRequest, field: field, problem: problem, message: "'\(field)' \(problem)")
    }

    package var code: Code { error.code }
    package var message: String { error.message }
    package var field: String? { error.field }
    package var problem: String? { error.problem }
    package var status: Int { error.code.status }
    package var description: String { "\(error.code): \(error.message)" }
}
