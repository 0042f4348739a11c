import StoryAPI

/// Why a project package was refused (import) or could not be made (export).
struct PackageError: Error, CustomStringConvertible {
    struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case notZip = "not_zip"
            case truncated
            case foreign
            case newerFormat = "newer_format"
            case tampered
            case invalidContent = "invalid_content"
            case tooLarge = "too_large"
            case io
        }

        private let value: Value

        /// Not a zip file at all (text, an image, random bytes).
        static let notZip = Code(value: .notZip)
        /// A zip cut off before its end (no central directory), or an entry cut short.
        static let truncated = Code(value: .truncated)
        /// A zip that is not a Storyteller package (no manifest, another format).
        static let foreign = Code(value: .foreign)
        /// A package of a format version newer than this daemon reads.
        static let newerFormat = Code(value: .newerFormat)
        /// An entry whose bytes are not what the manifest says, an entry the
        /// manifest does not list, a signature that does not check.
        static let tampered = Code(value: .tampered)
        /// The project's changes or snapshot do not decode or do not check out.
        static let invalidContent = Code(value: .invalidContent)
        /// An entry over the limits (a blob over `blob-max-bytes`).
        static let tooLarge = Code(value: .tooLarge)
        /// The daemon's disk failed.
        static let io = Code(value: .io)

        var description: String { value.rawValue }
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    var description: String { "\(code): \(message)" }

    /// The control API's answer: the package's faults are 422, the disk's 500.
    var apiError: APIError {
        switch code {
        case .io: APIError(.storeFailure, "the import failed: \(message); nothing was stored")
        case .tooLarge: APIError(.tooLarge, "refused, nothing stored: \(message)")
        default: APIError(.invalidPackage, "refused, nothing stored: \(message)")
        }
    }
}
