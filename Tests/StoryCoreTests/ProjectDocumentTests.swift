import StoryTestSupport
import Testing

@testable import StoryCore

let pen = Brush(tool: .pen, color: .black, width: 0.003)

func line(_ count: Int = 10, y: Double = 0.5) -> [Point] {
    (0..<count).map { Point(x: 0.1 + Double($0) * 0.02, y: y, pressure: 0.5) }
}

@Suite struct ProjectDocumentTests {
    @Test func projectFieldsAreLastWriterWinsRegisters() throws {
        var board = try Board()
        try board.doc.edit(at: 2000) { editor in
            try editor.set(.title, to: .string("The Lighthouse Keeper"))
            try editor.set(.description, to: .string("Animatic — v1"))
            try editor.set(.aspectRatio, to: .number(2.39))
        }
        let view = board.doc.view
        #expect(view.title == "The Lighthouse Keeper")
        #expect(view.description == "Animatic — v1")
        #expect(view.aspectRatio == 2.39)
        #expect(view.createdAt == 1000 && view.updatedAt == 2000)
        #expect(view.shots.allSatisfy { $0.aspectRatio == 2.39 })
    }

    @Test func fieldsOfTheWrongTypeOrKindAreRefused() throws {
        var board = try Board()
        let shot = board.shots[0][0]
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.set(.opacity, to: .number(0.5), on: shot) } }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.set(.duration, to: .string("long"), on: shot) } }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.set(.duration, to: .number(-1), on: shot) } }
        #expect(throws: DocumentError.self) {
            try board.doc.edit(at: 1) { try $0.set(.title, to: .string("x"), on: OpID(counter: 999, replica: ReplicaID(5))) }
        }
    }

    @Test func scenesInsertMoveDeleteRestoreAndLabel() throws {
        var board = try Board(scenes: 3, shots: 2)
        let (a, b, c) = (board.scenes[0], board.scenes[1], board.scenes[2])
        try board.doc.edit(at: 1) { try $0.move(c, to: 0) }
        #expect(board.doc.scenes == [c, a, b])
        #expect(board.doc.view.scenes.map(\.label) == ["1", "2", "3"])
        #expect(board.doc.view.scenes[0].shots.map(\.label) == ["1-1", "1-2"])
        try board.doc.edit(at: 2) { try $0.delete(a) }
        #expect(board.doc.scenes == [c, b])
        #expect(!board.doc.isVisible(board.shots[0][0]))
        try board.doc.edit(at: 3) { try $0.restore(a) }
        #expect(board.doc.scenes == [c, a, b])
        #expect(board.doc.isVisible(board.shots[0][0]))
        try board.doc.edit(at: 4) { editor in
            try editor.set(.title, to: .string("EXT. BEACH - NIGHT"), on: b)
            try editor.set(.description, to: .string("The storm"), on: b)
        }
        #expect(board.doc.view.scenes[2].title == "EXT. BEACH - NIGHT")
        #expect(board.doc.view.scenes[2].description == "The storm")
    }

    @Test func movingToWhereItIsMakesNoChange() throws {
        var board = try Board()
        let result = try board.doc.edit(at: 1) { try $0.move(board.scenes[1], to: 1) }
        #expect(result.change == nil)
    }

    @Test func indicesOutsideTheListAreRefused() throws {
        var board = try Board()
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.insertScene(at: 5) } }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.move(board.scenes[0], to: -1) } }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 1) { try $0.insertShot(in: board.shots[0][0], at: 0) } }
    }

    @Test func shotsMoveWithinAndAcrossScenesAtomically() throws {
        var board = try Board(scenes: 2, shots: 3)
        let shot = board.shots[0][0]
        let layer = board.layers[shot]![0]
        let stroke = try board.doc.edit(at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        try board.doc.edit(at: 2) { try $0.move(shot, to: 2) }
        #expect(board.doc.shots(in: board.scenes[0]) == [board.shots[0][1], board.shots[0][2], shot])
        let change = try board.doc.edit(at: 3) { try $0.move(shot, to: 1, in: board.scenes[1]) }.change!
        #expect(try change.decoded().operations.count == 1)
        #expect(board.doc.shots(in: board.scenes[0]) == [board.shots[0][1], board.shots[0][2]])
        #expect(board.doc.shots(in: board.scenes[1]) == [board.shots[1][0], shot, board.shots[1][1], board.shots[1][2]])
        #expect(board.doc.strokes(in: layer) == [stroke])
        #expect(board.doc.view.shot(shot)?.label == "2-2")
    }

    @Test func shotFieldsAndDeleteRestore() throws {
        var board = try Board()
        let shot = board.shots[1][2]
        try board.doc.edit(at: 1) { editor in
            try editor.set(.background, to: .color(Color(hex: "#224466")!), on: shot)
            try editor.set(.caption, to: .string("Don't open it."), on: shot)
            try editor.set(.notes, to: .string("Slow push in on the door"), on: shot)
            try editor.set(.duration, to: .number(3.5), on: shot)
            try editor.set(.aspectRatio, to: .number(1.85), on: shot)
        }
        let view = board.doc.view.shot(shot)!
        #expect(view.background == Color(hex: "#224466"))
        #expect(view.caption == "Don't open it." && view.notes == "Slow push in on the door")
        #expect(view.duration == 3.5 && view.aspectRatio == 1.85)
        try board.doc.edit(at: 2) { try $0.delete(shot) }
        #expect(board.doc.view.shot(shot) == nil)
        try board.doc.edit(at: 3) { try $0.restore(shot) }
        #expect(board.doc.view.shot(shot)?.caption == "Don't open it.")
    }

    @Test func duplicateShotReferencesTheSourceStrokesWithoutCopyingPoints() throws {
        var board = try Board(scenes: 1, shots: 2, layers: 2)
        let shot = board.shots[0][0]
        let (bottom, top) = (board.layers[shot]![0], board.layers[shot]![1])
        var strokes: [OpID] = []
        var random = SeededGenerator(seed: 3)
        try board.doc.edit(at: 1) { editor in
            try editor.set(.caption, to: .string("Hold"), on: shot)
            try editor.set(.name, to: .string("Ink"), on: top)
            for index in 0..<20 {
                let points = randomPoints(200, using: &random)
                strokes.append(try editor.addStroke(to: index % 2 == 0 ? bottom : top, brush: pen, points: points))
            }
        }
        let result = try board.doc.edit(at: 2) { try $0.duplicateShot(shot) }
        let copy = result.value
        #expect(board.doc.shots(in: board.scenes[0]) == [shot, copy, board.shots[0][1]])
        let source = board.doc.view.shot(shot)!
        let duplicate = board.doc.view.shot(copy)!
        #expect(duplicate.caption == "Hold")
        #expect(duplicate.layers.map(\.name) == source.layers.map(\.name))
        #expect(duplicate.layers.map { $0.strokes.map(\.content) } == source.layers.map { $0.strokes.map(\.content) })
        #expect(duplicate.layers.map { $0.strokes.map(\.points) } == source.layers.map { $0.strokes.map(\.points) })
        // The change names the strokes (a few bytes each) and carries none of their points.
        let pointBytes = source.layers.flatMap(\.strokes).reduce(0) { $0 + $1.points.bytes.count }
        #expect(result.change!.bytes.count * 10 < pointBytes)
        #expect(try result.change!.decoded().operations.allSatisfy { if case .addStroke = $0 { false } else { true } })
        #expect(board.doc.statistics.contents == 20)
        // The copy is independent: erasing in it leaves the source alone.
        let copiedLayer = duplicate.layers[0].id
        try board.doc.edit(at: 3) { try $0.eraseStroke(strokes[0], in: copiedLayer) }
        #expect(board.doc.strokes(in: bottom).contains(strokes[0]))
        #expect(!board.doc.strokes(in: copiedLayer).contains(strokes[0]))
    }

    @Test func layersInsertMoveSetGroupAndDelete() throws {
        var board = try Board(scenes: 1, shots: 1, layers: 3)
        let shot = board.shots[0][0]
        let layers = board.layers[shot]!
        try board.doc.edit(at: 1) { editor in
            try editor.move(layers[0], to: 2)
            try editor.set(.name, to: .string("BG"), on: layers[0])
            try editor.set(.visible, to: .bool(false), on: layers[1])
            try editor.set(.locked, to: .bool(true), on: layers[1])
            try editor.set(.opacity, to: .number(0.4), on: layers[2])
            try editor.set(.transform, to: .transform(Affine.scale(x: 2, y: 2).followed(by: .translation(x: 0.1, y: 0))), on: layers[2])
        }
        #expect(board.doc.layers(in: shot) == [layers[1], layers[2], layers[0]])
        let view = board.doc.view.shot(shot)!.layers
        #expect(view[2].name == "BG")
        #expect(!view[0].isVisible && view[0].isLocked)
        #expect(view[1].opacity == 0.4)
        #expect(view[1].transform.applied(to: Point(x: 0.5, y: 0.5)) == Point(x: 1.1, y: 1.0))

        let group = try board.doc.edit(at: 2) { try $0.groupLayers([layers[0], layers[2]]) }.value
        #expect(board.doc.view.shot(shot)!.layers.map(\.group) == [nil, group, group])
        try board.doc.edit(at: 3) { try $0.ungroupLayers([layers[2]]) }
        #expect(board.doc.view.shot(shot)!.layers.map(\.group) == [nil, nil, group])

        try board.doc.edit(at: 4) { try $0.delete(layers[1]) }
        #expect(board.doc.layers(in: shot) == [layers[2], layers[0]])
        try board.doc.edit(at: 5) { try $0.restore(layers[1]) }
        #expect(board.doc.layers(in: shot).count == 3)
    }

    @Test func strokesAddEraseReplaceAndRestore() throws {
        var board = try Board(scenes: 1, shots: 1)
        let layer = board.layers[board.shots[0][0]]![0]
        let (a, b) = try board.doc.edit(at: 1) { editor in
            (
                try editor.addStroke(to: layer, brush: pen, points: line(y: 0.2)),
                try editor.addStroke(to: layer, brush: Brush(tool: .marker, color: Color(hex: "#F4D03F80")!, width: 0.02), points: line(y: 0.6))
            )
        }.value
        #expect(board.doc.strokes(in: layer) == [a, b])

        try board.doc.edit(at: 2) { editor in
            try editor.transformStrokes([a], in: layer, by: .translation(x: 0.1, y: 0))
            try editor.transformStrokes([a], in: layer, by: .translation(x: 0, y: 0.1))
            try editor.restyleStrokes([b], in: layer) { $0.color = Color(hex: "#C0392B")! }
        }
        let strokeA = board.doc.stroke(a, in: layer)!
        #expect(strokeA.content == a)
        #expect(strokeA.transform == .translation(x: 0.1, y: 0.1))
        #expect(board.doc.stroke(b, in: layer)!.brush.color == Color(hex: "#C0392B"))
        let view = board.doc.view.shots[0].layers[0].strokes[0]
        #expect(abs(view.transformedPoints()[0].x - (0.1 + 0.1)) < 1e-4)

        try board.doc.edit(at: 3) { try $0.eraseStroke(a, in: layer) }
        #expect(board.doc.strokes(in: layer) == [b])
        #expect(board.doc.erasedStrokes(in: layer) == [a])
        try board.doc.edit(at: 4) { try $0.restoreStroke(a, in: layer) }
        #expect(board.doc.stroke(a, in: layer) == strokeA)
        #expect(throws: DocumentError.self) {
            try board.doc.edit(at: 5) { try $0.eraseStroke(OpID(counter: 9999, replica: ReplicaID(1)), in: layer) }
        }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 5) { try $0.addStroke(to: layer, brush: pen, points: []) } }
        #expect(throws: DocumentError.self) { try board.doc.edit(at: 5) { try $0.addStroke(to: board.shots[0][0], brush: pen, points: line()) } }
    }

    @Test func searchFindsTitlesNotesCaptionsAndLayerNamesCaseInsensitively() throws {
        var board = try Board(scenes: 2, shots: 2)
        let beam = try board.doc.edit(at: 1) { editor in
            let layer = try editor.insertLayer(in: board.shots[0][1], at: 0)
            try editor.set(.name, to: .string("lighthouse beam"), on: layer)
            return layer
        }.value
        try board.doc.edit(at: 1) { editor in
            try editor.set(.title, to: .string("The Lighthouse"))
            try editor.set(.notes, to: .string("Crane down on the LIGHTHOUSE lamp"), on: board.shots[1][1])
            try editor.set(.caption, to: .string("Keep walking."), on: board.shots[0][0])
            try editor.set(.description, to: .string("lighthouse exterior"), on: board.scenes[0])
        }
        let hits = board.doc.view.search("lightHouse")
        #expect(hits.map(\.label) == ["Project", "Scene 1", "Scene 1 › Shot 1-2 › Layer lighthouse beam", "Scene 2 › Shot 2-2"])
        #expect(hits[2].field == .name && hits[2].path == [board.scenes[0], board.shots[0][1], beam])
        #expect(hits[3].field == .notes)
        #expect(hits[3].path == [board.scenes[1], board.shots[1][1]])
        #expect(board.doc.view.search("walking").first?.field == .caption)
        #expect(board.doc.view.search("").isEmpty)
    }

    @Test func insertingWithoutAnIndexAppendsAfterTheLastShownObject() throws {
        var board = try Board(scenes: 3, shots: 3)
        // The tail is deleted: the new scene and shot come after the last shown ones.
        try board.doc.edit(at: 1) { editor in
            try editor.delete(board.scenes[2])
            try editor.delete(board.shots[0][2])
        }
        let (scene, shot) = try board.doc.edit(at: 2) { editor in
            (try editor.insertScene(at: nil), try editor.insertShot(in: board.scenes[0], at: nil))
        }.value
        #expect(board.doc.view.scenes.map(\.id) == [board.scenes[0], board.scenes[1], scene])
        #expect(board.doc.view.scenes[0].shots.map(\.id) == [board.shots[0][0], board.shots[0][1], shot])
        // Into an empty list, and with nothing but deleted entries.
        let layer = try board.doc.edit(at: 3) { try $0.insertLayer(in: shot, at: nil) }.value
        #expect(board.doc.view.shot(shot)?.layers.map(\.id) == [layer])
        try board.doc.edit(at: 4) { try $0.delete(layer) }
        let second = try board.doc.edit(at: 5) { try $0.insertLayer(in: shot, at: nil) }.value
        try board.doc.edit(at: 6) { try $0.restore(layer) }
        #expect(board.doc.view.shot(shot)?.layers.map(\.id) == [second, layer], "after the last shown (none) is the start, before the tombstone")
    }

    @Test func aFailedEditLeavesTheDocumentAsItWas() throws {
        var board = try Board()
        let before = board.doc.view
        let vector = board.doc.versionVector
        #expect(throws: DocumentError.self) {
            try board.doc.edit(at: 1) { editor in
                try editor.insertScene(at: 0)
                try editor.set(.title, to: .string("half"), on: board.scenes[0])
                try editor.move(board.shots[0][0], to: 99)
            }
        }
        #expect(board.doc.view == before)
        #expect(board.doc.versionVector == vector)
    }

    struct StoreFailure: Error {}

    @Test func anEditIsRolledBackIfItCannotBeStored() throws {
        var board = try Board()
        let before = board.doc.view
        #expect(throws: StoreFailure.self) {
            try board.doc.edit(at: 1, { try $0.insertScene(at: 0) }, beforeCommit: { _ in throw StoreFailure() })
        }
        #expect(board.doc.view == before)
        // The next edit reuses the sequence number that was never committed.
        let change = try board.doc.edit(at: 2) { try $0.insertScene(at: 0) }.change!
        #expect(change.seq == 2)
    }

    @Test func duplicatedLayersGetTheirOwnGroups() throws {
        var board = try Board(scenes: 1, shots: 1, layers: 3)
        let shot = board.shots[0][0]
        let layers = board.layers[shot]!
        let group = try board.doc.edit(at: 1) { try $0.groupLayers([layers[0], layers[1]]) }.value
        let copy = try board.doc.edit(at: 2) { try $0.duplicateShot(shot) }.value
        let copied = board.doc.view.shot(copy)!.layers.map(\.group)
        #expect(copied[0] != nil && copied[0] == copied[1] && copied[0] != group && copied[2] == nil)
        #expect(board.doc.view.shot(shot)!.layers.map(\.group) == [group, group, nil])
    }

    @Test func aStrokeKeyMustBelongToAStrokeAlreadyDrawn() throws {
        var board = try Board(scenes: 1, shots: 1)
        let layer = board.layers[board.shots[0][0]]![0]
        let stroke = try board.doc.edit(at: 1) { try $0.addStroke(to: layer, brush: pen, points: line()) }.value
        let future = OpID(counter: 1_000_000, replica: board.doc.replica)
        #expect(throws: DocumentError.self) {
            try board.doc.edit(at: 2) {
                try $0.replaceStroke(future, in: layer, with: StrokeValue(content: stroke, brush: pen))
            }
        }
    }
}
