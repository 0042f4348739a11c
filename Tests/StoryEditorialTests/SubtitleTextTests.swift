import StoryCore
import StoryEditorial
import Testing

/// Caption text as SubRip cue lines: words and line breaks kept, nothing
/// that a subtitle reader takes for structure or markup.
@Suite struct SubtitleTextTests {
    @Test func aCueInsideACaptionStaysTextOfItsCue() {
        let lines = SubtitleText.lines("She runs\n\n2\n00:00:01,000 --> 00:00:05,000\nINJECTED")
        #expect(lines == ["She runs", "2", "00:00:01,000 --› 00:00:05,000", "INJECTED"])
        #expect(!lines.contains { $0.contains("-->") || $0.isEmpty })
    }

    @Test func markupOverridesEntitiesAndControlsLoseTheirMeaning() {
        let lines = SubtitleText.lines("<b>bold</b> < b > {\\an8}top \\N &lt; \u{1B}[31mred\u{7}\ttab")
        #expect(lines.count == 1)
        let line = lines[0]
        #expect(!line.contains("<") && !line.contains(">") && !line.unicodeScalars.contains { $0.value < 0x20 })
        #expect(line.contains("‹b›bold‹/b›"))
        #expect(line.contains("{\u{2060}\\\u{2060}an8}") && line.contains("&\u{2060}lt;"))
        #expect(line.contains("red") && line.contains("tab"))
    }

    @Test func aLongCaptionIsCutAndBlankTextHasNoCue() {
        let lines = SubtitleText.lines(String(repeating: "word ", count: 10_000))
        #expect(lines.joined().count <= SubtitleText.maximumCharacters + 1 && lines.joined().hasSuffix("…"))
        #expect(SubtitleText.lines(" \n\n\u{0}\n ").isEmpty)
    }
}
