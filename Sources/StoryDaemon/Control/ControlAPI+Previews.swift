import Foundation
import Hummingbird
import NIOCore
import StoryAPI
import StoryCore

/// `projects/{id}/previews` and `previews[/{id}[/hold]]`: live slideshow
/// previews on a loopback port (see `PreviewRegistry`).
extension ControlAPI {
    func addPreviewRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/previews") { _, context in
            let id = try await existingProject(try context.parameter("project"))
            return .json(try await previews.open(id), status: .created)
        }
        routes.get("previews") { _, _ in
            .json(previews.list())
        }
        routes.get("previews/:preview/hold") { _, context in
            let id = try context.parameter("preview")
            let preview = try previews.hold(id)
            let previews = self.previews
            // One line now, then one a second while the preview is open: a
            // client that left is noticed at the next line, which cannot be
            // written, and its preview closes.
            return Response(
                status: .ok, headers: [.contentType: "application/x-ndjson", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    defer { previews.close(id) }
                    var current: API.Preview? = preview
                    while let line = current {
                        try await writer.write(ByteBuffer(bytes: try API.encoder.encode(line) + Data("\n".utf8)))
                        try await Task.sleep(for: .seconds(1))
                        current = previews.preview(id)
                    }
                    try await writer.finish(nil)
                })
        }
        routes.delete("previews/:preview") { _, context in
            let id = try context.parameter("preview")
            guard let closed = previews.close(id) else { throw APIError(.notFound, "no open preview \(id)") }
            return .json(closed)
        }
    }
}
