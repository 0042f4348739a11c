import Foundation
import Logging
import StoryAPI
import StoryCore
import StoryEditorial
import StoryRender
import StoryStore

/// `POST /v1/projects/{id}/exports` with `kind: replay`: one shot drawn
/// stroke by stroke (`ReplayTimeline`, `ReplayPlayback`), as an MP4 or GIF
/// (`ReplayExport`, ffmpeg) or an animated SVG (`ReplaySVG`). The history is
/// read when the job is posted.
extension ExportJobsController {
    /// Checks a replay request and queues its job.
    /// - Throws: `APIError.badRequest` for a missing shot, a speed, pause,
    ///   width, rate or format out of range, or a shot with no strokes;
    ///   `.notFound` for a shot the project does not show; `.unavailable` without ffmpeg.
    func startReplay(_ body: API.ExportRequest, of id: DocumentID) async throws -> ExportJob {
        guard let shotText = body.shot else {
            throw APIError(.badRequest, "a replay needs 'shot': the id of the shot to play")
        }
        guard let shotID = OpID(shotText) else {
            throw APIError.badField("shot", "is '\(shotText)', which is not a shot id")
        }
        let speed = body.speed ?? ReplayPlayback.defaultSpeed
        guard speed.isFinite, ReplayPlayback.speeds.contains(speed) else {
            throw APIError(
                .badRequest,
                "'speed' must be more than 0 (\(ReplayPlayback.speeds.lowerBound) to \(Int(ReplayPlayback.speeds.upperBound)) times "
                    + "the real pace), not \(speed)")
        }
        let maxPause = body.maxPause ?? ReplayPlayback.defaultMaxPause
        guard maxPause.isFinite, ReplayPlayback.maxPauses.contains(maxPause) else {
            throw APIError(
                .badRequest,
                "'maxPause' must be 0 to \(Int(ReplayPlayback.maxPauses.upperBound)) seconds, not \(maxPause)")
        }
        let fps = body.fps ?? ReplayPlayback.defaultFPS
        guard ReplayPlayback.frameRates.contains(fps) else {
            throw APIError(
                .badRequest,
                "'fps' must be \(ReplayPlayback.frameRates.lowerBound) to \(ReplayPlayback.frameRates.upperBound), not \(fps)"
            )
        }
        let width = body.width ?? API.ExportRequest.defaultReplayWidth
        let widths = API.ExportRequest.replayWidths
        guard widths.contains(width) else {
            throw APIError(
                .badRequest, "'width' must be \(widths.lowerBound) to \(widths.upperBound) pixels, not \(width)")
        }
        let formatName = body.format ?? "mp4"
        guard API.ExportRequest.replayFormats.contains(formatName) else {
            throw APIError(
                .badRequest,
                "'format' is '\(formatName)'; a replay takes \(API.ExportRequest.replayFormats.joined(separator: ", "))"
            )
        }

        let (document, changes, compacted) = try await store.replayHistory(of: id)
        let view = document.view
        guard let timeline = ReplayTimeline(document: document, shot: shotID, changes: changes) else {
            throw APIError(.notFound, "project \(id) shows no shot \(shotID)")
        }
        let shot = timeline.shot
        guard !timeline.shownEvents.isEmpty || timeline.initialStrokeCount > 0 else {
            throw APIError(
                .badRequest, "shot \(shot.label) has no strokes on a visible layer: there is nothing to replay")
        }
        let height = PanelRenderer.height(of: shot, width: width)
        guard height <= PanelRenderer.maximumHeight else {
            throw APIError(
                .badRequest,
                "a \(width)-pixel-wide panel of shot \(shot.label) is \(height) pixels high, over \(PanelRenderer.maximumHeight)"
            )
        }
        let playback = ReplayPlayback(timeline, speed: speed, maxPause: maxPause, fps: fps)
        let pictures = await media.files(PanelRenderer.pictures(drawnIn: shot), of: id)
        let baseName = Self.fileName(from: (view.title ?? "Storyteller") + " " + shot.label + " replay")
        let logger = self.logger
        let strokes = timeline.shownEvents.filter { $0.kind == .drawn }.count
        let outcome = ExportJob.Outcome(seconds: playback.seconds, frames: playback.frameCount, shots: 1)
        let history =
            compacted ? " (history compacted: \(timeline.initialStrokeCount) strokes shown from the start)" : ""

        guard let format = ReplayExport.Format(rawValue: formatName) else {
            return try await exports.submit(
                kind: body.kind, project: id, fileName: baseName + ".svg", contentType: "image/svg+xml"
            ) { job throws(ExportError) in
                // The pictures go into the file (data URIs): it is one file a browser opens on its own.
                var bytes: [BlobHash: [UInt8]] = [:]
                for (hash, path) in pictures {
                    if let data = FileManager.default.contents(atPath: path) { bytes[hash] = Array(data) }
                }
                let svg = ReplaySVG.make(timeline, playback: playback, width: width, pictures: bytes)
                guard FileManager.default.createFile(atPath: job.filePath, contents: Data(svg.utf8)) else {
                    throw ExportError(.files, "cannot write \(job.filePath) (is the disk full?)")
                }
                logger.info(
                    "export \(job.id): svg replay of shot \(shot.label), \(strokes) strokes, \(playback.seconds) s\(history)"
                )
                return outcome
            }
        }
        let ffmpeg = try await exports.checkFFmpeg(needing: format.encoders, for: "an \(format.rawValue) replay")
        let export = ReplayExport(
            timeline: timeline, playback: playback, project: view, width: width, format: format, pictureFiles: pictures)
        let renderer = self.renderer
        return try await exports.submit(
            kind: body.kind, project: id, fileName: baseName + "." + format.rawValue, contentType: format.contentType
        ) { job throws(ExportError) in
            let took = try await export.run(in: job.directory, output: job.filePath, ffmpeg: ffmpeg, renderer: renderer) {
                job.report(progress: $0)
            }
            let line =
                "export \(job.id): \(format.rawValue) replay of shot \(shot.label), \(strokes) strokes, \(playback.frameCount) frames "
                + "(\(playback.segments.count) drawn) at \(width) pixels wide\(history); frames drawn in \(took.rendering), encoded in \(took.encoding)"
            logger.info("\(line)")
            return outcome
        }
    }
}
