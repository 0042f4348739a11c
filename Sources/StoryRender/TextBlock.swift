import CCairo

/// A paragraph of text laid out by Pango for a cairo context: shaped (any
/// script, right-to-left included), wrapped at word boundaries (at
/// characters for a word longer than the line), with fontconfig's fallback
/// for characters the chosen font lacks (CJK from whatever font has them).
/// The one owner of its `PangoLayout` (released in `deinit`).
///
/// Sizes are in the units of the cairo context it is laid out for (points
/// on a PDF page, pixels on an image surface).
final class TextBlock {
    /// How the lines are placed within the width.
    enum Alignment: Sendable { case left, center, right }

    private let layout: OpaquePointer
    /// The width lines wrap at.
    let width: Double

    /// Lays out `text` for `context` in `family` (a font family, fontconfig
    /// picks the nearest and falls back per character) at `size`, wrapped at `width`.
    /// `boldPrefixes` are set in bold where a paragraph starts with one
    /// ("Dialogue: "); the text is the same (what `split` returns has no markup).
    init(
        _ text: String, family: String = "DejaVu Sans", size: Double, bold: Bool = false, italic: Bool = false, width: Double,
        alignment: Alignment = .left, boldPrefixes: [String] = [], on context: OpaquePointer
    ) {
        layout = pango_cairo_create_layout(context)
        self.width = width
        let description = pango_font_description_from_string(family)
        pango_font_description_set_absolute_size(description, size * Double(ST_PANGO_SCALE))
        if bold { pango_font_description_set_weight(description, Int32(ST_PANGO_WEIGHT_BOLD)) }
        if italic { pango_font_description_set_style(description, Int32(ST_PANGO_STYLE_ITALIC)) }
        pango_layout_set_font_description(layout, description)
        pango_font_description_free(description)
        pango_layout_set_width(layout, Int32(max(1, width) * Double(ST_PANGO_SCALE)))
        pango_layout_set_wrap(layout, Int32(ST_PANGO_WRAP_WORD_CHAR))
        let aligned =
            switch alignment {
            case .left: ST_PANGO_ALIGN_LEFT
            case .center: ST_PANGO_ALIGN_CENTER
            case .right: ST_PANGO_ALIGN_RIGHT
            }
        pango_layout_set_alignment(layout, Int32(aligned))
        pango_layout_set_text(layout, text, -1)
        if let markup = Self.markup(text, boldPrefixes: boldPrefixes) {
            pango_layout_set_markup(layout, markup, -1)
            // Markup pango could not parse leaves no text: then the text stays plain, never lost.
            if pango_layout_get_text(layout).map({ String(cString: $0) }) != text { pango_layout_set_text(layout, text, -1) }
        }
    }

    /// Pango markup of `text` with the prefixes that start its paragraphs in bold; nil when none does.
    static func markup(_ text: String, boldPrefixes: [String]) -> String? {
        guard !boldPrefixes.isEmpty else { return nil }
        func escaped(_ text: Substring) -> String {
            var result = ""
            for character in text {
                switch character {
                case "&": result += "&amp;"
                case "<": result += "&lt;"
                case ">": result += "&gt;"
                default: result.append(character)
                }
            }
            return result
        }
        var isMarked = false
        let paragraphs = text.split(separator: "\n", omittingEmptySubsequences: false).map { paragraph in
            guard let prefix = boldPrefixes.first(where: { paragraph.hasPrefix($0) }) else { return escaped(paragraph) }
            isMarked = true
            return "<b>" + escaped(paragraph.prefix(prefix.count)) + "</b>" + escaped(paragraph.dropFirst(prefix.count))
        }
        return isMarked ? paragraphs.joined(separator: "\n") : nil
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(layout)) }

    /// The laid-out height (all lines).
    var height: Double {
        var logical = st_PangoRectangle()
        pango_layout_get_extents(layout, nil, &logical)
        return Double(logical.height) / Double(ST_PANGO_SCALE)
    }

    /// The width the widest line takes.
    var usedWidth: Double {
        var logical = st_PangoRectangle()
        pango_layout_get_extents(layout, nil, &logical)
        return Double(logical.width) / Double(ST_PANGO_SCALE)
    }

    /// How many lines the text takes at this width.
    var lineCount: Int { Int(pango_layout_get_line_count(layout)) }

    /// Characters no font on this machine has (drawn as boxes).
    var missingGlyphs: Int { Int(pango_layout_get_unknown_glyphs_count(layout)) }

    /// The number of whole lines that fit in `height` from the top.
    func linesFitting(height limit: Double) -> Int {
        guard let iterator = pango_layout_get_iter(layout) else { return 0 }
        defer { pango_layout_iter_free(iterator) }
        var fitting = 0
        repeat {
            var top: Int32 = 0
            var bottom: Int32 = 0
            pango_layout_iter_get_line_yrange(iterator, &top, &bottom)
            guard Double(bottom) / Double(ST_PANGO_SCALE) <= limit else { break }
            fitting += 1
        } while pango_layout_iter_next_line(iterator) != 0
        return fitting
    }

    /// The text before line `line` and from it on: where a block cut after
    /// `line` lines ends, and what flows on to the next place.
    func split(atLine line: Int) -> (head: String, rest: String) {
        guard let all = pango_layout_get_text(layout) else { return ("", "") }
        let text = String(cString: all)
        guard line > 0 else { return ("", text) }
        guard line < lineCount, let iterator = pango_layout_get_iter(layout) else { return (text, "") }
        defer { pango_layout_iter_free(iterator) }
        for _ in 0..<line { pango_layout_iter_next_line(iterator) }
        let bytes = Array(text.utf8)
        let index = min(bytes.count, max(0, Int(pango_layout_iter_get_index(iterator))))
        return (String(decoding: bytes[..<index], as: UTF8.self), String(decoding: bytes[index...], as: UTF8.self))
    }

    /// Draws the block with its top left corner at (x, y), in an RGBA colour (0…1).
    func draw(on context: OpaquePointer, x: Double, y: Double, red: Double, green: Double, blue: Double, alpha: Double = 1) {
        cairo_save(context)
        cairo_set_source_rgba(context, red, green, blue, alpha)
        cairo_move_to(context, x, y)
        pango_cairo_update_layout(context, layout)
        pango_cairo_show_layout(context, layout)
        cairo_restore(context)
    }
}
