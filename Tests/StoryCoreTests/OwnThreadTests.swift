import Foundation
import StoryTestSupport
import Testing

/// `onOwnThread`: a CPU-bound test's body runs on a thread of its own, in
/// the test's task, so it holds no thread of the cooperative pool and its
/// expectations still count.
struct OwnThreadTests {
    @Test func theBodyRunsOnItsOwnThreadAcrossAwaitsAndReturnsItsValue() async throws {
        let outside = Self.threadName()
        let names = try await onOwnThread { () async throws -> [String?] in
            let before = Self.threadName()
            // Work on the pool, then back: the body resumes on its own thread.
            let fromPool = await Task.detached { 21 * 2 }.value
            #expect(fromPool == 42)
            return [before, Self.threadName()]
        }
        #expect(names == [ownThreadName, ownThreadName], "outside: \(outside ?? "nil")")
        #expect(Self.threadName() != ownThreadName, "the test goes on where it was")
    }

    /// The name of the thread this runs on (read in a synchronous function:
    /// async code may not ask, since it may move between threads).
    static func threadName() -> String? { Thread.current.name }

    @Test func anExpectationThatFailsInsideIsTheTestsOwn() async throws {
        // If the issue were recorded outside the test, no known issue would
        // be seen here, and that would fail the test.
        await withKnownIssue {
            try await onOwnThread { #expect(Bool(false), "recorded inside the body") }
        }
    }

    @Test func anErrorThrownInsideReachesTheTest() async {
        struct Expected: Error {}
        await #expect(throws: Expected.self) { try await onOwnThread { throw Expected() } }
    }
}
