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
            // Pictures inlined as data: URIs (up to 32 MiB each; larger ones are outlined).
            var images: [BlobHash: String] = [:]
            let drawn = ([shot] + (onion > 0 ? view.shots : [])).flatMap(\.layers).compactMap(\.image)
            for image in drawn where images[image.hash] == nil && image.byteCount <= 32 << 20 {
                guard case .complete? = await blobs.record(image.hash)?.state,
                    let data = FileManager.default.contents(atPath: blobs.completePath(image.hash))
                else { continue }
                images[image.hash] = "data:\(image.type.mimeType);base64,\(data.base64EncodedString())"
            }
            return .bytes(Data(ShotRenderer.svg(of: shot, in: view, onion: onion, images: images).utf8), contentType: "image/svg+xml")
        }
    }
}
