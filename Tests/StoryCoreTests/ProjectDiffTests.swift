import StoryTestSupport
import Testing

@testable import StoryCore

/// `ProjectDiff`: what changed between two views, as `storyteller diff` says it.
@Suite struct ProjectDiffTests {
    @Test func aDiffNamesWhatCameWentMovedAndChanged() throws {
        var board = try Board(replica: 1, scenes: 2, shots: 3, layers: 1)
        let (s1, s2) = (board.scenes[0], board.scenes[1])
        let layer = board.layers[board.shots[0][0]]![0]
        try board.doc.edit(at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }
        let erasedLater = try #require(board.doc.strokes(in: layer).first)
        let before = board.doc.view

        try board.doc.edit(at: 2) { editor in
            try editor.move(board.shots[0][2], to: 0)  // 1-3 to the front: one move, not three
            try editor.move(board.shots[1][0], to: 3, in: s1)  // 2-1 into scene 1
            try editor.delete(board.shots[1][2])
            let scene = try editor.insertScene(at: 2)
            try editor.set(.title, to: .string("Coda"), on: scene)
            try editor.set(.title, to: .string("Dawn"), on: s2)
            try editor.set(.name, to: .string("ink"), on: layer)
            try editor.set(.caption, to: .string("she runs"), on: board.shots[0][0])
            try editor.addStroke(to: layer, brush: pen, points: line(y: 0.3))
            try editor.addStroke(to: layer, brush: pen, points: line(y: 0.4))
            try editor.eraseStroke(erasedLater, in: layer)
        }
        let diff = ProjectDiff(from: before, to: board.doc.view)
        let said = Set(diff.items.map { "\($0.kind) \($0.change)" + ($0.before.map { " from \($0)" } ?? "") })
        #expect(said.contains("shot moved from shot 1-3"))
        #expect(said.contains("shot moved from shot 2-1"))
        #expect(diff.items.filter { $0.change == "moved" }.count == 2, "moving one shot to the front moves only it: \(diff.items)")
        #expect(said.contains("shot removed") && said.contains("scene added"))
        #expect(diff.items.contains { $0.kind == "scene" && $0.change == "renamed" && $0.after == "Dawn" })
        #expect(diff.items.contains { $0.kind == "layer" && $0.change == "renamed" && $0.after == "ink" })
        #expect(diff.strokes.map { [$0.added, $0.erased, $0.changed] } == [[2, 1, 0]])
        #expect(diff.strokes.first?.place == "layer ink in shot 1-2", "where it is now: 1-3 moved in front of it")
        #expect(diff.texts.map(\.field) == ["caption"] && diff.texts.first?.after == "she runs")

        #expect(ProjectDiff(from: board.doc.view, to: board.doc.view).isEmpty)
        let back = ProjectDiff(from: board.doc.view, to: before)
        #expect(back.strokes.map { [$0.added, $0.erased] } == [[1, 2]])
        #expect(back.items.contains { $0.kind == "scene" && $0.change == "removed" })
    }

    @Test func movesAreTheItemsOutsideTheLongestRunKeptInOrder() {
        let ids = (3..<10).map { OpID(counter: UInt64($0), replica: ReplicaID(1)) }
        #expect(ProjectDiff.moved(ids, ids).isEmpty)
        #expect(ProjectDiff.moved(ids, [ids[6]] + ids[0..<6]) == [ids[6]])
        #expect(ProjectDiff.moved(ids, Array(ids.reversed())).count == ids.count - 1)
        #expect(ProjectDiff.moved(ids, [ids[1], ids[0]] + ids[2...]).count == 1)
    }
}
