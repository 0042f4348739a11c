import Foundation
import NIOCore
import NIOPosix
import StoryCore
import StoryIdentity
import StoryTLS
import Synchronization
import Testing

@testable import StorySync

/// A paired peer that speaks the protocol over real TLS on loopback, built
/// from the project's own frame codec and TLS types, and says whatever a
/// test wants it to: offers of documents it was never given, forged changes,
/// snapshots it may not send, absurd version vectors.
final class HostilePeer: Sendable {
    let identity: Identity
    private let received = Mutex<(messages: [Message], closed: Bool)>(([], false))
    private let outbound: NIOAsyncChannelOutboundWriter<Message>

    private init(identity: Identity, outbound: NIOAsyncChannelOutboundWriter<Message>) {
        self.identity = identity
        self.outbound = outbound
    }

    /// Connects to `port` as `identity`, says Hello, and runs `body`; the
    /// connection is closed when it returns.
    static func session<T: Sendable>(
        to port: Int, as identity: Identity, _ body: @Sendable (HostilePeer) async throws -> T
    ) async throws -> T {
        let context = try TLSContext(identity: identity)
        let handshake = SyncNode.group.next().makePromise(of: TLSPeer.self)
        let channel = try await ClientBootstrap(group: SyncNode.group)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TLSHandler(context: context, isServer: false, handshakePromise: handshake))
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MessageDecoder()))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MessageEncoder()))
                    return try NIOAsyncChannel<Message, Message>(wrappingChannelSynchronously: channel)
                }
            }
        _ = try await handshake.futureResult.get()
        return try await channel.executeThenClose { inbound, outbound in
            let peer = HostilePeer(identity: identity, outbound: outbound)
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound { peer.received.withLock { $0.messages.append(message) } }
                    } catch {}
                    peer.received.withLock { $0.closed = true }
                    return nil
                }
                try await peer.send(.hello(version: Message.protocolVersion, name: "hostile", capabilities: []))
                try await peer.expect("the daemon's hello") { if case .hello = $0 { true } else { false } }
                let result = try await body(peer)
                group.cancelAll()
                return result
            }
        }
    }

    func send(_ message: Message) async throws {
        try await outbound.write(message)
    }

    /// Sends changes of a document as one batch.
    func send(_ changes: [EncodedChange], of document: DocumentID) async throws {
        try await send(.changes(document: document, batch: ChangeBatch.encode(changes)[...]))
    }

    var messages: [Message] { received.withLock { $0.messages } }
    var isClosed: Bool { received.withLock { $0.closed } }

    /// Waits (at most `timeout`) for a message matching `predicate`.
    @discardableResult
    func expect(_ what: String, timeout: Duration = .seconds(10), _ predicate: (Message) -> Bool) async throws -> Message {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = messages.first(where: predicate) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for \(what); received: \(messages.map(\.summary))")
        throw CancellationError()
    }

    /// Waits for an Error with `code`, then for the daemon to close the connection.
    func expectRefusal(_ code: SyncError.Code, closing: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expect("an error \(code)") { if case .error(code.rawValue, _) = $0 { true } else { false } }
        if closing {
            let deadline = ContinuousClock.now + .seconds(10)
            while !isClosed && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(isClosed, "the daemon kept the connection open after \(code)", sourceLocation: sourceLocation)
        }
    }

    /// Whether any Changes or Snapshot of `document` arrived.
    func received(anythingOf document: DocumentID) -> Bool {
        messages.contains {
            switch $0 {
            case .changes(document, _), .snapshot(document, _, _): true
            default: false
            }
        }
    }

    /// The changes of `document` that arrived, decoded.
    func changes(of document: DocumentID) throws -> [(EncodedChange, Change)] {
        try messages.flatMap { message -> [(EncodedChange, Change)] in
            guard case .changes(document, let batch) = message else { return [] }
            return try ChangeBatch.decode(batch)
        }
    }
}
