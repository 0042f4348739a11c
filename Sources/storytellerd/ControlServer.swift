import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP request on the control socket, body already collected.
struct ControlRequest: Sendable {
    let method: HTTPMethod
    /// The path split at `/`, without the query: `/v1/peers/X` → ["v1", "peers", "X"].
    let segments: [String]
    let query: [String: String]
    let body: ByteBuffer
    /// The Accept header, if any (the event stream is SSE for `text/event-stream`).
    var accept: String? = nil
}

/// A response: a status and a JSON body (errors use `ControlError`'s shape),
/// or a stream of chunks (sent with chunked encoding until the stream ends,
/// the client goes away or the server closes).
struct ControlResponse: Sendable {
    var status: HTTPResponseStatus
    let body: Data
    var contentType = "application/json"
    var stream: AsyncStream<Data>?
    /// Extra response headers (`Allow` on a 405).
    var headers: [(name: String, value: String)] = []

    static func streaming(_ stream: AsyncStream<Data>, contentType: String) -> ControlResponse {
        ControlResponse(status: .ok, body: Data(), contentType: contentType, stream: stream)
    }

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
        /// A change to a document this daemon may only read.
        case readOnly = "read_only"
        /// The disk is full.
        case insufficientStorage = "insufficient_storage"
    }

    struct Body: Encodable {
        let code: Code
        let message: String
    }

    let error: Body
    /// For 405: the methods the path has (sent as `Allow`, RFC 9110).
    var allowed: [String] = []

    private enum CodingKeys: String, CodingKey { case error }

    init(_ code: Code, _ message: String, allowed: [String] = []) {
        error = Body(code: code, message: message)
        self.allowed = allowed
    }

    var status: HTTPResponseStatus {
        switch error.code {
        case .badRequest: .badRequest
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .tooLarge: .payloadTooLarge
        case .forbidden, .readOnly: .forbidden
        case .internal: .internalServerError
        case .insufficientStorage: .insufficientStorage
        }
    }

    var response: ControlResponse {
        var response = ControlResponse(status: status, body: (try? ControlJSON.encoder.encode(self)) ?? Data("{}".utf8))
        if !allowed.isEmpty { response.headers.append(("allow", allowed.joined(separator: ", "))) }
        return response
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

/// HTTP/1.1 on a Unix socket: mode 0600 and only the daemon's own user, or
/// 0660 and also the members of one group (checked with SO_PEERCRED), bodies
/// up to `maximumBodyBytes`, keep-alive, streamed responses for events.
final class ControlServer: Sendable {
    typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    let path: String
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let maximumBodyBytes: Int
    private let access: SocketAccess
    private let handler: Handler
    private let logger: Logger
    /// Streams being sent: `close()` ends them (cleanly) so shutdown does not wait for them.
    private let streaming = Mutex<[ObjectIdentifier: AsyncStream<Void>.Continuation]>([:])

    private init(
        path: String, channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        maximumBodyBytes: Int, access: SocketAccess, handler: @escaping Handler, logger: Logger
    ) {
        self.path = path
        self.channel = channel
        self.maximumBodyBytes = maximumBodyBytes
        self.access = access
        self.handler = handler
        self.logger = logger
    }

    /// Binds the socket (replacing a stale one) and restricts it to the owner
    /// (or the owner and a group).
    static func bind(
        path: String, group: any EventLoopGroup, maximumBodyBytes: Int = 1 << 20, access: SocketAccess = .owner, logger: Logger,
        handler: @escaping Handler
    ) async throws -> ControlServer {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: access == .owner ? 0o700 : 0o750])
            if case .group(_, let gid) = access, chown(directory, uid_t.max, gid) != 0 {
                throw ControlError(.internal, "cannot give \(directory) to the socket group (errno \(errno))")
            }
        }
        // A socket file another daemon still answers on is not ours to replace.
        if isAnswering(path) {
            throw ControlError(.conflict, "another daemon is serving the control socket \(path); give this one its own --socket")
        }
        let channel = try await ServerBootstrap(group: group)
            // Bursts of CLI calls (scripts, completions) must not be refused.
            .serverChannelOption(.backlog, value: 1024)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { child in
                child.eventLoop.makeCompletedFuture {
                    // Malformed HTTP is answered by `serve` in the API's JSON error shape.
                    try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                }
            }
        var restricted = chmod(path, access == .owner ? 0o600 : 0o660) == 0
        if case .group(_, let gid) = access { restricted = restricted && chown(path, uid_t.max, gid) == 0 }
        guard restricted else {
            let code = errno
            try? await channel.channel.close()
            throw ControlError(.internal, "cannot set the owner and mode of \(path) (errno \(code))")
        }
        return ControlServer(
            path: path, channel: channel, maximumBodyBytes: maximumBodyBytes, access: access, handler: handler, logger: logger)
    }

    /// Whether something accepts connections on a Unix socket at `path` (a
    /// stale socket file of a daemon that died refuses them).
    private static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
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

    /// Stops accepting and ends the streams; other connections in flight
    /// finish their request.
    func close() async {
        try? await channel.channel.close()
        unlink(path)
        for stop in streaming.withLock({ Array($0.values) }) { stop.finish() }
    }

    /// The daemon's own user, or (with a socket group) a member of that group.
    private func mayUse(_ credentials: PeerCredentials?) -> Bool {
        guard let credentials else { return false }
        if credentials.uid == getuid() { return true }
        guard case .group(_, let gid) = access else { return false }
        if credentials.gid == gid { return true }
        // Supplementary groups are not in SO_PEERCRED: the caller's process lists
        // them in /proc; without /proc (hidepid), the user database does.
        if let status = try? String(contentsOfFile: "/proc/\(credentials.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") })
        {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).contains { gid_t($0) == gid }
        }
        // getpwuid_r: connections are served concurrently, and getpwuid's static buffer is shared.
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard getpwuid_r(credentials.uid, &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil else {
                return false
            }
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(entry.pw_name, entry.pw_gid, &groups, &count) >= 0 else { return false }
            return groups.prefix(Int(count)).contains(gid)
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        let credentials = await peerCredentials(connection.channel)
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body = ByteBuffer()
                var tooLarge = false
                do {
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
                        if !mayUse(credentials) {
                            logger.warning("refused a control request from uid \(credentials.map { String($0.uid) } ?? "unknown")")
                            response = ControlError(.forbidden, "only the daemon's own user may use this socket").response
                        } else if tooLarge {
                            response = ControlError(.tooLarge, "the request body is larger than \(maximumBodyBytes) bytes").response
                        } else {
                            response = await handler(Self.request(requestHead, body: body))
                        }
                        if let stream = response.stream {
                            try await send(
                                stream, on: connection.channel, to: outbound, head: requestHead, status: response.status,
                                contentType: response.contentType)
                            return
                        }
                        let keepAlive = requestHead.isKeepAlive && !tooLarge
                        var headers = HTTPHeaders()
                        headers.add(name: "content-type", value: response.contentType)
                        headers.add(name: "content-length", value: String(response.body.count))
                        headers.add(name: "connection", value: keepAlive ? "keep-alive" : "close")
                        for header in response.headers { headers.add(name: header.name, value: header.value) }
                        try await outbound.write(.head(HTTPResponseHead(version: requestHead.version, status: response.status, headers: headers)))
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        try await outbound.write(.end(nil))
                        if response.status.code >= 400 {
                            logger.info("\(requestHead.method) \(requestHead.uri) → \(response.status.code)")
                        }
                        head = nil
                        if !keepAlive {
                            await Self.finishOutput(connection.channel)
                            return
                        }
                    }
                }
                } catch let error as HTTPParserError {
                    // Not HTTP: answer once in the API's error shape, then close.
                    logger.info("malformed HTTP on the control socket: \(error)")
                    let response = ControlError(.badRequest, "malformed HTTP request: \(error)").response
                    var headers = HTTPHeaders()
                    headers.add(name: "content-type", value: response.contentType)
                    headers.add(name: "content-length", value: String(response.body.count))
                    headers.add(name: "connection", value: "close")
                    try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                    try await outbound.write(.end(nil))
                    await Self.finishOutput(connection.channel)
                }
            }
        } catch {
            logger.debug("control connection ended: \(error)")
        }
    }

    /// Sends a stream with chunked encoding until it ends or the connection
    /// closes (the client left, or `close()`), whichever comes first.
    private func send(
        _ stream: AsyncStream<Data>, on channel: any Channel, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        head: HTTPRequestHead, status: HTTPResponseStatus, contentType: String
    ) async throws {
        let key = ObjectIdentifier(channel)
        let (stop, stopper) = AsyncStream<Void>.makeStream()
        streaming.withLock { $0[key] = stopper }
        // The client going away ends it too (a future's `get` would not heed cancellation).
        channel.closeFuture.whenComplete { _ in stopper.finish() }
        defer { streaming.withLock { $0[key] = nil } }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: contentType)
        headers.add(name: "cache-control", value: "no-cache")
        headers.add(name: "connection", value: "close")
        headers.add(name: "transfer-encoding", value: "chunked")
        try await outbound.write(.head(HTTPResponseHead(version: head.version, status: status, headers: headers)))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await chunk in stream {
                    do {
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: chunk))))
                    } catch {
                        return
                    }
                }
            }
            group.addTask { for await _ in stop {} }
            await group.next()
            group.cancelAll()
        }
        try? await outbound.write(.end(nil))
        await Self.finishOutput(channel)
    }

    /// Shuts the output down once every pending write is on the socket. A plain
    /// close would drop what the kernel has not taken yet: a large answer
    /// (a project of several megabytes) would arrive cut off.
    private static func finishOutput(_ channel: any Channel) async {
        try? await channel.close(mode: .output).get()
    }

    private static func request(_ head: HTTPRequestHead, body: ByteBuffer) -> ControlRequest {
        // Any bytes may come here: no part may be assumed present ("/v1/x?=", "?", "&&").
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let rawKey = kv.first, !rawKey.isEmpty else { continue }
                let key = String(rawKey).removingPercentEncoding ?? String(rawKey)
                let value = kv.count == 2 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
                query[key] = value
            }
        }
        let segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        return ControlRequest(method: head.method, segments: segments, query: query, body: body, accept: head.headers.first(name: "accept"))
    }

    /// The process at the other end of a Unix socket (SO_PEERCRED).
    private func peerCredentials(_ channel: any Channel) async -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        return try? await future.get()
    }
}

/// `struct ucred` from <sys/socket.h> (Glibc hides it behind _GNU_SOURCE):
/// three 32-bit fields, the layout `getsockopt(SO_PEERCRED)` fills.
private struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
