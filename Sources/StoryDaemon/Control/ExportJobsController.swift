import Foundation
import Hummingbird
import Logging
import StoryAPI
import StoryCore
import StoryEditorial
import StoryRender
import StoryStore

/// `projects/{id}/exports` and `exports/{job}[/file]`: exports made as jobs
/// (`ExportJobs`), since an animatic takes many seconds. The project is read
/// when the job is posted: later edits do not change an export under way.
struct ExportJobsController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let name: String
    let blobs: BlobStore
    let logger: Logger
    let renderer: PanelRenderService
    let exports: ExportJobs
    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/exports") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decode(API.ExportRequest.self, context: context)
            let job = try await startExport(body, of: id)
            var response = Response.json(job.view, status: .accepted)
            response.headers[.location] = "/v1/exports/\(job.id)"
            return response
        }
        routes.get("exports/:job") { _, context in
            .json(try await exportJob(try context.parameter("job")).view)
        }
        routes.get("exports/:job/file") { _, context in
            let job = try await exportJob(try context.parameter("job"))
            switch job.state {
            case .done:
                guard let bytes = job.bytes else { throw APIError(.internal, "the export's file is gone") }
                var response = try MediaController.fileResponse(job.filePath, bytes: bytes, contentType: job.contentType)
                response.headers[.contentDisposition] = "attachment; filename=\"\(job.fileName)\""
                return response
            case .failed:
                throw APIError(.conflict, "the export failed, so it has no file: \(job.error ?? "no reason given")")
            case .queued, .running:
                throw APIError(.conflict, "the export is not finished yet (\(Int(job.progress * 100)) %); ask again when its state is done")
            }
        }
        routes.delete("exports/:job") { _, context in
            let id = try context.parameter("job")
            guard await exports.remove(id) else { throw APIError(.notFound, "no export job \(id) (finished jobs expire after 30 minutes)") }
            return Response(status: .noContent)
        }
    }

    private func exportJob(_ id: String) async throws(APIError) -> ExportJob {
        guard let job = await exports.job(id) else { throw APIError(.notFound, "no export job \(id) (finished jobs expire after 30 minutes)") }
        return job
    }

    /// Checks an export request and queues its job.
    private func startExport(_ body: API.ExportRequest, of id: DocumentID) async throws -> ExportJob {
        guard API.ExportRequest.kinds.contains(body.kind) else {
            throw APIError.badField("kind", "is '\(body.kind)'; it takes \(API.ExportRequest.kinds.joined(separator: ", "))")
        }
        if body.kind == "replay" { return try await startReplay(body, of: id) }
        let fps = body.fps ?? API.ExportRequest.defaultFPS
        guard Timeline.frameRates.contains(fps) else {
            throw APIError.badField("fps", "must be \(Timeline.frameRates.lowerBound) to \(Timeline.frameRates.upperBound), not \(fps)")
        }
        let width = body.width ?? API.ExportRequest.defaultWidth
        let height = body.height ?? API.ExportRequest.defaultHeight
        guard AnimaticFrame.widths.contains(width), AnimaticFrame.heights.contains(height) else {
            throw APIError(
                .badRequest,
                "the size must be \(AnimaticFrame.widths.lowerBound) to \(AnimaticFrame.widths.upperBound) pixels wide and "
                    + "\(AnimaticFrame.heights.lowerBound) to \(AnimaticFrame.heights.upperBound) high, not \(width)x\(height)")
        }
        let view = try await lookup.projectDocument(id, at: body.at).document.view
        var scenes = view.scenes
        var title = view.title ?? "Storyteller"
        if let number = body.scene {
            guard let scene = view.scenes.first(where: { $0.number == number }) else {
                throw APIError(.notFound, "project \(id) has no scene \(number) (it has \(view.scenes.count))")
            }
            scenes = [scene]
            title += " – scene \(number)" + (scene.title.map { ": \($0)" } ?? "")
        }
        let shots = try ExportsController.shots(of: scenes, in: view, taggedWith: body.tag).flatMap(\.shots)
        guard !shots.isEmpty else {
            throw APIError(.badRequest, "nothing to export: \(body.scene == nil ? "the project" : "the scene") has no shots")
        }
        let timeline = Timeline(shots: shots, fps: fps)
        let baseName = Self.fileName(from: title)
        switch body.kind {
        case "animatic":
            let formatName = body.format ?? "mp4"
            guard let format = AnimaticExport.Format(rawValue: formatName) else {
                throw APIError.badField("format", "is '\(formatName)'; it takes \(API.ExportRequest.formats.joined(separator: ", "))")
            }
            if format != .gif, !width.isMultiple(of: 2) || !height.isMultiple(of: 2) {
                throw APIError(
                    .badRequest, "an \(format.rawValue) animatic's size must be even numbers (\(width)x\(height) is not): the codecs want it")
            }
            let ffmpeg = try await exports.checkFFmpeg(needing: format.encoders, for: "an \(format.rawValue) animatic")
            let pictures = await media.files(shots.flatMap(PanelRenderer.pictures(drawnIn:)), of: id)
            let sounds = await media.files(shots.compactMap(\.sound), of: id)
            // What is left out is said, shot by shot; the animatic is made all the same.
            let leftOut = await media.leftOut(shots.compactMap(\.sound) + shots.flatMap(PanelRenderer.pictures(drawnIn:)), of: id)
            var notes: [String] = []
            for shot in shots {
                if let sound = shot.sound, let reason = leftOut[sound.hash] { notes.append("the sound of \(shot.label) is left out: \(reason)") }
                for picture in PanelRenderer.pictures(drawnIn: shot) {
                    if let reason = leftOut[picture.hash] { notes.append("a picture of \(shot.label) is outlined: \(reason)") }
                }
            }
            for note in notes { logger.notice("animatic of \(id): \(note)") }
            let exportNotes = notes
            var animatic = AnimaticExport(
                timeline: timeline, width: width, height: height, format: format, captions: body.captions ?? false, pictureFiles: pictures,
                soundFiles: sounds)
            if let text = body.soundtrack, format != .gif {
                guard let hash = BlobHash(hex: text) else { throw APIError.badField("soundtrack", "'\(text)' is not a SHA-256 (64 hex digits)") }
                guard let record = await blobs.record(hash), case .complete = record.state else {
                    throw APIError(.notFound, "no sound \(hash) on this machine: upload it first (POST /v1/media/sounds)")
                }
                guard record.type.isSound, record.problem == nil else {
                    throw APIError.badField("soundtrack", "\(hash) is \(record.problem ?? "a \(record.type)"), not a sound")
                }
                animatic.soundtrack = blobs.completePath(hash)
            }
            let export = animatic
            let (renderer, logger) = (self.renderer, self.logger)
            return try await exports.submit(
                kind: body.kind, project: id, fileName: baseName + "." + format.rawValue, contentType: format.contentType
            ) { job throws(ExportError) in
                let took = try await export.run(in: job.directory, output: job.filePath, ffmpeg: ffmpeg, renderer: renderer) {
                    job.report(progress: $0)
                }
                let line =
                    "export \(job.id): \(format.rawValue) animatic of \(export.shownClips.count) shots, \(timeline.frameCount) frames at "
                    + "\(width)x\(height); frames drawn in \(took.rendering), encoded in \(took.encoding)"
                logger.info("\(line)")
                return ExportJob.Outcome(
                    seconds: timeline.seconds, frames: timeline.frameCount, shots: export.shownClips.count,
                    notes: exportNotes.isEmpty ? nil : exportNotes)
            }
        default:
            let isEDL = body.kind == "edl"
            let mediaDirectory = body.mediaDirectory ?? (baseName + "_media")
            var media: [API.ExportMedia] = []
            for clip in timeline.clips where clip.frameCount > 0 {
                media.append(API.ExportMedia(name: EditorialExport.stillName(of: clip.shot), kind: "still", shot: clip.shot.id.description))
            }
            for sound in EditorialExport.sounds(in: timeline) where !media.contains(where: { $0.name == EditorialExport.soundName(of: sound.media) })
            {
                media.append(API.ExportMedia(name: EditorialExport.soundName(of: sound.media), kind: "sound", blob: sound.media.hash.description))
            }
            let files = media
            let text =
                isEDL
                ? EditorialExport.edl(timeline, title: title)
                : EditorialExport.fcpxml(
                    timeline, title: title, width: width, height: height, mediaDirectory: mediaDirectory)
            return try await exports.submit(
                kind: body.kind, project: id, fileName: baseName + (isEDL ? ".edl" : ".fcpxml"),
                contentType: isEDL ? "text/plain; charset=utf-8" : "application/xml"
            ) { job throws(ExportError) in
                guard FileManager.default.createFile(atPath: job.filePath, contents: Data(text.utf8)) else {
                    throw ExportError(.files, "cannot write \(job.filePath) (is the disk full?)")
                }
                return ExportJob.Outcome(
                    seconds: timeline.seconds, frames: timeline.frameCount, shots: files.filter { $0.kind == "still" }.count, media: files)
            }
        }
    }

    /// A file name from a title: ASCII letters, digits, `-` and `_` (it goes in a
    /// `Content-Disposition` header), at most 80 characters.
    static func fileName(from title: String) -> String {
        var name = ""
        for character in title {
            if character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_") {
                name.append(character)
            } else if !name.hasSuffix("-") {
                name.append("-")
            }
        }
        let trimmed = String(name.trimmingCharacters(in: CharacterSet(charactersIn: "-")).prefix(80))
        return trimmed.isEmpty ? "export" : trimmed
    }
}
