import StoryCore

/// A caption or a line of dialogue as the text of a SubRip cue: data, never
/// markup or structure, whatever it holds.
///
/// ffmpeg's SubRip reader starts a new cue at any line holding `-->` with
/// times around it (no blank line needed), reads `<b>`, `<font …>` and even
/// `< b >` as styling, `{\an8}` and `\N` as ASS overrides, and its WebVTT
/// writer passes `&` on for a browser to read as an entity. So a caption
/// could add cues of its own, move or hide text, or (a cue timed backwards)
/// make every mp4 export fail. Here the text keeps its words and lines:
/// angle brackets become single guillemets (`‹` `›`), which no reader takes
/// for a tag or an arrow; a word joiner (U+2060, invisible) follows every
/// `{`, `\` and `&`, so no override or entity begins; control characters
/// become spaces; blank lines go (they would end the cue); and a cue holds
/// at most `maximumCharacters` (mov_text refuses more than about 64 KiB).
package enum SubtitleText {
    /// The longest cue text kept, in characters (more is cut, with `…`).
    package static let maximumCharacters = 2_000

    /// The lines of a cue showing `text`; empty when nothing printable is left.
    package static func lines(_ text: String) -> [String] {
        var cleaned = ""
        cleaned.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        var kept = 0
        for scalar in text.unicodeScalars {
            guard kept < maximumCharacters else {
                cleaned.unicodeScalars.append("…")
                break
            }
            kept += 1
            switch scalar {
            case "\n", "\r", "\u{2028}", "\u{2029}", "\u{85}": cleaned.unicodeScalars.append("\n")
            case "<": cleaned.unicodeScalars.append("‹")
            case ">": cleaned.unicodeScalars.append("›")
            case "{", "\\", "&":
                cleaned.unicodeScalars.append(scalar)
                cleaned.unicodeScalars.append("\u{2060}")
            default:
                if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                    cleaned.unicodeScalars.append(" ")
                } else {
                    cleaned.unicodeScalars.append(scalar)
                }
            }
        }
        return cleaned.split(separator: "\n", omittingEmptySubsequences: true).compactMap { line in
            let trimmed = line.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
            return trimmed.isEmpty ? nil : String(trimmed)
        }
    }
}
