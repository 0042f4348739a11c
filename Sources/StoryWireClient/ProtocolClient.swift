package import NIOCore
import NIOPosix
package import StoryCore
package import StoryIdentity
package import StorySync
import StoryTLS
import Synchronization

/// One connection to a daemon that speaks the protocol without a session
/// state machine: it sends whatever it is told and keeps what it receives.
/// For the hostile-peer tests and `storyteller-bench hostile`, which need a
/// peer that breaks the rules on purpose (a module of its own: no daemon
/// links it).
package final class ProtocolClient: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// What arrived, and who waits for the next arrival (woken by it, by
    /// the close, or by their deadline; never by polling).
    private struct Received {
        var messages: [Message] = []
        var closed = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters cancelled before they were registered.
        var cancelled: Set<Int> = []
        var nextWaiter = 0
    }

    private let received = Mutex(Received())
    private let outbound: NIOAsyncChannelOutboundWriter<Message>

    private init(outbound: NIOAsyncChannelOutboundWriter<Message>) {
        self.outbound = outbound
    }

    /// Connects over TLS to `port` on 127.0.0.1 as `identity`, exchanges Hello,
    /// and runs `body`; the connection is closed when it returns.
    package static func session<T: Sendable>(
        to port: Int, as identity: Identity, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        helloVersion: UInt64 = Message.protocolVersion,
        _ body: @Sendable (ProtocolClient) async throws -> T
    ) async throws -> T {
        let context = try TLSContext(identity: identity)
        let handshake = group.next().makePromise(of: TLSPeer.self)
        let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(TLSHandler(context: context, isServer: false, handshakePromise: handshake))
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MessageDecoder()))
                try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(MessageEncoder()))
                return try NIOAsyncChannel<Message, Message>(wrappingChannelSynchronously: channel)
            }
        }
        _ = try await handshake.futureResult.get()
        return try await channel.executeThenClose { inbound, outbound in
            let client = ProtocolClient(outbound: outbound)
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound { client.arrived { $0.messages.append(message) } }
                    } catch {}
                    client.arrived { $0.closed = true }
                    return nil
                }
                try await client.send(.hello(version: helloVersion, name: "protocol client", capabilities: []))
                try await client.expect("the daemon's hello") { if case .hello = $0 { true } else { false } }
                let result = try await body(client)
                group.cancelAll()
                return result
            }
        }
    }

    package func send(_ message: Message) async throws {
        try await outbound.write(message)
    }

    /// Sends changes of a document as one batch.
    package func send(_ changes: [EncodedChange], of document: DocumentID) async throws {
        try await send(.changes(document: document, batch: ChangeBatch.encode(changes)[...]))
    }

    /// Everything received so far.
    package var messages: [Message] { received.withLock { $0.messages } }

    /// Whether the daemon closed the connection.
    package var isClosed: Bool { received.withLock { $0.closed } }

    /// Waits (at most `timeout`) for a message matching `predicate`.
    /// - Throws: `Failure` naming `what` and what did arrive.
    @discardableResult
    package func expect(_ what: String, timeout: Duration = .seconds(10), _ predicate: (Message) -> Bool) async throws -> Message {
        let deadline = ContinuousClock.now + timeout
        var seen = 0
        while true {
            let (messages, closed) = received.withLock { ($0.messages, $0.closed) }
            if let found = messages[seen...].first(where: predicate) { return found }
            seen = messages.count
            if closed || ContinuousClock.now >= deadline { break }
            await nextArrival(after: seen, until: deadline)
        }
        throw Failure(description: "no \(what) within \(timeout); received: \(messages.map(\.summary))")
    }

    /// Waits until the daemon has handled everything sent so far, and what
    /// that led it to send has arrived: a ping answered, then a second one
    /// sent only after, which the daemon reads after it finished the group
    /// of messages the first came in (and sends its pong after whatever
    /// that group made it send). A positive marker, never a sleep.
    package func settle() async throws {
        for nonce in [UInt64.random(in: 1...UInt64.max / 2), UInt64.random(in: UInt64.max / 2...UInt64.max)] {
            try await send(.ping(nonce))
            try await expect("the daemon's pong \(nonce)") { $0 == .pong(nonce) }
        }
    }

    /// Waits for the daemon to close the connection (at most `timeout`); whether it did.
    package func waitUntilClosed(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isClosed && ContinuousClock.now < deadline {
            await nextArrival(after: messages.count, until: deadline)
        }
        return isClosed
    }

    /// Records an arrival (a message, or the close) and wakes every waiter.
    private func arrived(_ change: (inout Received) -> Void) {
        let waiters = received.withLock { state in
            change(&state)
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once more than `count` messages arrived, the connection
    /// closed, or `deadline` passed.
    private func nextArrival(after count: Int, until deadline: ContinuousClock.Instant) async {
        let id = received.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline) }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let now = self.received.withLock { state -> Bool in
                            if state.messages.count > count || state.closed || state.cancelled.remove(id) != nil { return true }
                            state.waiters[id] = continuation
                            return false
                        }
                        if now { continuation.resume() }
                    }
                } onCancel: {
                    let waiter = self.received.withLock { state in
                        let waiter = state.waiters.removeValue(forKey: id)
                        if waiter == nil { state.cancelled.insert(id) }
                        return waiter
                    }
                    waiter?.resume()
                }
            }
            await group.next()
            group.cancelAll()
        }
        // A cancellation that came after the waiter was woken leaves nothing behind.
        received.withLock { _ = $0.cancelled.remove(id) }
    }

    /// Whether any Changes or Snapshot of `document` arrived.
    package func received(anythingOf document: DocumentID) -> Bool {
        messages.contains {
            switch $0 {
            case .changes(document, _), .snapshot(document, _, _), .snapshotPart(document, _, _, _, _): true
            default: false
            }
        }
    }

    /// The changes of `document` that arrived, decoded.
    package func changes(of document: DocumentID) throws -> [(EncodedChange, Change)] {
        try messages.flatMap { message -> [(EncodedChange, Change)] in
            guard case .changes(document, let batch) = message else { return [] }
            return try ChangeBatch.decode(batch)
        }
    }
}
