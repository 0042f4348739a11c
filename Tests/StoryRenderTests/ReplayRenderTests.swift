import Foundation
import StoryCore
import StoryEditorial
import StoryTestSupport
import Testing

@testable import StoryRender

/// The replay of random histories made on several replicas and delivered in
/// random orders: its drawn strokes are the strokes made on the shot, and
/// its last frame is the panel render of the shot, pixel for pixel. Replay
/// one with `STORYTELLER_SEED=<seed>`.
@Suite struct ReplayRenderTests {
    static let chunks = 4
    static let scenarios = TestSeeds.scenarioCount(default: 60)
    static let documentID = DocumentID(high: 0x7e91a, low: 3)

    /// A board of two shots made on replica 1: the first with an ink layer,
    /// a half-transparent one and a hidden one; the second with one layer.
    static func board() throws -> (document: ProjectDocument, shot: OpID, layers: [OpID]) {
        var document = ProjectDocument(id: documentID, replica: ReplicaID(1))
        let (shot, layers) = try document.edit(at: 1_000) { editor in
            let scene = try editor.insertScene(at: 0)
            let shot = try editor.insertShot(in: scene, at: 0)
            let other = try editor.insertShot(in: scene, at: 1)
            let layers = try (0..<3).map { try editor.insertLayer(in: shot, at: $0) }
            try editor.set(.opacity, to: .number(0.5), on: layers[1])
            try editor.set(.visible, to: .bool(false), on: layers[2])
            try editor.set(.background, to: .color(Color(red: 0xf4, green: 0xee, blue: 0xe0)), on: shot)
            return (shot, layers + [try editor.insertLayer(in: other, at: 0)])
        }.value
        return (document, shot, layers)
    }

    /// One random history on 2 to 4 replicas; the keys drawn on each layer.
    static func history(seed: UInt64) throws -> (
        docs: [ProjectDocument], shot: OpID, layers: [OpID], drawn: [OpID: Set<OpID>]
    ) {
        var random = SeededGenerator(seed: seed)
        let (first, shot, layers) = try board()
        var docs =
            [first] + (2...random.int(2...4)).map { ProjectDocument(id: documentID, replica: ReplicaID(UInt64($0))) }
        try WireSync.syncAll(&docs)
        var clocks = [Int64](repeating: 2_000, count: docs.count)
        var drawn: [OpID: Set<OpID>] = [:]
        for _ in 0..<random.int(10...60) {
            let r = random.int(0...(docs.count - 1))
            // Mostly seconds apart, sometimes a long break, sometimes a clock behind the others.
            clocks[r] += Int64(random.chance(0.1) ? random.int(-5_000...600_000) : random.int(100...8_000))
            let session = "session-\(r)"
            let view = docs[r].view
            switch random.int(0...99) {
            case 0..<45:
                let layer = random.pick(layers)!
                let points = (0..<random.int(1...30)).map { _ in
                    Point(
                        x: Double(random.int(0...1000)) / 1000, y: Double(random.int(0...1000)) / 1000,
                        pressure: random.chance(0.5) ? 1 : Double(random.int(10...100)) / 100)
                }
                let brush = Brush(
                    tool: random.chance(0.1) ? .eraser : .pen,
                    color: Color(rgba: UInt32(random.int(0...0xFFFFFF)) << 8 | 0xFF),
                    width: Float(random.int(2...30)) / 1000, cap: random.pick(Brush.Cap.allCases)!,
                    join: random.pick(Brush.Join.allCases)!)
                let key = try docs[r].edit(session: session, at: clocks[r]) {
                    try $0.addStroke(to: layer, brush: brush, points: points)
                }.value
                drawn[layer, default: []].insert(key)
            case 45..<60:
                let strokes = view.shots.flatMap(\.layers).flatMap { layer in layer.strokes.map { (layer.id, $0.id) } }
                guard let (layer, key) = random.pick(strokes) else { continue }
                try docs[r].edit(session: session, at: clocks[r]) { try $0.eraseStroke(key, in: layer) }
            case 60..<68:
                let layer = random.pick(layers)!
                guard let key = random.pick(docs[r].erasedStrokes(in: layer)) else { continue }
                try docs[r].edit(session: session, at: clocks[r]) { try $0.restoreStroke(key, in: layer) }
            case 68..<78:
                guard
                    let layer = view.shots.flatMap(\.layers).filter({ !$0.strokes.isEmpty }).randomElement(
                        using: &random)
                else { continue }
                let keys = layer.strokes.map(\.id).filter { _ in random.chance(0.6) }
                let shift = Affine.translation(
                    x: Double(random.int(-50...50)) / 1000, y: Double(random.int(-50...50)) / 1000)
                let colour = Color(rgba: UInt32(random.int(0...0xFFFFFF)) << 8 | 0xFF)
                let move = random.chance(0.5)
                try docs[r].edit(session: session, at: clocks[r]) { editor in
                    if move {
                        try editor.transformStrokes(keys, in: layer.id, by: shift)
                    } else {
                        try editor.restyleStrokes(keys, in: layer.id) { $0.color = colour }
                    }
                }
            case 78..<86:
                _ = try? docs[r].undo(session: session, at: clocks[r])
            default:
                let other = random.int(0...(docs.count - 1))
                if other != r { try WireSync.exchange(&docs, r, other) }
            }
        }
        try WireSync.syncAll(&docs)
        return (docs, shot, layers, drawn)
    }

