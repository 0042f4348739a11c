import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct UndoTests {
    @Test func undoErasesWhatWasDrawnAndRedoBringsItBack() throws {
        var board = try Board(scenes: 1, shots: 1)
        let layer = board.layers[board.shots[0][0]]![0]
        let stroke = try board.doc.edit(session: "s", at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        #expect(board.doc.canUndo(session: "s") && !board.doc.canRedo(session: "s"))
        #expect(try board.doc.undo(session: "s", at: 2) != nil)
        #expect(board.doc.strokes(in: layer).isEmpty)
        #expect(try board.doc.redo(session: "s", at: 3) != nil)
        #expect(board.doc.strokes(in: layer) == [stroke])
    }

    @Test func undoRestoresWhatWasErasedMovedAndSet() throws {
        var board = try Board(scenes: 2, shots: 2)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        let stroke = try board.doc.edit(at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        try board.doc.edit(at: 1) { try $0.set(.caption, to: .string("before"), on: shot) }
        let before = board.doc.view

        try board.doc.edit(session: "s", at: 2) { editor in
            try editor.eraseStroke(stroke, in: layer)
            try editor.set(.caption, to: .string("after"), on: shot)
            try editor.set(.caption, to: .string("after, twice"), on: shot)
            try editor.move(shot, to: 1, in: board.scenes[1])
            try editor.move(board.scenes[1], to: 0)
        }
        #expect(board.doc.view != before)
        try board.doc.undo(session: "s", at: 3)
        #expect(board.doc.view.scenes.map(\.id) == before.scenes.map(\.id))
        #expect(board.doc.view.scenes.map { $0.shots.map(\.id) } == before.scenes.map { $0.shots.map(\.id) })
        #expect(board.doc.view.shot(shot)?.caption == "before")
        #expect(board.doc.strokes(in: layer) == [stroke])
    }

    @Test func undoOfAnInsertDeletesAndUndoOfADeleteRestores() throws {
        var board = try Board(scenes: 1, shots: 1)
        let shot = try board.doc.edit(session: "s", at: 1) { try $0.insertShot(in: board.scenes[0], at: 1) }.value
        try board.doc.undo(session: "s", at: 2)
        #expect(!board.doc.isVisible(shot))
        try board.doc.edit(session: "s", at: 3) { try $0.delete(board.scenes[0]) }
        try board.doc.undo(session: "s", at: 4)
        #expect(board.doc.isVisible(board.scenes[0]))
    }

    @Test func undoNeverUndoesAnotherReplicasWork() throws {
        let board = try Board(scenes: 1, shots: 1)
        var mine = try board.replica(30)
        var theirs = try board.replica(31)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        try mine.edit(session: "me", at: 1) { try $0.set(.notes, to: .string("mine"), on: shot) }
        try WireSync.exchange(&mine, &theirs)
        // They overwrite my note and draw; then I undo.
        try theirs.edit(at: 2) { try $0.set(.notes, to: .string("theirs"), on: shot) }
        let theirStroke = try theirs.edit(at: 2) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        try WireSync.exchange(&mine, &theirs)
        try mine.undo(session: "me", at: 3)
        try WireSync.exchange(&mine, &theirs)
        #expect(mine.view.shot(shot)?.notes == "theirs")
        #expect(mine.strokes(in: layer) == [theirStroke])
        #expect(mine.view == theirs.view)
        // Their session has nothing to undo on my replica.
        #expect(try mine.undo(session: "them", at: 4) == nil)
    }

    @Test func sessionsHaveTheirOwnStacksAndANewEditClearsRedo() throws {
        var board = try Board(scenes: 1, shots: 1)
        let shot = board.shots[0][0]
        try board.doc.edit(session: "a", at: 1) { try $0.set(.caption, to: .string("a1"), on: shot) }
        try board.doc.edit(session: "b", at: 2) { try $0.set(.notes, to: .string("b1"), on: shot) }
        try board.doc.undo(session: "a", at: 3)
        #expect(board.doc.view.shot(shot)?.caption == nil)
        #expect(board.doc.view.shot(shot)?.notes == "b1")
        #expect(board.doc.canRedo(session: "a"))
        try board.doc.edit(session: "a", at: 4) { try $0.set(.caption, to: .string("a2"), on: shot) }
        #expect(!board.doc.canRedo(session: "a"))
        board.doc.endSession("b")
        #expect(!board.doc.canUndo(session: "b"))
    }

    @Test func undoInTheLibraryMovesBackAndRestoresNames() throws {
        var library = LibraryDocument(id: DocumentID(high: 9, low: 9), replica: ReplicaID(1))
        let (a, b) = try library.edit(at: 1) { editor in
            (try editor.createFolder(named: "Pitch"), try editor.createFolder(named: "Archive"))
        }.value
        try library.edit(session: "s", at: 2) { editor in
            try editor.move(a, to: b)
            try editor.rename(a, to: "Old pitch")
        }
        #expect(library.parent(of: a) == b)
        try library.undo(session: "s", at: 3)
        #expect(library.parent(of: a) == .root)
        #expect(library.field(.name, of: a) == .string("Pitch"))
        #expect(library.children(of: .root).filter { $0 != .incoming } == [a, b])
        let created = try library.edit(session: "s", at: 4) { try $0.createFolder(named: "Scratch") }.value
        try library.undo(session: "s", at: 5)
        #expect(library.isInTrash(created) == true)
    }

    @Test func anyNewEditEndsTheRedoChain() throws {
        var library = LibraryDocument(id: DocumentID(high: 9, low: 8), replica: ReplicaID(1))
        let folder = try library.edit(session: "s", at: 1) { try $0.createFolder(named: "Old") }.value
        try library.edit(session: "s", at: 2) { try $0.delete(folder) }
        try library.undo(session: "s", at: 3)
        #expect(library.canRedo(session: "s"))
        try library.edit(session: "s", at: 4) { editor in
            try editor.delete(folder)
            try editor.purge(folder)
        }
        #expect(!library.canRedo(session: "s"))
    }
}
