import Foundation
import NIOCore
import NIOPosix
import StoryCore
import StoryIdentity
import StoryTestSupport
import Synchronization
import Testing

@testable import StoryTLS

/// TLS against the `openssl` command-line tool as an independent peer, over
/// real sockets on 127.0.0.1.
@Suite(.serialized, .requires("openssl")) struct OpenSSLPeerTests {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// A key and self-signed Ed25519 certificate made by the openssl tool.
    struct OpenSSLIdentity {
        let directory: String
        var key: String { directory + "/key.pem" }
        var certificate: String { directory + "/cert.pem" }

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-openssl-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            _ = try await programOutput(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ed25519", "-keyout", key, "-out", certificate, "-days", "2", "-nodes",
                    "-subj", "/CN=openssl-peer",
                ])
        }

        /// The peer id, from the DER the openssl tool writes.
        var peerID: PeerID {
            get async throws {
                let der = directory + "/cert.der"
                _ = try await programOutput("/usr/bin/openssl", ["x509", "-in", certificate, "-outform", "DER", "-out", der])
                return PeerID(certificateDER: [UInt8](try Data(contentsOf: URL(fileURLWithPath: der))))
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Handshake outcomes, shared with the event loop.
    final class Outcomes: Sendable {
        let results = Mutex<[Result<TLSPeer, any Error>]>([])
    }

    /// Our TLS server on 127.0.0.1; records each connection's handshake outcome.
    final class Server: Sendable {
        let channel: any Channel
        private let outcomesBox: Outcomes

        init(identity: Identity) async throws {
            let context = try TLSContext(identity: identity)
            let outcomes = Outcomes()
            channel = try await ServerBootstrap(group: OpenSSLPeerTests.group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let promise = channel.eventLoop.makePromise(of: TLSPeer.self)
                        promise.futureResult.whenComplete { result in outcomes.results.withLock { $0.append(result) } }
                        try channel.pipeline.syncOperations.addHandler(
                            TLSHandler(context: context, isServer: true, handshakePromise: promise, handshakeTimeout: .seconds(5)))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            outcomesBox = outcomes
        }

        var port: Int { channel.localAddress!.port! }

        /// Waits (bounded) for the next handshake outcome.
        func nextOutcome() async throws -> Result<TLSPeer, any Error> {
            for _ in 0..<200 {
                if let first = outcomesBox.results.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return first }
                try await Task.sleep(for: .milliseconds(25))
            }
            throw TLSError(.closed, "no handshake outcome within 5 s")
        }

        func close() async throws { try await channel.close() }
    }

    func sClient(_ port: Int, _ extra: [String]) async throws -> String {
        try await programOutput(
            "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)"] + extra, input: "", timeout: .seconds(10),
            includingErrors: true)
    }

    @Test func aConfiguredKindOfPeerCompletesTheHandshakeWithALPN() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let server = try await Server(identity: try Identity.generate())
        let output = try await sClient(
            server.port, ["-tls1_3", "-alpn", "storyteller/1", "-cert", peer.certificate, "-key", peer.key])
        let outcome = try await server.nextOutcome()
        #expect(try outcome.get().peerID == (try await peer.peerID))
        #expect(output.contains("TLSv1.3"))
        #expect(output.contains("ALPN protocol: storyteller/1"))
        try await server.close()
    }

    @Test func tls12IsRefused() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let server = try await Server(identity: try Identity.generate())
        _ = try await sClient(server.port, ["-tls1_2", "-alpn", "storyteller/1", "-cert", peer.certificate, "-key", peer.key])
        let outcome = try await server.nextOutcome()
        #expect(throws: TLSError.self) { try outcome.get() }
        try await server.close()
    }

    @Test func aClientWithoutACertificateIsRefused() async throws {
        let server = try await Server(identity: try Identity.generate())
        _ = try await sClient(server.port, ["-tls1_3", "-alpn", "storyteller/1"])
        let outcome = try await server.nextOutcome()
        #expect(throws: TLSError.self) { try outcome.get() }
        try await server.close()
    }

    @Test func aClientSpeakingAnotherProtocolIsRefused() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let server = try await Server(identity: try Identity.generate())
        let output = try await sClient(server.port, ["-tls1_3", "-alpn", "http/1.1", "-cert", peer.certificate, "-key", peer.key])
        let outcome = try await server.nextOutcome()
        #expect(throws: TLSError.self) { try outcome.get() }
        #expect(output.contains("no application protocol"), "the promised alert: \(output)")
        try await server.close()
    }

    /// docs/protocol.md: a client that offers no ALPN at all gets the same fatal alert.
    @Test func aClientWithoutALPNGetsTheNoApplicationProtocolAlert() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let server = try await Server(identity: try Identity.generate())
        let output = try await sClient(server.port, ["-tls1_3", "-cert", peer.certificate, "-key", peer.key])
        let outcome = try await server.nextOutcome()
        #expect(throws: TLSError.self) { try outcome.get() }
        #expect(output.contains("no application protocol"), "the promised alert: \(output)")
        try await server.close()
    }

    /// Our client against `openssl s_server`, which requires a client certificate.
    func connect(toOpenSSLServer arguments: [String], peer: OpenSSLIdentity) async throws -> Result<TLSPeer, any Error> {
        // A free port: bind, read it, release it.
        let probe = try await ServerBootstrap(group: Self.group).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress!.port!
        try await probe.close()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments =
            [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", peer.certificate, "-key", peer.key,
                "-Verify", "1", "-naccept", "1", "-quiet",
            ] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = Pipe()
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let context = try TLSContext(identity: try Identity.generate())
        for _ in 0..<100 {
            let promise = Self.group.next().makePromise(of: TLSPeer.self)
            let connected = try? await ClientBootstrap(group: Self.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            TLSHandler(context: context, isServer: false, handshakePromise: promise, handshakeTimeout: .seconds(5)))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            guard let connected else {
                promise.fail(TLSError(.closed, "not listening yet"))
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            let result = await Result { try await promise.futureResult.get() }
            try? await connected.close()
            return result
        }
        throw TLSError(.closed, "openssl s_server never listened")
    }

    @Test func ourClientCompletesTheHandshakeWithOpenSSLServer() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let result = try await connect(toOpenSSLServer: ["-tls1_3", "-alpn", "storyteller/1"], peer: peer)
        #expect(try result.get().peerID == (try await peer.peerID))
    }

    @Test func ourClientRefusesATLS12Server() async throws {
        let peer = try await OpenSSLIdentity()
        defer { peer.remove() }
        let result = try await connect(toOpenSSLServer: ["-tls1_2", "-alpn", "storyteller/1"], peer: peer)
        #expect(throws: TLSError.self) { try result.get() }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
