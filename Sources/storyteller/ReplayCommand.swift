import ArgumentParser
import Foundation
import StoryAPI

/// `storyteller replay`: a shot drawn stroke by stroke, made by the daemon as an export job.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a shot drawn stroke by stroke, as it was made: an .mp4, a .gif or an animated .svg.",
        discussion: """
            The strokes appear in the order they were drawn, each drawn along its points; erased strokes disappear \
            when they were erased (and come back when an undo brought them back), and strokes moved or recoloured \
            change at their time. The real pauses between changes are divided by --speed and cut to --max-pause \
            seconds, so a 50-stroke shot plays in about half a minute; the finished drawing is held 1.5 s at the end. \
            Pictures, hidden layers and opacity are as in `storyteller render`. Strokes drawn before the project's \
            history was compacted are shown from the start.

            The format is the extension of --out: .mp4 (H.264) or .gif, encoded by the ffmpeg program where the \
            daemon runs (sudo apt-get install ffmpeg), or .svg, one file a browser plays. A progress bar shows on a \
            terminal; Ctrl-C stops the export on the daemon too.

            Examples:
              storyteller replay "Night Train" 1-2 --out 1-2.mp4
              storyteller replay "Night Train" 1-2 --out 1-2.gif --speed 2 --max-pause 0.5 --width 640 --fps 12
              storyteller replay "Night Train" 1-2 --out 1-2.svg
            """)
    @Argument(help: Help.project) var project: String?
    @Argument(help: Help.shot) var shot: String?
    @Option(help: "The file to write: .mp4, .gif or .svg (the format is taken from its extension).") var out: String
    @Option(help: "How many times faster than they were made strokes and pauses play (more than 0; default 1).")
    var speed = 1.0
    @Option(help: "The longest pause between strokes, in seconds (default 0.3).") var maxPause = 0.3
    @Option(help: "The panel's width in pixels (16 to 7680; default 1280); the height follows the shot's aspect ratio.")
    var width = 1280
    @Option(help: "Frames a second (1 to 60; default 24).") var fps = 24
    @OptionGroup var options: ClientOptions

    /// The format from --out's extension.
    var format: String { URL(fileURLWithPath: out).pathExtension.lowercased() }

    mutating func validate() throws {
        (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT")
        guard API.ExportRequest.replayFormats.contains(format) else {
            throw ValidationError(
                "--out must name an .mp4, .gif or .svg file (the format is taken from its extension), not '\(out)'")
        }
        guard speed.isFinite, speed > 0 else {
            throw ValidationError("--speed must be more than 0 (1 plays at the pace it was drawn), not \(speed)")
        }
        guard speed <= 1000 else { throw ValidationError("--speed must be at most 1000, not \(speed)") }
        guard maxPause.isFinite, (0...3600).contains(maxPause) else {
            throw ValidationError("--max-pause must be 0 to 3600 seconds, not \(maxPause)")
        }
        let widths = API.ExportRequest.replayWidths
        guard widths.contains(width) else {
            throw ValidationError("--width must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(width)")
        }
        guard (1...60).contains(fps) else { throw ValidationError("--fps must be 1 to 60, not \(fps)") }
        try ExportJobClient.checkDirectory(of: out)
    }

    func run() throws {
        let names = Names(options)
        let id = try names.project(project)
        let shotID = try names.shot(shot!, in: id).description
        var request = API.ExportRequest(kind: "replay", width: width, fps: fps, format: format)
        request.shot = shotID
        request.speed = speed
        request.maxPause = maxPause
        let job = try ExportJobClient(options: options).export(request, of: id, to: out)
        if options.json {
            print(String(decoding: try API.encoder.encode(job), as: UTF8.self))
        } else {
            let seconds = String(format: "%.2f", job.seconds ?? 0)
            print(
                "wrote \(out) (shot \(shot!), \(seconds) s, \(job.frames ?? 0) frames at \(fps) fps, \(TransferProgress.size(Int(job.bytes ?? 0))))"
            )
        }
    }
}
