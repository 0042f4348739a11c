import Synchronization
package import Testing

/// How many tests that start daemons (or in-process sync nodes) run at
/// once, whatever the test runner's own parallelism: Swift Testing starts
/// every test at once by default, and on a slow two-core machine the
/// daemons of a hundred tests at once made some miss their answers. Six at
/// a time kept a full run as short, with every wait honest (CI measured it
/// with the runner's width setting before this trait replaced it).
package struct DaemonSlotsTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Around each test function (all its cases), not around suites.
        test.isSuite ? nil : self
    }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A test already holding a slot (asked again for one of its cases) keeps it.
        guard !DaemonSlots.held else { return try await function() }
        await DaemonSlots.shared.acquire()
        defer { DaemonSlots.shared.release() }
        try await DaemonSlots.$held.withValue(true) { try await function() }
    }
}

extension Trait where Self == DaemonSlotsTrait {
    /// The test starts daemons or sync nodes: at most `DaemonSlots.count` such tests run at once.
    package static var daemons: Self { Self() }
}

/// A counting semaphore for `DaemonSlotsTrait`: waiters are resumed in order.
package final class DaemonSlots: Sendable {
    package static let count = 6
    static let shared = DaemonSlots(count: count)
    @TaskLocal static var held = false

    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    package init(count: Int) { state = Mutex((count, [])) }

    /// Tests waiting for a slot.
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
