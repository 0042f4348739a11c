import Foundation
import Logging
import NIOCore

/// A datagram received on the discovery port: its bytes and its source host.
struct ReceivedDatagram: Sendable {
    var bytes: [UInt8]
    /// The source IP as text, with `%interface` for a link-local IPv6 address.
    var host: String
}

/// Hands each datagram of a discovery socket to `LocalDiscovery` (through a
/// bounded stream: under a flood the oldest waiting datagrams are dropped,
/// as the kernel would drop them) and keeps the socket open whatever
/// arrives: a UDP socket's errors (an ICMP unreachable, say) concern one
/// packet, not the socket.
final class DiscoveryDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let sink: AsyncStream<ReceivedDatagram>.Continuation
    private let logger: Logger

    init(sink: AsyncStream<ReceivedDatagram>.Continuation, logger: Logger) {
        self.sink = sink
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        guard let host = Self.host(of: envelope.remoteAddress) else { return }
        // The receive buffer is a fixed 1 KiB, so this copy is bounded.
        sink.yield(ReceivedDatagram(bytes: Array(envelope.data.readableBytesView), host: host))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("discovery socket: \(error)")
    }

    /// The numeric host of a source address; a link-local IPv6 one keeps its
    /// interface (`fe80::1%eth0`), without which it cannot be dialed.
    static func host(of address: SocketAddress) -> String? {
        switch address {
        case .v4:
            return address.ipAddress
        case .v6(let v6):
            guard let ip = address.ipAddress else { return nil }
            let scope = v6.address.sin6_scope_id
            guard scope != 0 else { return ip }
            var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            guard if_indextoname(scope, &name) != nil else { return "\(ip)%\(scope)" }
            return "\(ip)%\(InterfaceAddress.string(name))"
        default:
            return nil
        }
    }
}

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension DiscoveryDatagramHandler: Sendable {}
