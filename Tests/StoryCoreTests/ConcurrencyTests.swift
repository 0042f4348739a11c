import StoryTestSupport
import Testing

@testable import StoryCore

/// The hard cases of concurrent editing, each on replicas that edit apart and
/// then exchange changes through the wire encoding.
@Suite struct ConcurrencyTests {
    /// Three replicas of the same board.
    func replicas(_ board: Board, count: Int = 3) throws -> [ProjectDocument] {
        try (0..<count).map { try board.replica(UInt64(10 + $0)) }
    }

    @Test func concurrentMovesOfOneShotNeverDuplicateIt() throws {
        let board = try Board(scenes: 3, shots: 2)
        var docs = try replicas(board)
        let shot = board.shots[0][0]
        try docs[0].edit(at: 1) { try $0.move(shot, to: 0, in: board.scenes[1]) }
        try docs[1].edit(at: 1) { try $0.move(shot, to: 1, in: board.scenes[2]) }
        try docs[2].edit(at: 1) { try $0.move(shot, to: 1) }  // a reorder in its first scene
        try WireSync.syncAll(&docs)
        let views = docs.map(\.view)
        #expect(views.allSatisfy { $0 == views[0] })
        let appearances = views[0].shots.filter { $0.id == shot }.count
        #expect(appearances == 1)
        // The cross-scene moves are concurrent: the later op id wins; the reorder in
        // the old scene never pulls the shot back there.
        #expect(docs[0].container(of: shot) != board.scenes[0])
    }

