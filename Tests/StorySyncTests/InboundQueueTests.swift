import Dispatch
import Foundation
import StoryCore
import Synchronization
import Testing

@testable import StorySync

/// The queue between a session's reader and its processor: groups, its
/// bound, its end, and cancellation racing a hand-over (a daemon once hung
/// in CI: a continuation was resumed under the queue's lock while a
/// cancellation handler, holding the task's status lock, waited for it).
@Suite struct InboundQueueTests {
    private static let document = DocumentID(high: 1, low: 2)

    /// A message the queue counts as `64 + count` bytes.
    private static func changes(_ count: Int, tag: UInt8 = 0) -> Message {
        .changes(document: document, batch: ArraySlice(repeating: tag, count: count))
    }

    private static func tags(_ messages: [Message]) -> [UInt8] {
        messages.compactMap { if case .changes(_, let batch) = $0 { batch.first } else { nil } }
    }

    @Test func whatArrivedIsTakenInOrderInGroupsOfAtMostTheBytesAsked() async {
        let queue = InboundQueue(capacity: 1 << 20)
        for tag in 0..<5 as Range<UInt8> { await queue.push(Self.changes(36, tag: tag)) }  // 100 bytes each
        let first = await queue.take(maximumBytes: 250)
        #expect(Self.tags(first.messages) == [0, 1] && first.end == nil)
        // Larger than asked alone: taken alone, never left behind.
        await queue.push(Self.changes(1000, tag: 5))
        let second = await queue.take(maximumBytes: 50)
        #expect(Self.tags(second.messages) == [2])
        let rest = await queue.take(maximumBytes: 1 << 20)
        #expect(Self.tags(rest.messages) == [3, 4, 5])
    }

    @Test func afterTheEndWhatWasQueuedIsStillTakenThenTheReason() async {
        let queue = InboundQueue(capacity: 1 << 20)
        await queue.push(Self.changes(10, tag: 7))
        queue.finish(.closed)
        queue.finish(.failed("later"))  // the first reason counts
        await queue.push(Self.changes(10, tag: 8))  // returns at once, dropped
        let taken = await queue.take(maximumBytes: 1 << 20)
        #expect(Self.tags(taken.messages) == [7] && taken.end == nil)
        let ended = await queue.take(maximumBytes: 1 << 20)
        guard case .closed? = ended.end else {
            Issue.record("ended by \(String(describing: ended.end))")
            return
        }
        #expect(ended.messages.isEmpty)
    }

    /// A full queue holds the reader until the processor takes: the message
    /// pushed while it was full is only ever in a later group.
    @Test func aFullQueueHoldsTheReaderUntilTheProcessorTakes() async {
        let queue = InboundQueue(capacity: 100)
        await queue.push(Self.changes(100, tag: 1))  // 164 bytes: full
        let reader = Task { await queue.push(Self.changes(1, tag: 2)) }
        let first = await queue.take(maximumBytes: 1 << 20)
        #expect(Self.tags(first.messages) == [1])
        await reader.value
        let second = await queue.take(maximumBytes: 1 << 20)
        #expect(Self.tags(second.messages) == [2])
    }

    /// A waiting processor cancelled while a message arrives, and a waiting
    /// reader cancelled while the processor takes, many times: every round
    /// ends (with the old order of resuming under the lock, some round hung
    /// with both threads waiting for each other's lock).
    @Test(.timeLimit(.minutes(10))) func cancellingAWaiterWhileItIsHandedSomethingNeverHangs() async {
        // A deadlock would hold the cooperative threads, and so every other
        // test. The watchdog looks at progress, not at the clock (a busy
        // machine's CPU-bound tests may hold both threads for minutes): only
        // when no round has finished for two minutes does it say so, on
        // standard error, and the run goes on (the time limit fails this test).
        let progress = Progress()
        let watchdog = DispatchSource.makeTimerSource(queue: .global())
        watchdog.schedule(deadline: .now() + 30, repeating: 30)
        watchdog.setEventHandler {
            if let stalled = progress.stalledSeconds(), stalled >= 120 {
                FileHandle.standardError.write(
                    Data("InboundQueueTests: no round of cancelling a waiter finished for \(stalled) s (a deadlock?)\n".utf8))
            }
        }
        watchdog.resume()
        defer { watchdog.cancel() }
        for round in 0..<3000 {
            let queue = InboundQueue(capacity: 64)
            let processor = Task { await queue.take(maximumBytes: 1 << 20) }
            await Task.yield()
            async let pushed: Void = queue.push(.ping(UInt64(round)))
            processor.cancel()
            await pushed
            let taken = await processor.value
            // Either it got the ping, or it ended (cancelled) and the ping is still there.
            if taken.messages.isEmpty {
                #expect(taken.end != nil)
            } else {
                #expect(taken.messages.count == 1)
            }

            let full = InboundQueue(capacity: 64)
            await full.push(.ping(0))  // 64 bytes: full
            let reader = Task { await full.push(.ping(1)) }
            await Task.yield()
            async let drained = full.take(maximumBytes: 1 << 20)
            reader.cancel()
            await reader.value
            #expect(await drained.messages.isEmpty == false)
            progress.advance()
        }
    }

    /// Rounds finished, and when the last one did.
    private final class Progress: Sendable {
        private let last = Mutex(ContinuousClock.now)

        func advance() { last.withLock { $0 = .now } }

        /// Whole seconds since the last round finished (nil: under one).
        func stalledSeconds() -> Int? {
            let seconds = Int((ContinuousClock.now - last.withLock { $0 }).components.seconds)
            return seconds > 0 ? seconds : nil
        }
    }
}
