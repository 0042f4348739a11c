import Synchronization

/// Messages read from a peer and not processed yet, between a session's
/// reader (which only decodes) and its processor (which stores). The
/// processor takes everything that has arrived at once, so a burst of many
/// small documents (a new machine catching up on a library) is stored in a
/// few transactions instead of one each. Bounded in bytes: the reader waits
/// while it is full, so a fast peer never grows it without end (and TCP's
/// own flow control then slows the peer).
final class InboundQueue: Sendable {
    /// Why the reader stopped.
    enum End: Sendable {
        /// The peer closed the connection.
        case closed
        /// It sent bytes that are not a message.
        case malformed(SyncError)
        /// The read failed (reset, cancelled).
        case failed(String)
    }

    private struct State {
        var messages: [(message: Message, bytes: Int)] = []
        var head = 0
        var bytes = 0
        var end: End?
        var reader: CheckedContinuation<Void, Never>?
        var processor: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    /// The reader waits while this many bytes are queued.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A message's size as the queue counts it (its payload, roughly).
    static func size(of message: Message) -> Int {
        switch message {
        case .changes(_, let batch): 64 + batch.count
        case .snapshot(_, _, let bytes), .snapshotPart(_, _, _, _, let bytes): 64 + bytes.count
        default: 64
        }
    }

    /// Adds a message; waits while the queue is full (returns at once when it ended).
    func push(_ message: Message) async {
        let size = Self.size(of: message)
        while true {
            // A continuation is resumed after the lock is let go: resuming takes
            // the task's status lock, which a cancellation handler (`finish`)
            // holds while it waits for this lock (a deadlock seen in CI).
            let (full, processor): (Bool, CheckedContinuation<Void, Never>?) = state.withLock { state in
                guard state.end == nil else { return (false, nil) }
                guard state.bytes < capacity || state.bytes == 0 else { return (true, nil) }
                state.messages.append((message, size))
                state.bytes += size
                defer { state.processor = nil }
                return (false, state.processor)
            }
            processor?.resume()
            guard full else { return }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool in
                        guard state.end == nil, state.bytes >= capacity, !Task.isCancelled else { return true }
                        state.reader = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                finish(.failed("cancelled"))
            }
            if Task.isCancelled { return }
        }
    }

    /// The reader stopped (the first reason counts); wakes the processor.
    func finish(_ end: End) {
        let (reader, processor) = state.withLock { state in
            if state.end == nil { state.end = end }
            defer {
                state.reader = nil
                state.processor = nil
            }
            return (state.reader, state.processor)
        }
        reader?.resume()
        processor?.resume()
    }

    /// Everything queued (up to `maximumBytes`, at least one message); an
    /// empty array with the reason once the reader stopped and all was taken.
    func take(maximumBytes: Int) async -> (messages: [Message], end: End?) {
        while true {
            var wakeReader: CheckedContinuation<Void, Never>?
            let taken: (messages: [Message], end: End?)? = state.withLock { state in
                if state.head < state.messages.count {
                    var messages: [Message] = []
                    var bytes = 0
                    while state.head < state.messages.count, messages.isEmpty || bytes + state.messages[state.head].bytes <= maximumBytes {
                        messages.append(state.messages[state.head].message)
                        bytes += state.messages[state.head].bytes
                        // The slot lets go of what it held: a queue that never quite
                        // drains kept every taken message (and its bytes) alive until
                        // 1,024 had gone through (a stream of 4 MiB snapshot parts:
                        // hundreds of megabytes).
                        state.messages[state.head].message = .ping(0)
                        state.head += 1
                    }
                    state.bytes -= bytes
                    if state.head == state.messages.count {
                        state.messages.removeAll(keepingCapacity: true)
                        state.head = 0
                    } else if state.head > 1024 {
                        state.messages.removeFirst(state.head)
                        state.head = 0
                    }
                    if let reader = state.reader, state.bytes < capacity {
                        state.reader = nil
                        wakeReader = reader  // resumed once the lock is let go (see `push`)
                    }
                    return (messages, nil)
                }
                if let end = state.end { return ([], end) }
                return nil
            }
            wakeReader?.resume()
            if let taken { return taken }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool in
                        guard state.head >= state.messages.count, state.end == nil, !Task.isCancelled else { return true }
                        state.processor = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                finish(.failed("cancelled"))
            }
        }
    }
}
