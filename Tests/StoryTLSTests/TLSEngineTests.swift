import COpenSSL
import NIOCore
import NIOEmbedded
import StoryCore
import StoryIdentity
import Testing

@testable import StoryTLS

@Suite struct TLSEngineTests {
    static let serverIdentity = try! Identity.generate()
    static let clientIdentity = try! Identity.generate()

    /// Moves ciphertext between two engines until neither produces any.
    func pump(_ a: TLSEngine, _ b: TLSEngine) {
        for _ in 0..<20 {
            let fromA = a.takeCiphertext()
            let fromB = b.takeCiphertext()
            if fromA.isEmpty && fromB.isEmpty { return }
            fromA.withUnsafeBytes { b.receive($0) }
            fromB.withUnsafeBytes { a.receive($0) }
            _ = try? a.handshake()
            _ = try? b.handshake()
        }
    }

    @Test func twoEnginesCompleteAMutualTLS13Handshake() throws {
        let client = try TLSEngine(context: TLSContext(identity: Self.clientIdentity), isServer: false)
        let server = try TLSEngine(context: TLSContext(identity: Self.serverIdentity), isServer: true)
        #expect(try client.handshake() == false)
        pump(client, server)
        #expect(client.isHandshakeComplete && server.isHandshakeComplete)
        #expect(client.protocolVersion == tls13Version)
        #expect(client.negotiatedALPN == "storyteller/1" && server.negotiatedALPN == "storyteller/1")
        #expect(client.peerCertificateDER.map { PeerID(certificateDER: $0) } == Self.serverIdentity.peerID)
        #expect(server.peerCertificateDER.map { PeerID(certificateDER: $0) } == Self.clientIdentity.peerID)
        #expect(client.extraPeerCertificates == 0 && server.extraPeerCertificates == 0)

        let message = Array("INT. LIGHTHOUSE - NIGHT".utf8)
        try message.withUnsafeBytes { try client.writePlaintext($0) }
        pump(client, server)
        var received = ByteBuffer()
        #expect(try server.readPlaintext(into: &received) == false)
        #expect(Array(received.readableBytesView) == message)

        server.shutdown()
        pump(client, server)
        var rest = ByteBuffer()
        #expect(try client.readPlaintext(into: &rest))
    }

    /// OpenSSL's error queue is per thread, shared by every connection on it:
    /// an error one connection (or any OpenSSL call) leaves there must not
    /// fail another connection's next call.
    @Test func anErrorOnOneConnectionLeavesAnotherUnaffected() throws {
        let client = try TLSEngine(context: TLSContext(identity: Self.clientIdentity), isServer: false)
        let server = try TLSEngine(context: TLSContext(identity: Self.serverIdentity), isServer: true)
        _ = try client.handshake()
        pump(client, server)
        #expect(client.isHandshakeComplete && server.isHandshakeComplete)

        // A second connection on this thread receives garbage and fails.
        let victim = try TLSEngine(context: TLSContext(identity: Self.serverIdentity), isServer: true)
        Array("not TLS at all\r\n\r\n".utf8).withUnsafeBytes { victim.receive($0) }
        #expect(throws: TLSError.self) { try victim.handshake() }
        // And a failing OpenSSL call leaves errors in the queue that nobody reads.
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01]
        garbage.withUnsafeBufferPointer { bytes in
            var pointer: UnsafePointer<UInt8>? = bytes.baseAddress
            #expect(d2i_X509(nil, &pointer, bytes.count) == nil)
        }
        #expect(ERR_peek_error() != 0, "the queue holds a stale error")

        // The healthy connection reads (nothing yet), writes and reads on.
        var nothing = ByteBuffer()
        #expect(try server.readPlaintext(into: &nothing) == false)
        #expect(nothing.readableBytes == 0)
        d2iGarbage()
        let message = Array("EXT. HARBOUR - DAWN".utf8)
        try message.withUnsafeBytes { try client.writePlaintext($0) }
        pump(client, server)
        d2iGarbage()
        var received = ByteBuffer()
        #expect(try server.readPlaintext(into: &received) == false)
        #expect(Array(received.readableBytesView) == message)
    }

    /// Leaves an ASN.1 decoding error in this thread's OpenSSL error queue.
    private func d2iGarbage() {
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01]
        garbage.withUnsafeBufferPointer { bytes in
            var pointer: UnsafePointer<UInt8>? = bytes.baseAddress
            _ = d2i_X509(nil, &pointer, bytes.count)
        }
    }

    @Test func garbageInsteadOfAHandshakeIsATypedError() throws {
        let server = try TLSEngine(context: TLSContext(identity: Self.serverIdentity), isServer: true)
        Array("GET / HTTP/1.1\r\nHost: storyteller\r\n\r\n".utf8).withUnsafeBytes { server.receive($0) }
        #expect(throws: TLSError.self) { try server.handshake() }
    }

    @Test func theHandlerHandshakesOnEmbeddedChannels() throws {
        let loop = EmbeddedEventLoop()
        let clientPromise = loop.makePromise(of: TLSPeer.self)
        let serverPromise = loop.makePromise(of: TLSPeer.self)
        let client = EmbeddedChannel(
            handler: try TLSHandler(context: TLSContext(identity: Self.clientIdentity), isServer: false, handshakePromise: clientPromise),
            loop: loop)
        let server = EmbeddedChannel(
            handler: try TLSHandler(context: TLSContext(identity: Self.serverIdentity), isServer: true, handshakePromise: serverPromise),
            loop: loop)
        _ = try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        _ = try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
        // Written before the handshake: held, then sent encrypted once it completes.
        let early = client.writeAndFlush(client.allocator.buffer(string: "hello from the client"))

        func shuttle() throws {
            for _ in 0..<20 {
                var moved = false
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    try server.writeInbound(bytes)
                    moved = true
                }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                    try client.writeInbound(bytes)
                    moved = true
                }
                if !moved { return }
            }
        }
        try shuttle()
        try early.wait()
        #expect(try clientPromise.futureResult.wait().peerID == Self.serverIdentity.peerID)
        #expect(try serverPromise.futureResult.wait().peerID == Self.clientIdentity.peerID)
        var received = ByteBuffer()
        while var part = try server.readInbound(as: ByteBuffer.self) { received.writeBuffer(&part) }
        #expect(received.getString(at: 0, length: received.readableBytes) == "hello from the client")
        try server.writeAndFlush(server.allocator.buffer(string: "and back")).wait()
        try shuttle()
        #expect(try client.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "and back")
        _ = try? client.finish()
        _ = try? server.finish()
    }

    @Test func theHandshakeTimesOut() throws {
        let loop = EmbeddedEventLoop()
        let promise = loop.makePromise(of: TLSPeer.self)
        let server = EmbeddedChannel(
            handler: try TLSHandler(
                context: TLSContext(identity: Self.serverIdentity), isServer: true, handshakePromise: promise,
                handshakeTimeout: .seconds(5)),
            loop: loop)
        _ = try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        loop.advanceTime(by: .seconds(6))
        #expect(throws: TLSError.self) { try promise.futureResult.wait() }
        #expect(!server.isActive)
    }
}
