import Synchronization

/// Publishes events to every subscriber's `AsyncStream` (the store's
/// changes, the peer manager's connections). A subscriber that stops
/// iterating is dropped at once; one that falls behind by more than
/// `buffer` events loses the oldest, unless it subscribed losslessly (a
/// consumer whose work depends on every event, such as the peer manager
/// pushing each change: a folder shared at once publishes thousands).
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<Event>.Continuation] = [:]
        var next = 0
    }

    private let state = Mutex(State())
    private let buffer: Int

    package init(buffer: Int = 1024) { self.buffer = buffer }

    /// A stream of the events published from now on (it ends at `finish`).
    package func subscribe(lossless: Bool = false) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: lossless ? .unbounded : .bufferingNewest(buffer))
        let key = state.withLock { state -> Int in
            defer { state.next += 1 }
            state.subscribers[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Sends an event to every subscriber.
    package func publish(_ event: Event) {
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.yield(event) }
    }

    /// Ends every stream subscribed so far (at shutdown; a store outlives
    /// its peer manager in tests, and a new one subscribes again).
    package func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
