import CoreMetrics
import NIOCore
import Synchronization

/// Bytes a connection carried, as counted below TLS (what the network sees).
package final class ByteCounts: Sendable {
    private let counts = Mutex<(sent: Int, received: Int, peer: SyncMetrics.PeerBytes?)>((0, 0, nil))

    package init() {}

    package var sent: Int { counts.withLock { $0.sent } }
    package var received: Int { counts.withLock { $0.received } }

    func add(sent: Int = 0, received: Int = 0) {
        counts.withLock {
            $0.sent += sent
            $0.received += received
            if sent > 0 { $0.peer?.sent.increment(by: Int64(sent)) }
            if received > 0 { $0.peer?.received.increment(by: Int64(received)) }
        }
    }

    /// Counts this connection's bytes, those so far (the handshake) included,
    /// in the peer's metrics too, once the handshake has said who it is.
    func attribute(to peer: SyncMetrics.PeerBytes) {
        counts.withLock {
            guard $0.peer == nil else { return }
            $0.peer = peer
            peer.sent.increment(by: Int64($0.sent))
            peer.received.increment(by: Int64($0.received))
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
        let bytes = unwrapInboundIn(data).readableBytes
        counts.add(received: bytes)
        SyncMetrics.receivedBytes.increment(by: Int64(bytes))
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data).readableBytes
        counts.add(sent: bytes)
        SyncMetrics.sentBytes.increment(by: Int64(bytes))
        context.write(data, promise: promise)
    }
}

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension ByteCountingHandler: Sendable {}
