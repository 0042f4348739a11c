import ArgumentParser
import Foundation
import StoryAPI

extension Export {
    /// `storyteller export animatic`: the shots as a video, made by the daemon with ffmpeg.
    struct Animatic: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an animatic: the shots as a video, each held for its duration, with its sound.",
            discussion: """
                Each shot is held for its duration (2 s when it has none); cuts fall on whole frames counted from the \
                shots' cumulative start times, so picture and sound never drift. A shot's sound starts at its shot \
                (plus the sound's offset) and is cut at the next cut; --soundtrack adds a sound under the whole \
                animatic from its start (sent to the daemon first). With --captions each shot's caption (else its \
                dialogue) is burned into the picture and also written as a subtitle track players can turn off.

                The format is the extension of --out: .mp4 (H.264 + AAC), .webm (VP9 + Opus, also --codec vp9) or \
                .gif (a short looping preview without sound). The daemon encodes with the ffmpeg program, which must \
                be installed where it runs (sudo apt-get install ffmpeg). A progress bar shows on a terminal; \
                Ctrl-C stops the export on the daemon too.

                Examples:
                  storyteller export animatic "Night Train" --out night-train.mp4
                  storyteller export animatic "Night Train" --scene 2 --out scene2.mp4 --size 1280x720 --captions
                  storyteller export animatic "Night Train" --tag vfx --out vfx-shots.mp4
                  storyteller export animatic "Night Train" --codec vp9 --out night-train.webm
                  storyteller export animatic "Night Train" --soundtrack score.flac --out night-train.mp4
                """)
        @Argument(help: Help.project) var project: String?
        @Option(help: "Only this scene (its number).") var scene: Int?
        @Option(help: "Only the shots carrying this tag (in any case).") var tag: String?
        @Option(help: "The file to write: .mp4, .webm or .gif.") var out: String
        @Option(help: "The frame's size, WIDTHxHEIGHT (even numbers for video; default 1920x1080).") var size = "1920x1080"
        @Option(help: "Frames a second (1 to 120).") var fps = 24
        @Flag(help: "Burn each shot's caption (else its dialogue) in, and add it as a subtitle track.") var captions = false
        @Option(help: "h264 (an .mp4) or vp9 (a .webm); default from --out's extension.") var codec: String?
        @Option(help: "A sound file played under the whole animatic from its start (WAV, MP3, M4A, Ogg or FLAC).") var soundtrack: String?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        /// The container from the options.
        var format: String {
            if codec == "vp9" { return "webm" }
            let suffix = URL(fileURLWithPath: out).pathExtension.lowercased()
            return suffix.isEmpty ? "mp4" : suffix
        }

        mutating func validate() throws {
            if let codec, !["h264", "vp9"].contains(codec) { throw ValidationError("--codec is h264 or vp9, not '\(codec)'") }
            guard API.ExportRequest.formats.contains(format) else {
                throw ValidationError("--out must name an .mp4, .webm or .gif file (the format is taken from its extension), not '\(out)'")
            }
            if codec == "h264" && format != "mp4" { throw ValidationError("--codec h264 writes an .mp4 file; --out is '\(out)'") }
            guard let (width, height) = ExportJobClient.size(size) else {
                throw ValidationError("--size is WIDTHxHEIGHT in pixels, like 1920x1080, not '\(size)'")
            }
            guard (16...7680).contains(width), (16...4320).contains(height) else {
                throw ValidationError("--size must be 16x16 to 7680x4320, not \(size)")
            }
            guard (1...120).contains(fps) else { throw ValidationError("--fps must be 1 to 120, not \(fps)") }
            try ExportJobClient.checkDirectory(of: out)
            if let soundtrack {
                guard format != "gif" else { throw ValidationError("a .gif has no sound; --soundtrack takes an .mp4 or .webm") }
                guard FileManager.default.isReadableFile(atPath: soundtrack) else { throw ValidationError("cannot read --soundtrack \(soundtrack)") }
            }
        }

        func run() throws {
            let id = try Names(options).project(project)
            let (width, height) = ExportJobClient.size(size)!
            var request = API.ExportRequest(
                kind: "animatic", scene: scene, width: width, height: height, fps: fps, captions: captions, format: format, tag: tag)
            request.at = past.at.map(AtOption.sent)
            if let soundtrack { request.soundtrack = try ExportJobClient(options: options).uploadSound(soundtrack) }
            let job = try ExportJobClient(options: options).export(request, of: id, to: out)
            if options.json {
                print(String(decoding: try API.encoder.encode(job), as: UTF8.self))
            } else {
                let seconds = String(format: "%.2f", job.seconds ?? 0)
                print(
                    "wrote \(out) (\(job.shots ?? 0) shots, \(seconds) s, \(job.frames ?? 0) frames at \(fps) fps, "
                        + "\(TransferProgress.size(Int(job.bytes ?? 0))))")
                for note in job.notes ?? [] { print("note: \(note)") }
            }
        }
    }
}
