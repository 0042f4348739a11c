import ArgumentParser
import Foundation
import StoryAPI

extension Export {
    /// What the EDL and FCPXML commands take.
    struct TimelineArguments: ParsableArguments {
        @Argument(help: Help.project) var project: String?
        @Option(help: "The scene (its number).") var scene: Int
        @Option(help: "Only the shots carrying this tag (in any case).") var tag: String?
        @Option(help: "The file to write.") var out: String
        @Option(help: "Frames a second (1 to 120).") var fps = 24
        @Option(help: "The stills' size and the timeline's format, WIDTHxHEIGHT (default 1920x1080).") var size = "1920x1080"
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        func validate() throws {
            guard (1...120).contains(fps) else { throw ValidationError("--fps must be 1 to 120, not \(fps)") }
            guard let (width, height) = ExportJobClient.size(size), (16...7680).contains(width), (16...4320).contains(height) else {
                throw ValidationError("--size is WIDTHxHEIGHT in pixels from 16x16 to 7680x4320, like 1920x1080, not '\(size)'")
            }
            try ExportJobClient.checkDirectory(of: out)
        }

        /// The folder beside `out` the stills and sounds go into (absolute).
        var mediaDirectory: String {
            let url = URL(fileURLWithPath: out).standardizedFileURL
            return url.deletingPathExtension().path + "_media"
        }

        func run(kind: String) throws {
            let id = try Names(options).project(project)
            let (width, height) = ExportJobClient.size(size)!
            let client = ExportJobClient(options: options)
            var request = API.ExportRequest(
                kind: kind, scene: scene, width: width, height: height, fps: fps, mediaDirectory: mediaDirectory, tag: tag)
            request.at = past.at.map(AtOption.sent)
            let job = try client.export(request, of: id, to: out)
            let media = job.media ?? []
            do {
                try FileManager.default.createDirectory(atPath: mediaDirectory, withIntermediateDirectories: true)
            } catch {
                printError("cannot make \(mediaDirectory): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            let progress = isatty(STDERR_FILENO) == 1 ? ExportProgress(label: "fetching stills and sounds") : nil
            for (index, file) in media.enumerated() {
                let path = mediaDirectory + "/" + file.name
                if file.kind == "still", let shot = file.shot {
                    let then = past.at == nil ? "" : "&" + past.query
                    try client.download("/v1/projects/\(segment(id))/shots/\(segment(shot))/render?format=png&width=\(width)\(then)", to: path)
                } else if file.kind == "sound", let blob = file.blob {
                    try client.download("/v1/projects/\(segment(id))/media/\(segment(blob))", to: path)
                }
                progress?.show(Double(index + 1) / Double(media.count))
            }
            progress?.end()
            if options.json {
                print(String(decoding: try API.encoder.encode(job), as: UTF8.self))
            } else {
                let stills = media.filter { $0.kind == "still" }.count
                print(
                    "wrote \(out) (\(job.shots ?? 0) shots, \(String(format: "%.2f", job.seconds ?? 0)) s at \(fps) fps) and "
                        + "\(stills) still(s), \(media.count - stills) sound(s) in \(mediaDirectory)")
            }
        }
    }
}
