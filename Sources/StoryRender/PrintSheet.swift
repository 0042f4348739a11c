package import StoryCore

/// A print-ready storyboard sheet as a PDF, written page by page.
///
/// Every page has a header (the project's title, the scenes on the page,
/// the shots', running time's and aspect ratio's totals, "page n of m" and
/// the date) over a grid of cells in reading order. A cell holds a panel,
/// drawn as vectors by the panel renderer, with its label, duration and
/// start in the running time, and the chosen text fields (shaped and wrapped
/// by Pango) under or beside it. Text that does not fit its cell is never
/// cut: the cell ends "continued →" and the rest fills the next cell (on the
/// next page if need be), as many as it takes. A panel and the start of its
/// text are always in one cell, so a page break never parts them.
///
/// Laying out measures every shot's text first (so the header can say how
/// many pages there are); then `nextChunk()` draws one page at a time and
/// hands over the bytes written so far. Memory: the plan (a few strings per
/// shot), one page's drawing and one picture at a time. Not thread-safe:
/// use it from one thread (the daemon's render thread).
package final class PrintSheet {
    /// How many pages the whole sheet has.
    package let pageCount: Int
    /// The pages drawn (the layout's `pages`, within the sheet).
    package let pages: ClosedRange<Int>

    private let canvas: CairoCanvas
    private let geometry: Geometry
    private let shots: [ShotView]
    /// Where each shot starts in the running time, in seconds.
    private let starts: [Double]
    private let scenes: [SceneView]
    private let cells: [Cell]
    private let layout: PrintSheetLayout
    private let pictureFiles: [BlobHash: String]
    private let title: String
    private let summary: String
    private let date: String
    private var nextPage: Int
    private var isFinished = false

    static let ink = Color(red: 0x11, green: 0x11, blue: 0x11)
    static let textColour = Color(red: 0x22, green: 0x22, blue: 0x22)
    static let quietColour = Color(red: 0x66, green: 0x66, blue: 0x66)
    static let ruleColour = Color(red: 0x99, green: 0x99, blue: 0x99)
    /// What ends a cell whose text goes on in the next one.
    static let continuedMark = "continued →"
    /// What starts a paragraph of dialogue, action or notes (set in bold).
    static let fieldNames = ["Dialogue: ", "Action: ", "Notes: "]
    /// The characters of a title a header prints (a header is not where a long text flows on).
    static let longestTitle = 200

    /// Plans the sheet of `scenes` (all of the project's, or one).
    ///
    /// - Parameters:
    ///   - title: the project's name as people know it.
    ///   - date: as it is printed in the header (the caller's clock, the caller's format).
    ///   - pictureFiles: the files of the pictures drawn, by hash (see `PanelRenderer.render`).
    /// - Throws: `RenderError.outOfRange` for a page, grid or page range the
    ///   sheet does not have; `.cairo` if cairo cannot make the PDF.
    /// - Complexity: lays out every shot's text once (and each continuation once more).
    package init(
        scenes: [SceneView], of project: ProjectView, title: String, date: String, layout: PrintSheetLayout,
        pictureFiles: [BlobHash: String] = [:]
    ) throws(RenderError) {
        let layout = try layout.validated()
        self.layout = layout
        self.scenes = scenes
        self.title = Self.shortened(title, to: Self.longestTitle)
        self.date = date
        self.pictureFiles = pictureFiles
        shots = scenes.flatMap(\.shots)
        var starts: [Double] = []
        var time = 0.0
        for shot in shots {
            starts.append(time)
            time += Self.seconds(of: shot)
        }
        self.starts = starts
        let shotWord = shots.count == 1 ? "shot" : "shots"
        summary =
            "\(shots.count) \(shotWord) · running time \(Self.timecode(time)) · \(Self.aspectText(project.aspectRatio))"
        canvas = try CairoCanvas(pdfPageWidth: layout.pageWidth, pageHeight: layout.pageHeight, title: title)
        geometry = Geometry(
            layout: layout, aspectRatio: Self.aspect(project.aspectRatio), canvas: canvas, title: self.title)
        cells = Self.plan(shots, fields: layout.fields, geometry: geometry, canvas: canvas)
        let perPage = layout.rows * layout.columns
        pageCount = max(1, (cells.count + perPage - 1) / perPage)
        let wanted = layout.pages ?? 1...pageCount
        guard wanted.lowerBound <= pageCount else {
            let pagesWord = pageCount == 1 ? "page" : "pages"
            throw RenderError(
                .outOfRange,
                "the sheet has \(pageCount) \(pagesWord); pages from \(wanted.lowerBound) cannot be printed")
        }
        pages = wanted.lowerBound...min(wanted.upperBound, pageCount)
        nextPage = pages.lowerBound
    }

    /// Draws the next page and returns the PDF's bytes written since the
    /// last call; after the last page, the end of the file; then nil.
    /// - Throws: `RenderError.cairo` if drawing or writing fails.
    package func nextChunk() throws(RenderError) -> [UInt8]? {
        if nextPage <= pages.upperBound {
            draw(page: nextPage)
            canvas.endPage()
            nextPage += 1
            return try canvas.takeWritten()
        }
        guard !isFinished else { return nil }
        isFinished = true
        return try canvas.finish()
    }

    /// The whole file at once (for tests and small sheets).
    /// - Throws: `RenderError.cairo` if drawing or writing fails.
    package func render() throws(RenderError) -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try nextChunk() { bytes += chunk }
        return bytes
    }

    // MARK: - Planning

    /// What one cell of the grid holds.
    enum Cell {
        /// A shot's panel and its text (or as much as fits, then `continues`).
        case panel(shot: Int, text: String, continues: Bool)
        /// More of a shot's text.
        case continuation(shot: Int, text: String, continues: Bool)
    }

    /// Every cell in reading order: each panel, then as many continuation cells as its text needs.
    static func plan(_ shots: [ShotView], fields: [PrintSheetLayout.Field], geometry: Geometry, canvas: CairoCanvas)
        -> [Cell]
    {
        var cells: [Cell] = []
        for (index, shot) in shots.enumerated() {
            let text = Self.text(of: shot, fields: fields)
            let (head, first) = geometry.fit(
                text, width: geometry.panelTextWidth, height: geometry.panelTextHeight, atLeastOneLine: false,
                on: canvas)
            cells.append(.panel(shot: index, text: head, continues: !first.isEmpty))
            var rest = first
            while !rest.isEmpty {
                let (more, left) = geometry.fit(
                    rest, width: geometry.continuationWidth, height: geometry.continuationHeight, atLeastOneLine: true,
                    on: canvas)
                cells.append(.continuation(shot: index, text: more, continues: !left.isEmpty))
                // A cell always takes at least a line, so this ends; `left` is shorter than `rest`.
                guard left.utf8.count < rest.utf8.count else { break }
                rest = left
            }
        }
        return cells
    }

    /// The chosen text fields of a shot, one paragraph each (the label and duration go under the panel).
    static func text(of shot: ShotView, fields: [PrintSheetLayout.Field]) -> String {
        var paragraphs: [String] = []
        func add(_ prefix: String, _ value: String?) {
            guard let value = value?.trimmed, !value.isEmpty else { return }
            paragraphs.append(prefix + value)
        }
        for field in fields {
            switch field {
            case .caption: add("", shot.caption)
            case .dialogue: add(fieldNames[0], shot.dialogue)
            case .action: add(fieldNames[1], shot.action)
            case .notes: add(fieldNames[2], shot.notes)
            case .label, .duration: continue
            }
        }
        return paragraphs.joined(separator: "\n")
    }

    // MARK: - Drawing

    private func draw(page: Int) {
        let perPage = layout.rows * layout.columns
        let first = (page - 1) * perPage
        let onPage = cells.indices.contains(first) ? Array(cells[first..<min(cells.count, first + perPage)]) : []
        drawHeader(page: page, cells: onPage)
        if shots.isEmpty {
            let block = canvas.textBlock("No shots to print.", size: 12, italic: true, width: geometry.contentWidth)
            canvas.draw(block, x: geometry.margin, y: geometry.contentTop, colour: Self.quietColour)
        }
        for (slot, cell) in onPage.enumerated() {
            let (x, y) = geometry.cellOrigin(slot)
            switch cell {
            case .panel(let index, let text, let continues):
                drawPanel(index, text: text, continues: continues, x: x, y: y)
            case .continuation(let index, let text, let continues):
                drawContinuation(index, text: text, continues: continues, x: x, y: y)
            }
        }
    }

    private func drawHeader(page: Int, cells: [Cell]) {
        let g = geometry
        let titleBlock = canvas.textBlock(title, size: g.titleSize, bold: true, width: g.titleWidth)
        canvas.draw(titleBlock, x: g.margin, y: g.margin, colour: Self.ink)
        let below = g.margin + titleBlock.height + 2
        let sceneLine = [sceneText(of: cells), summary].filter { !$0.isEmpty }.joined(separator: "   ·   ")
        canvas.draw(
            canvas.textBlock(sceneLine, size: g.smallSize, width: g.titleWidth), x: g.margin, y: below,
            colour: Self.textColour)
        let right = g.margin + g.contentWidth - g.sideWidth
        canvas.draw(
            canvas.textBlock(
                "page \(page) of \(pageCount)", size: g.smallSize + 1, bold: true, width: g.sideWidth, alignment: .right
            ),
            x: right, y: g.margin + 2, colour: Self.ink)
        canvas.draw(
            canvas.textBlock(date, size: g.smallSize, width: g.sideWidth, alignment: .right), x: right, y: below,
            colour: Self.textColour)
        let rule = g.contentTop - g.headerGap / 2
        canvas.line(
            from: CanvasPoint(x: g.margin, y: rule), to: CanvasPoint(x: g.margin + g.contentWidth, y: rule), width: 0.6,
            colour: Self.ruleColour)
    }

    /// "Scene 2: The platform" when the page holds one scene's shots, "Scenes 1–3" when several.
    private func sceneText(of cells: [Cell]) -> String {
        var numbers: [Int] = []
        for cell in cells {
            let index =
                switch cell {
                case .panel(let shot, _, _), .continuation(let shot, _, _): shot
                }
            let number = shots[index].sceneNumber
            if numbers.last != number { numbers.append(number) }
        }
        guard let first = numbers.first, let last = numbers.last else {
            return scenes.count == 1 ? "Scene \(scenes[0].label)" : ""
        }
        guard first == last else { return "Scenes \(first)–\(last)" }
        let title = Self.shortened(scenes.first { $0.number == first }?.title?.trimmed ?? "", to: Self.longestTitle / 2)
        // A scene titled "Scene 2" is not "Scene 2: Scene 2".
        guard !title.isEmpty, title.lowercased() != "scene \(first)" else { return "Scene \(first)" }
        return "Scene \(first): \(title)"
    }

    private func drawPanel(_ index: Int, text: String, continues: Bool, x: Double, y: Double) {
        let g = geometry
        let shot = shots[index]
        let box = g.panelBox(x: x, y: y)
        // A shot of another aspect ratio than the project's is fitted in the box.
        let aspect = Self.aspect(shot.aspectRatio)
        var (width, height) = (box.width, box.width / aspect)
        if height > box.height { (width, height) = (box.height * aspect, box.height) }
        let (panelX, panelY) = (box.x + (box.width - width) / 2, box.y + (box.height - height) / 2)
        canvas.save()
        canvas.translate(x: panelX, y: panelY)
        canvas.clip(x: 0, y: 0, width: width, height: height)
        PanelPainter(
            canvas: canvas, width: width, height: height, background: shot.background ?? .white,
            pictureFiles: pictureFiles
        )
        .paint(shot, onionSkins: [])
        canvas.restore()
        // Under the panel: its label on the left, its duration and start on the right.
        let labelY = box.y + box.height + g.labelGap
        if layout.fields.contains(.label) {
            canvas.draw(
                canvas.textBlock(shot.label, size: g.labelSize, bold: true, width: box.width), x: box.x, y: labelY,
                colour: Self.ink)
        }
        if layout.fields.contains(.duration) {
            let start = "at " + Self.timecode(starts[index])
            let timing = shot.duration.map { Self.durationText($0) + "  ·  " + start } ?? start
            canvas.draw(
                canvas.textBlock(timing, size: g.smallSize, width: box.width, alignment: .right), x: box.x,
                y: labelY + g.labelSize - g.smallSize,
                colour: Self.textColour)
        }
        let area = g.panelTextOrigin(x: x, y: y)
        drawText(text, continues: continues, x: area.x, y: area.y, width: g.panelTextWidth, height: g.panelTextHeight)
    }

    private func drawContinuation(_ index: Int, text: String, continues: Bool, x: Double, y: Double) {
        let g = geometry
        let heading = canvas.textBlock(
            "\(shots[index].label) (continued)", size: g.labelSize, bold: true, italic: true, width: g.cellWidth)
        canvas.draw(heading, x: x, y: y, colour: Self.quietColour)
        drawText(
            text, continues: continues, x: x, y: y + g.labelHeight, width: g.continuationWidth,
            height: g.continuationHeight)
    }

    private func drawText(_ text: String, continues: Bool, x: Double, y: Double, width: Double, height: Double) {
        let g = geometry
        if !text.isEmpty {
            canvas.draw(
                canvas.textBlock(text, size: g.textSize, width: width, boldPrefixes: Self.fieldNames), x: x, y: y,
                colour: Self.textColour)
        }
        if continues {
            let mark = canvas.textBlock(
                Self.continuedMark, size: g.smallSize, italic: true, width: width, alignment: .right)
            canvas.draw(mark, x: x, y: y + height - mark.height, colour: Self.quietColour)
        }
    }

    // MARK: - Words and numbers

    /// `text` cut to `limit` characters, with an ellipsis where it was cut.
    static func shortened(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }

    /// A shot's seconds in the running time (none when it has no duration).
    static func seconds(of shot: ShotView) -> Double {
        guard let duration = shot.duration, duration.isFinite, duration > 0 else { return 0 }
        return duration
    }

    /// `0:12`, `1:05`, `1:02:03`.
    static func timecode(_ seconds: Double) -> String {
        let total = seconds.isFinite ? Int(min(seconds, 1e9).rounded()) : 0
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }

    /// `2 s`, `2.5 s`.
    static func durationText(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "–" }
        let tenths = Int(min(seconds, 1e9) * 10 + 0.5)
        return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
    }

    /// `16:9`, `4:3`, `2.39:1`.
    static func aspectText(_ ratio: Double) -> String {
        let ratio = aspect(ratio)
        for (width, height) in [(16, 9), (4, 3), (1, 1), (9, 16), (3, 2), (21, 9)]
        where abs(ratio - Double(width) / Double(height)) < 0.005 {
            return "\(width):\(height)"
        }
        let hundredths = Int(ratio * 100 + 0.5)
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100):1"
    }

    /// A usable aspect ratio (the default for a broken one).
    static func aspect(_ ratio: Double) -> Double {
        ratio.isFinite && ratio >= 0.1 && ratio <= 10 ? ratio : ProjectView.defaultAspectRatio
    }
}

