import Foundation
import StoryCore
import StoryEditorial
import StoryTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Shots laid end to end at a frame rate, and the EDL and FCPXML made of them.
@Suite struct TimelineTests {
    /// One scene of shots with these durations (nil: unset).
    func shots(_ durations: [Double?], edit: (inout ProjectEditor, [OpID]) throws -> Void = { _, _ in }) throws -> [ShotView] {
        var board = try Board(scenes: 1, shots: durations.count, layers: 0)
        let ids = board.shots[0]
        try board.doc.edit(at: 2000) { editor in
            for (shot, duration) in zip(ids, durations) {
                if let duration { try editor.set(.duration, to: .number(duration), on: shot) }
            }
            try edit(&editor, ids)
        }
        return board.doc.view.shots
    }

    @Test func cutsComeFromCumulativeStartTimesSoNothingDrifts() throws {
        // 40 shots of 1.01 s at 24 fps: each alone would round to 24 frames (960 in all, 0.4 s short).
        let timeline = Timeline(shots: try shots(Array(repeating: 1.01, count: 40)), fps: 24)
        #expect(timeline.frameCount == 970)  // round(40.4 × 24)
        for (index, clip) in timeline.clips.enumerated() {
            let exactStart = Double(index) * 1.01
            #expect(abs(clip.start - exactStart) <= 0.5 / 24 + 1e-9, "shot \(index + 1) starts at \(clip.start), not \(exactStart)")
            #expect(clip.frameCount == 24 || clip.frameCount == 25)
        }
        #expect(timeline.clips.map(\.frameCount).reduce(0, +) == timeline.frameCount)
    }

    @Test func aShotWithoutADurationLastsTwoSecondsAndAShortOneMayHaveNoFrames() throws {
        let timeline = Timeline(shots: try shots([nil, 0.5, 0.01]), fps: 25)
        // 0.5 s: frames 50 to round(62.5) = 63; 0.01 s: 62.75 rounds to 63 as well, so no frames.
        #expect(timeline.clips.map(\.frameCount) == [50, 13, 0])
        #expect(timeline.seconds == 63.0 / 25)
    }

    @Test func timecodesAreNonDropFrameAtTheRate() throws {
        let timeline = Timeline(shots: [], fps: 24)
        #expect(timeline.timecode(frame: 0) == "00:00:00:00")
        #expect(timeline.timecode(frame: 23) == "00:00:00:23")
        #expect(timeline.timecode(frame: 24 * 3661 + 5) == "01:01:01:05")
        #expect(timeline.timecode(frame: 36, hour: 1) == "01:00:01:12")
    }

    /// A known scene: 1.5 s with a caption, 0.7 s with dialogue and a sound 0.2 s in, 2 s unset.
    func knownScene() throws -> [ShotView] {
        let sound = MediaReference(
            hash: BlobHash(hex: String(repeating: "ab", count: 32))!, type: .wav, byteCount: 1000, duration: 0.75, offset: 0.2)
        return try shots([1.5, 0.7, nil]) { editor, ids in
            try editor.set(.caption, to: .string("She runs"), on: ids[0])
            try editor.set(.dialogue, to: .string("Tickets, <please> & \"thanks\""), on: ids[1])
            try editor.set(.sound, to: .media(sound), on: ids[1])
        }
    }

    @Test func theEDLOfAKnownSceneHasItsTimecodes() throws {
        let edl = EditorialExport.edl(Timeline(shots: try knownScene(), fps: 24), title: "Night Train")
        let expected = """
            TITLE: Night Train
            FCM: NON-DROP FRAME

            001  AX       V     C        00:00:00:00 00:00:01:12 01:00:00:00 01:00:01:12
            * FROM CLIP NAME: 1-1.png
            * COMMENT: She runs

            002  AX       V     C        00:00:00:00 00:00:00:17 01:00:01:12 01:00:02:05
            * FROM CLIP NAME: 1-2.png
            * COMMENT: Tickets, <please> & "thanks"

            003  AX       V     C        00:00:00:00 00:00:02:00 01:00:02:05 01:00:04:05
            * FROM CLIP NAME: 1-3.png

            004  AX       A     C        00:00:00:00 00:00:00:12 01:00:01:17 01:00:02:05
            * FROM CLIP NAME: sound-abababababab.wav
            * COMMENT: sound of shot 1-2

            """
        #expect(edl == expected)
        // CMX3600 event lines are fixed columns: the record-in timecode always starts at column 54.
        for line in edl.split(separator: "\n") where line.first?.isNumber == true {
            #expect(line.count == 76 && line.dropFirst(53).hasPrefix("01:"), "\(line)")
        }
    }

    #if canImport(FoundationXML)
        @Test func theFCPXMLOfAKnownSceneIsWellFormedWithItsClipsAndAssets() throws {
            let text = EditorialExport.fcpxml(
                Timeline(shots: try knownScene(), fps: 24), title: "Night & Day", width: 1280, height: 720, mediaDirectory: "/tmp/a b")
            let document = try XMLDocument(data: Data(text.utf8))
            let root = try #require(document.rootElement())
            #expect(root.name == "fcpxml" && root.attribute(forName: "version")?.stringValue == "1.9")
            let format = try #require(try document.nodes(forXPath: "/fcpxml/resources/format").first as? XMLElement)
            #expect(format.attribute(forName: "frameDuration")?.stringValue == "1/24s")
            #expect(format.attribute(forName: "width")?.stringValue == "1280")
            let sources = try document.nodes(forXPath: "/fcpxml/resources/asset/media-rep/@src").compactMap(\.stringValue)
            #expect(
                sources == [
                    "file:///tmp/a%20b/1-1.png", "file:///tmp/a%20b/1-2.png", "file:///tmp/a%20b/sound-abababababab.wav", "file:///tmp/a%20b/1-3.png",
                ])
            let sequence = try #require(try document.nodes(forXPath: "//sequence").first as? XMLElement)
            #expect(sequence.attribute(forName: "duration")?.stringValue == "101/24s")
            let clips = try document.nodes(forXPath: "//spine/video").compactMap { $0 as? XMLElement }
            #expect(clips.map { $0.attribute(forName: "offset")?.stringValue } == ["0s", "36/24s", "53/24s"])
            #expect(clips.map { $0.attribute(forName: "duration")?.stringValue } == ["36/24s", "17/24s", "48/24s"])
            // Every clip refers to an asset that exists.
            let assets = Set(try document.nodes(forXPath: "//asset/@id").compactMap(\.stringValue))
            #expect(try document.nodes(forXPath: "//@ref").allSatisfy { assets.contains($0.stringValue ?? "") })
            let sound = try #require(clips[1].elements(forName: "asset-clip").first)
            #expect(sound.attribute(forName: "offset")?.stringValue == "5/24s" && sound.attribute(forName: "duration")?.stringValue == "12/24s")
            #expect(clips[1].elements(forName: "note").first?.stringValue == "Tickets, <please> & \"thanks\"")
            // The DTD wants a clip's note before the clips connected to it.
            #expect(clips[1].children?.compactMap(\.name) == ["note", "asset-clip"])
        }
    #endif
}
