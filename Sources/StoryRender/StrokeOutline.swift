import Glibc
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
    /// This direction turned a quarter (the side `+ normal` offsets go to).
    var leftNormal: CanvasPoint { CanvasPoint(x: -y, y: x) }
}

/// One filled piece of a stroke's outline.
enum OutlineShape: Hashable, Sendable {
    /// A simple polygon (it does not cross itself), wound so that its shoelace
    /// area is positive (the sense of `cairo_arc`).
    case polygon([CanvasPoint])
    case circle(center: CanvasPoint, radius: Double)
}

/// The outline of a stroke whose width changes along it (pen pressure), as
/// pieces that are filled together with the non-zero rule. The stroke is the
/// union of a trapezoid per segment, running from the width at its start to
/// the width at its end, the brush's join at each inner point and its cap at
/// each end. Runs of segments are merged into one polygon: its outer side at
/// a corner follows the join (a bevel, a miter or an arc within
/// `arcTolerance`), its inner side is where the two trapezoids' edges cross.
/// A corner tighter than the stroke is wide (its inner edges would fold
/// back) ends the run, and the corner is a piece of its own there. Every
/// piece is wound the same way, so overlaps add up and never cancel: one fill
/// is their union, drawn once (a translucent colour does not darken where
/// pieces overlap, and there are no seams between them), and it stays a
/// vector path in SVG and PDF, about two points per point of the stroke
/// (a PDF of a 120-shot board is a few megabytes, not tens).
///
/// This is what `cairo_stroke` does for a constant width; a stroke of one
/// width is stroked by cairo itself.
enum StrokeOutline {
    /// cairo's default: a miter longer than 10 half-widths becomes a bevel.
    static let miterLimit = 10.0
    /// How far a join's polygon may stray from the true join, in pixels (points in a PDF).
    static let arcTolerance = 0.1

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
                return [
                    wound([p + CanvasPoint(x: -r, y: -r), p + CanvasPoint(x: r, y: -r), p + CanvasPoint(x: r, y: r), p + CanvasPoint(x: -r, y: r)])
                ]
            case .butt: return []
            }
        }
        var directions: [CanvasPoint] = []
        directions.reserveCapacity(points.count - 1)
        for index in 0..<(points.count - 1) {
            let delta = points[index + 1].point - points[index].point
            directions.append(delta * (1 / delta.length))
        }
        var shapes: [OutlineShape] = []
        var run = Run(start: points[0], normal: directions[0].leftNormal)
        // Where the previous corner cut the current segment's two edges (0 at its start, 1 at its end).
        var cut = (plus: 0.0, minus: 0.0)
        for index in 1..<(points.count - 1) {
            let (p, r) = points[index]
            let (incoming, outgoing) = (directions[index - 1], directions[index])
            let (inNormal, outNormal) = (incoming.leftNormal, outgoing.leftNormal)
            let turn = incoming.cross(outgoing)
            if abs(turn) <= 1e-12 && incoming.dot(outgoing) > 0 {
                // Straight on: the edges run on through the point.
                run.append(plus: p + inNormal * r, minus: p - inNormal * r)
                cut = (0, 0)
                continue
            }
            // The outer side of the corner is away from the turn (side +1: the normal's side).
            let side = turn > 0 ? -1.0 : 1.0
            let previous = points[index - 1]
            let next = points[index + 1]
            let innerIn = (previous.point - inNormal * (side * previous.radius), p - inNormal * (side * r))
            let innerOut = (p - outNormal * (side * r), next.point - outNormal * (side * next.radius))
            let cutBefore = side > 0 ? cut.minus : cut.plus
            if abs(turn) > 1e-12, let (t, u) = crossing(innerIn, innerOut), t >= cutBefore, t <= 1, u >= 0, u <= 1 {
                let inner = innerIn.0 + (innerIn.1 - innerIn.0) * t
                let outer = outerCorner(at: p, radius: r, incoming: incoming, outgoing: outgoing, side: side, turn: turn, join: join)
                if side > 0 {
                    run.append(plus: outer, minus: [inner])
                    cut = (plus: 0, minus: u)
                } else {
                    run.append(plus: [inner], minus: outer)
                    cut = (plus: u, minus: 0)
                }
                continue
            }
            // A corner tighter than the stroke is wide (or straight back): end the run, the corner a piece of its own.
            run.append(plus: p + inNormal * r, minus: p - inNormal * r)
            shapes.append(run.polygon)
            run = Run(start: (p, r), normal: outNormal)
            cut = (0, 0)
            switch join {
            case .round:
                shapes.append(.circle(center: p, radius: r))
            case .bevel, .miter:
                guard abs(turn) > 1e-12 else { continue }  // straight back: no corner to fill
                let a = p + inNormal * (side * r)
                let b = p + outNormal * (side * r)
                if join == .miter, let tip = miterTip(at: p, radius: r, a: a, b: b, incoming: incoming, outgoing: outgoing, turn: turn) {
                    shapes.append(wound([p, a, tip, b]))
                } else {
                    shapes.append(wound([p, a, b]))
                }
            }
        }
        let end = points[points.count - 1]
        let lastNormal = directions[directions.count - 1].leftNormal
        run.append(plus: end.point + lastNormal * end.radius, minus: end.point - lastNormal * end.radius)
        shapes.append(run.polygon)
        let start = points[0]
        switch cap {
        case .round:
            shapes.append(.circle(center: start.point, radius: start.radius))
            shapes.append(.circle(center: end.point, radius: end.radius))
        case .square:
            for (p, r, outward) in [(start.point, start.radius, directions[0] * -1), (end.point, end.radius, directions[directions.count - 1])] {
                let normal = outward.leftNormal * r
                shapes.append(wound([p + normal, p + normal + outward * r, p - normal + outward * r, p - normal]))
            }
        case .butt:
            break
        }
        return shapes
    }

    /// One merged run of segments: its two sides, each in drawing order.
    private struct Run {
        var plus: [CanvasPoint]
        var minus: [CanvasPoint]

        init(start: (point: CanvasPoint, radius: Double), normal: CanvasPoint) {
            plus = [start.point + normal * start.radius]
            minus = [start.point - normal * start.radius]
        }

        mutating func append(plus point: CanvasPoint, minus other: CanvasPoint) {
            plus.append(point)
            minus.append(other)
        }

        mutating func append(plus points: [CanvasPoint], minus others: [CanvasPoint]) {
            plus += points
            minus += others
        }

        /// Out along one side and back along the other.
        var polygon: OutlineShape { StrokeOutline.wound(plus + minus.reversed()) }
    }

    /// Where the lines through `a` and `b` cross, as parameters along each (0 at the first point, 1 at the second).
    private static func crossing(
        _ a: (CanvasPoint, CanvasPoint), _ b: (CanvasPoint, CanvasPoint)
    ) -> (t: Double, u: Double)? {
        let (da, db) = (a.1 - a.0, b.1 - b.0)
        let denominator = da.cross(db)
        guard abs(denominator) > 1e-12 else { return nil }
        let offset = b.0 - a.0
        return (offset.cross(db) / denominator, offset.cross(da) / denominator)
    }

    /// The outer side of a corner at `p` (`side` +1: the left normal's side),
    /// from the incoming edge's end to the outgoing edge's start.
    private static func outerCorner(
        at p: CanvasPoint, radius r: Double, incoming: CanvasPoint, outgoing: CanvasPoint, side: Double, turn: Double, join: Brush.Join
    ) -> [CanvasPoint] {
        let (from, to) = (incoming.leftNormal * side, outgoing.leftNormal * side)
        let (a, b) = (p + from * r, p + to * r)
        // A gentle corner is one point, where the two outer edges meet, when
        // that strays at most `arcTolerance` from the join (the usual case
        // along a pen line: half the points, and a PDF half the size).
        let halfCosine = ((1 + from.dot(to)) / 2).squareRoot()  // cos of half the turn
        if halfCosine > 0.5 {
            let excess: Double
            switch join {
            case .miter: excess = 0
            case .round: excess = r * (1 / halfCosine - 1)
            case .bevel: excess = r * (1 - halfCosine * halfCosine) / halfCosine
            }
            if excess <= arcTolerance {
                let bisector = from + to
                return [p + bisector * (r / (bisector.length * halfCosine))]
            }
        }
        switch join {
        case .bevel:
            return [a, b]
        case .miter:
            if let tip = miterTip(at: p, radius: r, a: a, b: b, incoming: incoming, outgoing: outgoing, turn: turn) { return [a, tip, b] }
            return [a, b]
        case .round:
            // The arc as a polyline whose chords stray at most `arcTolerance` inside it.
            guard r > arcTolerance else { return [a, b] }
            let angle = atan2(from.cross(to), from.dot(to))
            let pieces = Int((abs(angle) / (2 * acos(1 - arcTolerance / r))).rounded(.up))
            guard pieces > 1 else { return [a, b] }
            let start = atan2(from.y, from.x)
            var arc = [a]
            for piece in 1..<pieces {
                let theta = start + angle * Double(piece) / Double(pieces)
                arc.append(p + CanvasPoint(x: cos(theta), y: sin(theta)) * r)
            }
            arc.append(b)
            return arc
        }
    }

    /// Where the two outer edges of a corner meet, unless that is farther than the miter limit.
    private static func miterTip(
        at p: CanvasPoint, radius r: Double, a: CanvasPoint, b: CanvasPoint, incoming: CanvasPoint, outgoing: CanvasPoint, turn: Double
    ) -> CanvasPoint? {
        let t = (b - a).cross(outgoing) / turn
        let tip = a + incoming * t
        return (tip - p).length <= miterLimit * r ? tip : nil
    }

    /// Twice the signed area (shoelace); positive when wound like `cairo_arc`.
    static func doubledArea(_ polygon: [CanvasPoint]) -> Double {
        var sum = 0.0
        for index in polygon.indices {
            sum += polygon[index].cross(polygon[(index + 1) % polygon.count])
        }
        return sum
    }

    fileprivate static func wound(_ polygon: [CanvasPoint]) -> OutlineShape {
        .polygon(doubledArea(polygon) < 0 ? polygon.reversed() : polygon)
    }
}
