/// How a print sheet is laid out: the page in points, the grid of panels on
/// it, where each panel's text goes and what it says, and which pages to draw.
package struct PrintSheetLayout: Hashable, Sendable {
    /// What is printed with each panel.
    package enum Field: String, CaseIterable, Hashable, Sendable {
        /// The shot's label (`1-2`), under the panel.
        case label
        case caption, dialogue, action, notes
        /// The shot's duration and where it starts in the running time, under the panel.
        case duration
    }

    /// The page, in PDF points (1/72 inch).
    package var pageWidth: Double
    package var pageHeight: Double
    /// Panels down and across a page.
    package var rows: Int
    package var columns: Int
    /// Text to the right of each panel rather than under it.
    package var isTextBeside: Bool
    /// In the order they are printed.
    package var fields: [Field]
    /// Only these pages (numbered in the whole sheet); nil: every page.
    package var pages: ClosedRange<Int>?

    /// The rows and columns a sheet may have.
    package static let gridRange = 1...8
    /// The smallest and largest page side, in points (a business card to a plotter's 2 m).
    package static let pageSides = 144.0...5760.0

    package init(
        pageWidth: Double, pageHeight: Double, rows: Int, columns: Int, isTextBeside: Bool = false,
        fields: [Field] = [.label, .caption, .dialogue, .duration], pages: ClosedRange<Int>? = nil
    ) {
        self.pageWidth = pageWidth
        self.pageHeight = pageHeight
        self.rows = rows
        self.columns = columns
        self.isTextBeside = isTextBeside
        self.fields = fields
        self.pages = pages
    }

    /// - Throws: `RenderError.outOfRange` for a page or grid out of range.
    func validated() throws(RenderError) -> Self {
        guard Self.pageSides.contains(pageWidth), Self.pageSides.contains(pageHeight) else {
            throw RenderError(
                .outOfRange,
                "a page must be \(Int(Self.pageSides.lowerBound)) to \(Int(Self.pageSides.upperBound)) pt a side")
        }
        guard Self.gridRange.contains(rows), Self.gridRange.contains(columns) else {
            throw RenderError(
                .outOfRange,
                "a grid must have \(Self.gridRange.lowerBound) to \(Self.gridRange.upperBound) rows and columns, not \(rows)x\(columns)"
            )
        }
        if let pages, pages.lowerBound < 1 { throw RenderError(.outOfRange, "pages are counted from 1") }
        return self
    }
}
