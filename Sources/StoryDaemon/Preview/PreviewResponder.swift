import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import StoryAPI
import StoryCore
import StoryStore
import Synchronization

/// The HTTP answers of one preview listener: under `/TOKEN/`, the page
/// (`index.html`), its panels (`panels/SHOT.png`), sounds (`sounds/BLOB`)
/// and server-sent events (`events`), for one project only. Anything without
/// the token, or for another host than the loopback address, is a 403.
struct PreviewResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let project: DocumentID
    let token: PreviewToken
    let source: SlideshowSource
    /// The open event streams, ended when the preview closes.
    let streams: PreviewStreams
    let logger: Logger

    /// The panels' width in the preview.
    static let panelWidth = API.Slideshow.defaultWidth

    func respond(to request: Request, context: Context) async throws -> Response {
        guard Self.isLoopbackHost(request.head.authority) else {
            return Self.text(.forbidden, "forbidden")
        }
        let path = request.uri.path
        guard path.hasPrefix("/") else { return Self.text(.notFound, "not found") }
        let parts = path.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, token.matches(first) else { return Self.text(.forbidden, "forbidden") }
        guard request.method == .get || request.method == .head else {
            var response = Self.text(.methodNotAllowed, "only GET")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        guard parts.count == 2 else {
            // `/TOKEN` → `/TOKEN/`, so the page's relative paths resolve under the token.
            return Response(status: .permanentRedirect, headers: [.location: "/\(token)/", .cacheControl: "no-store"])
        }
        let rest = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        do {
            switch rest {
            case "", "index.html":
                return try await page()
            case "events":
                return events()
            case _ where rest.hasPrefix("panels/") && rest.hasSuffix(".png"):
                return try await panel(String(rest.dropFirst("panels/".count).dropLast(".png".count)))
            case _ where rest.hasPrefix("sounds/"):
                return try await sound(String(rest.dropFirst("sounds/".count)), request: request)
            default:
                return Self.text(.notFound, "not found")
            }
        } catch let error as StoreError where error.code == .notFound {
            return Self.text(.notFound, "this project is gone")
        } catch {
            logger.warning("preview of \(project): \(request.uri.path.replacingOccurrences(of: token.description, with: "…")): \(error)")
            return Self.text(.internalServerError, "the daemon could not answer this")
        }
    }

    private func page() async throws -> Response {
        let (page, _) = try await source.page(of: project, media: .live)
        var html = page.head()
        for (index, slide) in page.slides.enumerated() {
            let (before, after) = page.slide(index, panel: "panels/\(slide.shot).png")
            html += before + (slide.sound.map { "sounds/\($0.hash)" } ?? "") + after
        }
        html += page.tail()
        var response = Response.bytes(Data(html.utf8), contentType: "text/html; charset=utf-8")
        response.headers[.contentSecurityPolicy] = page.contentSecurityPolicy
        Self.harden(&response)
        return response
    }

    private func panel(_ text: String) async throws -> Response {
        guard let id = OpID(text) else { return Self.text(.notFound, "not found") }
        let view = try await source.store.project(project).view
        guard let shot = view.shot(id) else { return Self.text(.notFound, "no such shot") }
        var response = Response.bytes(Data(try await source.panel(shot, in: view, of: project, width: Self.panelWidth)), contentType: "image/png")
        Self.harden(&response)
        return response
    }

    private func sound(_ text: String, request: Request) async throws -> Response {
        guard let hash = BlobHash(hex: text) else { return Self.text(.notFound, "not found") }
        // Only a sound a shot of this project plays: the listener serves this project and nothing else.
        let view = try await source.store.project(project).view
        guard let media = view.shots.compactMap(\.sound).first(where: { $0.hash == hash }), await source.isUsable(media, in: project),
            let handle = FileHandle(forReadingAtPath: source.path(of: hash))
        else { return Self.text(.notFound, "no such sound here") }
        // A browser seeks in a sound (a shot entered halfway) by asking for a range of it.
        let size = UInt64(media.byteCount)
        guard size > 0 else {
            try? handle.close()
            return Self.text(.notFound, "no such sound here")
        }
        let range: ByteRange
        switch ByteRange.parse(request.headers[.range], size: size) {
        case .whole:
            range = ByteRange(first: 0, last: size - 1)
        case .part(let part):
            range = part
        case .unsatisfiable:
            try? handle.close()
            var refused = Self.text(.rangeNotSatisfiable, "that range is past the end of the sound")
            refused.headers[.contentRange] = "bytes */\(size)"
            return refused
        }
        let isPart = range.first > 0 || range.count < size
        if isPart { try handle.seek(toOffset: range.first) }
        var headers: HTTPFields = [.contentType: media.type.mimeType, .contentLength: String(range.count), .acceptRanges: "bytes"]
        if isPart { headers[.contentRange] = range.contentRange(of: size) }
        var response = Response(
            status: isPart ? .partialContent : .ok, headers: headers,
            body: ResponseBody { writer in
                defer { try? handle.close() }
                var left = range.count
                while left > 0, let data = try handle.read(upToCount: Int(min(left, 1 << 20))), !data.isEmpty {
                    left -= UInt64(data.count)
                    try await writer.write(ByteBuffer(bytes: data))
                }
                try await writer.finish(nil)
            })
        Self.harden(&response)
        return response
    }

    /// Server-sent events: `shot` (a panel changed: `{"shot": ID, "version": N}`),
    /// `reload` (shots added, removed, moved or retitled), `closed` (the preview ended).
    private func events() -> Response {
        let project = project
        let source = source
        let streams = streams
        var response = Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                let (stream, continuation) = AsyncStream<PreviewStreams.Signal>.makeStream(bufferingPolicy: .bufferingNewest(64))
                guard let key = streams.add(continuation) else {
                    // The preview is closing.
                    try await writer.write(ByteBuffer(string: "event: closed\ndata: {}\n\n"))
                    try await writer.finish(nil)
                    return
                }
                defer { streams.remove(key) }
                // Subscribed before the first page is read, so no change falls between.
                let changes = await source.store.events()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in changes {
                            switch event {
                            case .documentChanged(project, _, _), .blobsReferenced(project), .trashChanged(project):
                                continuation.yield(.changed)
                            default:
                                continue
                            }
                        }
                    }
                    group.addTask {
                        // A comment now and then: a client that left is noticed when it fails to arrive.
                        while !Task.isCancelled {
                            try await Task.sleep(for: .seconds(10))
                            continuation.yield(.keepAlive)
                        }
                    }
                    var previous = try? await source.page(of: project, media: .live)
                    var version = 0
                    try await writer.write(ByteBuffer(string: "retry: 1000\n: storyteller preview\n\n"))
                    for await signal in stream {
                        switch signal {
                        case .keepAlive:
                            try await writer.write(ByteBuffer(string: ": still here\n\n"))
                        case .closed:
                            try await writer.write(ByteBuffer(string: "event: closed\ndata: {}\n\n"))
                            group.cancelAll()
                            return
                        case .changed:
                            guard let now = try? await source.page(of: project, media: .live) else {
                                try await writer.write(ByteBuffer(string: "event: reload\ndata: {}\n\n"))
                                continue
                            }
                            let before = previous
                            previous = now
                            guard let before, before.page.slides == now.page.slides, before.page.title == now.page.title else {
                                try await writer.write(ByteBuffer(string: "event: reload\ndata: {}\n\n"))
                                continue
                            }
                            for shot in now.view.shots where before.view.shot(shot.id) != shot {
                                version += 1
                                let data = #"{"shot":"\#(shot.id)","version":\#(version)}"#
                                try await writer.write(ByteBuffer(string: "event: shot\ndata: \(data)\n\n"))
                            }
                        }
                    }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            })
        Self.harden(&response)
        return response
    }

    /// Headers every answer carries: not cached (the token is in the URL),
    /// not sniffed, not framed, no referrer.
    static func harden(_ response: inout Response) {
        response.headers[.cacheControl] = "no-store"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var response = Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
        harden(&response)
        return response
    }

    /// Whether a `Host` names this machine's loopback (`127.0.0.1:PORT`,
    /// `localhost:PORT`): a page of another site that made the browser
    /// resolve its name to 127.0.0.1 (DNS rebinding) is refused even with
    /// the token.
    static func isLoopbackHost(_ host: String?) -> Bool {
        guard let host else { return false }
        let name: Substring
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
            name = host[..<colon]
        } else {
            name = host[...]
        }
        return ["127.0.0.1", "localhost", "[::1]"].contains(name.lowercased())
    }
}

/// The event streams a preview has open, so closing the preview ends them at once.
final class PreviewStreams: Sendable {
    enum Signal: Sendable { case changed, keepAlive, closed }

    private struct State {
        var next = 0
        var open: [Int: AsyncStream<Signal>.Continuation] = [:]
        var isClosed = false
    }
    private let state = Mutex(State())

    /// Registers a stream; nil once the preview is closing.
    func add(_ continuation: AsyncStream<Signal>.Continuation) -> Int? {
        state.withLock { state in
            guard !state.isClosed else { return nil }
            state.next += 1
            state.open[state.next] = continuation
            return state.next
        }
    }

    func remove(_ key: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: key) }
    }

    /// Tells every stream that the preview ended; no new one opens.
    func close() {
        let open = state.withLock { state in
            state.isClosed = true
            return state.open.values
        }
        for continuation in open {
            continuation.yield(.closed)
            continuation.finish()
        }
    }
}
