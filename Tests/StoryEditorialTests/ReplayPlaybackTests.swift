import StoryCore
import Testing

@testable import StoryEditorial

/// `ReplayPlayback`: a shot's drawing history laid out on frames.
@Suite struct ReplayPlaybackTests {
    static let ink = Brush(tool: .pen, width: 0.01)

    /// A one-shot project and the replay of its shot after `script` drew on its layer.
    static func replay(_ script: (inout ProjectDocument, OpID) throws -> Void) throws -> ReplayTimeline {
        var document = ProjectDocument(id: DocumentID(high: 0x4E91A7, low: 2), replica: ReplicaID(3))
        let (shot, layer) = try document.edit(at: 1000) { editor in
            let shot = try editor.insertShot(in: try editor.insertScene(at: 0), at: 0)
            return (shot, try editor.insertLayer(in: shot, at: 0))
        }.value
        try script(&document, layer)
        guard case .changes(let encoded) = document.changes(since: VersionVector()) else { throw Compacted() }
        return try #require(ReplayTimeline(document: document, shot: shot, changes: try encoded.map { try $0.decoded() }))
    }

    struct Compacted: Error {}

    static func stroke(_ points: Int, y: Double) -> [Point] {
        (0..<points).map { Point(x: 0.1 + 0.8 * Double($0) / Double(max(1, points - 1)), y: y) }
    }

    /// Draw a (24 points), draw b (48 points) 3 s later, erase a, undo it, move b.
    @Test func thePlaybackCompressesPausesAndDrawsStrokesOverWholeFrames() throws {
        let timeline = try Self.replay { document, layer in
            let a = try document.edit(session: "s", at: 2_000) {
                try $0.addStroke(to: layer, brush: Self.ink, points: Self.stroke(24, y: 0.3))
            }.value
            let b = try document.edit(session: "s", at: 5_000) {
                try $0.addStroke(to: layer, brush: Self.ink, points: Self.stroke(48, y: 0.6))
            }.value
            try document.edit(session: "s", at: 9_000) { try $0.eraseStroke(a, in: layer) }
            try document.undo(session: "s", at: 12_000)
            try document.edit(session: "s", at: 20_000) { try $0.transformStrokes([b], in: layer, by: .translation(x: 0.05, y: 0.1)) }
        }
        let playback = ReplayPlayback(timeline, speed: 1, maxPause: 0.3, fps: 24)
        // 0.5 s opening; a (24 points: 0.15 s) from frame 12 to 16; 3 s real → 0.3 s; b (48
        // points: 0.2 s) from frame 23 to 28; erase at round(1.4667 × 24) = 35, restore at 42,
        // move at 50; 1.5 s closing: round(3.5667 × 24) = 86 frames.
        #expect(playback.frameCount == 86, "\(playback.segments)")
        #expect(playback.segments.first == ReplayPlayback.Segment(applied: 0, progress: nil, startFrame: 0, frameCount: 12))
        let drawingA = playback.segments.filter { $0.applied == 0 && $0.progress != nil }
        #expect(drawingA.map(\.startFrame) == [12, 13, 14] && drawingA.map(\.progress) == [0.25, 0.5, 0.75])
        #expect(playback.segments.map(\.startFrame).contains(35) && playback.segments.map(\.startFrame).contains(42))
        #expect(playback.segments.last?.applied == timeline.events.count && playback.segments.last?.progress == nil)
        // Contiguous, and a pause of any length is one segment.
        for (before, after) in zip(playback.segments, playback.segments.dropFirst()) {
            #expect(before.startFrame + before.frameCount == after.startFrame && before != after)
        }
        // Faster: shorter; no pauses at all: shorter still; the opening and the closing stay.
        let faster = ReplayPlayback(timeline, speed: 4, maxPause: 0.3, fps: 24)
        let unpaused = ReplayPlayback(timeline, speed: 4, maxPause: 0, fps: 24)
        #expect(faster.frameCount < playback.frameCount && unpaused.frameCount < faster.frameCount && unpaused.seconds >= 2)
    }

    @Test func aFiftyStrokeShotPlaysInWellUnderAMinute() throws {
        let timeline = try Self.replay { document, layer in
            for index in 0..<50 {
                // A minute apart, 200 points each: the slowest case the defaults allow.
                try document.edit(at: 10_000 + Int64(index) * 60_000) {
                    _ = try $0.addStroke(to: layer, brush: Self.ink, points: Self.stroke(200, y: 0.5))
                }
            }
        }
        let playback = ReplayPlayback(timeline)
        #expect(timeline.events.count == 50 && playback.seconds < 50 && playback.seconds > 30, "\(playback.seconds) s")
    }
}
