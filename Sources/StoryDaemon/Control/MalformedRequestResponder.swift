import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import StoryAPI

/// Answers bytes that are not HTTP in the API's error shape (a JSON 400)
/// and closes the connection; Hummingbird alone would send an empty 400.
/// Sits after the HTTP decoder, so the parser's error passes here first.
final class MalformedRequestResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        logger.info("malformed HTTP on the control socket: \(error)")
        let body = (try? API.encoder.encode(APIError(.badRequest, "malformed HTTP request: \(error)"))) ?? Data()
        var head = HTTPResponse(status: .badRequest)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        // Close once the answer is on the socket (a plain close could drop it).
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension MalformedRequestResponder: Sendable {}
