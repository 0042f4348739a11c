import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoryAPI
import StoryCore
import StoryRender
import StoryStore

/// `projects/{id}/exports/pdf` (print sheets) and `projects/{id}/exports/contact-sheet`.
struct ExportsController: Sendable {
    let lookup: ResourceLookup
    let library: LibraryService
    let name: String
    let clock: WallClock
    let logger: Logger
    let renderer: PanelRenderService
    let exports: ExportJobs

    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    /// The answer's header saying how many pages the whole print sheet has.
    static let pageCountField = HTTPField.Name("Storyteller-Page-Count")!

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/exports/pdf") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let options = try API.PrintSheetOptions(query: { request.query[$0] })
            let query = try request.decodeQuery(API.ExportQuery.self)
            let (view, scenes, title) = try await exported(id, scene: query.scene, tag: query.tag, at: query.at)
            let size = options.pageSize
            let layout = PrintSheetLayout(
                pageWidth: size.width, pageHeight: size.height, rows: options.rows, columns: options.columns,
                isTextBeside: options.text == .beside,
                fields: options.fields.compactMap { PrintSheetLayout.Field(rawValue: $0.rawValue) },
                pages: options.pages)
            let files = await pictureFiles(drawnIn: scenes, of: id)
            let admitted: (sheet: Int, pageCount: Int, first: [UInt8])?
            do {
                admitted = try await renderer.openSheet(
                    scenes: scenes, of: view, title: title, date: Self.today(clock), layout: layout, pictureFiles: files
                )
            } catch let error as RenderError where error.code == .outOfRange {
                throw APIError(.badRequest, error.message)
            } catch {
                throw APIError(.internal, "cannot print \(title): \(error)")
            }
            guard let opened = admitted else {
                throw APIError(
                    .busy,
                    "the daemon is already sending \(PanelRenderService.maximumOpenSheets) print sheets; ask again in a moment"
                )
            }
            let renderer = self.renderer
            let logger = self.logger
            // Page by page: the next page is drawn once the last one is on its way, so a slow
            // reader holds one page, and one that leaves ends the drawing.
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/pdf", .contentDisposition: Self.attachment(title, extension: "pdf"),
                    Self.pageCountField: String(opened.pageCount),
                ],
                body: ResponseBody { writer in
                    do {
                        try await writer.write(ByteBuffer(bytes: opened.first))
                        while let chunk = try await renderer.nextChunk(ofSheet: opened.sheet) {
                            try await writer.write(ByteBuffer(bytes: chunk))
                        }
                    } catch {
                        await renderer.closeSheet(opened.sheet)
                        logger.warning("a print sheet of \(title) ended early: \(error)")
                        throw error
                    }
                    try await writer.finish(nil)
                })
        }
        routes.get("projects/:project/exports/contact-sheet") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let query = try request.decodeQuery(API.ExportQuery.self)
            let width = try RenderController.whole(
                "width", query.width, API.ContactSheet.widths, default: API.ContactSheet.defaultWidth, unit: " pixels")
            let (view, scenes, title) = try await exported(id, scene: query.scene, tag: query.tag, at: query.at)
            let files = await pictureFiles(drawnIn: scenes, of: id)
            let drawn: [UInt8]?
            do {
                // One render among the panels' (the same bound: a contact sheet is no larger than a big panel).
                drawn = try await renderer.panels.ifAdmitted {
                    try await renderer.contactSheet(scenes, of: view, title: title, width: width, pictureFiles: files)
                }
            } catch let error as RenderError where error.code == .outOfRange {
                throw APIError(.badRequest, error.message)
            } catch {
                throw APIError(.internal, "cannot draw the contact sheet of \(title): \(error)")
            }
            guard let bytes = drawn else {
                throw APIError(
                    .busy, "the daemon is already drawing \(renderer.panels.capacity) panels; ask again in a moment")
            }
            var response = Response.bytes(Data(bytes), contentType: "image/png")
            response.headers[.contentDisposition] = Self.attachment(title + " contact sheet", extension: "png")
            return response
        }
    }

    /// The project's view (now, or at the version `at` names), the scenes
    /// exported (all, or the one `scene` names by id; with `tag`, only their
    /// shots carrying it) and its title.
    private func exported(_ id: DocumentID, scene: String?, tag: String?, at: String?) async throws -> (ProjectView, [SceneView], String) {
        let view = try await lookup.projectDocument(id, at: at).document.view
        let name = try await lookup.projectRecord(id).name
        let title =
            [view.title, name].compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.first { !$0.isEmpty }
            ?? "Untitled"
        var scenes = view.scenes
        if let scene {
            guard let sceneID = OpID(scene) else { throw APIError(.badRequest, "'\(scene)' is not a scene id") }
            guard let chosen = view.scenes.first(where: { $0.id == sceneID }) else {
                throw APIError(.notFound, "no visible scene \(sceneID) in \(id)")
            }
            scenes = [chosen]
        }
        return (view, try Self.shots(of: scenes, in: view, taggedWith: tag), title)
    }

    /// The one filter every export limited to a tag (`?tag=`, `"tag"`) goes
    /// through: the scenes with only their shots carrying it.
    /// - Throws: `APIError(.badRequest)` for a tag that could not be one,
    ///   `.notFound` when no shot exported carries it.
    static func shots(of scenes: [SceneView], in view: ProjectView, taggedWith text: String?) throws(APIError) -> [SceneView] {
        guard let text else { return scenes }
        let tag: String
        do { tag = try Tag.normalized(text) } catch { throw APIError(.badRequest, error.message) }
        let kept = view.scenes(scenes, withShotsTagged: tag)
        guard !kept.isEmpty else { throw APIError(.notFound, "no shot to export carries the tag '\(tag)'") }
        return kept
    }

    /// The files of the pictures the scenes' panels draw that the project may use here (the rest are outlined).
    private func pictureFiles(drawnIn scenes: [SceneView], of project: DocumentID) async -> [BlobHash: String] {
        await media.files(scenes.flatMap(\.shots).flatMap(PanelRenderer.pictures(drawnIn:)), of: project)
    }

    /// `attachment; filename="Night-Train.pdf"` (ASCII letters, digits, `.`, `_` and `-`; the
    /// title in UTF-8 as `filename*` too, for clients that read it).
    static func attachment(_ title: String, extension fileExtension: String) -> String {
        let safe = String(
            String.UnicodeScalarView(
                title.unicodeScalars.map { scalar in
                    scalar.isASCII
                        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                            || "._-".unicodeScalars.contains(scalar))
                        ? scalar : "-"
                }))
        let squeezed = safe.split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
        let name = (squeezed.isEmpty ? "storyboard" : String(squeezed.prefix(100))) + "." + fileExtension
        let encoded = (title + "." + fileExtension).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        return "attachment; filename=\"\(name)\"; filename*=UTF-8''\(encoded)"
    }

    /// Today's date in the daemon's time zone (`TZ`), as the sheet's header prints it (`2026-11-25`):
    /// the C library's calendar, which needs no locale data (the package's bare root has none).
    static func today(_ clock: WallClock) -> String {
        var seconds = time_t(clock.milliseconds / 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "" }
        let (year, month, day) = (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }
}
