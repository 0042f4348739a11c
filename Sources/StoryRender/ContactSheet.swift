package import StoryCore

/// Every panel of a project in one PNG: a grid in reading order, each panel
/// with its label and duration under it, under a title line.
///
/// The panels are drawn one after another straight onto the one image, so
/// memory is the image (4 bytes a pixel, at most `maximumPixels`) and its
/// PNG; the grid gets more columns, and the panels smaller, before the image
/// would be larger than that.
package enum ContactSheet {
    /// The widths that can be asked for, in pixels.
    package static let widths = 320...4096
    /// The largest image drawn (128 MB of pixels).
    package static let maximumPixels = 32_000_000
    /// About how wide a panel is drawn, in pixels (fewer columns on a narrow sheet).
    static let panelWidth = 260.0

    /// Draws the contact sheet of `scenes` `width` pixels wide.
    /// - Throws: `RenderError.outOfRange` for a width out of range, or so
    ///   many shots that their panels would be specks; `.cairo` if drawing fails.
    /// - Complexity: draws every shot once.
    package static func render(
        _ scenes: [SceneView], of project: ProjectView, title: String, width: Int,
        pictureFiles: [BlobHash: String] = [:]
    ) throws(RenderError) -> [UInt8] {
        guard widths.contains(width) else {
            throw RenderError(
                .outOfRange, "width must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(width)")
        }
        let shots = scenes.flatMap(\.shots)
        let aspect = PrintSheet.aspect(project.aspectRatio)
        let scale = Double(width) / 1600
        let margin = (24 * scale).rounded()
        let gutter = (16 * scale).rounded()
        let titleSize = 26 * scale
        let headerHeight = (titleSize * 2.4).rounded()
        let contentWidth = Double(width) - 2 * margin
        var columns = max(1, min(max(shots.count, 1), Int(contentWidth / panelWidth)))
        func grid(_ columns: Int) -> (cell: Double, label: Double, row: Double, height: Int) {
            let cell = (contentWidth - gutter * Double(columns - 1)) / Double(columns)
            let label = max(9, cell / 18)
            let row = cell / aspect + label * 1.7 + gutter
            let rows = max(1, (shots.count + columns - 1) / columns)
            return (cell, label, row, Int((margin + headerHeight + Double(rows) * row + margin).rounded(.up)))
        }
        var sizes = grid(columns)
        while sizes.height * width > maximumPixels {
            guard columns < shots.count, (contentWidth - gutter * Double(columns)) / Double(columns + 1) >= 24 else {
                throw RenderError(
                    .outOfRange,
                    "\(shots.count) shots do not fit a contact sheet \(width) pixels wide; ask for a wider one")
            }
            columns += 1
            sizes = grid(columns)
        }
        let canvas = try CairoCanvas(format: .png, width: width, height: sizes.height, title: title)
        canvas.paint(.white)
        let time = shots.reduce(0) { $0 + PrintSheet.seconds(of: $1) }
        let heading = canvas.textBlock(title, size: titleSize, bold: true, width: contentWidth * 0.65)
        canvas.draw(heading, x: margin, y: margin, colour: PrintSheet.ink)
        let stats =
            "\(shots.count) \(shots.count == 1 ? "shot" : "shots") · running time \(PrintSheet.timecode(time)) · \(PrintSheet.aspectText(project.aspectRatio))"
        canvas.draw(
            canvas.textBlock(stats, size: titleSize * 0.55, width: contentWidth * 0.35, alignment: .right),
            x: margin + contentWidth * 0.65,
            y: margin + titleSize * 0.35, colour: PrintSheet.textColour)
        for (index, shot) in shots.enumerated() {
            let (row, column) = (index / columns, index % columns)
            let x = margin + Double(column) * (sizes.cell + gutter)
            let y = margin + headerHeight + Double(row) * sizes.row
            let shotAspect = PrintSheet.aspect(shot.aspectRatio)
            var (w, h) = (sizes.cell, sizes.cell / shotAspect)
            if h > sizes.cell / aspect { (w, h) = (sizes.cell / aspect * shotAspect, sizes.cell / aspect) }
            let (panelX, panelY) = ((x + (sizes.cell - w) / 2).rounded(), y.rounded())
            canvas.save()
            canvas.translate(x: panelX, y: panelY)
            canvas.clip(x: 0, y: 0, width: w.rounded(), height: h.rounded())
            PanelPainter(
                canvas: canvas, width: w.rounded(), height: h.rounded(), background: shot.background ?? .white,
                pictureFiles: pictureFiles
            )
            .paint(shot, onionSkins: [])
            canvas.restore()
            let labelY = y + sizes.cell / aspect + sizes.label * 0.3
            canvas.draw(
                canvas.textBlock(shot.label, size: sizes.label, bold: true, width: sizes.cell), x: x, y: labelY,
                colour: PrintSheet.ink)
            if let duration = shot.duration {
                canvas.draw(
                    canvas.textBlock(
                        PrintSheet.durationText(duration), size: sizes.label * 0.85, width: sizes.cell,
                        alignment: .right),
                    x: x, y: labelY + sizes.label * 0.1, colour: PrintSheet.quietColour)
            }
        }
        return try canvas.finish()
    }
}
