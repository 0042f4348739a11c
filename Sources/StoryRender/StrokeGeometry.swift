import StoryCore

/// What a stroke is on a panel `width`×`height` pixels: a line of one width
/// through its points (cairo strokes it), or, where the pen's pressure
/// changes the width, the filled pieces of its outline (`StrokeOutline`).
/// The one place a stroke's pixels are worked out: the panel render draws
/// it on cairo, the animated replay SVG writes the same geometry as paths.
enum StrokeGeometry {
    case line([CanvasPoint], width: Double)
    /// The pieces, and the widest the stroke is.
    case outline([OutlineShape], widest: Double)

    /// The stroke's geometry (after its own transform, before its layer's); nil for a stroke without points. O(points).
    init?(_ stroke: StrokeView, width: Double, height: Double) {
        let points = stroke.transformedPoints()
        guard !points.isEmpty else { return nil }
        let brush = stroke.brush
        let fullWidth = Double(brush.width) * width
        let samples = points.map { point in
            (
                point: CanvasPoint(x: point.x * width, y: point.y * height),
                radius: max(PanelRenderer.minimumWidth, fullWidth * max(point.pressure, PanelRenderer.minimumPressure))
                    / 2
            )
        }
        if samples.allSatisfy({ $0.radius == samples[0].radius }) {
            self = .line(samples.map(\.point), width: samples[0].radius * 2)
        } else {
            let widest = samples.reduce(0) { max($0, $1.radius * 2) }
            self = .outline(StrokeOutline.shapes(through: samples, cap: brush.cap, join: brush.join), widest: widest)
        }
    }

    /// The widest the stroke is, in pixels.
    var maximumWidth: Double {
        switch self {
        case .line(_, let width): width
        case .outline(_, let widest): widest
        }
    }
}
