package import StoryCore

/// A shot as one frame of an animatic: the panel, drawn as `PanelRenderer`
/// draws it, fitted into a frame of a fixed size keeping its aspect ratio
/// (black bars above and below, or at the sides), with an optional caption
/// burned in at the bottom (Pango: shaped, wrapped, with font fallback) on
/// a dark band so it reads over any drawing. A PNG, rendered once per shot
/// and held by the encoder for the shot's length.
///
/// Pure but for reading the picture files it is given; CPU-bound (call it
/// off any actor or event loop that must stay responsive). Memory: the
/// frame (4 bytes a pixel) and the PNG's bytes.
package enum AnimaticFrame {
    /// The frame sizes that can be asked for, each side in pixels.
    package static let widths = 16...7680
    package static let heights = 16...4320

    static let barColour = Color.black
    static let captionColour = Color.white
    /// How opaque the band behind a caption is.
    static let bandOpacity = 0.6

    /// Where the panel goes in a `width`×`height` frame: as large as fits at
    /// the shot's aspect ratio, centred.
    package static func panelBox(of shot: ShotView, width: Int, height: Int) -> (x: Double, y: Double, width: Double, height: Double) {
        let aspect = shot.aspectRatio.isFinite && shot.aspectRatio > 0 ? shot.aspectRatio : ProjectView.defaultAspectRatio
        let (frameWidth, frameHeight) = (Double(width), Double(height))
        var (w, h) = (frameWidth, (frameWidth / aspect).rounded())
        if h > frameHeight { (w, h) = ((frameHeight * aspect).rounded(), frameHeight) }
        return (((frameWidth - w) / 2).rounded(.down), ((frameHeight - h) / 2).rounded(.down), max(1, w), max(1, h))
    }

    /// Renders `shot` as a `width`×`height` PNG frame.
    ///
    /// - Parameters:
    ///   - caption: text burned in at the bottom (nil or blank: none); a long
    ///     one wraps, up to a third of the frame's height.
    ///   - pictureFiles: as for `PanelRenderer.render`.
    /// - Returns: the PNG's bytes.
    /// - Throws: `RenderError.outOfRange` for a size out of range; `.cairo` if drawing fails.
    package static func render(
        _ shot: ShotView, width: Int, height: Int, caption: String? = nil, pictureFiles: [BlobHash: String] = [:]
    ) throws(RenderError) -> [UInt8] {
        guard widths.contains(width), heights.contains(height) else {
            throw RenderError(
                .outOfRange,
                "an animatic frame is \(widths.lowerBound) to \(widths.upperBound) pixels wide and \(heights.lowerBound) to "
                    + "\(heights.upperBound) high, not \(width)×\(height)")
        }
        let canvas = try CairoCanvas(format: .png, width: width, height: height, title: "Shot \(shot.label)")
        canvas.paint(barColour)
        let box = panelBox(of: shot, width: width, height: height)
        canvas.save()
        canvas.translate(x: box.x, y: box.y)
        canvas.clip(x: 0, y: 0, width: box.width, height: box.height)
        PanelPainter(
            canvas: canvas, width: box.width, height: box.height, background: shot.background ?? .white, pictureFiles: pictureFiles
        ).paint(shot, onionSkins: [])
        canvas.restore()
        if let caption = caption?.trimmingWhitespace(), !caption.isEmpty { burnIn(caption, on: canvas) }
        return try canvas.finish()
    }

    /// A caption centred at the bottom, on a translucent band; what does not
    /// fit in a third of the frame is cut at a line (subtitles carry it whole).
    private static func burnIn(_ caption: String, on canvas: CairoCanvas) {
        let (width, height) = (Double(canvas.width), Double(canvas.height))
        // About 42 characters a line, as subtitles are set; never below 8 pixels.
        let size = max(8, min(height / 18, width / 30))
        let margin = (size * 0.6).rounded()
        var block = canvas.textBlock(caption, size: size, width: width - 4 * margin, alignment: .center)
        let room = height / 3
        if block.height > room {
            let lines = max(1, block.linesFitting(height: room))
            block = canvas.textBlock(block.split(atLine: lines).head, size: size, width: width - 4 * margin, alignment: .center)
        }
        let bandHeight = block.height + 2 * margin * 0.6
        let bandTop = height - bandHeight - margin
        let textWidth = block.usedWidth
        canvas.fillRectangle(
            x: (width - textWidth) / 2 - margin, y: bandTop, width: textWidth + 2 * margin, height: bandHeight, colour: barColour,
            alpha: bandOpacity)
        canvas.draw(block, x: 2 * margin, y: bandTop + margin * 0.6, colour: captionColour)
    }
}

extension String {
    /// Without white space (and line breaks) at either end.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
