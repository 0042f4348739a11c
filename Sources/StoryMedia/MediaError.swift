import StoryCore

/// Why a file is not an image or sound Storyteller takes, in words a user can
/// act on ("the PNG image is cut short: it ends before its last chunk (IEND)").
///
/// `MediaProbe` throws it for anything it cannot vouch for: a format it does
/// not take, a file cut short, a damaged or impossible header, or a file that
/// could not be read.
package struct MediaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for code that reacts differently (an HTTP status, a retry).
    package enum Kind: Sendable {
        /// Not a format Storyteller takes (text, a web page, a GIF, a video…).
        case unrecognized
        /// The file ends before its format says it does: an interrupted copy or download.
        case truncated
        /// A recognized format whose contents are damaged or impossible.
        case malformed
        /// The bytes could not be read (an I/O error, a file that shrank while read).
        case unreadable
    }

    /// What went wrong.
    package var kind: Kind
    /// A sentence in the user's words saying what is wrong with the file.
    package var message: String

    /// An error of that kind with that message.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message: it is written for the user.
    package var description: String { message }
}

extension MediaError {
    /// The formats a user may give, as the messages list them.
    static let acceptedFormats = "PNG, JPEG, WebP, WAV, MP3, M4A, Ogg, FLAC"

    /// Not a format Storyteller takes; `looksLike` names what it seems to be ("text", "a GIF image").
    static func unrecognized(looksLike: String) -> MediaError {
        MediaError(
            .unrecognized,
            "the file is not an image or sound Storyteller takes (\(acceptedFormats)): it looks like \(looksLike)")
    }

    /// A file of that type that ends too early; `detail` says where ("it ends before its last chunk (IEND)").
    static func cutShort(_ type: MediaType, _ detail: String) -> MediaError {
        MediaError(.truncated, "the \(type) is cut short: \(detail)")
    }

    /// A file of that type whose contents are damaged or impossible.
    static func damaged(_ type: MediaType, _ detail: String) -> MediaError {
        MediaError(.malformed, "the \(type) is damaged: \(detail)")
    }
}
