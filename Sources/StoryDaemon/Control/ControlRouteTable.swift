import Hummingbird
import Synchronization

/// Every route of the control API, as it is registered: the method and the
/// path template below `/v1` (`projects/{}/shares/{}`). The middleware reads
/// it to answer 405 with `Allow`; the documentation test compares it with
/// docs/openapi.json.
struct ControlRouteTable: Sendable {
    struct Route: Sendable, Hashable {
        let method: HTTPRequest.Method
        /// Below `/v1`, parameters as `{}`.
        let template: String
    }

    private(set) var routes: [Route] = []

    mutating func add(_ method: HTTPRequest.Method, _ template: String) {
        routes.append(Route(method: method, template: template))
    }

    /// The methods the most specific templates matching `path` have (a
    /// literal segment beats a parameter: `peers/pending` is that list, never
    /// a peer called "pending"); empty when no template matches.
    func methods(at path: String) -> [String] {
        let segments = path.split(separator: "/").map(String.init)
        guard segments.first == "v1" else { return [] }
        let below = Array(segments.dropFirst())
        let matching = routes.filter { Self.matches($0.template, below) }
        let specific = matching.map { Self.literalCount($0.template) }.max() ?? 0
        return Set(matching.filter { Self.literalCount($0.template) == specific }.map(\.method.rawValue)).sorted()
    }

    static func matches(_ template: String, _ path: [String]) -> Bool {
        let parts = template.split(separator: "/")
        return parts.count == path.count && zip(parts, path).allSatisfy { $0 == "{}" || $0 == $1 }
    }

    static func literalCount(_ template: String) -> Int { template.split(separator: "/").filter { $0 != "{}" }.count }
}

/// Registers routes on the router and in the table at once, so the two
/// never disagree. Templates are written `projects/:project/shares/:peer`.
struct ControlRouteBuilder {
    typealias Handler = @Sendable (Request, ControlContext) async throws -> Response

    let router: Router<ControlContext>
    private(set) var table = ControlRouteTable()

    init(router: Router<ControlContext>) { self.router = router }

    mutating func on(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        let template = path.split(separator: "/").map { $0.hasPrefix(":") ? "{}" : String($0) }.joined(separator: "/")
        table.add(method, template)
        router.on(RouterPath("/v1/" + path), method: method, use: handler)
    }

    mutating func get(_ path: String, _ handler: @escaping Handler) { on(.get, path, handler) }
    mutating func post(_ path: String, _ handler: @escaping Handler) { on(.post, path, handler) }
    mutating func put(_ path: String, _ handler: @escaping Handler) { on(.put, path, handler) }
    mutating func patch(_ path: String, _ handler: @escaping Handler) { on(.patch, path, handler) }
    mutating func delete(_ path: String, _ handler: @escaping Handler) { on(.delete, path, handler) }
}

/// The route table, filled once every route is registered.
final class SharedRouteTable: Sendable {
    private let table = Mutex(ControlRouteTable())

    func set(_ table: ControlRouteTable) { self.table.withLock { $0 = table } }

    func methods(at path: String) -> [String] { table.withLock { $0.methods(at: path) } }
}
