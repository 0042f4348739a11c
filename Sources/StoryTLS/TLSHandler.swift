package import NIOCore
package import StoryCore
import StoryIdentity

/// What the handshake established: who the peer is.
package struct TLSPeer: Sendable, Hashable {
    package let peerID: PeerID
    package let certificateDER: [UInt8]
}

/// A NIO handler that drives a `TLSEngine`: ciphertext from the network goes
/// in, plaintext goes up the pipeline; plaintext written goes out encrypted.
///
/// Requires TLS 1.3, ALPN `storyteller/1` and exactly one peer certificate;
/// completes `handshakePromise` with the peer's identity, or fails it and
/// closes the channel (also after `handshakeTimeout`). Writes made before the
/// handshake completes are held and sent after it.
package final class TLSHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private let engine: TLSEngine
    private let handshakePromise: EventLoopPromise<TLSPeer>
    private let handshakeTimeout: TimeAmount
    private var timeout: Scheduled<Void>?
    private var held: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var isStarted = false
    private var isClosing = false

    package init(
        context: TLSContext, isServer: Bool, handshakePromise: EventLoopPromise<TLSPeer>,
        handshakeTimeout: TimeAmount = .seconds(10)
    ) throws(TLSError) {
        engine = try TLSEngine(context: context, isServer: isServer)
        self.handshakePromise = handshakePromise
        self.handshakeTimeout = handshakeTimeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    /// A channel that never became active (a failed dial) still removes its
    /// handlers: the handshake promise must not be left unfulfilled.
    package func handlerRemoved(context: ChannelHandlerContext) {
        timeout?.cancel()
        handshakePromise.fail(TLSError(.closed, "the connection closed before the TLS handshake completed"))
        for (_, promise) in held { promise?.fail(TLSError(.closed, "the connection closed")) }
        held = []
    }

    package func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !isStarted else { return }
        isStarted = true
        let promise = handshakePromise
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(in: handshakeTimeout) {
            promise.fail(TLSError(.handshakeFailed, "no TLS handshake within the timeout"))
            channel.close(promise: nil)
        }
        advance(context)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { engine.receive($0) }
        advance(context)
    }

    /// Moves the handshake on, then passes decrypted data up.
    private func advance(_ context: ChannelHandlerContext) {
        do {
            if !engine.isHandshakeComplete {
                let done = try engine.handshake()
                sendCiphertext(context, promise: nil, flush: true)
                guard done else { return }
                try verify(context)
            }
            var plaintext = context.channel.allocator.buffer(capacity: 0)
            let closed = try engine.readPlaintext(into: &plaintext)
            if plaintext.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(plaintext)) }
            sendCiphertext(context, promise: nil, flush: true)
            if closed { context.close(promise: nil) }
        } catch {
            fail(context, error)
        }
    }

    private func verify(_ context: ChannelHandlerContext) throws(TLSError) {
        guard engine.protocolVersion == tls13Version else {
            throw TLSError(.handshakeFailed, "the peer did not negotiate TLS 1.3")
        }
        guard engine.negotiatedALPN == storytellerALPN else {
            throw TLSError(.wrongProtocol, "the peer does not speak \(storytellerALPN)")
        }
        guard let certificate = engine.peerCertificateDER, engine.extraPeerCertificates == 0 else {
            throw TLSError(.noPeerCertificate, "the peer must present exactly one certificate")
        }
        timeout?.cancel()
        handshakePromise.succeed(TLSPeer(peerID: PeerID(certificateDER: certificate), certificateDER: certificate))
        let pending = held
        held = []
        for (buffer, promise) in pending { write(context, plaintext: buffer, promise: promise) }
        if !pending.isEmpty { context.flush() }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        guard engine.isHandshakeComplete else {
            held.append((buffer, promise))
            return
        }
        write(context, plaintext: buffer, promise: promise)
    }

    private func write(_ context: ChannelHandlerContext, plaintext: ByteBuffer, promise: EventLoopPromise<Void>?) {
        do {
            try plaintext.withUnsafeReadableBytes { (bytes) throws(TLSError) in try engine.writePlaintext(bytes) }
            sendCiphertext(context, promise: promise, flush: false)
        } catch {
            promise?.fail(error)
            fail(context, error)
        }
    }

    package func flush(context: ChannelHandlerContext) {
        if engine.isHandshakeComplete { context.flush() }
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if engine.isHandshakeComplete && !isClosing && mode == .all {
            isClosing = true
            engine.shutdown()  // close_notify
            sendCiphertext(context, promise: nil, flush: true)
        }
        context.close(mode: mode, promise: promise)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        handshakePromise.fail(TLSError(.closed, "the connection closed before the TLS handshake completed"))
        for (_, promise) in held { promise?.fail(TLSError(.closed, "the connection closed")) }
        held = []
        context.fireChannelInactive()
    }

    private func sendCiphertext(_ context: ChannelHandlerContext, promise: EventLoopPromise<Void>?, flush: Bool) {
        let ciphertext = engine.takeCiphertext()
        if ciphertext.isEmpty {
            promise?.succeed()
        } else {
            context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: ciphertext)), promise: promise)
        }
        if flush { context.flush() }
    }

    private func fail(_ context: ChannelHandlerContext, _ error: any Error) {
        timeout?.cancel()
        handshakePromise.fail(error)
        sendCiphertext(context, promise: nil, flush: true)  // an alert, if OpenSSL made one
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}

/// `TLS1_3_VERSION` as a Swift constant (a macro in OpenSSL's headers).
let tls13Version: Int32 = 0x0304

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension TLSHandler: Sendable {}
