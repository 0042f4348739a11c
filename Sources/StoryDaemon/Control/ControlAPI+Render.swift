import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// `projects/{id}/shots/{shot}/render`.
extension ControlAPI {
    func addRenderRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/shots/:shot/render") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let shotText = try context.parameter("shot")
            guard let shotID = OpID(shotText) else { throw APIError(.badRequest, "'\(shotText)' is not a shot id") }
            var onion = 0
            if let text = request.query["onion"] {
                guard let value = Int(text), (0...10).contains(value) else { throw APIError(.badRequest, "onion must be 0...10") }
                onion = value
            }
            let view = try await store.project(id).view
            guard let shot = view.shot(shotID) else { throw APIError(.notFound, "no visible shot \(shotID) in \(id)") }
            return .bytes(Data(ShotRenderer.svg(of: shot, in: view, onion: onion).utf8), contentType: "image/svg+xml")
        }
    }
}
