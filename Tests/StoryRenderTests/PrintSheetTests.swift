import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryRender

/// Print sheets checked with poppler's tools, independently of cairo and
/// Pango: `pdfinfo` (pages, page size), `pdftotext` (every word printed),
/// `pdffonts` (the fonts embedded), `pdfimages` (no bitmaps for strokes) and
/// `pdftoppm` (ink where the panels are).
@Suite struct PrintSheetTests {
    static let a4Landscape = PrintSheetLayout(pageWidth: 841.89, pageHeight: 595.276, rows: 2, columns: 3)

    /// A titled project of `shots` shots in one scene, each captioned "Caption of shot N" and 2.5 s
    /// long; the first has a thick black diagonal.
    static func board(shots: Int) throws -> (board: TestBoard, shots: [OpID]) {
        var board = TestBoard()
        try board.set(.title, to: .string("Night Train"))
        let ids = try board.scene(shots: shots)
        for (index, shot) in ids.enumerated() {
            try board.set(.caption, to: .string("Caption of shot \(index + 1)"), on: shot)
            try board.set(.duration, to: .number(2.5), on: shot)
        }
        if let first = ids.first {
            try board.layer(on: first, strokes: [(Brush(width: 0.04), line((0.1, 0.1), (0.9, 0.9)))])
        }
        return (board, ids)
    }

    static func sheet(_ board: TestBoard, _ layout: PrintSheetLayout = a4Landscape) throws -> [UInt8] {
        try PrintSheet(
            scenes: board.view.scenes, of: board.view, title: "Night Train", date: "2026-11-25", layout: layout
        ).render()
    }

    /// The PDF written to a scratch file, and what `pdfinfo` says of it.
    static func info(_ pdf: [UInt8], in scratch: ScratchDirectory) async throws -> (file: String, pages: Int, size: String) {
        let file = try scratch.write(pdf, named: "sheet-\(UUID().uuidString).pdf")
        let info = try await ExternalProgram.run("pdfinfo", [file])
        #expect(info.status == 0, "\(info.output)")
        let pages = info.output.firstMatch(of: /Pages:\s+(\d+)/).flatMap { Int($0.1) } ?? -1
        let size = info.output.firstMatch(of: /Page size:\s+([0-9.]+ x [0-9.]+) pts/).map { String($0.1) } ?? "?"
        return (file, pages, size)
    }

    static func text(of file: String) async throws -> String {
        let text = try await ExternalProgram.run("pdftotext", ["-layout", file, "-"])
        #expect(text.status == 0, "\(text.output)")
        return text.output
    }

    @Test(.requires("pdftoppm", "pdfimages")) func anA4LandscapeSheetHasTheHeaderPanelsLabelsAndCaptions() async throws {
        let (board, _) = try Self.board(shots: 8)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (file, pages, size) = try await Self.info(try Self.sheet(board), in: scratch)
        #expect(pages == 2, "8 panels at 6 a page")
        #expect(size == "841.89 x 595.276", "A4 landscape")
        let text = try await Self.text(of: file)
        for expected in [
            "Night Train", "page 1 of 2", "page 2 of 2", "2026-11-25", "8 shots", "running time 0:20", "16:9",
            "Scene 1",
        ] {
            #expect(text.contains(expected), "'\(expected)' in: \(text)")
        }
        for shot in 1...8 {
            #expect(text.contains("1-\(shot)"), "the label of shot \(shot)")
            #expect(text.contains("Caption of shot \(shot)"), "the caption of shot \(shot)")
        }
        #expect(text.contains("at 0:15"), "shot 7 starts 15 s in: \(text)")
        // The strokes are vectors: a strokes-only sheet holds no image at all.
        let images = try await ExternalProgram.run("pdfimages", ["-list", file])
        #expect(images.status == 0)
        #expect(images.output.split(separator: "\n").count == 2, "no images: \(images.output)")
        // The first panel (top left cell) has the diagonal's ink in its middle, and none in its corner.
        let raster = try await ExternalProgram.run(
            "pdftoppm", ["-png", "-r", "72", "-f", "1", "-l", "1", "-singlefile", file, scratch.path + "/page"])
        #expect(raster.status == 0, "\(raster.output)")
        let page = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/page.png"))))
        #expect(page.width == 842 && (595...596).contains(page.height))
        let geometry = try #require(try Self.firstPanel(board))
        let middle = page[Int(geometry.x + geometry.width / 2), Int(geometry.y + geometry.height / 2)]
        #expect(middle.isDark, "the stroke in the first panel: \(middle)")
        let corner = page[Int(geometry.x + geometry.width * 0.85), Int(geometry.y + geometry.height * 0.15)]
        #expect(corner.isWhite, "no stroke in the panel's corner: \(corner)")
        let second = page[Int(geometry.x + geometry.width * 1.5 + 16), Int(geometry.y + geometry.height / 2)]
        #expect(second.isWhite, "the second panel is empty: \(second)")
    }

