import StoryCore
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
}
