import NIOCore
import Synchronization

/// Bytes a connection carried, as counted below TLS (what the network sees).
public final class ByteCounts: Sendable {
    private let counts = Mutex<(sent: Int, received: Int)>((0, 0))

    public init() {}

    public var sent: Int { counts.withLock { $0.sent } }
    public var received: Int { counts.withLock { $0.received } }

    func add(sent: Int = 0, received: Int = 0) {
        counts.withLock {
            $0.sent += sent
            $0.received += received
        }
    }
}

/// Counts the raw bytes of a connection (first in the pipeline, under TLS).
final class ByteCountingHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let counts: ByteCounts

    init(_ counts: ByteCounts) {
        self.counts = counts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        counts.add(received: unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        counts.add(sent: unwrapOutboundIn(data).readableBytes)
        context.write(data, promise: promise)
    }
}
