import Foundation
import StoryCore
import StoryEditorial
import StoryRender

/// A shot drawn stroke by stroke as a video (`storyteller replay`): each
/// `ReplayPlayback` segment drawn once by `PanelRenderer` (the panel render's
/// one drawing path, given the strokes shown at that moment and the part
/// of the stroke being drawn) to a PNG, held by ffmpeg for its frames
/// as the animatic's shots are (the concat demuxer with each PNG's duration,
/// the `fps` filter, `-frames:v` the playback's frame count). A pause costs
/// one picture however long it is held.
struct ReplayExport: Sendable {
    enum Format: String, Sendable {
        /// H.264 (the panel padded to even sides with black: the codec wants them).
        case mp4
        /// A looping GIF.
        case gif

        var contentType: String {
            switch self {
            case .mp4: "video/mp4"
            case .gif: "image/gif"
            }
        }

        /// The ffmpeg encoders it needs.
        var encoders: [String] {
            switch self {
            case .mp4: ["libx264"]
            case .gif: ["gif"]
            }
        }
    }

    let timeline: ReplayTimeline
    let playback: ReplayPlayback
    /// The project the shot is in (the renderer's context).
    let project: ProjectView
    /// The panel's width in pixels; its height follows from the shot's aspect ratio.
    let width: Int
    let format: Format
    /// Pictures held whole here, by hash (the rest are outlined).
    let pictureFiles: [BlobHash: String]

    /// The longest an encode may take before ffmpeg is stopped.
    static let timeLimit: Duration = .seconds(3600)
    /// The share of the progress bar the frames' rendering takes (the rest is ffmpeg's).
    static let renderShare = 0.6

    /// Draws the frames and encodes them into `output`, in `directory`; how long each took.
    /// - Throws: `ExportError` (`.render`, `.files`, `.ffmpegFailed`, `.cancelled`).
    @discardableResult
    func run(
        in directory: String, output: String, ffmpeg: FFmpeg, renderer: PanelRenderService,
        progress: @escaping @Sendable (Double) -> Void
    ) async throws(ExportError) -> (rendering: Duration, encoding: Duration) {
        let started = ContinuousClock.now
        var cursor = timeline.makeCursor()
        var list = "ffconcat version 1.0\n"
        var last = ""
        for (index, segment) in playback.segments.enumerated() {
            guard !Task.isCancelled else { throw ExportError(.cancelled, "cancelled") }
            cursor.advance(to: segment.applied)
            let bytes: [UInt8]
            do {
                bytes = try await renderer.render(
                    cursor.shot(drawingNext: segment.progress), in: project, as: .png, width: width, onion: 0,
                    pictureFiles: pictureFiles)
            } catch {
                throw ExportError(.render, "cannot draw shot \(timeline.shot.label): \(error.message)")
            }
            last = "frame-\(index + 1).png"
            guard FileManager.default.createFile(atPath: directory + "/" + last, contents: Data(bytes)) else {
                throw ExportError(.files, "cannot write \(directory)/\(last) (is the disk full?)")
            }
            list +=
                "file '\(last)'\nduration \(AnimaticExport.seconds(Double(segment.frameCount) / Double(playback.fps)))\n"
            progress(Self.renderShare * Double(index + 1) / Double(playback.segments.count))
        }
        // The concat demuxer gives the last file no duration unless it is named again.
        list += "file '\(last)'\n"
        guard FileManager.default.createFile(atPath: directory + "/frames.ffconcat", contents: Data(list.utf8)) else {
            throw ExportError(.files, "cannot write \(directory)/frames.ffconcat (is the disk full?)")
        }
        let rendered = ContinuousClock.now
        let total = playback.frameCount
        try await ffmpeg.run(
            arguments(concatList: directory + "/frames.ffconcat", output: output), timeout: Self.timeLimit
        ) { frame in
            progress(Self.renderShare + (1 - Self.renderShare) * min(1, Double(frame) / Double(max(1, total))))
        }
        return (rendered - started, .now - rendered)
    }

    /// ffmpeg's arguments.
    func arguments(concatList: String, output: String) -> [String] {
        let fps = playback.fps
        var arguments = ["-hide_banner", "-nostdin", "-y", "-loglevel", "error", "-progress", "pipe:1", "-nostats"]
        arguments += ["-f", "concat", "-safe", "0", "-i", concatList]
        let filter: String
        switch format {
        case .mp4:
            filter = "[0:v]pad=ceil(iw/2)*2:ceil(ih/2)*2:0:0:black,format=yuv420p,fps=\(fps):round=near[v]"
        case .gif:
            filter =
                "[0:v]fps=\(fps):round=near,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3[v]"
        }
        arguments += [
            "-filter_complex", filter, "-map", "[v]", "-frames:v", String(playback.frameCount), "-r", String(fps),
        ]
        switch format {
        case .mp4:
            arguments += [
                "-c:v", "libx264", "-preset", "superfast", "-tune", "animation", "-crf", "20", "-g", String(fps * 10),
                "-movflags", "+faststart",
                "-f", "mp4",
            ]
        case .gif:
            arguments += ["-loop", "0", "-f", "gif"]
        }
        return arguments + [output]
    }
}
