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
    let media: ProjectMedia

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/shots/:shot/render") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let shotText = try context.parameter("shot")
            guard let shotID = OpID(shotText) else { throw APIError(.badRequest, "'\(shotText)' is not a shot id") }
            var format = API.RenderFormat.default
            if let text = request.query["format"] {
                guard let named = API.RenderFormat(rawValue: text.lowercased()) else {
                    throw APIError(.badRequest, "format must be png, svg or pdf, not '\(text)'")
                }
                format = named
            }
            let width = try integer("width", in: request, API.RenderFormat.widths, default: API.RenderFormat.defaultWidth, unit: " pixels")
            let onion = try integer("onion", in: request, API.RenderFormat.onionCounts, default: 0)
            let view = try await lookup.projectDocument(id, at: request.query["at"]).document.view
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
    private func integer(
        _ name: String, in request: Request, _ range: ClosedRange<Int>, default fallback: Int, unit: String = ""
    ) throws(APIError) -> Int {
        guard let text = request.query[name] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw APIError(.badRequest, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)\(unit), not '\(text)'")
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
