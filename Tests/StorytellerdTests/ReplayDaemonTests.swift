import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// `storyteller replay` through a real daemon: the video checked with
/// ffprobe and frames extracted by ffmpeg, the GIF's length, the SVG as
/// headless Chromium shows it at two moments, and bad input refused.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized, .requires("ffmpeg")) struct ReplayDaemonTests {
    /// Frames and pixels are read with the animatic tests' helpers.
    let video = AnimaticDaemonTests()

    /// A daemon whose maintenance does not compact the change log during the
    /// test (a lone daemon compacts what no peer waits for every 30 s, and a
    /// replay of a compacted history is a still).
    static func start() async throws -> StartedDaemon {
        try await StartedDaemon.start(environment: ["STORYTELLER_MAINTENANCE_INTERVAL": "86400"])
    }

    /// Shot 1-1: stroke A across the top quarter, stroke B across the bottom quarter, then A erased.
    /// Shot 1-2 has no strokes. The stroke ids A and B.
    func board(on daemon: StartedDaemon) async throws -> (project: String, a: String, b: String) {
        let project = try await daemon.cli("projects", "create", "Replay").output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        for _ in 0..<2 { #expect(try await daemon.cli("shots", "add", project, "1").status == 0) }
        #expect(try await daemon.cli("layers", "add", project, "1-1", "--name", "ink").status == 0)
        let a = try await daemon.cli(
            "strokes", "add", project, "1-1/ink", "--points", "[0.1,0.25,1, 0.5,0.25,1, 0.9,0.25,1]", "--width", "0.03")
        let b = try await daemon.cli(
            "strokes", "add", project, "1-1/ink", "--points", "[0.1,0.75,1, 0.5,0.75,1, 0.9,0.75,1]", "--width", "0.03")
        #expect(a.status == 0 && b.status == 0, "\(a.errors) \(b.errors)")
        let ids = (
            a.output.trimmingCharacters(in: .whitespacesAndNewlines),
            b.output.trimmingCharacters(in: .whitespacesAndNewlines)
        )
        #expect(try await daemon.cli("strokes", "erase", project, "1-1/ink", ids.0).status == 0)
        return (project, ids.0, ids.1)
    }

    /// Without pauses (`--max-pause 0`) at 24 fps: 0.5 s opening (12 frames); A, 3 points, drawn in
    /// 0.15 s (frames 12–15); B (frames 16–19); A erased at frame 20; 1.5 s closing: round(2.333 × 24) = 56.
    static let frames = 56

    @Test func anMP4AndAGIFShowTheStrokesAppearAndTheErasedOneGo() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await Self.start()
        defer { daemon.stop() }
        let (project, _, _) = try await board(on: daemon)
        let out = files.path + "/replay.mp4"
        let made = try await daemon.cli("replay", project, "1-1", "--out", out, "--max-pause", "0", "--width", "320")
        #expect(made.status == 0, "\(made.errors)")
        #expect(made.output.contains("\(Self.frames) frames at 24 fps"), "\(made.output)")

        let (streams, duration) = try await video.probe(out)
        #expect(abs(duration - Double(Self.frames) / 24) <= 1.0 / 24, "the replay lasts \(duration) s")
        let stream = try #require(streams.first { $0["codec_type"] as? String == "video" })
        #expect(
            stream["codec_name"] as? String == "h264" && stream["width"] as? Int == 320
                && stream["height"] as? Int == 180)
        #expect(stream["nb_read_frames"] as? String == String(Self.frames) && streams.count == 1)

        func isInk(_ pixel: (Int, Int, Int)) -> Bool { video.isClose(pixel, to: (0, 0, 0), within: 90) }
        func isPaper(_ pixel: (Int, Int, Int)) -> Bool { video.isClose(pixel, to: (255, 255, 255), within: 30) }
        // Before the first stroke: an empty panel.
        let opening = try await video.frame(of: out, at: 0.2, in: files)
        #expect(isPaper(video.pixel(opening, x: 160, y: 45)) && isPaper(video.pixel(opening, x: 160, y: 135)))
        // Frame 16: A drawn whole, B only begun at its left end.
        let drawing = try await video.frame(of: out, at: 0.69, in: files)
        #expect(isInk(video.pixel(drawing, x: 160, y: 45)), "\(video.pixel(drawing, x: 160, y: 45))")
        #expect(isPaper(video.pixel(drawing, x: 280, y: 135)), "\(video.pixel(drawing, x: 280, y: 135))")
        // The end: A erased, B whole.
        let end = try await video.frame(of: out, at: 2.2, in: files)
        #expect(
            isPaper(video.pixel(end, x: 160, y: 45)) && isInk(video.pixel(end, x: 280, y: 135)),
            "\(video.pixel(end, x: 160, y: 45))")

        // A GIF at 12 fps: 6 + 2 + 2 frames, the erase at frame 10, round(2.333 × 12) = 28 frames.
        let gif = files.path + "/replay.gif"
        let small = try await daemon.cli(
            "replay", project, "1-1", "--out", gif, "--max-pause", "0", "--width", "160", "--fps", "12")
        #expect(small.status == 0, "\(small.errors)")
        let preview = try await video.probe(gif)
        #expect(
            preview.streams.first?["codec_name"] as? String == "gif" && preview.streams.first?["width"] as? Int == 160)
        #expect(preview.streams.first?["nb_read_frames"] as? String == "28")
        #expect(abs(preview.duration - 28.0 / 12) <= 0.1, "the GIF lasts \(preview.duration) s")

        // With the default pauses it is longer, by at most the three pauses.
        let paused = try #require(
            try await daemon.json("replay", project, "1-1", "--out", files.path + "/paused.gif", "--width", "160")
                as? [String: Any])
        let seconds = try #require(paused["seconds"] as? Double)
        #expect(
            seconds >= Double(Self.frames) / 24 && seconds <= Double(Self.frames) / 24 + 3 * 0.3 + 0.1, "\(seconds)")
    }

    @Test(.requires("chromium")) func theSVGPlaysInABrowser() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await Self.start()
        defer { daemon.stop() }
        let (project, _, _) = try await board(on: daemon)
        let out = files.path + "/replay.svg"
        let made = try await daemon.cli("replay", project, "1-1", "--out", out, "--max-pause", "0", "--width", "320")
        #expect(made.status == 0, "\(made.errors)")
        let svg = try String(contentsOfFile: out, encoding: .utf8)
        #expect(svg.contains("<svg") && svg.contains("<set attributeName=\"visibility\""))

        // The SVG inline in a page that stops its clock at a moment: a screenshot of that moment.
        let chromium = try Chromium()
        defer { chromium.remove() }
        func screenshot(at seconds: Double) async throws -> RasterImage {
            let page = files.path + "/at-\(seconds).html"
            let body = svg.components(separatedBy: "?>").dropFirst().joined(separator: "?>")
            let html = """
                <!DOCTYPE html><html><body style="margin:0;background:#808080">\(body)<script>
                const svg = document.querySelector("svg"); svg.pauseAnimations(); svg.setCurrentTime(\(seconds));
                </script></body></html>
                """
            try html.write(toFile: page, atomically: true, encoding: .utf8)
            return try await chromium.screenshot("file://" + page)
        }
        // Frame 16 (0.67–0.71 s): A whole, B begun; at 2.2 s A is erased and B whole.
        let drawing = try await screenshot(at: 0.69)
        #expect(drawing[160, 45].isDark && drawing[280, 135].isWhite, "\(drawing[160, 45]) \(drawing[280, 135])")
        let end = try await screenshot(at: 2.2)
        #expect(end[160, 45].isWhite && end[280, 135].isDark && end[40, 135].isDark, "\(end[160, 45]) \(end[280, 135])")
        // The end looks like the panel render: the same geometry (anti-aliasing aside).
        let png = files.path + "/1-1.png"
        #expect(try await daemon.cli("render", project, "1-1", "--out", png, "--width", "320").status == 0)
        let panel = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: png))))
        let differing = (0..<panel.height).reduce(0) { count, y in
            count + (0..<panel.width).filter { !panel[$0, y].isClose(to: end[$0, y], tolerance: 40) }.count
        }
        #expect(differing * 100 < panel.width * panel.height, "\(differing) of \(panel.width * panel.height) pixels differ")
        // Before anything is drawn: paper only.
        let opening = try await screenshot(at: 0.2)
        #expect(opening[160, 45].isWhite && opening[160, 135].isWhite)
    }

    @Test func badInputIsRefusedWithAClearError() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await Self.start()
        defer { daemon.stop() }
        let (project, _, _) = try await board(on: daemon)
        let out = files.path + "/replay.mp4"

        let unknownShot = try await daemon.cli("replay", project, "9-9", "--out", out)
        #expect(unknownShot.status != 0 && unknownShot.errors.contains("9-9"), "\(unknownShot.errors)")
        let empty = try await daemon.cli("replay", project, "1-2", "--out", out)
        #expect(empty.status == 1 && empty.errors.contains("nothing to replay"), "\(empty.errors)")
        for speed in ["0", "-1"] {
            let refused = try await daemon.cli("replay", project, "1-1", "--out", out, "--speed=\(speed)")
            #expect(refused.status != 0 && refused.errors.contains("--speed must be more than 0"), "\(refused.errors)")
        }
        let pause = try await daemon.cli("replay", project, "1-1", "--out", out, "--max-pause=-2")
        #expect(pause.status != 0 && pause.errors.contains("--max-pause must be 0 to 3600 seconds"), "\(pause.errors)")
        let avi = try await daemon.cli("replay", project, "1-1", "--out", files.path + "/replay.avi")
        #expect(avi.status != 0 && avi.errors.contains(".mp4, .gif or .svg"), "\(avi.errors)")
        #expect(!FileManager.default.fileExists(atPath: out))

        // The API says the same, with its codes; no job is made.
        let structure = try #require(try daemon.client.get("/v1/projects/\(project)").json as? [String: Any])
        let scenes = try #require(structure["scenes"] as? [[String: Any]])
        let shot = try #require((scenes.first?["shots"] as? [[String: Any]])?.first?["id"] as? String)
        func post(_ body: String) throws -> ControlClient.Response {
            try daemon.client.request("POST", "/v1/projects/\(project)/exports", body: Data(body.utf8))
        }
        #expect(try post(#"{"kind":"replay"}"#).status == 400)
        #expect(try post(#"{"kind":"replay","shot":"77@00000000000000aa"}"#).status == 404)
        for body in [
            #"{"kind":"replay","shot":"\#(shot)","speed":0}"#, #"{"kind":"replay","shot":"\#(shot)","speed":-3}"#,
            #"{"kind":"replay","shot":"\#(shot)","maxPause":-1}"#,
            #"{"kind":"replay","shot":"\#(shot)","format":"avi"}"#,
            #"{"kind":"replay","shot":"\#(shot)","fps":0}"#, #"{"kind":"replay","shot":"\#(shot)","width":9000}"#,
        ] {
            let answer = try post(body)
            #expect(
                answer.status == 400 && answer.errorCode == "bad_request",
                "\(body): \(String(decoding: answer.body, as: UTF8.self))")
        }
        let jobs = try daemon.client.request(
            "POST", "/v1/projects/\(project)/exports", body: Data(#"{"kind":"edl"}"#.utf8))
        #expect(jobs.status == 202, "the refusals left room for jobs")
    }
}
