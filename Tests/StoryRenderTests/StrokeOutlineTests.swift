import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryRender

/// The outline of a stroke whose width changes along it: pieces wound one
/// way (so one non-zero fill is their union), as wide as the pressure says
/// at each point, with the brush's caps and joins.
@Suite struct StrokeOutlineTests {
    @Test func everyPieceIsWoundTheSameWay() {
        let samples = [(0.0, 0.0, 2.0), (10.0, 0.0, 4.0), (10.0, 10.0, 6.0), (0.0, 12.0, 1.0)].map {
            (point: CanvasPoint(x: $0.0, y: $0.1), radius: $0.2)
        }
        for cap in Brush.Cap.allCases {
            for join in Brush.Join.allCases {
                for shape in StrokeOutline.shapes(through: samples, cap: cap, join: join) {
                    if case .polygon(let points) = shape {
                        #expect(StrokeOutline.doubledArea(points) > 0, "\(cap) \(join): \(points)")
                    }
                }
            }
        }
    }

    /// The merged outline covers the same pixels as its definition: a
    /// trapezoid per segment plus the join at every inner point and the caps,
    /// each a piece of its own. Random wiggly strokes, wide and narrow, with
    /// pressure changing along them, every cap and join.
    @Test(arguments: Brush.Join.allCases)
    func theMergedOutlineIsTheUnionOfItsPieces(join: Brush.Join) throws {
        var generator = SeededGenerator(seed: 0x5_7A0C + UInt64(join.rawValue))
        for round in 0..<12 {
            let cap = Brush.Cap.allCases[round % Brush.Cap.allCases.count]
            let width = [2.0, 8.0, 24.0][round % 3]
            var samples: [(point: CanvasPoint, radius: Double)] = []
            var point = CanvasPoint(x: 40, y: Double.random(in: 60...140, using: &generator))
            let count = Int.random(in: 2...60, using: &generator)
            for index in 0..<count {
                let pressure = 0.3 + 0.6 * sin(Double(index) / Double(count) * .pi)
                samples.append((point, width * pressure / 2))
                point = point + CanvasPoint(x: Double.random(in: 0...5, using: &generator), y: Double.random(in: -6...6, using: &generator))
            }
            let merged = try coverage(of: StrokeOutline.shapes(through: samples, cap: cap, join: join))
            let reference = try coverage(of: Self.pieces(through: samples, cap: cap, join: join))
            var inked = 0
            var different = 0
            for y in 0..<merged.height {
                for x in 0..<merged.width {
                    let (a, b) = (merged[x, y].alpha, reference[x, y].alpha)
                    if max(a, b) > 0 { inked += 1 }
                    if abs(a - b) > 96 { different += 1 }
                }
            }
            #expect(inked > 0)
            #expect(different * 500 <= inked, "round \(round) \(cap) \(join) width \(width): \(different) of \(inked) pixels differ")
        }
    }

    /// Fills shapes in black on a transparent 400×200 canvas.
    private func coverage(of shapes: [OutlineShape]) throws -> RasterImage {
        let canvas = try CairoCanvas(format: .png, width: 400, height: 200, title: "outline")
        canvas.fill(shapes, colour: Color(red: 0, green: 0, blue: 0, alpha: 255))
        return try RasterImage(png: canvas.finish())
    }

    /// The stroke as separate pieces: a trapezoid per segment, the join at
    /// every inner point (a disc for round joins), the caps.
    static func pieces(through points: [(point: CanvasPoint, radius: Double)], cap: Brush.Cap, join: Brush.Join) -> [OutlineShape] {
        var shapes: [OutlineShape] = []
        var directions: [CanvasPoint] = []
        for index in 0..<(points.count - 1) {
            let (p, q) = (points[index], points[index + 1])
            let delta = q.point - p.point
            let direction = delta * (1 / delta.length)
            directions.append(direction)
            let normal = direction.leftNormal
            shapes.append(
                .polygon(
                    positive([p.point + normal * p.radius, q.point + normal * q.radius, q.point - normal * q.radius, p.point - normal * p.radius])))
        }
        for index in 1..<max(1, points.count - 1) {
            let (p, r) = points[index]
            let (incoming, outgoing) = (directions[index - 1], directions[index])
            if join == .round {
                shapes.append(.circle(center: p, radius: r))
                continue
            }
            let turn = incoming.cross(outgoing)
            guard abs(turn) > 1e-12 else { continue }
            let side = turn > 0 ? -1.0 : 1.0
            let a = p + incoming.leftNormal * (side * r)
            let b = p + outgoing.leftNormal * (side * r)
            let tip = a + incoming * ((b - a).cross(outgoing) / turn)
            if join == .miter, (tip - p).length <= StrokeOutline.miterLimit * r {
                shapes.append(.polygon(positive([p, a, tip, b])))
            } else {
                shapes.append(.polygon(positive([p, a, b])))
            }
        }
        let (start, end) = (points[0], points[points.count - 1])
        switch cap {
        case .round:
            shapes += [.circle(center: start.point, radius: start.radius), .circle(center: end.point, radius: end.radius)]
        case .square:
            for (p, r, outward) in [(start.point, start.radius, directions[0] * -1), (end.point, end.radius, directions[directions.count - 1])] {
                let normal = outward.leftNormal * r
                shapes.append(.polygon(positive([p + normal, p + normal + outward * r, p - normal + outward * r, p - normal])))
            }
        case .butt:
            break
        }
        return shapes
    }

    private static func positive(_ polygon: [CanvasPoint]) -> [CanvasPoint] {
        StrokeOutline.doubledArea(polygon) < 0 ? polygon.reversed() : polygon
    }
}
