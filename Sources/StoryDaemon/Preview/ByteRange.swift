import Foundation

/// One range of a `Range: bytes=…` request header (RFC 9110 §14.1.2), so a
/// browser can seek in a sound it plays from the preview.
struct ByteRange: Equatable, Sendable {
    /// The first and last byte, inclusive.
    let first: UInt64
    let last: UInt64

    var count: UInt64 { last - first + 1 }

    /// `bytes START-END/SIZE`, the answer's `Content-Range`.
    func contentRange(of size: UInt64) -> String { "bytes \(first)-\(last)/\(size)" }

    /// What a `Range` header asks of a resource of `size` bytes.
    enum Request: Equatable, Sendable {
        /// No header, another unit, several ranges or a malformed one: send the whole resource (200).
        case whole
        /// One satisfiable range (206).
        case part(ByteRange)
        /// A range that starts past the end (416).
        case unsatisfiable
    }

    /// Reads `bytes=START-END`, `bytes=START-` and `bytes=-SUFFIX`. A header it
    /// does not understand is ignored, as the RFC allows.
    static func parse(_ header: String?, size: UInt64) -> Request {
        guard let header, header.hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let start = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let end = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        guard start.allSatisfy(\.isASCIIDigit), end.allSatisfy(\.isASCIIDigit), !(start.isEmpty && end.isEmpty) else { return .whole }
        if start.isEmpty {
            // The last SUFFIX bytes.
            guard let suffix = UInt64(end) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(ByteRange(first: size - min(suffix, size), last: size - 1))
        }
        guard let first = UInt64(start) else { return .whole }
        guard first < size else { return .unsatisfiable }
        guard !end.isEmpty else { return .part(ByteRange(first: first, last: size - 1)) }
        guard let last = UInt64(end) else { return .part(ByteRange(first: first, last: size - 1)) }  // past any size: to the end
        guard last >= first else { return .whole }
        return .part(ByteRange(first: first, last: min(last, size - 1)))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
