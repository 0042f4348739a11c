/// Text from others (a peer's name, a project's name, a reason a peer gave)
/// as it may be shown in a terminal or written to a log: control characters
/// (a newline that forges a log line, an escape sequence that retitles the
/// terminal or moves its cursor) and bidirectional overrides (which reorder
/// what is shown) are refused in names and escaped wherever such text is
/// printed or logged.
package enum PrintableText {
    /// Whether a scalar is a control character (Cc: C0, DEL, C1) or a
    /// bidirectional embedding, override or isolate.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
            || (0x2066...0x2069).contains(scalar.value)
    }

    /// Whether `text` holds any character `isControl` says is one.
    package static func hasControlCharacters(_ text: String) -> Bool { text.unicodeScalars.contains(where: isControl) }

    /// `text` with each control character written as an escape (`\n`, `\t`,
    /// `\u{1B}`): safe to print on one line or log. O(length).
    package static func escaped(_ text: String) -> String {
        guard hasControlCharacters(text) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isControl(scalar): result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
