import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct UndoTests {
    @Test func undoErasesWhatWasDrawnAndRedoBringsItBack() throws {
        var board = try Board(scenes: 1, shots: 1)
        let layer = board.layers[board.shots[0][0]]![0]
        let stroke = try board.doc.edit(session: "s", at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        #expect(board.doc.canUndo(session: "s") && !board.doc.canRedo(session: "s"))
        #expect(try board.doc.undo(session: "s", at: 2).change != nil)
        #expect(board.doc.strokes(in: layer).isEmpty)
        #expect(try board.doc.redo(session: "s", at: 3).change != nil)
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
        #expect(try mine.undo(session: "them", at: 4).change == nil)
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

/// Undo after a merge, undo twice, what undo says, and the stored history.
@Suite struct UndoAfterMergeTests {
    /// The bug found by a new user: after a merge overruled their move, undo
    /// deleted the shot they had just added instead.
    @Test func anOverruledLastEditIsReportedAndNothingElseIsUndone() throws {
        let board = try Board(scenes: 3, shots: 2)
        var mine = try board.replica(30)
        var theirs = try board.replica(31)
        let moved = board.shots[0][0]
        let added = try mine.edit(session: "me", at: 1) { try $0.insertShot(in: board.scenes[0], at: 2) }.value
        try mine.edit(session: "me", at: 2) { try $0.move(moved, to: 0, in: board.scenes[1]) }
        // They move the same shot, later in Lamport order (more edits behind them).
        for index in 0..<5 { try theirs.edit(at: 2) { try $0.set(.caption, to: .string("take \(index)"), on: board.shots[1][1]) } }
        try theirs.edit(at: 3) { try $0.move(moved, to: 1, in: board.scenes[2]) }
        try WireSync.exchange(&mine, &theirs)
        #expect(mine.view.shot(moved)?.sceneNumber == 3, "their move won")

        let overruled = try mine.undo(session: "me", at: 4)
        #expect(overruled.change == nil && overruled.isOverruled)
        #expect(overruled.summary == "moved shot 1-1 to scene 2 (now 2-1)", "what the overruled edit did, as it was made")
        #expect(overruled.overruledBy == [ReplicaID(31)])
        #expect(mine.isVisible(added), "the shot added before is not taken back instead")
        #expect(mine.canUndo(session: "me"), "the overruled edit stays: undo says so again")
        #expect(try mine.undo(session: "me", at: 5).isOverruled)

        let older = try mine.undo(session: "me", older: true, at: 6)
        #expect(older.change != nil && !older.isOverruled)
        #expect(older.passedOver == ["moved shot 1-1 to scene 2 (now 2-1)"])
        #expect(older.summary == "added shot 1-3")
        #expect(!mine.isVisible(added))
        try WireSync.exchange(&mine, &theirs)
        #expect(mine.view == theirs.view)
    }

    @Test func anEditPartlyOverwrittenIsUndoneWhereItIsStillOwn() throws {
        let board = try Board(scenes: 1, shots: 1)
        var mine = try board.replica(30)
        var theirs = try board.replica(31)
        let shot = board.shots[0][0]
        try mine.edit(session: "me", at: 1) { editor in
            try editor.set(.caption, to: .string("mine"), on: shot)
            try editor.set(.notes, to: .string("my notes"), on: shot)
        }
        try WireSync.exchange(&mine, &theirs)
        try theirs.edit(at: 2) { try $0.set(.caption, to: .string("theirs"), on: shot) }
        try WireSync.exchange(&mine, &theirs)
        let outcome = try mine.undo(session: "me", at: 3)
        #expect(outcome.change != nil && outcome.partsLeftAlone == 1 && outcome.overruledBy == [ReplicaID(31)])
        #expect(outcome.summary == "set caption, notes of shot 1-1")
        #expect(mine.view.shot(shot)?.caption == "theirs" && mine.view.shot(shot)?.notes == nil)
    }

    @Test func undoTwiceTakesBackTwoEditsOfOneField() throws {
        var board = try Board(scenes: 1, shots: 1)
        let shot = board.shots[0][0]
        for caption in ["one", "two", "three"] {
            try board.doc.edit(session: "s", at: 1) { try $0.set(.caption, to: .string(caption), on: shot) }
        }
        for expected in ["two", "one", nil] {
            #expect(try board.doc.undo(session: "s", at: 2).change != nil)
            #expect(board.doc.view.shot(shot)?.caption == expected)
        }
        for expected in ["one", "two", "three"] {
            #expect(try board.doc.redo(session: "s", at: 3).change != nil)
            #expect(board.doc.view.shot(shot)?.caption == expected)
        }
        // And a moved shot moved twice goes back twice.
        var moves = try Board(scenes: 1, shots: 3)
        let first = moves.shots[0][0]
        try moves.doc.edit(session: "s", at: 1) { try $0.move(first, to: 1) }
        try moves.doc.edit(session: "s", at: 2) { try $0.move(first, to: 2) }
        try moves.doc.undo(session: "s", at: 3)
        try moves.doc.undo(session: "s", at: 4)
        #expect(moves.doc.view.scenes[0].shots.map(\.id) == moves.shots[0])
    }

    @Test func undoSaysWhatTheEditDid() throws {
        var board = try Board(scenes: 2, shots: 2)
        let shot = board.shots[0][1]
        let layer = board.layers[shot]![0]
        let scenes = board.scenes
        func summary(_ body: (inout ProjectEditor) throws -> Void) throws -> String? {
            try board.doc.edit(session: "s", at: 1, body)
            let outcome = try board.doc.undo(session: "s", at: 2)
            return outcome.summary
        }
        #expect(try summary { try $0.move(shot, to: 0, in: scenes[1]) } == "moved shot 1-2 to scene 2 (now 2-1)")
        #expect(try summary { try $0.move(shot, to: 0) } == "moved shot 1-2 (now 1-1)")
        #expect(try summary { _ = try $0.addStroke(to: layer, brush: pen, points: line()) } == "drew 1 stroke on a layer in 1-2")
        try board.doc.edit(at: 3) { try $0.set(.name, to: .string("ink"), on: layer) }
        #expect(
            try summary { editor in
                for _ in 0..<2 { _ = try editor.addStroke(to: layer, brush: pen, points: line()) }
            } == "drew 2 strokes on layer ink in 1-2")
        #expect(try summary { try $0.set(.caption, to: .string("Wide"), on: shot) } == "set caption of shot 1-2")
        #expect(try summary { try $0.set(.title, to: .string("Night Train")) } == "set the project's title")
        #expect(try summary { try $0.delete(scenes[1]) } == "deleted scene 2 \"Scene 2\"")
        #expect(try summary { _ = try $0.insertScene(at: 0) } == "added scene 1")
        #expect(
            try summary { editor in
                for index in 0..<4 { _ = try editor.insertShot(in: scenes[0], at: index) }
            } == "added shot 1-1, added shot 1-2 and 2 more changes")
    }

    /// An edit of thousands of inserts is summed up, not named one by one
    /// (naming walks a list: naming each was quadratic and stalled the daemon).
    @Test func aHugeEditIsSummedUp() throws {
        var document = ProjectDocument(id: Board.documentID, replica: ReplicaID(5))
        try document.edit(session: "s", at: 1) { editor in
            for index in 0..<2_000 { _ = try editor.insertScene(at: index) }
        }
        let outcome = try document.undo(session: "s", at: 2)
        #expect(outcome.summary == "added scene 1, added scene 2 and 1998 more changes")
        #expect(document.view.scenes.isEmpty)
    }

    /// What a store writes (pushes, removals, rewrites) is enough to rebuild
    /// the stacks: undo and redo after a "restart" do what they would have done.
    @Test func theStoredHistoryRestoresBothStacks() throws {
        var board = try Board(scenes: 1, shots: 2)
        board.doc.recordsUndoStorage = true
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        var table: [String: (position: UInt64, bytes: [UInt8])] = [:]
        func store() {
            for change in board.doc.takeUndoStorageChanges() {
                switch change {
                case .push(let session, let stack, let position, let record), .replace(let session, let stack, let position, let record):
                    table["\(session)/\(stack)/\(position)"] = (position, record)
                case .remove(let session, let stack, let position): table["\(session)/\(stack)/\(position)"] = nil
                case .clear(let session, let stack): table = table.filter { !$0.key.hasPrefix("\(session)/\(stack)/") }
                }
            }
        }
        let stroke = try board.doc.edit(session: "s", at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        try board.doc.edit(session: "s", at: 2) { try $0.set(.caption, to: .string("one"), on: shot) }
        try board.doc.edit(session: "s", at: 3) { try $0.set(.caption, to: .string("two"), on: shot) }
        try board.doc.edit(session: "s", at: 4) { try $0.eraseStroke(stroke, in: layer) }
        try board.doc.undo(session: "s", at: 5)
        try board.doc.undo(session: "s", at: 6)
        store()
        #expect(table.count == 4, "two to undo, two to redo")

        var restarted = try ProjectDocument(snapshot: board.doc.snapshot(), replica: board.doc.replica)
        for stack in [UndoStack.undo, .redo] {
            let records = table.filter { $0.key.hasPrefix("s/\(stack)/") }.map(\.value)
            try restarted.restoreUndo(session: "s", stack: stack, records: records)
        }
        #expect(restarted.view.shot(shot)?.caption == "one")
        let undone = try restarted.undo(session: "s", at: 7)
        #expect(undone.summary == "set caption of shot 1-1" && restarted.view.shot(shot)?.caption == nil, "restamped by the first undo")
        let redone = try restarted.redo(session: "s", at: 8)
        #expect(redone.summary == "set caption of shot 1-1" && restarted.view.shot(shot)?.caption == "one")
        try restarted.redo(session: "s", at: 9)
        try restarted.redo(session: "s", at: 10)
        #expect(restarted.view.shot(shot)?.caption == "two" && restarted.strokes(in: layer).isEmpty, "both redone")
        #expect(try restarted.redo(session: "s", at: 11).change == nil)
        // A damaged record is an error, not a crash.
        #expect(throws: CodecError.self) {
            try restarted.restoreUndo(session: "t", stack: .undo, records: [(1, [1, 0, 5, 9])])
        }
    }
}
