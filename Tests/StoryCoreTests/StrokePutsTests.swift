import StoryTestSupport
import Testing

@testable import StoryCore

/// History tells a restore, a copy and a restyle apart only by what a stroke
/// put found (`StrokePutTracker`).
@Suite struct StrokePutsTests {
    /// For random edits (draw, erase, restore, restyle, duplicate a shot), the
    /// tracker calls each put by what the document held under its stroke
    /// before the edit: erased → restored, absent from the layer → copied,
    /// shown → nothing. Followed from the empty project, and from a document
    /// part way through, where puts meet strokes the changes never mentioned.
    @Test(arguments: 0..<6)
    func aPutIsCalledByWhatItsStrokeWasBeforeTheEdit(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        var doc = ProjectDocument(id: DocumentID(high: 21, low: UInt64(seed)), replica: ReplicaID(1))
        var shots = [try doc.edit(at: 0) { try $0.insertShot(in: try $0.insertScene(at: 0), at: 0) }.value]
        _ = try doc.edit(at: 0) { try $0.insertLayer(in: shots[0], at: 0) }
        var changes: [Change] = []
        var expected: [OpID: StrokePutKind] = [:]
        var documents: [ProjectDocument] = []
        var counts: [StrokePutKind?: Int] = [:]
        for step in 1...240 {
            documents.append(doc)
            let before = doc
            let layers = shots.flatMap { doc.layers(in: $0) }
            let layer = layers[random.int(0...(layers.count - 1))]
            let shown = doc.strokes(in: layer)
            let erased = doc.erasedStrokes(in: layer)
            let result = try doc.edit(at: Int64(step)) { editor in
                switch random.int(0...9) {
                case 0...3:
                    let points = (0..<3).map { _ in Point(x: Double.random(in: 0...1, using: &random), y: 0.5, pressure: 0.5) }
                    _ = try editor.addStroke(to: layer, brush: Brush(), points: points)
                case 4...5 where !shown.isEmpty:
                    try editor.eraseStroke(shown[random.int(0...(shown.count - 1))], in: layer)
                case 6 where !erased.isEmpty:
                    try editor.restoreStroke(erased[random.int(0...(erased.count - 1))], in: layer)
                case 7 where !shown.isEmpty:
                    let keys = Array(shown.shuffled(using: &random).prefix(random.int(1...shown.count)))
                    try editor.restyleStrokes(keys, in: layer) { $0.width = Float(step) / 1000 }
                case 8 where shots.count < 6:
                    shots.append(try editor.duplicateShot(shots[random.int(0...(shots.count - 1))]))
                default:
                    _ = try editor.addStroke(to: layer, brush: Brush(), points: [Point(x: 0.5, y: 0.5, pressure: 0.5)])
                }
            }
            guard let change = try result.change?.decoded() else { continue }
            changes.append(change)
            for (index, operation) in change.operations.enumerated() {
                guard case .putStroke(let layer, let key, _) = operation else { continue }
                let kind: StrokePutKind? =
                    switch before.state.strokeMap(of: layer)[key]?.isErased {
                    case true?: .restored
                    case nil: .copied
                    case false?: nil
                    }
                expected[change.opID(at: index)] = kind
                counts[kind, default: 0] += 1
            }
        }
        // Every kind of put happened.
        #expect(counts[.restored, default: 0] > 0 && counts[.copied, default: 0] > 0 && counts[nil, default: 0] > 0, "\(counts)")
        func compare(_ tracker: inout StrokePutTracker, from first: Int) {
            for change in changes[first...] {
                let kinds = tracker.kinds(in: change)
                for (index, operation) in change.operations.enumerated() {
                    guard case .putStroke = operation else { continue }
                    let id = change.opID(at: index)
                    #expect(kinds[id] == expected[id], "put \(id) of change \(change.seq), followed from change \(first)")
                }
            }
        }
        var fromTheStart = StrokePutTracker { ProjectDocument(id: doc.id, replica: ReplicaID(2)) }
        compare(&fromTheStart, from: 0)
        // With nothing to ask (as `history` judges the changes it lists): every
        // stroke and every layer a put went to came in these changes.
        var blind = StrokePutTracker { nil }
        compare(&blind, from: 0)
        // `documents[i]` is the document before `changes[i]` only where every
        // edit made a change: find the document at that change's version.
        let middle = changes.count / 2
        let base = try #require(documents.first { $0.versionVector[ReplicaID(1)] == changes[middle].seq - 1 })
        var fromTheMiddle = StrokePutTracker { base }
        compare(&fromTheMiddle, from: middle)
    }

    /// One edit that erases a stroke and brings it back: the put follows the
    /// erase of the same change, so it restored the stroke.
    @Test func aPutAfterAnEraseInTheSameChangeRestores() throws {
        var doc = ProjectDocument(id: DocumentID(high: 22, low: 1), replica: ReplicaID(1))
        let layer = try doc.edit(at: 0) { try $0.insertLayer(in: try $0.insertShot(in: try $0.insertScene(at: 0), at: 0), at: 0) }.value
        let stroke = try doc.edit(at: 1) { try $0.addStroke(to: layer, brush: Brush(), points: [Point(x: 0.1, y: 0.1, pressure: 1)]) }.value
        let change = try #require(
            try doc.edit(at: 2) { editor in
                try editor.eraseStroke(stroke, in: layer)
                try editor.restoreStroke(stroke, in: layer)
            }.change?.decoded())
        var tracker = StrokePutTracker { nil }
        #expect(Array(tracker.kinds(in: change).values) == [.restored])
    }
}