    @Test(arguments: 0..<chunks)
    func replayFrameCountEqualsTheNumberOfStrokesMade(chunk: Int) async throws {
        let seeds = TestSeeds.seeds(count: Self.scenarios)
        var checked = (scenarios: 0, drawn: 0, erased: 0)
        for (index, seed) in seeds.enumerated() where index % Self.chunks == chunk || seeds.count == 1 {
            if seeds.count == 1 && chunk != 0 { return }
            let (docs, shot, layers, drawn) = try Self.history(seed: seed)
            var random = SeededGenerator(seed: seed &* 31)
            let changes = try Self.changes(of: docs[0]).shuffled(using: &random)
            let timeline = try #require(ReplayTimeline(document: docs[0], shot: shot, changes: changes))
            let view = docs[0].view
            let panel = try #require(view.shot(shot))

            // Every stroke drawn on the shot's layers is one drawn event, the other shot's none.
            let made = drawn.filter { panel.layers.map(\.id).contains($0.key) }.values.reduce(into: Set<OpID>()) {
                $0.formUnion($1)
            }
            let events = timeline.events.filter { $0.kind == .drawn }
            #expect(events.count == made.count && Set(events.map(\.key)) == made, "seed \(seed)")
            #expect(!timeline.events.contains { $0.layer == layers[3] }, "seed \(seed)")
            // Every replica, from its own log, replays the same events.
            for doc in docs.dropFirst() {
                let other = try #require(ReplayTimeline(document: doc, shot: shot, changes: try Self.changes(of: doc)))
                #expect(other.events == timeline.events, "seed \(seed)")
            }

            // The last frame is the panel render; the first shows no stroke.
            let playback = ReplayPlayback(
                timeline, speed: Double(random.int(1...400)) / 100, maxPause: Double(random.int(0...10)) / 10,
                fps: random.int(1...60))
            let last = try #require(playback.segments.last)
            #expect(last.applied == timeline.shownEvents.count && last.progress == nil, "seed \(seed)")
            #expect(playback.segments.reduce(0) { $0 + $1.frameCount } == playback.frameCount)
            var cursor = timeline.makeCursor()
            let first = cursor.shot()
            #expect(first.layers.prefix(2).allSatisfy { $0.strokes.isEmpty }, "seed \(seed)")
            cursor.advance(to: last.applied)
            let width = 96
            let replayed = try PanelRenderer.render(
                cursor.shot(drawingNext: last.progress), in: view, as: .png, width: width)
            let rendered = try PanelRenderer.render(panel, in: view, as: .png, width: width)
            #expect(try RasterImage(png: replayed).samePixels(as: RasterImage(png: rendered)), "seed \(seed)")
            #expect(cursor.shot() == panel, "seed \(seed)")
            checked.scenarios += 1
            checked.drawn += events.count
            checked.erased += timeline.events.filter { $0.kind == .erased }.count
            await Task.yield()
        }
        // The histories really draw and erase: a property of empty shots proves nothing.
        if checked.scenarios >= 10 {
            #expect(checked.drawn > 5 * checked.scenarios && checked.erased > checked.scenarios)
        }
    }

