package import StoryCore
package import StoryEditorial

/// A shot's replay as one animated SVG a browser plays (SMIL): the panel as
/// `PanelRenderer` draws it — background, the visible layers bottom to top
/// at their opacity and transform, pictures fitted as the render fits them,
/// then a thin frame — with every stroke that ever showed as an element of
/// its own that appears, and disappears, at its time on the
/// `ReplayPlayback`. A drawn stroke is revealed along its points by a mask
/// whose dash runs from the stroke's first point to its last while it is
/// drawn. Each stroke's geometry is `StrokeGeometry`'s, the one the panel
/// render draws, so the last moment looks like the render. It plays once
/// and holds the finished drawing.
///
/// Pure: the pictures' bytes are given. Size: O(points of the strokes shown
/// over the whole history + the pictures' bytes, base64).
package enum ReplaySVG {
    /// The SVG of `timeline` played as `playback` lays it out, `width` pixels wide.
    ///
    /// - Parameter pictures: each drawn picture's bytes by hash; one missing is outlined.
    package static func make(
        _ timeline: ReplayTimeline, playback: ReplayPlayback, width: Int, pictures: [BlobHash: [UInt8]] = [:]
    ) -> String {
        let shot = timeline.shot
        let (w, h) = (Double(width), Double(PanelRenderer.height(of: shot, width: width)))
        let elements = Self.elements(timeline, playback: playback)
        let background = shot.background ?? .white
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(number(w))" height="\(number(h))" viewBox="0 0 \(number(w)) \(number(h))">
            <title>Shot \(XMLText.escaped(shot.label)), drawn stroke by stroke (\(number(playback.seconds)) s)</title>
            <rect width="\(number(w))" height="\(number(h))" \(paint("fill", background))/>

            """
        var maskNumber = 0
        for layer in shot.layers {
            let opacity = min(1, max(0, layer.opacity))
            guard layer.isVisible, opacity > 0 else { continue }
            let t = PanelPainter.pixelTransform(layer.transform, width: w, height: h)
            guard t.isFinite, abs(t.a * t.d - t.b * t.c) > 1e-9 else { continue }
            svg +=
                "<g transform=\"matrix(\(number(t.a)) \(number(t.b)) \(number(t.c)) \(number(t.d)) \(number(t.tx)) \(number(t.ty)))\""
            svg += opacity < 1 ? " opacity=\"\(number(opacity))\">\n" : ">\n"
            if let image = layer.image {
                let box = PanelPainter.pictureBox(of: image, fit: layer.fit, width: w, height: h)
                let place =
                    "x=\"\(number(box.x))\" y=\"\(number(box.y))\" width=\"\(number(box.width))\" height=\"\(number(box.height))\""
                if let bytes = pictures[image.hash] {
                    svg +=
                        "<image \(place) preserveAspectRatio=\"none\" href=\"data:\(image.type.mimeType);base64,\(base64(bytes))\"/>\n"
                } else {
                    svg += "<rect \(place) fill=\"none\" stroke=\"#888888\" stroke-dasharray=\"8 6\"/>\n"
                }
            }
            for element in elements[layer.id] ?? [] {
                guard let geometry = StrokeGeometry(element.stroke, width: w, height: h) else { continue }
                svg += element.begin > 0 ? "<g visibility=\"hidden\">" : "<g>"
                if element.begin > 0 {
                    svg +=
                        "<set attributeName=\"visibility\" to=\"visible\" begin=\"\(seconds(element.begin))\" fill=\"freeze\"/>"
                }
                if let end = element.end {
                    svg += "<set attributeName=\"visibility\" to=\"hidden\" begin=\"\(seconds(end))\" fill=\"freeze\"/>"
                }
                var mask = ""
                let revealed = element.drawnUntil == nil ? [] : element.stroke.transformedPoints()
                if let drawn = element.drawnUntil, drawn > element.begin, revealed.count > 1 {
                    maskNumber += 1
                    mask = " mask=\"url(#reveal\(maskNumber))\""
                    let path = "M" + revealed.map { "\(number($0.x * w)) \(number($0.y * h))" }.joined(separator: " L")
                    svg +=
                        "<mask id=\"reveal\(maskNumber)\" maskUnits=\"userSpaceOnUse\" x=\"-100000\" y=\"-100000\" width=\"200000\" height=\"200000\">"
                    svg +=
                        "<path d=\"\(path)\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"\(number(geometry.maximumWidth + 2))\" "
                    svg +=
                        "stroke-linecap=\"round\" stroke-linejoin=\"round\" pathLength=\"1\" stroke-dasharray=\"1 2\" stroke-dashoffset=\"1\">"
                    svg +=
                        "<animate attributeName=\"stroke-dashoffset\" from=\"1\" to=\"0\" begin=\"\(seconds(element.begin))\" "
                    svg += "dur=\"\(seconds(drawn - element.begin))\" fill=\"freeze\"/></path></mask>"
                }
                let brush = element.stroke.brush
                let colour = brush.tool == .eraser ? background : brush.color
                switch geometry {
                case .line(let points, let lineWidth):
                    let path = "M" + points.map { "\(number($0.x)) \(number($0.y))" }.joined(separator: " L")
                    svg +=
                        "<path d=\"\(points.count == 1 ? path + " L\(number(points[0].x)) \(number(points[0].y))" : path)\" fill=\"none\" "
                    svg +=
                        "\(paint("stroke", colour)) stroke-width=\"\(number(lineWidth))\" stroke-linecap=\"\(brush.cap.name)\" "
                    svg +=
                        "stroke-linejoin=\"\(brush.join.name)\" stroke-miterlimit=\"\(number(StrokeOutline.miterLimit))\"\(mask)/>"
                case .outline(let shapes, _):
                    svg += "<path d=\"\(outlinePath(shapes))\" \(paint("fill", colour)) fill-rule=\"nonzero\"\(mask)/>"
                }
                svg += "</g>\n"
            }
            svg += "</g>\n"
        }
        let line = max(1, w / 800)
        svg +=
            "<rect x=\"\(number(line / 2))\" y=\"\(number(line / 2))\" width=\"\(number(w - line))\" height=\"\(number(h - line))\" "
        svg +=
            "fill=\"none\" \(paint("stroke", PanelRenderer.frameColour)) stroke-width=\"\(number(line))\"/>\n</svg>\n"
        return svg
    }

    /// One stroke as it showed for a while: from `begin` (drawn until
    /// `drawnUntil`, when it was drawn here) to `end` (nil: to the end).
    struct Element {
        var key: OpID
        var stroke: StrokeView
        var begin: Double
        var drawnUntil: Double?
        var end: Double?
    }

    /// Every stroke that showed, by layer, in z-order (a key's versions one after another).
    static func elements(_ timeline: ReplayTimeline, playback: ReplayPlayback) -> [OpID: [Element]] {
        let events = timeline.shownEvents
        let fps = Double(playback.fps)
        // When each event is applied, and when a drawn one starts to grow.
        var appliedAt = [Double](repeating: playback.seconds, count: events.count)
        var drawingFrom = [Double?](repeating: nil, count: events.count)
        var applied = 0
        for segment in playback.segments {
            let time = Double(segment.startFrame) / fps
            if segment.progress != nil, segment.applied < events.count, drawingFrom[segment.applied] == nil {
                drawingFrom[segment.applied] = time
            }
            while applied < min(segment.applied, events.count) {
                appliedAt[applied] = time
                applied += 1
            }
        }
        var elements: [OpID: [Element]] = [:]
        var current: [OpID: [OpID: Int]] = [:]
        for (layer, strokes) in timeline.initial {
            for (key, stroke) in strokes {
                current[layer, default: [:]][key] = elements[layer, default: []].count
                elements[layer, default: []].append(Element(key: key, stroke: stroke, begin: 0))
            }
        }
        for (index, event) in events.enumerated() {
            let time = appliedAt[index]
            let begin = drawingFrom[index] ?? time
            if let open = current[event.layer]?[event.key] {
                elements[event.layer]![open].end = begin
                current[event.layer]![event.key] = nil
            }
            guard let stroke = event.stroke else { continue }
            current[event.layer, default: [:]][event.key] = elements[event.layer, default: []].count
            elements[event.layer, default: []].append(
                Element(
                    key: event.key, stroke: stroke, begin: begin, drawnUntil: drawingFrom[index] == nil ? nil : time))
        }
        return elements.mapValues { list in
            list.sorted { ($0.key, $0.begin) < ($1.key, $1.begin) }
        }
    }

    /// The outline's pieces as one path (each wound the same way, so the non-zero rule fills their union).
    static func outlinePath(_ shapes: [OutlineShape]) -> String {
        var d = ""
        for shape in shapes {
            switch shape {
            case .polygon(let points):
                guard let first = points.first else { continue }
                d += "M\(number(first.x)) \(number(first.y))"
                for point in points.dropFirst() { d += " L\(number(point.x)) \(number(point.y))" }
                d += "Z"
            case .circle(let center, let radius):
                // Two half arcs, clockwise on the y-down canvas as cairo_arc draws them.
                let r = number(radius)
                d +=
                    "M\(number(center.x - radius)) \(number(center.y)) A\(r) \(r) 0 1 1 \(number(center.x + radius)) \(number(center.y))"
                d += " A\(r) \(r) 0 1 1 \(number(center.x - radius)) \(number(center.y))Z"
            }
        }
        return d
    }

    /// `fill="#rrggbb"` with its opacity when the colour is translucent.
    static func paint(_ attribute: String, _ colour: Color) -> String {
        let digits = Array("0123456789abcdef")
        var rgb = "#"
        for channel in [colour.red, colour.green, colour.blue] {
            rgb.append(digits[Int(channel >> 4)])
            rgb.append(digits[Int(channel & 15)])
        }
        return colour.alpha == 255
            ? "\(attribute)=\"\(rgb)\""
            : "\(attribute)=\"\(rgb)\" \(attribute)-opacity=\"\(number(Double(colour.alpha) / 255))\""
    }

    /// A number with at most three decimals, never in exponent notation.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let scaled = (value * 1000).rounded()
        guard abs(scaled) < 1e15 else { return "0" }
        let whole = Int64(scaled)
        let sign = whole < 0 ? "-" : ""
        let magnitude = whole.magnitude
        let fraction = magnitude % 1000
        guard fraction != 0 else { return sign + String(magnitude / 1000) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return sign + String(magnitude / 1000) + "." + digits
    }

    /// A SMIL clock value.
    static func seconds(_ value: Double) -> String { number(value) + "s" }

    /// Standard base64 (RFC 4648), for the pictures' data URIs.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 2 < bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let value = UInt32(bytes[index]) << 16 | (rest > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(rest > 1 ? alphabet[Int(value >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
