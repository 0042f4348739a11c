import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import StoryAPI
import StoryCore

/// `projects/{id}/previews` and `previews[/{id}[/hold]]`: live slideshow
/// previews on a loopback port (see `PreviewRegistry`).
struct PreviewsController: Sendable {
    let lookup: ResourceLookup
    let previews: PreviewRegistry

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/previews") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            return .json(try await previews.open(id), status: .created)
        }
        routes.get("previews") { _, _ in
            .json(previews.list())
        }
        routes.get("previews/:preview/hold") { _, context in
            let id = try context.parameter("preview")
            guard let preview = previews.preview(id), preview.port != 0 else { throw APIError(.notFound, "no open preview \(id)") }
            guard !preview.held else { throw APIError(.conflict, "preview \(id) is held by another client already") }
            let previews = self.previews
            // Held from when the answer's body runs (a client gone before
            // that leaves the preview unheld, and the lease closes it). One
            // line now, then one every half second while the preview is
            // open: a client that left is noticed at the next line or the one
            // after (the first may still be taken by the kernel), which
            // cannot be written, and its preview closes.
            return Response(
                status: .ok, headers: [.contentType: "application/x-ndjson", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    guard var current = try? previews.hold(id) else {
                        try await writer.finish(nil)
                        return
                    }
                    defer { previews.close(id) }
                    // At shutdown the control server waits for its answers to
                    // end: the preview closes then, and with it this stream.
                    try await withGracefulShutdownHandler {
                        while true {
                            try await writer.write(ByteBuffer(bytes: try API.encoder.encode(current) + Data("\n".utf8)))
                            try await Task.sleep(for: .milliseconds(500))
                            guard let now = previews.preview(id) else { break }
                            current = now
                        }
                    } onGracefulShutdown: {
                        previews.close(id)
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