    @Test func theSVGShowsEachStrokeFromItsTimeAndRevealsItWhileItIsDrawn() throws {
        var (document, shot, layers) = try Self.board()
        let ink = Brush(tool: .pen, color: .black, width: 0.02)
        let a = try document.edit(at: 2_000) {
            try $0.addStroke(to: layers[0], brush: ink, points: [Point(x: 0.1, y: 0.2), Point(x: 0.9, y: 0.2)])
        }
        .value
        let pressed = [
            Point(x: 0.1, y: 0.7, pressure: 0.2), Point(x: 0.5, y: 0.8, pressure: 1),
            Point(x: 0.9, y: 0.7, pressure: 0.5),
        ]
        let flat = Brush(tool: .pen, color: .black, width: 0.02, cap: .butt, join: .bevel)
        try document.edit(at: 4_000) { _ = try $0.addStroke(to: layers[0], brush: flat, points: pressed) }
        try document.edit(at: 6_000) { try $0.eraseStroke(a, in: layers[0]) }
        let timeline = try #require(
            ReplayTimeline(document: document, shot: shot, changes: try Self.changes(of: document)))
        let playback = ReplayPlayback(timeline, speed: 1, maxPause: 0.3, fps: 24)
        let svg = ReplaySVG.make(timeline, playback: playback, width: 320)
        #expect(svg.hasPrefix("<?xml") && svg.contains("viewBox=\"0 0 320 180\""))
        // Two elements for the two strokes, each appearing at its time; the first hidden at the erase.
        #expect(svg.components(separatedBy: "<set attributeName=\"visibility\" to=\"visible\"").count == 3)
        #expect(svg.components(separatedBy: "to=\"hidden\"").count == 2)
        #expect(svg.components(separatedBy: "<mask id=").count == 3 && svg.contains("fill-rule=\"nonzero\""))
        // Each mask's dash is wider than its stroke at its widest (6.4 pixels), whatever its caps.
        #expect(svg.components(separatedBy: "stroke=\"#ffffff\" stroke-width=\"8.4\"").count == 3)
        // The half-transparent and the hidden layer: one group at half opacity, none for the hidden one.
        #expect(svg.contains("opacity=\"0.5\"") && svg.components(separatedBy: "<g transform=").count == 3)
        // Pictures: embedded where their bytes are given, outlined where not (as the render does).
        let (held, missing) = (BlobHash(Array(repeating: 1, count: 32))!, BlobHash(Array(repeating: 2, count: 32))!)
        try document.edit(at: 7_000) { editor in
            for hash in [held, missing] {
                let layer = try editor.insertLayer(in: shot, at: 0)
                let picture = MediaReference(hash: hash, type: .png, byteCount: 3, pixelWidth: 64, pixelHeight: 36)
                try editor.set(.image, to: .media(picture), on: layer)
            }
        }
        let pictured = try #require(
            ReplayTimeline(document: document, shot: shot, changes: try Self.changes(of: document)))
        let withPictures = ReplaySVG.make(
            pictured, playback: ReplayPlayback(pictured), width: 320, pictures: [held: [1, 2, 3]])
        #expect(withPictures.components(separatedBy: "href=\"data:image/png;base64,AQID\"").count == 2)
        #expect(withPictures.components(separatedBy: "stroke-dasharray=\"8 6\"").count == 2)
        #expect(ReplaySVG.base64(Array("Many hands make light work.".utf8)) == "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsu")
        #expect(ReplaySVG.base64([0xFF]) == "/w==" && ReplaySVG.base64([0xFF, 0xEE]) == "/+4=")
    }

    static func changes(of document: ProjectDocument) throws -> [Change] {
        guard case .changes(let encoded) = document.changes(since: VersionVector()) else { return [] }
        return try encoded.map { try $0.decoded() }
    }
}

extension RasterImage {
    /// Whether both have the same size and every pixel is the same.
    func samePixels(as other: RasterImage) -> Bool {
        guard width == other.width, height == other.height else { return false }
        for y in 0..<height {
            for x in 0..<width where self[x, y] != other[x, y] { return false }
        }
        return true
    }
}
