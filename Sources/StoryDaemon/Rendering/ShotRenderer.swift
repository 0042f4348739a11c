import StoryCore

/// Draws a shot as SVG: its background, then its visible layers bottom to top
/// (layer opacity and transform applied), each stroke a polyline in its brush
/// colour and width; `onion` previous and next shots are drawn faded beneath.
enum ShotRenderer {
    /// - Parameter images: each image layer's picture as a `data:` URI, by
    ///   blob hash; an image not given (not on this machine yet, or too large
    ///   to inline) is drawn as a labelled outline where it goes.
    static func svg(
        of shot: ShotView, in project: ProjectView, onion: Int = 0, width: Double = 1600, images: [BlobHash: String] = [:]
    ) -> String {
        let height = (width / max(shot.aspectRatio, 0.01)).rounded()
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(number(width))" height="\(number(height))" \
            viewBox="0 0 \(number(width)) \(number(height))">
            <title>Shot \(escape(shot.label))</title>

            """
        let background = shot.background ?? Color(red: 255, green: 255, blue: 255)
        out += "<rect width=\"100%\" height=\"100%\" fill=\"\(hex(background))\"\(opacityAttribute("fill-opacity", background))/>\n"
        if onion > 0 {
            let shots = project.shots
            if let index = shots.firstIndex(where: { $0.id == shot.id }) {
                let neighbours = (max(0, index - onion)..<index).map { (shots[$0], index - $0) }
                    + ((index + 1)..<min(shots.count, index + onion + 1)).map { (shots[$0], $0 - index) }
                for (neighbour, distance) in neighbours {
                    let fade = 0.3 / Double(distance)
                    out += "<g class=\"onion\" data-shot=\"\(escape(neighbour.label))\" opacity=\"\(number(fade, decimals: 2))\">\n"
                    out += layers(of: neighbour, width: width, height: height, background: background, images: images)
                    out += "</g>\n"
                }
            }
        }
        out += layers(of: shot, width: width, height: height, background: background, images: images)
        out += "</svg>\n"
        return out
    }

    private static func layers(of shot: ShotView, width: Double, height: Double, background: Color, images: [BlobHash: String]) -> String {
        var out = ""
        for layer in shot.layers where layer.isVisible {
            out += "<g data-layer=\"\(escape(layer.name ?? layer.id.description))\" opacity=\"\(number(layer.opacity, decimals: 2))\">\n"
            let t = layer.transform
            if let image = layer.image {
                out += picture(image, fit: layer.fit, transform: t, width: width, height: height, uri: images[image.hash])
            }
            for stroke in layer.strokes {
                let points = stroke.transformedPoints()
                guard !points.isEmpty else { continue }
                var path = ""
                for (index, point) in points.enumerated() {
                    let x = (t.a * point.x + t.c * point.y + t.tx) * width
                    let y = (t.b * point.x + t.d * point.y + t.ty) * height
                    path += (index == 0 ? "M" : " L") + number(x) + " " + number(y)
                }
                if points.count == 1 { path += " l0 0" }
                let colour = stroke.brush.tool == .eraser ? background : stroke.brush.color
                let pressure = points.reduce(0) { $0 + $1.pressure } / Double(points.count)
                let strokeWidth = max(0.5, Double(stroke.brush.width) * width * max(pressure, 0.1))
                out += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(hex(colour))\"\(opacityAttribute("stroke-opacity", colour))"
                out += " stroke-width=\"\(number(strokeWidth))\" stroke-linecap=\"\(stroke.brush.cap.name)\" stroke-linejoin=\"\(stroke.brush.join.name)\"/>\n"
            }
            out += "</g>\n"
        }
        return out
    }

    /// An image layer's picture: fitted to the frame (`contain`, `cover`,
    /// `stretch`), then moved by the layer's transform (in frame units).
    private static func picture(_ image: MediaReference, fit: String, transform t: Affine, width: Double, height: Double, uri: String?) -> String {
        let (pw, ph) = (Double(max(image.pixelWidth, 1)), Double(max(image.pixelHeight, 1)))
        var (w, h) = (width, height)
        if fit != "stretch" {
            let scale = fit == "cover" ? max(width / pw, height / ph) : min(width / pw, height / ph)
            (w, h) = (pw * scale, ph * scale)
        }
        let (x, y) = ((width - w) / 2, (height - h) / 2)
        let matrix = [t.a, t.b * height / width, t.c * width / height, t.d, t.tx * width, t.ty * height].map { number($0, decimals: 4) }
        var out = "<g transform=\"matrix(\(matrix.joined(separator: " ")))\">"
        let box = "x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(w))\" height=\"\(number(h))\""
        if let uri {
            out += "<image \(box) preserveAspectRatio=\"none\" href=\"\(uri)\"/>"
        } else {
            out += "<rect \(box) fill=\"none\" stroke=\"#888888\" stroke-dasharray=\"8 6\"/>"
            out += "<text x=\"\(number(x + w / 2))\" y=\"\(number(y + h / 2))\" text-anchor=\"middle\" fill=\"#888888\" font-family=\"sans-serif\" "
            out += "font-size=\"\(number(max(12, height / 30)))\">image \(String(image.hash.description.prefix(12))) not on this machine yet</text>"
        }
        return out + "</g>\n"
    }

    private static func hex(_ colour: Color) -> String {
        let digits = Array("0123456789abcdef")
        return "#" + [colour.red, colour.green, colour.blue].map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined()
    }

    private static func opacityAttribute(_ name: String, _ colour: Color) -> String {
        colour.alpha == 255 ? "" : " \(name)=\"\(number(Double(colour.alpha) / 255, decimals: 2))\""
    }

    /// Up to `decimals` decimals (a tenth of a pixel for coordinates), no trailing zeros.
    static func number(_ value: Double, decimals: Int = 1) -> String {
        guard value.isFinite else { return "0" }
        let factor = decimals == 1 ? 10.0 : 100.0
        let scaled = (value * factor).rounded() / factor
        if scaled == scaled.rounded() { return String(Int(scaled)) }
        var text = String(scaled)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
