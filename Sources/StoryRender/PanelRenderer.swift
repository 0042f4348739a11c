package import StoryCore

/// Draws a shot as a storyboard panel, to PNG, SVG or PDF through one
/// drawing code path on cairo: the shot's background; with `onion`, the
/// strokes of up to that many shots before it (tinted red) and after it
/// (green) in its scene, fainter with distance; its visible layers bottom to
/// top, each at its opacity and moved by its transform (an image layer's
/// picture fitted to the frame first); every stroke in its brush's colour
/// and alpha with the width the pen's pressure gave each point, and the
/// brush's caps and joins (an eraser paints the background); then a thin
/// frame. The panel has the shot's aspect ratio.
///
/// Pure but for reading the picture files it is given: call it off any actor
/// or event loop that must stay responsive (it is CPU-bound, and a large
/// panel takes a while). Memory: the surface (4 bytes a pixel for PNG, an
/// intermediate surface per translucent layer), the file's bytes, and one
/// picture at a time, decoded at about its drawn size.
package enum PanelRenderer {
    /// The width when none is asked for.
    package static let defaultWidth = 1600
    /// The widths that can be asked for, in pixels.
    package static let widths = 16...8192
    /// The tallest panel, in pixels (a narrow aspect ratio limits the width).
    package static let maximumHeight = 8192
    /// How many shots on each side an onion skin may show.
    package static let onionRange = 0...10
    /// A picture decoding to more pixels than this (160 MB) is drawn as an outline.
    package static let maximumPicturePixels = 40_000_000

    /// The tint of the shots before (red) and after (green), as storyboard and
    /// animation tools show them, unless the project chose its own (`onionBefore`, `onionAfter`).
    static let previousTint = (red: 0.86, green: 0.12, blue: 0.10)
    static let nextTint = (red: 0.08, green: 0.60, blue: 0.20)
    /// How opaque the nearest onion skin is; farther ones fade linearly.
    static let onionOpacity = 0.5
    static let frameColour = Color(red: 0x33, green: 0x33, blue: 0x33)
    static let placeholderColour = Color(red: 0x88, green: 0x88, blue: 0x88)
    /// Narrower lines are drawn half a pixel wide (a hairline still shows).
    static let minimumWidth = 0.5
    /// A point's pressure counts as at least this (a pen touching down at 0 still draws).
    static let minimumPressure = 0.1

    /// The pictures a render of `shot` draws (visible image layers), each once: the files to hand to `render`.
    package static func pictures(drawnIn shot: ShotView) -> [MediaReference] {
        var seen: Set<BlobHash> = []
        return shot.layers.filter { $0.isVisible && $0.opacity > 0 }.compactMap(\.image).filter { seen.insert($0.hash).inserted }
    }

    /// The panel's height for `width` (the shot's aspect ratio).
    package static func height(of shot: ShotView, width: Int) -> Int {
        let aspect = shot.aspectRatio.isFinite && shot.aspectRatio > 0 ? shot.aspectRatio : ProjectView.defaultAspectRatio
        let height = (Double(width) / aspect).rounded()
        return height < Double(Int.max / 2) ? max(1, Int(height)) : Int.max / 2
    }

    /// Renders `shot` of `project`.
    ///
    /// - Parameters:
    ///   - width: in pixels (`widths`); the height follows from the aspect ratio.
    ///   - onion: shots on each side to show faintly (`onionRange`).
    ///   - pictureFiles: the file holding each picture's bytes, by hash; a
    ///     picture without one (not on this machine yet), or that does not
    ///     decode, is drawn as a labelled outline where it goes. Only the
    ///     pictures drawn are read.
    /// - Returns: the file's bytes.
    /// - Throws: `RenderError.outOfRange` for a width, height or onion out of range; `.cairo` if drawing fails.
    package static func render(
        _ shot: ShotView, in project: ProjectView, as format: PanelFormat, width: Int = defaultWidth, onion: Int = 0,
        pictureFiles: [BlobHash: String] = [:]
    ) throws(RenderError) -> [UInt8] {
        guard widths.contains(width) else {
            throw RenderError(.outOfRange, "width must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(width)")
        }
        guard onionRange.contains(onion) else {
            throw RenderError(.outOfRange, "onion must be \(onionRange.lowerBound) to \(onionRange.upperBound), not \(onion)")
        }
        let height = height(of: shot, width: width)
        guard height <= maximumHeight else {
            let widest = max(1, Int(Double(maximumHeight) * shot.aspectRatio))
            throw RenderError(
                .outOfRange,
                "a \(width)-pixel-wide panel of this shot (aspect ratio \(shot.aspectRatio)) is \(height) pixels high, over "
                    + "\(maximumHeight); ask for at most \(widest) pixels")
        }
        let canvas = try CairoCanvas(format: format, width: width, height: height, title: "Shot \(shot.label)")
        let painter = PanelPainter(
            canvas: canvas, width: Double(width), height: Double(height), background: shot.background ?? .white, pictureFiles: pictureFiles)
        painter.paint(shot, onionSkins: onionSkins(of: shot, in: project, count: onion))
        return try canvas.finish()
    }

    /// The shots an onion skin of `count` shows around `shot`: only in its own
    /// scene, farthest first (nearer ones are drawn over them), with each one's tint and opacity.
    static func onionSkins(of shot: ShotView, in project: ProjectView, count: Int) -> [OnionSkin] {
        guard count > 0, let scene = project.scenes.first(where: { $0.shots.contains { $0.id == shot.id } }),
            let index = scene.shots.firstIndex(where: { $0.id == shot.id })
        else { return [] }
        func tint(_ chosen: Color?, else standard: (red: Double, green: Double, blue: Double)) -> (red: Double, green: Double, blue: Double) {
            guard let chosen else { return standard }
            return (Double(chosen.red) / 255, Double(chosen.green) / 255, Double(chosen.blue) / 255)
        }
        let (before, after) = (tint(project.onionBefore, else: previousTint), tint(project.onionAfter, else: nextTint))
        var skins: [OnionSkin] = []
        for distance in stride(from: count, through: 1, by: -1) {
            let opacity = onionOpacity * Double(count + 1 - distance) / Double(count)
            if index - distance >= 0 { skins.append(OnionSkin(shot: scene.shots[index - distance], tint: before, opacity: opacity)) }
            if index + distance < scene.shots.count {
                skins.append(OnionSkin(shot: scene.shots[index + distance], tint: after, opacity: opacity))
            }
        }
        return skins
    }
}