    @Test func aReorderDoesNotUndoAConcurrentMoveToAnotherScene() throws {
        let board = try Board(scenes: 2, shots: 3)
        var docs = try replicas(board, count: 2)
        let shot = board.shots[0][1]
        // Replica 1 reorders after making many changes, so its op id is larger.
        for index in 0..<5 { try docs[1].edit(at: 1) { try $0.set(.notes, to: .string("n\(index)"), on: shot) } }
        try docs[0].edit(at: 1) { try $0.move(shot, to: 0, in: board.scenes[1]) }
        try docs[1].edit(at: 2) { try $0.move(shot, to: 2) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].container(of: shot) == board.scenes[1])
        #expect(docs[0].shots(in: board.scenes[1]).first == shot)
    }

    @Test func aShotMovedIntoASceneDeletedConcurrentlyComesBackWithTheScene() throws {
        let board = try Board(scenes: 2, shots: 2)
        var docs = try replicas(board, count: 2)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        let strokes = try docs[0].edit(at: 1) { editor in
            try (0..<5).map { try editor.addStroke(to: layer, brush: pen, points: line(y: 0.1 * Double($0))) }
        }.value
        try WireSync.syncAll(&docs)
        try docs[0].edit(at: 2) { try $0.move(shot, to: 0, in: board.scenes[1]) }
        try docs[1].edit(at: 2) { try $0.delete(board.scenes[1]) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].view.shot(shot) == nil)  // hidden with its scene…
        try docs[1].edit(at: 3) { try $0.restore(board.scenes[1]) }
        try WireSync.syncAll(&docs)
        // …and nothing drawn is lost: restoring the scene brings the shot and strokes back.
        for doc in docs {
            #expect(doc.view.shot(shot)?.layers.first?.strokes.map(\.id) == strokes)
        }
    }

    @Test func deleteWinsOverAConcurrentMoveAndEditsSurvive() throws {
        let board = try Board(scenes: 2, shots: 2)
        var docs = try replicas(board, count: 2)
        let shot = board.shots[1][1]
        try docs[0].edit(at: 1) { try $0.delete(shot) }
        try docs[1].edit(at: 1) { editor in
            try editor.move(shot, to: 0)
            try editor.set(.caption, to: .string("still here"), on: shot)
        }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].view.shot(shot) == nil)
        try docs[0].edit(at: 2) { try $0.restore(shot) }
        try WireSync.syncAll(&docs)
        #expect(docs[1].view.shot(shot)?.caption == "still here")
        #expect(docs[1].view.scenes[1].shots.first?.id == shot)
    }

    @Test func aMoveConcurrentWithAnEditKeepsBoth() throws {
        let board = try Board(scenes: 2, shots: 2)
        var docs = try replicas(board, count: 2)
        let shot = board.shots[0][1]
        let layer = board.layers[shot]![0]
        try docs[0].edit(at: 1) { try $0.move(shot, to: 0, in: board.scenes[1]) }
        let stroke = try docs[1].edit(at: 1) { editor in
            try editor.set(.notes, to: .string("Rack focus"), on: shot)
            return try editor.addStroke(to: layer, brush: pen, points: line())
        }.value
        try WireSync.syncAll(&docs)
        for doc in docs {
            let view = doc.view.shot(shot)
            #expect(view?.label == "2-1")
            #expect(view?.notes == "Rack focus")
            #expect(view?.layers[0].strokes.map(\.id) == [stroke])
        }
    }

    @Test func concurrentStrokesOnOneLayerBothSurvive() throws {
        let board = try Board(scenes: 1, shots: 1)
        var docs = try replicas(board)
        let layer = board.layers[board.shots[0][0]]![0]
        var drawn: [OpID] = []
        for index in docs.indices {
            drawn += try docs[index].edit(at: 1) { editor in
                try (0..<4).map { _ in try editor.addStroke(to: layer, brush: pen, points: line()) }
            }.value
        }
        try WireSync.syncAll(&docs)
        for doc in docs { #expect(doc.strokes(in: layer) == drawn.sorted()) }
    }

    @Test func eraseConcurrentWithALassoReplaceConvergesAndKeepsTheStrokeRestorable() throws {
        let board = try Board(scenes: 1, shots: 1)
        var docs = try replicas(board, count: 2)
        let layer = board.layers[board.shots[0][0]]![0]
        let stroke = try docs[0].edit(at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        try WireSync.syncAll(&docs)
        // Replica 1's op id is larger: its replace wins the value register, but the
        // erase and the replace race for the erased flag by op id too.
        try docs[1].edit(at: 2) { try $0.set(.title, to: .string("bump")) }
        try docs[0].edit(at: 2) { try $0.eraseStroke(stroke, in: layer) }
        try docs[1].edit(at: 2) { try $0.transformStrokes([stroke], in: layer, by: .translation(x: 0.2, y: 0)) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].stroke(stroke, in: layer)?.transform == .translation(x: 0.2, y: 0))

        // The other order: the erase is later and wins; the moved value stays restorable.
        try docs[1].edit(at: 3) { try $0.transformStrokes([stroke], in: layer, by: .translation(x: 0, y: 0.1)) }
        for index in 0..<3 { try docs[0].edit(at: 3) { try $0.set(.title, to: .string("bump \(index)")) } }
        try docs[0].edit(at: 4) { try $0.eraseStroke(stroke, in: layer) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view == docs[1].view)
        #expect(docs[0].stroke(stroke, in: layer) == nil)
        try docs[1].edit(at: 5) { try $0.restoreStroke(stroke, in: layer) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].stroke(stroke, in: layer)?.transform == .translation(x: 0.2, y: 0.1))
    }

    @Test func concurrentInsertsAtOneIndexDoNotInterleave() throws {
        let board = try Board(scenes: 1, shots: 2)
        var docs = try replicas(board, count: 2)
        let scene = board.scenes[0]
        var runs: [[OpID]] = [[], []]
        for replica in 0..<2 {
            for index in 0..<4 {
                runs[replica].append(try docs[replica].edit(at: 1) { try $0.insertShot(in: scene, at: 1 + index) }.value)
            }
        }
        try WireSync.syncAll(&docs)
        let order = docs[0].shots(in: scene)
        #expect(order == docs[1].shots(in: scene))
        #expect(order.first == board.shots[0][0] && order.last == board.shots[0][1])
        let middle = Array(order.dropFirst().dropLast())
        #expect(middle == runs[0] + runs[1] || middle == runs[1] + runs[0])
    }

    @Test func concurrentBackwardInsertsDoNotInterleaveEither() throws {
        let board = try Board(scenes: 1, shots: 2)
        var docs = try replicas(board, count: 2)
        let scene = board.scenes[0]
        var runs: [[OpID]] = [[], []]
        for replica in 0..<2 {
            for _ in 0..<4 {
                // Each new shot goes before the previous one (typing backwards).
                runs[replica].insert(try docs[replica].edit(at: 1) { try $0.insertShot(in: scene, at: 1) }.value, at: 0)
            }
        }
        try WireSync.syncAll(&docs)
        let middle = Array(docs[0].shots(in: scene).dropFirst().dropLast())
        #expect(middle == runs[0] + runs[1] || middle == runs[1] + runs[0])
    }

    @Test func lastWriterWinsComparesLamportIDsNotArrivalOrder() throws {
        let board = try Board(scenes: 1, shots: 1)
        var docs = try replicas(board, count: 2)
        let shot = board.shots[0][0]
        try docs[0].edit(at: 9_999_999) { try $0.set(.caption, to: .string("first, with a later wall clock"), on: shot) }
        try WireSync.syncAll(&docs)
        try docs[1].edit(at: 1) { try $0.set(.caption, to: .string("second, causally after"), on: shot) }
        try WireSync.syncAll(&docs)
        #expect(docs[0].view.shot(shot)?.caption == "second, causally after")
    }
}
