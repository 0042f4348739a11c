import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP request on the control socket, body already collected.
struct ControlRequest: Sendable {
    let method: HTTPMethod
    /// The path split at `/`, without the query: `/v1/peers/X` → ["v1", "peers", "X"].
    let segments: [String]
    let query: [String: String]
    let body: ByteBuffer
}

/// A response: a status and a JSON body (errors use `ControlError`'s shape).
struct ControlResponse: Sendable {
    let status: HTTPResponseStatus
    let body: Data
    var contentType = "application/json"

    static func json(_ value: some Encodable, status: HTTPResponseStatus = .ok) -> ControlResponse {
        do {
            return ControlResponse(status: status, body: try ControlJSON.encoder.encode(value))
        } catch {
            return ControlError(.internal, "cannot encode the response: \(error)").response
        }
    }
}

/// The one error shape of the control API: `{"error":{"code":"…","message":"…"}}`.
struct ControlError: Error, Encodable {
    enum Code: String, Encodable {
        case badRequest = "bad_request", notFound = "not_found", methodNotAllowed = "method_not_allowed"
        case conflict, tooLarge = "too_large", forbidden, `internal`
    }

    struct Body: Encodable {
        let code: Code
        let message: String
    }

    let error: Body

    init(_ code: Code, _ message: String) { error = Body(code: code, message: message) }

    var status: HTTPResponseStatus {
        switch error.code {
        case .badRequest: .badRequest
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .tooLarge: .payloadTooLarge
        case .forbidden: .forbidden
        case .internal: .internalServerError
        }
    }

    var response: ControlResponse {
        ControlResponse(status: status, body: (try? ControlJSON.encoder.encode(self)) ?? Data("{}".utf8))
    }
}

enum ControlJSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Decodes a request body, turning every failure into a 400 that says why.
    static func decode<Value: Decodable>(_ type: Value.Type, from body: ByteBuffer) throws(ControlError) -> Value {
        guard body.readableBytes > 0 else { throw ControlError(.badRequest, "the request needs a JSON body") }
        do {
            return try JSONDecoder().decode(type, from: Data(body.readableBytesView))
        } catch DecodingError.keyNotFound(let key, _) {
            throw ControlError(.badRequest, "missing field '\(key.stringValue)'")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ControlError(.badRequest, "field '\(path)' has the wrong type: \(context.debugDescription)")
        } catch {
            throw ControlError(.badRequest, "malformed JSON: \(error)")
        }
    }
}

/// HTTP/1.1 on a Unix socket: mode 0600, only the daemon's own user (checked
/// with SO_PEERCRED), bodies up to `maximumBodyBytes`, keep-alive.
final class ControlServer: Sendable {
    typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    let path: String
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let maximumBodyBytes: Int
    private let handler: Handler
    private let logger: Logger

    private init(
        path: String, channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        maximumBodyBytes: Int, handler: @escaping Handler, logger: Logger
    ) {
        self.path = path
        self.channel = channel
        self.maximumBodyBytes = maximumBodyBytes
        self.handler = handler
        self.logger = logger
    }

    /// Binds the socket (replacing a stale one) and restricts it to the owner.
    static func bind(
        path: String, group: any EventLoopGroup, maximumBodyBytes: Int = 1 << 20, logger: Logger,
        handler: @escaping Handler
    ) async throws -> ControlServer {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                }
            }
        guard chmod(path, 0o600) == 0 else {
            try? await channel.channel.close()
            throw ControlError(.internal, "cannot restrict \(path) to its owner (errno \(errno))")
        }
        return ControlServer(path: path, channel: channel, maximumBodyBytes: maximumBodyBytes, handler: handler, logger: logger)
    }

    /// Serves connections until the socket is closed.
    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    /// Stops accepting; connections in flight finish their request.
    func close() async {
        try? await channel.channel.close()
        unlink(path)
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        let uid = await peerUID(connection.channel)
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body = ByteBuffer()
                var tooLarge = false
                for try await part in inbound {
                    switch part {
                    case .head(let requestHead):
                        head = requestHead
                        body.clear()
                        tooLarge = false
                        if let length = requestHead.headers.first(name: "content-length").flatMap(Int.init), length > maximumBodyBytes {
                            tooLarge = true
                        }
                    case .body(var chunk):
                        if !tooLarge {
                            if body.readableBytes + chunk.readableBytes > maximumBodyBytes { tooLarge = true } else { body.writeBuffer(&chunk) }
                        }
                    case .end:
                        guard let requestHead = head else { continue }
                        let response: ControlResponse
                        if uid != getuid() {
                            logger.warning("refused a control request from uid \(uid.map(String.init) ?? "unknown")")
                            response = ControlError(.forbidden, "only the daemon's own user may use this socket").response
                        } else if tooLarge {
                            response = ControlError(.tooLarge, "the request body is larger than \(maximumBodyBytes) bytes").response
                        } else {
                            response = await handler(Self.request(requestHead, body: body))
                        }
                        let keepAlive = requestHead.isKeepAlive && !tooLarge
                        var headers = HTTPHeaders()
                        headers.add(name: "content-type", value: response.contentType)
                        headers.add(name: "content-length", value: String(response.body.count))
                        headers.add(name: "connection", value: keepAlive ? "keep-alive" : "close")
                        try await outbound.write(.head(HTTPResponseHead(version: requestHead.version, status: response.status, headers: headers)))
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        try await outbound.write(.end(nil))
                        if response.status.code >= 400 {
                            logger.info("\(requestHead.method) \(requestHead.uri) → \(response.status.code)")
                        }
                        head = nil
                        if !keepAlive { return }
                    }
                }
            }
        } catch {
            logger.debug("control connection ended: \(error)")
        }
    }

    private static func request(_ head: HTTPRequestHead, body: ByteBuffer) -> ControlRequest {
        let parts = head.uri.split(separator: "?", maxSplits: 1)
        let path = parts.first.map(String.init) ?? ""
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                let value = kv.count == 2 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
                query[key] = value
            }
        }
        let segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        return ControlRequest(method: head.method, segments: segments, query: query, body: body)
    }

    /// The uid of the process at the other end of a Unix socket (SO_PEERCRED).
    private func peerUID(_ channel: any Channel) async -> uid_t? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        return try? await future.get().uid
    }
}

/// `struct ucred` from <sys/socket.h> (Glibc hides it behind _GNU_SOURCE):
/// three 32-bit fields, the layout `getsockopt(SO_PEERCRED)` fills.
private struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
