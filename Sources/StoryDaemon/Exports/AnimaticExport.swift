import Foundation
import StoryCore
import StoryEditorial
import StoryRender

/// A project's (or a scene's) shots as a video: each shot rendered once to
/// a PNG frame at the animatic's size (letterboxed, the caption burned in),
/// then held by ffmpeg for its frames on the `Timeline` (cuts on whole
/// frames from the cumulative start times), with each shot's sound from its
/// start (plus the sound's offset) and cut at the shot's end, and the
/// captions also as a soft subtitle track.
///
/// ffmpeg reads the frames through its concat demuxer, each PNG with the
/// duration of its frames (exact fractions of the rate), and the `fps`
/// filter turns them into a constant frame rate; `-frames:v` stops it at
/// exactly the timeline's frame count, so the picture is round(Σ durations
/// × fps) frames and every cut lands where the sound's `adelay` puts it.
struct AnimaticExport: Sendable {
    enum Format: String, Sendable {
        /// H.264 + AAC, subtitles as mov_text.
        case mp4
        /// VP9 + Opus, subtitles as WebVTT.
        case webm
        /// A looping preview: no sound, no subtitle track.
        case gif

        var contentType: String {
            switch self {
            case .mp4: "video/mp4"
            case .webm: "video/webm"
            case .gif: "image/gif"
            }
        }

        /// The ffmpeg encoders it needs.
        var encoders: [String] {
            switch self {
            case .mp4: ["libx264", "aac", "mov_text"]
            case .webm: ["libvpx-vp9", "libopus", "webvtt"]
            case .gif: ["gif"]
            }
        }
    }

    /// A sound on the timeline: its file, when it starts and how long it plays.
    struct Sound: Sendable, Equatable {
        let path: String
        /// Seconds from the animatic's start.
        let start: Double
        /// Seconds it plays (to the shot's end at most).
        let length: Double
    }

    let timeline: Timeline
    let width: Int
    let height: Int
    let format: Format
    let captions: Bool
    /// Pictures held whole here, by hash (the rest are outlined in the frame).
    let pictureFiles: [BlobHash: String]
    /// Sounds held whole here, by hash (the rest are left out).
    let soundFiles: [BlobHash: String]
    /// A sound played under the whole animatic from its start (its file), if any.
    var soundtrack: String?

    /// The longest an encode may take before ffmpeg is stopped.
    static let timeLimit: Duration = .seconds(3 * 3600)
    /// The share of the progress bar the frames' rendering takes (the rest is ffmpeg's).
    static let renderShare = 0.2

    /// The clips that have frames (a shot shorter than half a frame has none).
    var shownClips: [Timeline.Clip] { timeline.clips.filter { $0.frameCount > 0 } }

    /// The text burned in and in the subtitles for a shot: its caption, else its dialogue.
    static func caption(of shot: ShotView) -> String? {
        for text in [shot.caption, shot.dialogue] {
            if let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty { return text }
        }
        return nil
    }

    /// Each shot's sound as it plays: from the shot's start plus the sound's
    /// offset, for the rest of the shot at most (and the sound's own length);
    /// then the soundtrack, from the start for the whole animatic at most.
    var sounds: [Sound] {
        let soundtrack = soundtrack.map { [Sound(path: $0, start: 0, length: timeline.seconds)] } ?? []
        return timeline.clips.compactMap { clip -> Sound? in
            guard let sound = clip.shot.sound, let path = soundFiles[sound.hash] else { return nil }
            // A peer's document may hold any number: clamped before it becomes milliseconds.
            let offset = EditorialExport.clamped(sound.offset)
            var length = clip.length - offset
            if sound.duration > 0 { length = min(length, EditorialExport.clamped(sound.duration)) }
            guard length >= 0.001 else { return nil }
            return Sound(path: path, start: clip.start + offset, length: length)
        } + soundtrack
    }

    /// Renders the frames and encodes them into `output`, in `directory`;
    /// how long each took (for the log).
    /// - Throws: `ExportError` (`.render`, `.files`, `.ffmpegFailed`, `.cancelled`).
    @discardableResult
    func run(
        in directory: String, output: String, ffmpeg: FFmpeg, renderer: PanelRenderService, progress: @escaping @Sendable (Double) -> Void
    ) async throws(ExportError) -> (rendering: Duration, encoding: Duration) {
        let started = ContinuousClock.now
        let clips = shownClips
        guard !clips.isEmpty else { throw ExportError(.render, "every shot is shorter than half a frame: nothing to show") }
        var frames: [String] = []
        for (index, clip) in clips.enumerated() {
            guard !Task.isCancelled else { throw ExportError(.cancelled, "cancelled") }
            let bytes: [UInt8]
            do {
                bytes = try await renderer.renderFrame(
                    clip.shot, width: width, height: height, caption: captions ? Self.caption(of: clip.shot) : nil, pictureFiles: pictureFiles)
            } catch {
                throw ExportError(.render, "cannot draw shot \(clip.shot.label): \(error.message)")
            }
            let name = "shot-\(index + 1).png"
            try write(Data(bytes), to: directory + "/" + name)
            frames.append(name)
            progress(Self.renderShare * Double(index + 1) / Double(clips.count))
        }
        try write(Data(concatList(frames: frames).utf8), to: directory + "/frames.ffconcat")
        var subtitles: String?
        if captions && format != .gif {
            // SubRip for both: ffmpeg turns it into WebVTT for a WebM (`SubtitleText`: text stays text on the way).
            let text = SubRip.document(clips, text: Self.caption(of:))
            if !text.isEmpty {
                subtitles = directory + "/captions.srt"
                try write(Data(text.utf8), to: subtitles!)
            }
        }
        let total = timeline.frameCount
        let arguments = arguments(concatList: directory + "/frames.ffconcat", subtitles: subtitles, output: output)
        let rendered = ContinuousClock.now
        try await ffmpeg.run(arguments, timeout: Self.timeLimit) { frame in
            progress(Self.renderShare + (1 - Self.renderShare) * min(1, Double(frame) / Double(max(1, total))))
        }
        return (rendered - started, .now - rendered)
    }