    /// The first panel's rectangle on page 1, in points.
    static func firstPanel(_ board: TestBoard) throws -> (x: Double, y: Double, width: Double, height: Double)? {
        let canvas = try CairoCanvas(pdfPageWidth: a4Landscape.pageWidth, pageHeight: a4Landscape.pageHeight, title: "")
        let geometry = PrintSheet.Geometry(
            layout: a4Landscape, aspectRatio: 16.0 / 9, canvas: canvas, title: "Night Train")
        let origin = geometry.cellOrigin(0)
        let box = geometry.panelBox(x: origin.x, y: origin.y)
        return (box.x, box.y, box.width, box.height)
    }

    @Test func longTextFlowsOnToContinuationsAndEveryWordIsPrinted() async throws {
        var (board, shots) = try Self.board(shots: 3)
        let words = (1...260).map { "word\($0)" }
        try board.set(.caption, to: .string(words.joined(separator: " ")), on: shots[0])
        try board.set(.dialogue, to: .string("Mind the gap, Anna."), on: shots[0])
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (file, pages, _) = try await Self.info(try Self.sheet(board), in: scratch)
        let text = try await Self.text(of: file)
        let printed = Set(text.split(whereSeparator: { $0.isWhitespace }).map(String.init))
        let missing = words.filter { !printed.contains($0) }
        #expect(missing.isEmpty, "every word is on the sheet; missing: \(missing)")
        #expect(text.contains("Dialogue: Mind the gap, Anna."), "\(text)")
        #expect(text.contains("continued →"), "the cut is marked")
        #expect(text.contains("1-1 (continued)"), "the continuation says whose text it is")
        // The panels after it still come, after its continuations.
        #expect(text.contains("Caption of shot 3"))
        let cells = PrintSheet.plan(
            board.view.shots, fields: Self.a4Landscape.fields,
            geometry: PrintSheet.Geometry(
                layout: Self.a4Landscape, aspectRatio: 16.0 / 9,
                canvas: try CairoCanvas(pdfPageWidth: 841.89, pageHeight: 595.276, title: ""), title: "Night Train"),
            canvas: try CairoCanvas(pdfPageWidth: 841.89, pageHeight: 595.276, title: ""))
        #expect(cells.count > 3, "continuation cells were planned")
        #expect(pages == (cells.count + 5) / 6)
    }

    @Test(.requires("pdffonts")) func aCJKCaptionIsPrintedInAFontThatHasIt() async throws {
        var (board, shots) = try Self.board(shots: 1)
        try board.set(.caption, to: .string("夜行列车进站。安娜看着窗外。"), on: shots[0])
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (file, _, _) = try await Self.info(try Self.sheet(board), in: scratch)
        let text = try await Self.text(of: file)
        #expect(text.contains("夜行列车进站。安娜看着窗外。"), "\(text)")
        let fonts = try await ExternalProgram.run("pdffonts", [file])
        #expect(fonts.status == 0)
        let cjk = ["WenQuanYi", "Droid", "Noto", "Source Han", "AR PL"]
        #expect(cjk.contains { fonts.output.contains($0) }, "a CJK font embedded: \(fonts.output)")
        #expect(
            fonts.output.split(separator: "\n").dropFirst(2).allSatisfy { $0.contains(" yes ") },
            "every font embedded: \(fonts.output)")
    }

    @Test(arguments: [
        (rows: 1, columns: 1, pages: 13), (rows: 2, columns: 2, pages: 4), (rows: 3, columns: 4, pages: 2),
        (rows: 1, columns: 2, pages: 7),
    ])
    func theGridSetsThePageCount(rows: Int, columns: Int, pages: Int) async throws {
        let (board, _) = try Self.board(shots: 13)
        var layout = Self.a4Landscape
        (layout.rows, layout.columns) = (rows, columns)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let info = try await Self.info(try Self.sheet(board, layout), in: scratch)
        #expect(info.pages == pages, "\(rows)x\(columns)")
    }

    @Test func aPageRangePrintsThosePagesNumberedAsInTheWholeSheet() async throws {
        let (board, _) = try Self.board(shots: 13)
        var layout = Self.a4Landscape
        (layout.rows, layout.columns, layout.pages) = (2, 2, 2...3)
        layout.pageWidth = 612
        layout.pageHeight = 792
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (file, pages, size) = try await Self.info(try Self.sheet(board, layout), in: scratch)
        #expect(pages == 2)
        #expect(size == "612 x 792", "Letter portrait")
        let text = try await Self.text(of: file)
        #expect(
            text.contains("page 2 of 4") && text.contains("page 3 of 4") && !text.contains("page 1 of 4"), "\(text)")
        #expect(text.contains("Caption of shot 5") && !text.contains("Caption of shot 4"), "\(text)")
        layout.pages = 5...9
        #expect(throws: RenderError.self) { try Self.sheet(board, layout) }
        layout.pages = nil
        layout.rows = 0
        #expect(throws: RenderError.self) { try Self.sheet(board, layout) }
    }

    @Test func aContactSheetHasEveryPanelWithItsLabel() throws {
        let (board, _) = try Self.board(shots: 7)
        let png = try ContactSheet.render(board.view.scenes, of: board.view, title: "Night Train", width: 1600)
        let image = try RasterImage(png: png)
        #expect(image.width == 1600)
        // 5 columns of 6-pixel-gapped panels: the first has the diagonal through its middle, the second none.
        let cell = (1600.0 - 48 - 16 * 4) / 5
        let top = 24 + (26 * 2.4).rounded()
        #expect(image[Int(24 + cell / 2), Int(top + cell / 16 * 9 / 2)].isDark, "the stroke in the first panel")
        #expect(
            image[Int(24 + cell + 16 + cell / 2), Int(top + cell / 16 * 9 / 2)].isWhite, "the second panel is empty")
        #expect(throws: RenderError.self) {
            try ContactSheet.render(board.view.scenes, of: board.view, title: "", width: 100)
        }
    }
}

