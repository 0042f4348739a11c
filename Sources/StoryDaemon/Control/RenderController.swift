import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryRender
import StoryStore

/// `projects/{id}/shots/{shot}/render`.
struct RenderController: Sendable {
    let lookup: ResourceLookup
    let name: String
    let renderer: PanelRenderService

    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/shots/:shot/render") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let shotText = try context.parameter("shot")
            guard let shotID = OpID(shotText) else { throw APIError(.badRequest, "'\(shotText)' is not a shot id") }
            let query = try request.decodeQuery(API.RenderQuery.self)
            var format = API.RenderFormat.default
            if let text = query.format {
                guard let named = API.RenderFormat(rawValue: text.lowercased()) else {
                    throw APIError(.badRequest, "format must be png, svg or pdf, not '\(text)'")
                }
                format = named
            }
            let width = try Self.whole("width", query.width, API.RenderFormat.widths, default: API.RenderFormat.defaultWidth, unit: " pixels")
            let onion = try Self.whole("onion", query.onion, API.RenderFormat.onionCounts, default: 0)
            let view = try await lookup.projectDocument(id, at: query.at).document.view
            guard let shot = view.shot(shotID) else { throw APIError(.notFound, "no visible shot \(shotID) in \(id)") }
            // Only the pictures this panel draws, and only those the project may use here (the rest are outlined).
            let files = await media.files(PanelRenderer.pictures(drawnIn: shot), of: id)
            let rendered: [UInt8]?
            do {
                rendered = try await renderer.panels.ifAdmitted {
                    try await renderer.render(shot, in: view, as: PanelFormat(format), width: width, onion: onion, pictureFiles: files)
                }
            } catch let error as RenderError where error.code == .outOfRange {
                throw APIError(.badRequest, error.message)
            } catch {
                throw APIError(.internal, "cannot render shot \(shot.label): \(error)")
            }
            guard let bytes = rendered else {
                throw APIError(
                    .busy, "the daemon is already drawing \(renderer.panels.capacity) panels; ask again in a moment")
            }
            return .bytes(Data(bytes), contentType: format.contentType)
        }
    }

    /// A whole number query parameter within `range` (absent: `fallback`).
    static func whole(_ name: String, _ value: Int?, _ range: ClosedRange<Int>, default fallback: Int, unit: String = "") throws(APIError) -> Int {
        guard let value else { return fallback }
        guard range.contains(value) else {
            let problem = "must be a whole number from \(range.lowerBound) to \(range.upperBound)\(unit), not '\(value)'"
            throw APIError(.badRequest, field: name, problem: problem, message: "\(name) \(problem)")
        }
        return value
    }
}

extension PanelFormat {
    /// The renderer's format for the API's.
    init(_ format: API.RenderFormat) {
        switch format {
        case .png: self = .png
        case .svg: self = .svg
        case .pdf: self = .pdf
        }
    }
}
