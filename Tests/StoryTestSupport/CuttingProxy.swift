package import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of a node's listener that cuts (or,
/// with `stall`, holds: nothing more passes, the connection stays open) its
/// first connection after a given number of bytes from the target (the
/// middle of a TLS record, of a frame, of a batch), then refuses
/// connections until `open()`, then passes everything through. A cut at a
/// byte count, not at a moment, so a test of "cut mid-history" cuts in the
/// middle however fast the machine is.
package final class CuttingProxy: Sendable {
    private struct State {
        var forwarded = 0
        var isCut = false
        var isOpen = false
        var channels: [any Channel] = []
    }

    private let state = Mutex(State())
    private let cutAfter: Int
    private let stalls: Bool
    private let server: any Channel

    /// The port to dial instead of the target's.
    package let port: Int

    package init(to targetPort: Int, cutAfter bytes: Int, stall: Bool = false, group: any EventLoopGroup) async throws {
        cutAfter = bytes
        stalls = stall
        let box = Box()
        server = try await ServerBootstrap(group: group)
            .childChannelInitializer { inbound in
                guard let proxy = box.proxy else { return inbound.close() }
                return proxy.connect(inbound, to: targetPort, group: group)
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = server.localAddress?.port ?? 0
        box.proxy = self
    }

    /// Whether the first connection was cut.
    package var isCut: Bool { state.withLock { $0.isCut } }

    /// Passes connections through from now on.
    package func open() { state.withLock { $0.isOpen = true } }

    /// Cuts the connections passing now (a stalled one, say), as `close`
    /// does, but keeps listening: connections made later are refused until
    /// `open()`.
    package func cut() async {
        let channels = state.withLock { state in
            state.isCut = true
            defer { state.channels = [] }
            return state.channels
        }
        for channel in channels { try? await channel.close() }
    }

    package func close() async {
        let channels = state.withLock { $0.channels }
        for channel in channels { try? await channel.close() }
        try? await server.close()
    }

    private func connect(_ inbound: any Channel, to port: Int, group: any EventLoopGroup) -> EventLoopFuture<Void> {
        let refuse = state.withLock { $0.isCut && !$0.isOpen }
        guard !refuse else { return inbound.close() }
        return ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).flatMap { outbound in
            self.state.withLock { $0.channels += [inbound, outbound] }
            let towardsTarget = Forwarder(to: outbound, stalls: false, count: nil)
            let towardsClient = Forwarder(to: inbound, stalls: self.stalls, count: { [self] bytes in self.forward(bytes) })
            // Both handlers are in place before the inbound channel is
            // registered (this runs in its initializer), so nothing it reads is missed.
            return outbound.pipeline.addHandler(towardsClient).flatMap {
                inbound.pipeline.addHandler(towardsTarget)
            }
        }.flatMapError { _ in inbound.close() }
    }

    /// Counts bytes from the target: how many of `bytes` may pass (all of
    /// them until the limit; the rest of a read that crosses it is held back
    /// and the cut made). A read may be large (a busy machine lets the socket
    /// fill, and one read then takes 64 KiB): it is split at the limit, so
    /// the cut comes at the same byte however the bytes were read.
    private func forward(_ bytes: Int) -> Int {
        state.withLock { state in
            if state.isOpen { return bytes }
            if state.isCut { return 0 }
            let allowed = min(bytes, cutAfter - state.forwarded)
            state.forwarded += allowed
            if allowed < bytes { state.isCut = true }
            return allowed
        }
    }

    private final class Box: @unchecked Sendable {
        // Set once, before the server accepts anything that would read it.
        var proxy: CuttingProxy?
    }
}

/// Writes what one side reads to the other side; closes both when `count`
/// says to cut, or when either side closes.
private final class Forwarder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel
    private let stalls: Bool
    private let count: (@Sendable (Int) -> Int)?

    init(to partner: any Channel, stalls: Bool, count: (@Sendable (Int) -> Int)?) {
        self.partner = partner
        self.stalls = stalls
        self.count = count
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard let count else { return partner.writeAndFlush(buffer, promise: nil) }
        let allowed = count(buffer.readableBytes)
        if allowed > 0, let passing = buffer.getSlice(at: buffer.readerIndex, length: allowed) {
            partner.writeAndFlush(passing, promise: nil)
        }
        guard allowed < buffer.readableBytes else { return }
        // Past the limit. Stalled: nothing more passes, the connection stays
        // open. Cut: closed, once what passed is written.
        guard !stalls else { return }
        context.close(promise: nil)
        partner.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