/// A neighbouring shot shown faintly under the one drawn.
struct OnionSkin {
    let shot: ShotView
    let tint: (red: Double, green: Double, blue: Double)
    let opacity: Double
}

/// The drawing of one panel on a canvas, `width`×`height` from the
/// canvas's origin (a whole canvas, or a panel of a sheet moved in place).
struct PanelPainter {
    let canvas: CairoCanvas
    let width: Double
    let height: Double
    let background: Color
    let pictureFiles: [BlobHash: String]

    func paint(_ shot: ShotView, onionSkins: [OnionSkin]) {
        canvas.paint(background)
        for skin in onionSkins {
            // The neighbour's ink as one silhouette, painted in its tint: strokes only (a
            // picture would cover the panel in a tinted block), erasers taking ink away.
            canvas.beginGroup()
            for layer in skin.shot.layers where layer.image == nil { draw(layer, asOnionSkin: true) }
            canvas.endGroup(tintedWith: skin.tint, alpha: skin.opacity)
        }
        for layer in shot.layers { draw(layer, asOnionSkin: false) }
        let line = max(1, width / 800)
        canvas.strokeRectangle(
            x: line / 2, y: line / 2, width: width - line, height: height - line, lineWidth: line, colour: PanelRenderer.frameColour)
    }

    private func draw(_ layer: LayerView, asOnionSkin: Bool) {
        let opacity = min(1, max(0, layer.opacity))
        guard layer.isVisible, opacity > 0 else { return }
        let transform = pixelTransform(layer.transform)
        // A transform that flattens the layer to a line or a point shows nothing (and cairo refuses
        // a matrix it cannot invert, which would fail the whole panel).
        let determinant = transform.a * transform.d - transform.b * transform.c
        guard transform.isFinite, abs(determinant) > 1e-9 else { return }
        let grouped = opacity < 1
        if grouped { canvas.beginGroup() }
        canvas.save()
        canvas.transform(by: transform)
        if let image = layer.image, !asOnionSkin { draw(image, fit: layer.fit, enlargedBy: transform) }
        for stroke in layer.strokes { draw(stroke, asOnionSkin: asOnionSkin) }
        canvas.restore()
        if grouped { canvas.endGroup(opacity: opacity) }
    }