extension PrintSheet {
    /// Where everything goes on a page, in points.
    struct Geometry {
        let margin = 30.0
        let gutter = 16.0
        let rowGap = 14.0
        let headerGap = 14.0
        let labelGap = 3.0
        let textGap = 4.0
        let titleSize = 15.0
        let contentWidth: Double
        let contentTop: Double
        let contentHeight: Double
        let titleWidth: Double
        let sideWidth: Double
        let cellWidth: Double
        let cellHeight: Double
        let columns: Int
        let textSize: Double
        let smallSize: Double
        let labelSize: Double
        let labelHeight: Double
        let isTextBeside: Bool
        /// The panel's box in a cell (from the cell's origin).
        let panelWidth: Double
        let panelHeight: Double
        let panelTextWidth: Double
        let panelTextHeight: Double
        let continuationWidth: Double
        let continuationHeight: Double

        init(layout: PrintSheetLayout, aspectRatio: Double, canvas: CairoCanvas, title: String) {
            contentWidth = layout.pageWidth - 2 * margin
            sideWidth = min(160, contentWidth * 0.3)
            titleWidth = contentWidth - sideWidth - 12
            let titleHeight = canvas.textBlock(title, size: titleSize, bold: true, width: titleWidth).height
            smallSize = 8
            let headerHeight = titleHeight + 2 + smallSize * 1.4
            contentTop = margin + headerHeight + headerGap
            contentHeight = max(1, layout.pageHeight - margin - contentTop)
            columns = layout.columns
            cellWidth = max(1, (contentWidth - gutter * Double(layout.columns - 1)) / Double(layout.columns))
            cellHeight = max(1, (contentHeight - rowGap * Double(layout.rows - 1)) / Double(layout.rows))
            textSize = min(10.5, max(7.5, cellWidth / 28))
            labelSize = textSize + 1
            labelHeight = labelSize * 1.45
            isTextBeside = layout.isTextBeside
            let lineHeight = textSize * 1.25
            if layout.isTextBeside {
                var width = cellWidth * 0.55
                var height = width / aspectRatio
                if height > cellHeight - labelHeight - labelGap {
                    height = max(1, cellHeight - labelHeight - labelGap)
                    width = height * aspectRatio
                }
                (panelWidth, panelHeight) = (width, height)
                panelTextWidth = max(1, cellWidth - width - 10)
                panelTextHeight = cellHeight
            } else {
                var width = cellWidth
                var height = width / aspectRatio
                // Room for a few lines of text under every panel, however the grid is shaped.
                let text = max(3 * lineHeight, cellHeight * 0.22)
                if height > cellHeight - labelHeight - labelGap - textGap - text {
                    height = max(cellHeight * 0.3, cellHeight - labelHeight - labelGap - textGap - text)
                    width = height * aspectRatio
                }
                (panelWidth, panelHeight) = (width, height)
                panelTextWidth = width
                panelTextHeight = max(0, cellHeight - height - labelGap - labelHeight - textGap)
            }
            continuationWidth = cellWidth
            continuationHeight = max(lineHeight, cellHeight - labelHeight)
        }

