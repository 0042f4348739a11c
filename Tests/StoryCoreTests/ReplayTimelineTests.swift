import StoryEditorial
import StoryTestSupport
import Testing

@testable import StoryCore

/// `ReplayTimeline` from scripted histories (`ReplayPlayback`'s frames are
/// tested in StoryEditorialTests).
/// The random histories (several replicas, random delivery) are in
/// StoryRenderTests' `ReplayRenderTests`, which also compare the last frame's pixels.
@Suite struct ReplayTimelineTests {
    static let ink = Brush(tool: .pen, width: 0.01)

    /// Every change a document holds, decoded.
    static func changes(of document: ProjectDocument) throws -> [Change] {
        guard case .changes(let encoded) = document.changes(since: VersionVector()) else {
            Issue.record("the log was compacted")
            return []
        }
        return try encoded.map { try $0.decoded() }
    }

    static func line(_ count: Int, y: Double) -> [Point] {
        (0..<count).map { Point(x: 0.1 + 0.8 * Double($0) / Double(max(1, count - 1)), y: y) }
    }

    /// Draw a, draw b, erase a, undo the erase, move b (a lasso move), each a second or more apart.
    func scriptedBoard() throws -> (board: Board, shot: OpID, layer: OpID, a: OpID, b: OpID) {
        var board = try Board(scenes: 1, shots: 2, layers: 1)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        let a = try board.doc.edit(session: "s", at: 2_000) {
            try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(24, y: 0.3))
        }.value
        let b = try board.doc.edit(session: "s", at: 5_000) {
            try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(48, y: 0.6))
        }.value
        try board.doc.edit(session: "s", at: 9_000) { try $0.eraseStroke(a, in: layer) }
        try board.doc.undo(session: "s", at: 12_000)
        try board.doc.edit(session: "s", at: 20_000) {
            try $0.transformStrokes([b], in: layer, by: .translation(x: 0.05, y: 0.1))
        }
        // A stroke on the other shot is not in this shot's replay.
        let other = board.layers[board.shots[0][1]]![0]
        try board.doc.edit(session: "s", at: 21_000) {
            _ = try $0.addStroke(to: other, brush: Self.ink, points: Self.line(5, y: 0.5))
        }
        return (board, shot, layer, a, b)
    }

    @Test func aScriptedHistoryGivesItsEventsInOrder() throws {
        let (board, shot, layer, a, b) = try scriptedBoard()
        let timeline = try #require(
            ReplayTimeline(document: board.doc, shot: shot, changes: Self.changes(of: board.doc).shuffled()))
        #expect(timeline.events.map(\.kind) == [.drawn, .drawn, .erased, .restored, .replaced])
        #expect(timeline.events.map(\.key) == [a, b, a, a, b])
        #expect(timeline.events.allSatisfy { $0.layer == layer })
        #expect(timeline.events.map(\.time) == [2_000, 5_000, 9_000, 12_000, 20_000])
        #expect(timeline.events[2].stroke == nil && timeline.events[3].stroke?.points.count == 24)
        #expect(timeline.events[4].stroke?.transform == .translation(x: 0.05, y: 0.1))
        #expect(timeline.initialStrokeCount == 0)

        // The cursor shows each step; at the end the shot is as the document shows it.
        var cursor = timeline.makeCursor()
        #expect(cursor.shot().layers[0].strokes.isEmpty)
        // A quarter of the way along a's 24 points: the 6 points up to 0.25 of its length and one between two.
        let begun = try #require(cursor.shot(drawingNext: 0.25).layers[0].strokes.first)
        #expect(begun.points.count == 7 && abs(begun.points.points().last!.x - 0.3) < 0.001, "\(begun.points.points())")
        cursor.advance(to: 3)
        #expect(cursor.shot().layers[0].strokes.map(\.id) == [b])
        cursor.advance(to: 5)
        #expect(cursor.shot() == board.doc.view.shot(shot))
        #expect(
            ReplayTimeline(document: board.doc, shot: OpID(counter: 999_999, replica: ReplicaID(9)), changes: []) == nil
        )
    }

    @Test func strokesFromACompactedHistoryAreShownFromTheStart() throws {
        var board = try Board(scenes: 1, shots: 1, layers: 1)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        let old = try board.doc.edit(at: 2_000) {
            try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(4, y: 0.2))
        }.value
        let gone = try board.doc.edit(at: 3_000) {
            try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(4, y: 0.4))
        }.value
        try board.doc.edit(at: 4_000) { try $0.eraseStroke(gone, in: layer) }
        let before = board.doc.versionVector
        let drawnLater = try board.doc.edit(at: 5_000) {
            try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(4, y: 0.6))
        }.value
        try board.doc.edit(at: 6_000) { try $0.eraseStroke(old, in: layer) }
        // Only the changes after `before` are still held (the rest went into a snapshot).
        guard case .changes(let encoded) = board.doc.changes(since: before) else {
            Issue.record("no log")
            return
        }
        let timeline = try #require(
            ReplayTimeline(document: board.doc, shot: shot, changes: try encoded.map { try $0.decoded() }))
        #expect(timeline.initialStrokeCount == 1 && timeline.initial[layer]?.keys.first == old)
        #expect(timeline.events.map(\.kind) == [.drawn, .erased] && timeline.events.map(\.key) == [drawnLater, old])
        var cursor = timeline.makeCursor()
        cursor.advance(to: timeline.events.count)
        #expect(cursor.shot() == board.doc.view.shot(shot))
        // With no log at all, the drawing is a still of what the document holds.
        let still = try #require(ReplayTimeline(document: board.doc, shot: shot, changes: []))
        #expect(
            still.events.isEmpty && still.initialStrokeCount == 1
                && still.makeCursor().shot() == board.doc.view.shot(shot))
    }

    @Test func wallClocksThatGoBackwardsNeverMakeTimeRunBackwards() throws {
        var board = try Board(scenes: 1, shots: 1, layers: 1)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        for time: Int64 in [50_000, 10_000, 60_000] {
            try board.doc.edit(at: time) {
                _ = try $0.addStroke(to: layer, brush: Self.ink, points: Self.line(3, y: 0.5))
            }
        }
        let timeline = try #require(
            ReplayTimeline(document: board.doc, shot: shot, changes: Self.changes(of: board.doc)))
        #expect(timeline.events.map(\.time) == [50_000, 50_000, 60_000])
    }
}