extension PrintSheetTests {
    @Test func aHugeCaptionFlowsOverPagesQuicklyAndAnEmptyProjectSaysSo() async throws {
        var (board, shots) = try Self.board(shots: 2)
        // 10,000 words (59 KB of the 64 KiB a field may hold): many pages, laid out a cell at a time.
        let words = (1...10_000).map { "w\($0)" }
        try board.set(.caption, to: .string(words.joined(separator: " ")), on: shots[0])
        // This thread's CPU time, not the wall clock: a loaded machine's stall is not the planner's.
        func threadSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        let start = threadSeconds()
        let title = String(repeating: "Night Train ", count: 100)
        let sheet = try PrintSheet(
            scenes: board.view.scenes, of: board.view, title: title, date: "", layout: Self.a4Landscape)
        #expect(threadSeconds() - start < 5, "planning took \(threadSeconds() - start) s of CPU")
        #expect(sheet.pageCount > 10, "\(sheet.pageCount) pages")
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let whole = try await Self.text(of: try Self.info(try sheet.render(), in: scratch).file)
        let printed = Set(whole.split(whereSeparator: { $0.isWhitespace }).map(String.init))
        #expect(words.filter { !printed.contains($0) }.isEmpty, "every word of the caption is on the sheet")
        var layout = Self.a4Landscape
        layout.pages = sheet.pageCount...sheet.pageCount
        let last = try PrintSheet(scenes: board.view.scenes, of: board.view, title: title, date: "", layout: layout)
            .render()
        let text = try await Self.text(of: try Self.info(last, in: scratch).file)
        #expect(
            text.contains("w10000") && text.contains("Caption of shot 2"),
            "the last page ends the caption, then the next panel: \(text)")
        #expect(
            text.contains("Night Train Night Train") && text.contains("…") && !text.contains(title),
            "a long title is shortened in the header")

        let empty = TestBoard()
        let (file, pages, _) = try await Self.info(
            try PrintSheet(
                scenes: empty.view.scenes, of: empty.view, title: "Nothing yet", date: "", layout: Self.a4Landscape
            ).render(), in: scratch)
        #expect(pages == 1)
        #expect(try await Self.text(of: file).contains("No shots to print."))
    }
}

extension PrintSheetTests {
    @Test func fieldNamesAreBoldAndTheTextIsUnchanged() throws {
        #expect(
            TextBlock.markup("Dialogue: a<b\nx & y", boldPrefixes: ["Dialogue: "])
                == "<b>Dialogue: </b>a&lt;b\nx &amp; y")
        #expect(TextBlock.markup("no field <here>", boldPrefixes: ["Dialogue: "]) == nil)
        let canvas = try CairoCanvas(pdfPageWidth: 600, pageHeight: 400, title: "")
        let text = "Caption with <angle> & ampersand\nNotes: dolly in </b> slowly"
        let block = canvas.textBlock(text, size: 10, width: 300, boldPrefixes: PrintSheet.fieldNames)
        #expect(block.split(atLine: 0).rest == text, "the laid-out text is the text, markup and all characters kept")
    }
}
