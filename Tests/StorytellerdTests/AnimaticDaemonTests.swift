import Foundation
import NIOPosix
import StoryClient
import StoryCore
import StoryEditorial
import StoryIdentity
import StorySync
import StoryTestSupport
import StoryWireClient
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Exports through a real daemon and the CLI, checked with independent
/// tools: ffprobe for the animatic's streams and length, frames extracted by
/// ffmpeg for what each shot shows, the EDL's text, the FCPXML parsed.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized, .requires("ffmpeg", "ffprobe")) struct AnimaticDaemonTests {
    /// A scene of three shots: red 1.5 s with a caption and a stroke; green
    /// 0.7 s with dialogue and a 1 s sound from 0.2 s; blue, square, no duration (2 s).
    func board(on daemon: StartedDaemon, files: TemporaryDirectory) async throws -> String {
        let project = try await daemon.cli("projects", "create", "Night Train").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        for _ in 0..<3 { #expect(try await daemon.cli("shots", "add", project, "1").status == 0) }
        #expect(
            try await daemon.cli("shots", "set", project, "1-1", "--background", "#ff0000", "--duration", "1.5", "--caption", "She runs").status == 0)
        #expect(
            try await daemon.cli("shots", "set", project, "1-2", "--background", "#00ff00", "--duration", "0.7", "--dialogue", "Tickets, please.")
                .status == 0)
        #expect(try await daemon.cli("shots", "set", project, "1-3", "--background", "#0000ff", "--aspect-ratio", "1").status == 0)
        #expect(try await daemon.cli("layers", "add", project, "1-1", "--name", "ink").status == 0)
        #expect(try await daemon.cli("strokes", "add", project, "1-1/ink", "--points", "[0.1,0.9,0.5,0.5,0.5,0.95]", "--width", "0.02").status == 0)
        let sound = files.path + "/whistle.wav"
        _ = FileManager.default.createFile(atPath: sound, contents: Data(TestMedia.wav(seconds: 1.0, seed: 3)))
        #expect(try await daemon.cli("sound", "set", project, "1-2", sound, "--offset", "0.2").status == 0)
        return project
    }

    /// Expected length: 1.5 + 0.7 + 2 s, on frames: round(4.2 × 24) = 101.
    static let frames = 101

    /// ffprobe's streams and format of a file.
    func probe(_ path: String) async throws -> (streams: [[String: Any]], duration: Double) {
        let result = try await ExternalProgram.run(
            "ffprobe", ["-v", "error", "-print_format", "json", "-show_streams", "-show_format", "-count_frames", path])
        #expect(result.status == 0, "\(result.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let format = try #require(json["format"] as? [String: Any])
        return (json["streams"] as? [[String: Any]] ?? [], Double(format["duration"] as? String ?? "") ?? 0)
    }

    /// The RGB pixels of the frame ffmpeg shows at `seconds`.
    func frame(of path: String, at seconds: Double, in files: TemporaryDirectory) async throws -> [UInt8] {
        let raw = files.path + "/frame-\(seconds).rgb"
        let result = try await ExternalProgram.run(
            "ffmpeg", ["-v", "error", "-y", "-ss", String(seconds), "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        #expect(result.status == 0, "\(result.output)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    func pixel(_ rgb: [UInt8], x: Int, y: Int, width: Int = 320) -> (Int, Int, Int) {
        let index = (y * width + x) * 3
        guard index + 2 < rgb.count else { return (-1, -1, -1) }
        return (Int(rgb[index]), Int(rgb[index + 1]), Int(rgb[index + 2]))
    }

    func isClose(_ pixel: (Int, Int, Int), to colour: (Int, Int, Int), within tolerance: Int = 40) -> Bool {
        abs(pixel.0 - colour.0) <= tolerance && abs(pixel.1 - colour.1) <= tolerance && abs(pixel.2 - colour.2) <= tolerance
    }

    @Test func anAnimaticHoldsEachShotForItsDurationWithItsSoundAndCaptions() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await board(on: daemon, files: files)
        let out = files.path + "/night.mp4"
        let made = try await daemon.cli("export", "animatic", project, "--out", out, "--size", "320x180", "--captions")
        #expect(made.status == 0, "\(made.errors)")
        #expect(made.output.contains("3 shots") && made.output.contains("101 frames"), "\(made.output)")

        let (streams, duration) = try await probe(out)
        #expect(abs(duration - 4.2) <= 1.0 / 24, "the animatic lasts \(duration) s")
        let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
        #expect(video["codec_name"] as? String == "h264" && video["width"] as? Int == 320 && video["height"] as? Int == 180)
        #expect(video["r_frame_rate"] as? String == "24/1")
        #expect(video["nb_read_frames"] as? String == String(Self.frames))
        #expect(streams.contains { $0["codec_type"] as? String == "audio" && $0["codec_name"] as? String == "aac" })
        #expect(streams.contains { $0["codec_type"] as? String == "subtitle" && $0["codec_name"] as? String == "mov_text" })

        // Each shot's midpoint shows that shot: its background at the top, away from the stroke and the caption.
        let red = try await frame(of: out, at: 0.75, in: files)
        let green = try await frame(of: out, at: 1.85, in: files)
        let blue = try await frame(of: out, at: 3.2, in: files)
        #expect(isClose(pixel(red, x: 160, y: 20), to: (255, 0, 0)), "\(pixel(red, x: 160, y: 20))")
        #expect(isClose(pixel(green, x: 160, y: 20), to: (0, 255, 0)), "\(pixel(green, x: 160, y: 20))")
        #expect(isClose(pixel(blue, x: 160, y: 20), to: (0, 0, 255)), "\(pixel(blue, x: 160, y: 20))")
        // The square shot is pillarboxed: black bars at the sides of the 16:9 frame.
        #expect(isClose(pixel(blue, x: 10, y: 90), to: (0, 0, 0)), "\(pixel(blue, x: 10, y: 90))")
        // The stroke is drawn (black ink from (0.1, 0.9) to the middle of the red panel).
        #expect(isClose(pixel(red, x: 96, y: 126), to: (0, 0, 0), within: 90), "\(pixel(red, x: 96, y: 126))")
        // The caption is burned in: white text at the bottom of the red panel.
        let captionRows = (140..<180).flatMap { y in (100..<220).map { pixel(red, x: $0, y: y) } }
        #expect(captionRows.contains { $0.0 > 200 && $0.1 > 200 && $0.2 > 200 })

        // The soft subtitles carry the caption and the dialogue, timed by the shots.
        let subtitles = try await ExternalProgram.run("ffmpeg", ["-v", "error", "-i", out, "-map", "0:s", "-f", "srt", "-"])
        #expect(subtitles.output.contains("She runs") && subtitles.output.contains("Tickets, please."), "\(subtitles.output)")
        #expect(subtitles.output.contains("00:00:01,500 --> 00:00:02,208"), "\(subtitles.output)")
    }

    /// A peer that edits the project gives a shot a "sound" that is no sound
    /// (random bytes it declares a WAV) and serves those bytes when asked.
    /// The daemon takes them, probes them, keeps them aside (`media list`
    /// says so), and the animatic is made without that sound, saying why.
    @Test func aGarbageSoundFromAPeerIsLeftOutAndTheAnimaticIsMade() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await StartedDaemon.start(name: "a", ["--no-discovery"])
        defer { daemon.stop() }
        let project = try await board(on: daemon, files: files)
        let id = try #require(DocumentID(project))
        let hostile = try Identity.generate(commonName: "sound peer")
        #expect(try await daemon.cli("peers", "add", hostile.peerID.description, "--name", "h").status == 0)
        #expect(try await daemon.cli("share", project, hostile.peerID.description).status == 0)
        var random = SeededGenerator(seed: 77)
        let garbage = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let crypto = OpenSSLCrypto.shared
        let hash = crypto.sha256(nil, garbage[...])
        let chunkSize = 256 << 10
        let chunks = stride(from: 0, to: garbage.count, by: chunkSize).map { Array(garbage[$0..<min($0 + chunkSize, garbage.count)]) }
        let fake = MediaReference(hash: hash, type: .wav, byteCount: UInt64(garbage.count), duration: 1)
        let group = MultiThreadedEventLoopGroup.singleton
        try await ProtocolClient.session(to: try daemon.port(), as: hostile, group: group) { peer in
            try await peer.expect("an advertise of the project") { if case .advertise(let ad) = $0 { ad.document == id } else { false } }
            try await peer.send(.advertise(.init(document: id, kind: 1, name: "", role: .editor, version: VersionVector())))
            try await peer.expect("the project's changes") { if case .changes(id, _) = $0 { true } else { false } }
            try await peer.settle()
            var mine = ProjectDocument(id: id, author: LocalAuthor(identity: try hostile.signingIdentity, nonce: 1)!)
            try mine.apply(batch: ChangeBatch.encode(try peer.changes(of: id).map(\.0))[...])
            let shot = try #require(mine.view.shots.last?.id)
            let change = try #require(try mine.edit(at: 9) { try $0.set(.sound, to: .media(fake), on: shot) }.change)
            try await peer.send([change], of: id)
            // Serve the bytes, as asked, until the daemon has them.
            var served = 0
            var limit = TestDeadline(.seconds(30))
            while !limit.hasPassed() {
                let requests = peer.messages.compactMap { message -> Message.BlobRequest? in
                    if case .blobRequest(let request) = message, request.hash == hash { request } else { nil }
                }
                for request in requests.dropFirst(served) {
                    if request.manifest {
                        try await peer.send(
                            .blobManifest(
                                .init(
                                    hash: hash, byteCount: UInt64(garbage.count), type: .wav, chunkSize: UInt32(chunkSize),
                                    chunks: chunks.map { crypto.sha256(nil, $0[...]) })))
                    }
                    for index in request.chunks { try await peer.send(.blobChunk(hash: hash, index: index, bytes: chunks[Int(index)][...])) }
                }
                served = requests.count
                let media = try daemon.client.get("/v1/projects/\(project)/media").json as? [[String: Any]] ?? []
                if media.contains(where: { $0["blob"] as? String == hash.description && $0["state"] as? String == "kept-aside" }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let media = try daemon.client.get("/v1/projects/\(project)/media").json as? [[String: Any]] ?? []
        let entry = try #require(media.first { $0["blob"] as? String == hash.description })
        #expect(entry["state"] as? String == "kept-aside" && (entry["problem"] as? String)?.contains("not a wav") == true, "\(entry)")
        // The animatic is made; the garbage is no part of it, and the CLI says so.
        let out = files.path + "/night.mp4"
        let made = try await daemon.cli("export", "animatic", project, "--out", out, "--size", "320x180")
        #expect(made.status == 0, "\(made.errors)")
        #expect(made.output.contains("note: the sound of 1-3 is left out: kept aside"), "\(made.output)")
        let (streams, duration) = try await probe(out)
        #expect(abs(duration - 4.2) <= 1.0 / 24, "the animatic lasts \(duration) s")
        // Shot 1-2's real sound is still there.
        #expect(streams.contains { $0["codec_type"] as? String == "audio" })
    }

    /// Captions are data in every format: one that holds a SubRip cue of its
    /// own adds none, one that holds markup and a cue timed backwards
    /// (which made every mp4 export fail) shows as the words it is, and a
    /// caption of 60,000 characters is cut, not fatal. The mp4, the WebM, the
    /// EDL, the FCPXML, the print sheet and the HTML slideshow are all made.
    @Test(.requires("pdftotext")) func captionsAreTextInEveryFormatAndNoneMakesAnExportFail() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await board(on: daemon, files: files)
        let injected = "She runs\n\n2\n00:00:00,100 --> 00:00:03,000\nINJECTED"
        let markup = "00:00:05,000 --> 00:00:01,000 <b>bold</b> {\\an8}top & &lt; \u{1B}[31m"
        let long = String(repeating: "long words ", count: 5_400)
        #expect(try await daemon.cli("shots", "set", project, "1-1", "--caption", injected).status == 0)
        #expect(try await daemon.cli("shots", "set", project, "1-2", "--caption", markup).status == 0)
        #expect(try await daemon.cli("shots", "set", project, "1-3", "--caption", long).status == 0)
        for format in ["mp4", "webm"] {
            let out = files.path + "/captions.\(format)"
            let made = try await daemon.cli("export", "animatic", project, "--out", out, "--size", "320x180", "--captions")
            #expect(made.status == 0, "\(format): \(made.errors)")
            let srt = try await ExternalProgram.run("ffmpeg", ["-v", "error", "-i", out, "-map", "0:s", "-f", "srt", "-"]).output
            let timings = srt.split(separator: "\n").filter { $0.contains(" --> ") }
            #expect(timings.count == 3, "\(format): one cue per shot, \(timings.count) found:\n\(srt.prefix(600))")
            // The shots' own times (a WebM starts its streams a few milliseconds in), not the caption's.
            #expect(timings.dropFirst().first.map { $0.hasPrefix("00:00:01,5") } == true, "\(timings)")
            #expect(srt.contains("INJECTED") && srt.contains("bold") && srt.contains("long words"), "\(format): the words are all there")
            #expect(!srt.contains("<b>") && !srt.contains("\u{1B}"), "\(format): no markup or escape is passed on")
        }
        for (kind, name) in [("edl", "cut.edl"), ("fcpxml", "cut.fcpxml")] {
            let made = try await daemon.cli("export", kind, project, "--scene", "1", "--out", files.path + "/" + name)
            #expect(made.status == 0, "\(kind): \(made.errors)")
        }
        let pdf = files.path + "/sheet.pdf"
        #expect(try await daemon.cli("export", "pdf", project, "--out", pdf).status == 0)
        let text = try await ExternalProgram.run("pdftotext", [pdf, "-"]).output
        #expect(text.contains("INJECTED") && text.contains("bold"), "\(text.prefix(400))")
        #expect(try await daemon.cli("export", "html", project, "--out", files.path + "/show.html").status == 0)
    }

    @Test func aVP9WebMHasOpusSoundAndWebVTTAndAGIFLoops() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await board(on: daemon, files: files)
        let webm = files.path + "/night.webm"
        let made = try await daemon.cli("export", "animatic", project, "--out", webm, "--size", "320x180", "--captions", "--codec", "vp9")
        #expect(made.status == 0, "\(made.errors)")
        let (streams, duration) = try await probe(webm)
        #expect(abs(duration - 4.2) <= 1.0 / 24 + 0.001, "the animatic lasts \(duration) s")
        #expect(streams.contains { $0["codec_name"] as? String == "vp9" && $0["nb_read_frames"] as? String == String(Self.frames) })
        #expect(streams.contains { $0["codec_name"] as? String == "opus" })
        #expect(streams.contains { $0["codec_name"] as? String == "webvtt" })
        let green = try await frame(of: webm, at: 1.85, in: files)
        #expect(isClose(pixel(green, x: 160, y: 20), to: (0, 255, 0)), "\(pixel(green, x: 160, y: 20))")

        let gif = files.path + "/night.gif"
        #expect(try await daemon.cli("export", "animatic", project, "--out", gif, "--size", "160x90", "--fps", "10").status == 0)
        let preview = try await probe(gif)
        #expect(preview.streams.first?["codec_name"] as? String == "gif" && preview.streams.count == 1)
        #expect(abs(preview.duration - 4.2) <= 0.1, "the preview lasts \(preview.duration) s")
    }

    @Test func aSoundtrackPlaysUnderTheWholeAnimaticAndIsCutAtItsEnd() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Score").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        for _ in 0..<2 { #expect(try await daemon.cli("shots", "add", project, "1").status == 0) }
        for shot in ["1-1", "1-2"] { #expect(try await daemon.cli("shots", "set", project, shot, "--duration", "1").status == 0) }
        // No shot has a sound; the 5 s soundtrack is the only one, cut at 2 s.
        let soundtrack = files.path + "/score.wav"
        _ = FileManager.default.createFile(atPath: soundtrack, contents: Data(TestMedia.wav(seconds: 5, seed: 9)))
        let out = files.path + "/score.mp4"
        let made = try await daemon.cli("export", "animatic", project, "--out", out, "--size", "160x90", "--soundtrack", soundtrack)
        #expect(made.status == 0, "\(made.errors)")
        let (streams, duration) = try await probe(out)
        let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" })
        #expect(audio["codec_name"] as? String == "aac")
        #expect(abs((Double(audio["duration"] as? String ?? "") ?? 0) - 2) <= 0.05, "\(audio["duration"] ?? "-")")
        #expect(abs(duration - 2) <= 1.0 / 24 + 0.001)
        // A soundtrack this daemon does not hold is refused before a job is made.
        let missing = try daemon.client.request(
            "POST", "/v1/projects/\(project)/exports", body: Data(#"{"kind":"animatic","soundtrack":"\#(String(repeating: "ab", count: 32))"}"#.utf8))
        #expect(missing.status == 404, "\(String(decoding: missing.body, as: UTF8.self))")
    }

    @Test func withoutFFmpegTheExportSaysSoAndHowToInstallIt() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        // ffmpeg is looked up on the daemon's PATH; this one has none.
        let daemon = try await StartedDaemon.start(environment: ["PATH": files.path + "/no-programs-here"])
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Night Train").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        #expect(try await daemon.cli("shots", "add", project, "1").status == 0)
        let out = files.path + "/night.mp4"
        let refused = try await daemon.cli("export", "animatic", project, "--out", out)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("ffmpeg") && refused.errors.contains("sudo apt-get install ffmpeg"), "\(refused.errors)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let answer = try daemon.client.request(
            "POST", "/v1/projects/\(project)/exports", body: Data(#"{"kind":"animatic","width":320,"height":180}"#.utf8))
        #expect(answer.status == 503 && answer.errorCode == "unavailable")
        // An EDL needs no ffmpeg.
        let edl = try await daemon.cli("export", "edl", project, "--scene", "1", "--out", files.path + "/scene.edl")
        #expect(edl.status == 0, "\(edl.errors)")
    }

    /// The ffmpeg processes whose parent is `pid`.
    func ffmpegChildren(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return name == "ffmpeg" && fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// A long animatic's job, posted; its id once its ffmpeg runs.
    func startLongExport(of project: String, on daemon: StartedDaemon) async throws -> String {
        let posted = try daemon.client.request(
            "POST", "/v1/projects/\(project)/exports", body: Data(#"{"kind":"animatic","width":320,"height":180,"fps":60}"#.utf8))
        #expect(posted.status == 202, "\(String(decoding: posted.body, as: UTF8.self))")
        let job = try #require((posted.json as? [String: Any])?["id"] as? String)
        #expect(posted.headers["location"] == "/v1/exports/\(job)")
        try await eventually("ffmpeg runs", timeout: .seconds(20)) { !ffmpegChildren(of: daemon.daemon.pid).isEmpty }
        return job
    }

    @Test func deletingAnExportOrStoppingTheDaemonKillsItsFFmpeg() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Long").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        #expect(try await daemon.cli("shots", "add", project, "1").status == 0)
        // An hour at 60 fps: far longer than the test waits.
        #expect(try await daemon.cli("shots", "set", project, "1-1", "--duration", "3600").status == 0)

        let job = try await startLongExport(of: project, on: daemon)
        let running = try #require(try daemon.client.get("/v1/exports/\(job)").json as? [String: Any])
        #expect(running["state"] as? String == "running")
        #expect(try daemon.client.get("/v1/exports/\(job)/file").status == 409)
        #expect(try daemon.client.request("DELETE", "/v1/exports/\(job)").status == 204)
        try await eventually("no ffmpeg is left", timeout: .seconds(10)) { ffmpegChildren(of: daemon.daemon.pid).isEmpty }
        #expect(try daemon.client.get("/v1/exports/\(job)").status == 404)
        try await eventually("its files are gone", timeout: .seconds(5)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: daemon.home.path + "/tmp/exports")) ?? []).isEmpty
        }

        // The daemon's shutdown stops the export under way, and its ffmpeg with it.
        _ = try await startLongExport(of: project, on: daemon)
        let children = ffmpegChildren(of: daemon.daemon.pid)
        #expect(try await daemon.daemon.terminate() == 0)
        for child in children { #expect(kill(child, 0) != 0, "ffmpeg \(child) outlived the daemon") }
    }

    #if canImport(FoundationXML)
        @Test func theEDLAndFCPXMLOfASceneNameStillsAndSoundsWrittenBesideThem() async throws {
            let files = try TemporaryDirectory()
            defer { files.remove() }
            let daemon = try await StartedDaemon.start()
            defer { daemon.stop() }
            let project = try await board(on: daemon, files: files)
            let edl = files.path + "/scene1.edl"
            let made = try await daemon.cli("export", "edl", project, "--scene", "1", "--out", edl, "--fps", "25")
            #expect(made.status == 0, "\(made.errors)")
            let text = try String(contentsOfFile: edl, encoding: .utf8)
            #expect(text.hasPrefix("TITLE: Night Train – scene 1\nFCM: NON-DROP FRAME\n"))
            // At 25 fps: 1.5 s = 37.5 → frame 38; 2.2 s = 55; 4.2 s = 105.
            #expect(text.contains("001  AX       V     C        00:00:00:00 00:00:01:13 01:00:00:00 01:00:01:13\n* FROM CLIP NAME: 1-1.png"))
            #expect(text.contains("002  AX       V     C        00:00:00:00 00:00:00:17 01:00:01:13 01:00:02:05\n* FROM CLIP NAME: 1-2.png"))
            #expect(text.contains("003  AX       V     C        00:00:00:00 00:00:02:00 01:00:02:05 01:00:04:05\n* FROM CLIP NAME: 1-3.png"))
            // The sound: 0.2 s (5 frames) into its shot (frame 43), to the shot's end (frame 55).
            #expect(text.contains("004  AX       A     C        00:00:00:00 00:00:00:12 01:00:01:18 01:00:02:05"), "\(text)")
            let media = files.path + "/scene1_media"
            let names = try FileManager.default.contentsOfDirectory(atPath: media).sorted()
            #expect(names.count == 4 && names.prefix(3) == ["1-1.png", "1-2.png", "1-3.png"] && names[3].hasSuffix(".wav"), "\(names)")
            let still = try Data(contentsOf: URL(fileURLWithPath: media + "/1-1.png"))
            #expect(still.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            let sound = try Data(contentsOf: URL(fileURLWithPath: media + "/" + names[3]))
            #expect(Array(sound) == TestMedia.wav(seconds: 1.0, seed: 3))

            let fcpxml = files.path + "/scene1.fcpxml"
            #expect(try await daemon.cli("export", "fcpxml", project, "--scene", "1", "--out", fcpxml).status == 0)
            let document = try XMLDocument(contentsOf: URL(fileURLWithPath: fcpxml))
            #expect(document.rootElement()?.attribute(forName: "version")?.stringValue == "1.9")
            #expect(try document.nodes(forXPath: "//spine/video").count == 3)
            // Every file it names exists.
            let sources = try document.nodes(forXPath: "//media-rep/@src").compactMap(\.stringValue)
            #expect(sources.count == 4)
            for source in sources {
                let path = try #require(URL(string: source)?.path)
                #expect(FileManager.default.fileExists(atPath: path), "\(source)")
            }
            if (try? await ExternalProgram.run("xmllint", ["--version"]))?.status == 0 {
                #expect(try await ExternalProgram.run("xmllint", ["--noout", fcpxml]).status == 0)
            }
        }
    #endif
}