        /// The top left corner of the `slot`th cell of a page (reading order).
        func cellOrigin(_ slot: Int) -> (x: Double, y: Double) {
            let (row, column) = (slot / columns, slot % columns)
            return (margin + Double(column) * (cellWidth + gutter), contentTop + Double(row) * (cellHeight + rowGap))
        }

        /// The panel's box in the cell at (x, y): centred over its text, or on the left with text beside it.
        func panelBox(x: Double, y: Double) -> (x: Double, y: Double, width: Double, height: Double) {
            isTextBeside
                ? (x, y, panelWidth, panelHeight) : (x + (cellWidth - panelWidth) / 2, y, panelWidth, panelHeight)
        }

        /// Where the text of the panel's cell at (x, y) starts.
        func panelTextOrigin(x: Double, y: Double) -> (x: Double, y: Double) {
            isTextBeside
                ? (x + panelWidth + 10, y)
                : (x + (cellWidth - panelWidth) / 2, y + panelHeight + labelGap + labelHeight + textGap)
        }

        /// As much of `text` as fits `height` (whole lines) and the rest; room
        /// is kept for the "continued" mark when some is left.
        ///
        /// Only a prefix of a long text is laid out: more characters than
        /// the box could show however narrow they are (an advance of a fifth
        /// of the size, a line of the size), so a caption of a megabyte
        /// costs a few kilobytes' layout a cell, not a megabyte's.
        func fit(_ text: String, width: Double, height: Double, atLeastOneLine: Bool, on canvas: CairoCanvas) -> (
            head: String, rest: String
        ) {
            guard !text.isEmpty else { return ("", "") }
            let most = Int(min(1e6, max(1, width) * max(1, height) / (textSize * textSize * 0.2))) + 256
            let (laidOut, beyond) =
                text.count > most ? (String(text.prefix(most)), String(text.dropFirst(most))) : (text, "")
            let block = canvas.textBlock(laidOut, size: textSize, width: width, boldPrefixes: PrintSheet.fieldNames)
            if beyond.isEmpty, block.height <= height { return (text, "") }
            var lines = block.linesFitting(height: height - smallSize * 1.5)
            if lines == 0, atLeastOneLine { lines = 1 }
            let (head, rest) = block.split(atLine: lines)
            return (head.trimmed, (rest + beyond).trimmed)
        }
    }
}

extension String {
    /// Without white space and line breaks at either end.
    var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
