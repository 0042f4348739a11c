import Foundation
import Hummingbird
import Logging
import NIOCore
import StoryAPI
import StoryCore
import StoryRender
import StoryStore

/// `projects/{id}/exports/html`: the slideshow page, as one self-contained
/// file (streamed, a slide at a time) or as a page and the files beside it.
struct SlideshowController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let blobs: BlobStore
    let logger: Logger
    let renderer: PanelRenderService
    let exports: ExportJobs

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/exports/html") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let query = try request.decodeQuery(API.SlideshowQuery.self)
            var form = API.Slideshow.Form.file
            if let text = query.form {
                guard let named = API.Slideshow.Form(rawValue: text) else {
                    throw APIError(.badRequest, "form must be file or directory, not '\(text)'")
                }
                form = named
            }
            let width = try RenderController.whole("width", query.width, API.Slideshow.widths, default: API.Slideshow.defaultWidth, unit: " pixels")
            let source = SlideshowSource(store: store, blobs: blobs, renderer: renderer)
            switch form {
            case .directory:
                return .json(try await slideshowDirectory(id, source: source, width: width, tag: query.tag))
            case .file:
                return try await slideshowFile(id, source: source, width: width, tag: query.tag)
            }
        }
    }

    /// The page with files beside it: panels as `panels/LABEL.png`, sounds
    /// as `sounds/LABEL.EXT`, each with the route that answers its bytes.
    func slideshowDirectory(_ id: DocumentID, source: SlideshowSource, width: Int, tag: String? = nil) async throws -> API.SlideshowDirectory {
        let (page, _) = try await source.page(of: id, media: .files, tag: tag)
        var index = page.head()
        var files: [API.SlideshowFile] = []
        let project = Self.pathSegment(id.description)
        for (position, slide) in page.slides.enumerated() {
            let panel = "panels/\(slide.label).png"
            files.append(
                API.SlideshowFile(
                    path: panel,
                    source:
                        "/v1/projects/\(project)/shots/\(Self.pathSegment(slide.shot.description))/render?format=png&width=\(SlideshowSource.fittingWidth(width, aspectRatio: slide.aspectRatio))"
                ))
            let (before, after) = page.slide(position, panel: panel)
            index += before
            if let sound = slide.sound {
                let path = "sounds/\(slide.label).\(sound.type.fileExtension)"
                files.append(API.SlideshowFile(path: path, source: "/v1/projects/\(project)/media/\(sound.hash)"))
                index += path + after
            }
        }
        index += page.tail()
        return API.SlideshowDirectory(index: index, files: files)
    }

    /// The single self-contained page, streamed: each panel is drawn and
    /// sent before the next is drawn, a sound is read and sent in pieces.
    func slideshowFile(_ id: DocumentID, source: SlideshowSource, width: Int, tag: String? = nil) async throws -> Response {
        let (page, view) = try await source.page(of: id, media: .inline, tag: tag)
        let logger = self.logger
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: page.head()))
                for (position, slide) in page.slides.enumerated() {
                    var panel: String
                    if let shot = view.shot(slide.shot) {
                        do {
                            panel =
                                "data:image/png;base64," + Data(try await source.panel(shot, in: view, of: id, width: width)).base64EncodedString()
                        } catch {
                            logger.warning("html export: shot \(slide.label) cannot be drawn: \(error)")
                            panel = SlideshowSource.placeholder(slide.label)
                        }
                    } else {
                        panel = SlideshowSource.placeholder(slide.label)
                    }
                    let (before, after) = page.slide(position, panel: panel)
                    try await writer.write(ByteBuffer(string: before))
                    if let sound = slide.sound {
                        try await writer.write(ByteBuffer(string: "data:\(sound.type.mimeType);base64,"))
                        try await SlideshowSource.writeBase64(of: source.path(of: sound.hash), to: &writer)
                        try await writer.write(ByteBuffer(string: after))
                    }
                }
                try await writer.write(ByteBuffer(string: page.tail()))
                try await writer.finish(nil)
            })
    }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~@"))) ?? text
    }
}