    /// The concat demuxer's list: each frame with its clip's length; the last
    /// named twice (the demuxer gives the last file no duration otherwise).
    func concatList(frames: [String]) -> String {
        var text = "ffconcat version 1.0\n"
        for (name, clip) in zip(frames, shownClips) {
            text += "file '\(name)'\nduration \(Self.seconds(clip.length))\n"
        }
        if let last = frames.last { text += "file '\(last)'\n" }
        return text
    }

    /// ffmpeg's arguments.
    func arguments(concatList: String, subtitles: String?, output: String) -> [String] {
        let fps = timeline.fps
        let total = timeline.frameCount
        var arguments = ["-hide_banner", "-nostdin", "-y", "-loglevel", "error", "-progress", "pipe:1", "-nostats"]
        arguments += ["-f", "concat", "-safe", "0", "-i", concatList]
        let sounds = format == .gif ? [] : self.sounds
        for sound in sounds { arguments += ["-i", sound.path] }
        if let subtitles { arguments += ["-i", subtitles] }
        var filters: [String] = []
        switch format {
        case .gif:
            filters.append("[0:v]fps=\(fps):round=near,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3[v]")
        case .mp4, .webm:
            // Converted once per shot, before the fps filter repeats the frame (after it, the
            // conversion ran for every frame: 68 s instead of 42 s for 6,259 frames at 1080p).
            filters.append("[0:v]format=yuv420p,fps=\(fps):round=near[v]")
        }
        if !sounds.isEmpty {
            var labels = ""
            for (index, sound) in sounds.enumerated() {
                let delay = Int((sound.start * 1000).rounded())
                filters.append(
                    "[\(index + 1):a]atrim=0:\(Self.seconds(sound.length)),asetpts=PTS-STARTPTS,aresample=48000,"
                        + "aformat=channel_layouts=stereo,adelay=\(delay):all=1[s\(index)]")
                labels += "[s\(index)]"
            }
            let mixed = sounds.count == 1 ? "[s0]anull" : "\(labels)amix=inputs=\(sounds.count):normalize=0:duration=longest"
            filters.append("\(mixed),apad,atrim=0:\(Self.seconds(timeline.seconds))[a]")
        }
        arguments += ["-filter_complex", filters.joined(separator: ";"), "-map", "[v]"]
        if !sounds.isEmpty { arguments += ["-map", "[a]"] }
        if subtitles != nil { arguments += ["-map", "\(sounds.count + 1):s"] }
        arguments += ["-frames:v", String(total), "-r", String(fps)]
        switch format {
        case .mp4:
            // A keyframe every 10 s at most: held frames cost next to nothing between them.
            // superfast: x264's analysis of every (repeated) frame is the whole cost; veryfast took
            // 1.25 times as long for a file 20 % smaller, ultrafast half as long for one 3.5 times larger.
            arguments += ["-c:v", "libx264", "-preset", "superfast", "-tune", "stillimage", "-crf", "23", "-g", String(fps * 10)]
            if !sounds.isEmpty { arguments += ["-c:a", "aac", "-b:a", "160k"] }
            if subtitles != nil { arguments += ["-c:s", "mov_text", "-metadata:s:s:0", "language=eng"] }
            arguments += ["-movflags", "+faststart", "-f", "mp4"]
        case .webm:
            arguments += [
                "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "0", "-crf", "36", "-g",
                String(fps * 10),
            ]
            if !sounds.isEmpty { arguments += ["-c:a", "libopus", "-b:a", "128k"] }
            if subtitles != nil { arguments += ["-c:s", "webvtt"] }
            arguments += ["-f", "webm"]
        case .gif:
            arguments += ["-loop", "0", "-f", "gif"]
        }
        return arguments + [output]
    }

    /// Seconds with microseconds, as ffmpeg reads them (never in exponent notation).
    static func seconds(_ value: Double) -> String { String(format: "%.6f", value) }

    private func write(_ data: Data, to path: String) throws(ExportError) {
        guard FileManager.default.createFile(atPath: path, contents: data) else {
            throw ExportError(.files, "cannot write \(path) (is the disk full?)")
        }
    }
}
