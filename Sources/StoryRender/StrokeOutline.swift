import StoryCore

/// A point on the canvas, in pixels (y down).
struct CanvasPoint: Hashable, Sendable {
    var x: Double
    var y: Double

    static func + (lhs: CanvasPoint, rhs: CanvasPoint) -> CanvasPoint { CanvasPoint(x: lhs.x + rhs.x, y: lhs.y + rhs.y) }
    static func - (lhs: CanvasPoint, rhs: CanvasPoint) -> CanvasPoint { CanvasPoint(x: lhs.x - rhs.x, y: lhs.y - rhs.y) }
    static func * (lhs: CanvasPoint, rhs: Double) -> CanvasPoint { CanvasPoint(x: lhs.x * rhs, y: lhs.y * rhs) }

    var length: Double { (x * x + y * y).squareRoot() }

    /// The z component of the cross product (positive: `other` turns clockwise from `self` on a y-down canvas).
    func cross(_ other: CanvasPoint) -> Double { x * other.y - y * other.x }
    func dot(_ other: CanvasPoint) -> Double { x * other.x + y * other.y }
}

/// One filled piece of a stroke's outline.
enum OutlineShape: Hashable, Sendable {
    /// A convex polygon, wound so that its shoelace area is positive (the sense of `cairo_arc`).
    case polygon([CanvasPoint])
    case circle(center: CanvasPoint, radius: Double)
}

/// The outline of a stroke whose width changes along it (pen pressure), as
/// pieces that are filled together with the non-zero rule: a quadrilateral
/// per segment, running from the width at its start to the width at its end,
/// the brush's join at each inner point and its cap at each end. Every piece
/// is wound the same way, so overlaps add up and never cancel: one fill is
/// their union, drawn once (a translucent colour does not darken where
/// pieces overlap, and there are no seams between them), and it stays a
/// vector path in SVG and PDF.
///
/// This is what `cairo_stroke` does for a constant width; a stroke of one
/// width is stroked by cairo itself.
enum StrokeOutline {
    /// cairo's default: a miter longer than 10 half-widths becomes a bevel.
    static let miterLimit = 10.0

    /// The pieces of the outline through `points`, each with its radius (half the width) there. O(points).
    static func shapes(
        through input: [(point: CanvasPoint, radius: Double)], cap: Brush.Cap, join: Brush.Join
    ) -> [OutlineShape] {
        // Repeated points (a pen held still) have no direction: keep one, the widest.
        var points: [(point: CanvasPoint, radius: Double)] = []
        points.reserveCapacity(input.count)
        for sample in input {
            if let last = points.last, (sample.point - last.point).length < 1e-9 {
                points[points.count - 1].radius = max(last.radius, sample.radius)
            } else {
                points.append(sample)
            }
        }
        guard let first = points.first else { return [] }
        guard points.count > 1 else {
            // A dot, as cairo draws a zero-length line: a disc for round caps, an upright square for square caps.
            let (p, r) = first
            switch cap {
            case .round: return [.circle(center: p, radius: r)]
            case .square:
                return [wound([p + CanvasPoint(x: -r, y: -r), p + CanvasPoint(x: r, y: -r), p + CanvasPoint(x: r, y: r), p + CanvasPoint(x: -r, y: r)])]
            case .butt: return []
            }
        }
        var shapes: [OutlineShape] = []
        shapes.reserveCapacity(points.count * 2 + 2)
        var directions: [CanvasPoint] = []
        directions.reserveCapacity(points.count - 1)
        for index in 0..<(points.count - 1) {
            let (p, q) = (points[index], points[index + 1])
            let delta = q.point - p.point
            let direction = delta * (1 / delta.length)
            directions.append(direction)
            let normal = CanvasPoint(x: -direction.y, y: direction.x)
            shapes.append(
                wound([p.point + normal * p.radius, q.point + normal * q.radius, q.point - normal * q.radius, p.point - normal * p.radius]))
        }
        for index in 1..<(points.count - 1) {
            let (p, r) = points[index]
            let (incoming, outgoing) = (directions[index - 1], directions[index])
            switch join {
            case .round:
                shapes.append(.circle(center: p, radius: r))
            case .bevel, .miter:
                let turn = incoming.cross(outgoing)
                guard abs(turn) > 1e-12 else { continue }  // straight on, or straight back: no corner to fill
                // The outer side of the corner is away from the turn.
                let side = turn > 0 ? -1.0 : 1.0
                let a = p + CanvasPoint(x: -incoming.y, y: incoming.x) * (side * r)
                let b = p + CanvasPoint(x: -outgoing.y, y: outgoing.x) * (side * r)
                if join == .miter {
                    // Where the two outer edges meet, unless that is farther than the limit (then a bevel).
                    let t = (b - a).cross(outgoing) / turn
                    let tip = a + incoming * t
                    if (tip - p).length <= miterLimit * r {
                        shapes.append(wound([p, a, tip, b]))
                        continue
                    }
                }
                shapes.append(wound([p, a, b]))
            }
        }
        let (start, end) = (points[0], points[points.count - 1])
        switch cap {
        case .round:
            shapes.append(.circle(center: start.point, radius: start.radius))
            shapes.append(.circle(center: end.point, radius: end.radius))
        case .square:
            for (p, r, outward) in [(start.point, start.radius, directions[0] * -1), (end.point, end.radius, directions[directions.count - 1])] {
                let normal = CanvasPoint(x: -outward.y, y: outward.x) * r
                shapes.append(wound([p + normal, p + normal + outward * r, p - normal + outward * r, p - normal]))
            }
        case .butt:
            break
        }
        return shapes
    }

    /// Twice the signed area (shoelace); positive when wound like `cairo_arc`.
    static func doubledArea(_ polygon: [CanvasPoint]) -> Double {
        var sum = 0.0
        for index in polygon.indices {
            sum += polygon[index].cross(polygon[(index + 1) % polygon.count])
        }
        return sum
    }

    private static func wound(_ polygon: [CanvasPoint]) -> OutlineShape {
        .polygon(doubledArea(polygon) < 0 ? polygon.reversed() : polygon)
    }
}