    /// A transform of the unit frame as a transform of the panel's pixels.
    private func pixelTransform(_ t: Affine) -> Affine { Self.pixelTransform(t, width: width, height: height) }

    /// A transform of the unit frame as a transform of a `width`×`height` panel's pixels.
    static func pixelTransform(_ t: Affine, width: Double, height: Double) -> Affine {
        Affine(a: t.a, b: t.b * height / width, c: t.c * width / height, d: t.d, tx: t.tx * width, ty: t.ty * height)
    }

    private func draw(_ stroke: StrokeView, asOnionSkin: Bool) {
        guard let geometry = StrokeGeometry(stroke, width: width, height: height) else { return }
        let brush = stroke.brush
        let isEraser = brush.tool == .eraser
        let colour = isEraser ? background : brush.color
        let erasing = asOnionSkin && isEraser
        switch geometry {
        case .line(let points, let lineWidth):
            canvas.stroke(points, width: lineWidth, cap: brush.cap, join: brush.join, colour: colour, erasing: erasing)
        case .outline(let shapes, _):
            canvas.fill(shapes, colour: colour, erasing: erasing)
        }
    }

    /// An image layer's picture: fitted to the frame (`contain`, `cover`,
    /// `stretch`), in the layer's transform (already applied to the canvas).
    private func draw(_ image: MediaReference, fit: String, enlargedBy transform: Affine) {
        let (x, y, w, h) = Self.pictureBox(of: image, fit: fit, width: width, height: height)
        let name = "image " + String(image.hash.description.prefix(12))
        guard let path = pictureFiles[image.hash] else {
            placeholder(x: x, y: y, width: w, height: h, label: "\(name) not on this machine yet")
            return
        }
        // Decoded at the size it is drawn at (twice that in a vector file, which may be zoomed or printed).
        let enlargement = max(
            (transform.a * transform.a + transform.b * transform.b).squareRoot(),
            (transform.c * transform.c + transform.d * transform.d).squareRoot())
        let factor = min(enlargement, 16) * (canvas.format.isVector ? 2 : 1)
        let wanted = (width: max(1, Int((w * factor).rounded(.up))), height: max(1, Int((h * factor).rounded(.up))))
        switch CairoPicture.load(
            path: path, type: image.type, wanted: wanted, maximumPixels: PanelRenderer.maximumPicturePixels,
            keepingOriginal: canvas.format.isVector)
        {
        case .success(let picture): canvas.draw(picture, x: x, y: y, width: w, height: h)
        case .failure(let failure): placeholder(x: x, y: y, width: w, height: h, label: "\(name): \(failure.reason)")
        }
    }

    /// Where an image layer's picture goes in a `width`×`height` panel (before the layer's transform).
    static func pictureBox(of image: MediaReference, fit: String, width: Double, height: Double) -> (
        x: Double, y: Double, width: Double, height: Double
    ) {
        let (pictureWidth, pictureHeight) = (Double(max(image.pixelWidth, 1)), Double(max(image.pixelHeight, 1)))
        var (w, h) = (width, height)
        if fit != "stretch" {
            let scale =
                fit == "cover"
                ? max(width / pictureWidth, height / pictureHeight) : min(width / pictureWidth, height / pictureHeight)
            (w, h) = (pictureWidth * scale, pictureHeight * scale)
        }
        return ((width - w) / 2, (height - h) / 2, w, h)
    }

    /// A dashed outline where a picture goes, saying why it is not drawn.
    private func placeholder(x: Double, y: Double, width w: Double, height h: Double, label: String) {
        let line = max(1, width / 800)
        canvas.strokeRectangle(
            x: x, y: y, width: w, height: h, lineWidth: line, colour: PanelRenderer.placeholderColour, dash: [8 * line, 6 * line])
        canvas.text(label, centeredAt: CanvasPoint(x: x + w / 2, y: y + h / 2), size: max(12, height / 30), colour: PanelRenderer.placeholderColour)
    }
}
