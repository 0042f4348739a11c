import StoryTestSupport
import Testing

@testable import StoryCore

/// Images and sounds in the document model: which fields take media, that
/// documents keep media references through snapshots and merges, and that a
/// reference anywhere in a project (a deleted layer's too) is found.
@Suite struct MediaModelTests {
    static let image = MediaReference(hash: BlobHash(Array(0..<32))!, type: .png, byteCount: 4096, pixelWidth: 640, pixelHeight: 360)
    static let sound = MediaReference(hash: BlobHash(Array(repeating: 9, count: 32))!, type: .wav, byteCount: 16_044, duration: 1, offset: 0.5)

    @Test func onlyTheRightFieldsTakeMedia() {
        #expect(FieldKey.image.accepts(.media(Self.image), on: .layer))
        #expect(!FieldKey.image.accepts(.media(Self.sound), on: .layer), "a layer's image is a picture")
        #expect(!FieldKey.image.accepts(.media(Self.image), on: .shot), "shots have no image field")
        #expect(FieldKey.sound.accepts(.media(Self.sound), on: .shot))
        #expect(!FieldKey.sound.accepts(.media(Self.image), on: .shot), "a shot's sound is a sound")
        #expect(!FieldKey.sound.accepts(.string("whistle.wav"), on: .shot))
        #expect(FieldKey.fit.accepts(.string("cover"), on: .layer))
        #expect(!FieldKey.fit.accepts(.string("zoom"), on: .layer))
        #expect(FieldKey.dialogue.accepts(.string("All aboard!"), on: .shot) && FieldKey.action.accepts(.string("She runs"), on: .shot))
        #expect(!FieldKey.dialogue.accepts(.string("x"), on: .scene))
        var odd = Self.image
        odd.pixelWidth = 0
        #expect(!FieldKey.image.accepts(.media(odd), on: .layer), "an image has pixels")
        var late = Self.sound
        late.duration = .infinity
        #expect(!FieldKey.sound.accepts(.media(late), on: .shot))
    }

    @Test func blobHashesReadAndPrintAsSha256sumDoes() throws {
        let text = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  // sha256("test")
        let hash = try #require(BlobHash(hex: text))
        #expect(hash.description == text)
        #expect(BlobHash(hex: text.uppercased()) == hash)
        #expect(BlobHash(hex: String(text.dropLast())) == nil)
        #expect(BlobHash(hex: "g" + text.dropFirst()) == nil)
        #expect(MediaType(mimeType: "audio/x-wav") == .wav && MediaType(mimeType: "IMAGE/PNG") == .png && MediaType(mimeType: "text/plain") == nil)
    }

    @Test func aReferenceOutOfRangeDoesNotDecode() throws {
        var bad = Self.image
        bad.byteCount = 0
        let change = Change(
            replica: ReplicaID(7), seq: 1, startCounter: 1, wallTime: 0, dependencies: VersionVector(),
            operations: [.setField(object: OpID(counter: 1, replica: ReplicaID(7)), key: .image, value: .media(bad))])
        #expect(throws: CodecError.self) { try change.encoded().decoded() }
    }

    @Test func mediaSurvivesSnapshotsMergesAndDeletes() throws {
        var board = try Board(scenes: 1, shots: 2, layers: 1)
        let (shot, layer) = (board.shots[0][0], board.layers[board.shots[0][0]]![0])
        try board.doc.edit(at: 5) { editor in
            try editor.set(.image, to: .media(Self.image), on: layer)
            try editor.set(.fit, to: .string("cover"), on: layer)
            try editor.set(.sound, to: .media(Self.sound), on: shot)
            try editor.set(.dialogue, to: .string("Tickets, please."), on: shot)
            try editor.set(.action, to: .string("The conductor leans in."), on: shot)
        }
        let view = try #require(board.doc.view.shot(shot))
        #expect(view.sound == Self.sound && view.dialogue == "Tickets, please." && view.action == "The conductor leans in.")
        #expect(view.layers.first?.image == Self.image && view.layers.first?.fit == "cover")
        #expect(board.doc.view.media == [Self.image, Self.sound])
        let loaded = try ProjectDocument(snapshot: board.doc.snapshot(), replica: ReplicaID(51))
        #expect(loaded.view == board.doc.view)
        #expect(Set(loaded.mediaReferences) == [Self.image, Self.sound])
        // A deleted layer's image is still referenced (it can be restored); the view no longer shows it.
        try board.doc.edit(at: 6) { editor in
            try editor.delete(layer)
            try editor.set(.sound, to: .null, on: shot)
        }
        #expect(board.doc.view.media.isEmpty)
        #expect(board.doc.mediaReferences == [Self.image])
        #expect(board.doc.view.search("tickets").map(\.field) == [.dialogue])
    }

    @Test func concurrentSoundsResolveLikeAnyField() throws {
        let board = try Board(scenes: 1, shots: 1, layers: 1)
        let shot = board.shots[0][0]
        var a = board.doc
        var b = try ProjectDocument(snapshot: board.doc.snapshot(), replica: ReplicaID(77))
        var other = Self.sound
        other.hash = BlobHash(Array(repeating: 3, count: 32))!
        try a.edit(at: 10) { try $0.set(.sound, to: .media(Self.sound), on: shot) }
        try b.edit(at: 10) { try $0.set(.sound, to: .media(other), on: shot) }
        try a.merge(snapshot: b.snapshot())
        try b.merge(snapshot: a.snapshot())
        #expect(a.view == b.view)
        let kept = try #require(a.view.shot(shot)?.sound)
        #expect(kept == Self.sound || kept == other)
    }
}
