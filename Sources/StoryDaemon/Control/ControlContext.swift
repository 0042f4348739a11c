import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import StoryAPI

/// The request context of the control API: Hummingbird's core storage, the
/// connection (for SO_PEERCRED) and the API's own JSON coders.
struct ControlContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The Unix-socket connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Request bodies larger than this are refused with 413 (points of one
    /// stroke are at most 100,000 × 3 numbers, well below).
    var maxUploadSize: Int { ControlAPI.maximumBodyBytes }

    /// A path parameter, percent-decoded (a folder path may hold `/` as `%2F`).
    @inline(never)
    func parameter(_ name: String) throws(APIError) -> String {
        guard let raw = parameters.get(name) else { throw APIError(.badRequest, "missing path parameter '\(name)'") }
        return raw.removingPercentEncoding ?? raw
    }
}

extension Request {
    /// The query parameters, percent-decoded (`+` is a space); the last of a repeated name wins.
    var query: [String: String] {
        guard let text = uri.query, !text.isEmpty else { return [:] }
        var query: [String: String] = [:]
        // Any bytes may come here: no part may be assumed present ("x?=", "?", "&&").
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let rawKey = kv.first, !rawKey.isEmpty else { continue }
            let key = String(rawKey).removingPercentEncoding ?? String(rawKey)
            query[key] = kv.count == 2 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
        }
        return query
    }

    /// The query decoded into one of the API's query types with
    /// Hummingbird's URL-encoded form decoder (what `decodeQuery` uses); a
    /// value of the wrong type is a 400 naming the parameter and the value
    /// given (`width must be a whole number, not 'wide'`).
    @inline(never)
    func decodeQuery<Query: Decodable>(_ type: Query.Type) throws(APIError) -> Query {
        let text = uri.query ?? ""
        do {
            return try URLEncodedFormDecoder().decode(Query.self, from: text)
        } catch let error as DecodingError {
            guard case .typeMismatch(let expected, _) = error else { throw API.apiError(error) }
            // The decoder's coding path stops at the container: the parameter
            // is the one that fails to decode alone.
            let culprit = text.split(separator: "&").first { pair in
                (try? URLEncodedFormDecoder().decode(Query.self, from: String(pair))) == nil
            }
            guard let culprit, let name = culprit.split(separator: "=", maxSplits: 1).first else { throw API.apiError(error) }
            let key = String(name).removingPercentEncoding ?? String(name)
            let kind =
                switch expected {
                case is Bool.Type: "true or false"
                case is Int.Type: "a whole number"
                case is Double.Type: "a number"
                default: "one value"
                }
            let given = query[key].map { ", not '\($0)'" } ?? ""
            throw APIError(.badRequest, field: key, problem: "must be \(kind)\(given)", message: "\(key) must be \(kind)\(given)")
        } catch {
            // A name given twice, or bytes that are not percent-encoded text.
            throw APIError(.badRequest, "the query cannot be read: \(error)")
        }
    }

    // Not inlined (nor `decode` below): inlined into route closures, typed
    // throws in these async helpers crash the Swift 6.3.1 optimizer (LLVM's
    // coroutine splitting, release builds only).

    /// The body, up to the context's limit. A larger one is read to its end
    /// and dropped, then refused (413): the client, still sending, gets the
    /// answer instead of a connection reset.
    @inline(never)
    func bodyData(_ context: ControlContext) async throws -> Data {
        var collected = ByteBuffer()
        var isTooLarge = false
        for try await chunk in body {
            guard !isTooLarge else { continue }  // drained, not kept
            if collected.readableBytes + chunk.readableBytes > context.maxUploadSize {
                isTooLarge = true
                collected = ByteBuffer()
            } else {
                collected.writeImmutableBuffer(chunk)
            }
        }
        guard !isTooLarge else { throw APIError(.tooLarge, "the request body is larger than \(context.maxUploadSize) bytes") }
        return Data(collected.readableBytesView)
    }

    /// The body decoded as `Value`; every failure a 400 that names the field.
    @inline(never)
    func decode<Value: Decodable>(_ type: Value.Type, context: ControlContext) async throws -> Value {
        try API.decode(type, from: try await bodyData(context))
    }

    /// The body decoded as `Value`, or nil when there is none (optional bodies).
    @inline(never)
    func decodeIfPresent<Value: Decodable>(_ type: Value.Type, context: ControlContext) async throws -> Value? {
        let data = try await bodyData(context)
        return data.isEmpty ? nil : try API.decode(type, from: data)
    }
}

extension Response {
    /// A JSON answer from the API's types.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        do {
            let data = try API.encoder.encode(value)
            return Response(
                status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        } catch {
            return APIError(.internal, "cannot encode the answer: \(error)").response
        }
    }

    /// An answer of any type whose bytes are at hand.
    static func bytes(_ data: Data, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An answer sent as it is made, chunk by chunk (chunked encoding), until
    /// the stream ends or the client leaves; `endOnShutdown` ends a long
    /// stream (events) when the daemon shuts down rather than waiting for it.
    static func streaming(
        _ chunks: AsyncStream<Data>, contentType: String, status: HTTPResponse.Status = .ok, endOnShutdown: (@Sendable () -> Void)? = nil
    ) -> Response {
        Response(
            status: status, headers: [.contentType: contentType, .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                try await withGracefulShutdownHandler {
                    for await chunk in chunks { try await writer.write(ByteBuffer(bytes: chunk)) }
                } onGracefulShutdown: {
                    endOnShutdown?()
                }
                try await writer.finish(nil)
            })
    }
}

extension APIError {
    /// The error as an answer, with `Allow` on a 405 and `Retry-After` on a 503 (busy).
    var response: Response {
        let data = (try? API.encoder.encode(self)) ?? Data(#"{"error":{"code":"internal","message":"unencodable error"}}"#.utf8)
        var headers: HTTPFields = [.contentType: "application/json"]
        if !allowed.isEmpty { headers[.allow] = allowed.joined(separator: ", ") }
        if error.code == .busy { headers[.retryAfter] = "1" }
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
