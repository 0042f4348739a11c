import StoryTestSupport
import Testing

/// `onOwnThread`: a CPU-bound test's body runs on a thread of its own, in
/// the test's task, so it holds no thread of the cooperative pool and its
/// expectations still count.
struct OwnThreadTests {
    @Test func theBodyRunsOnItsOwnThreadAcrossAwaitsAndReturnsItsValue() async throws {
        let places = try await onOwnThread { () async throws -> [Bool] in
            let before = isOnOwnThread()
            // Work on the pool, then back: the body resumes on its own thread.
            let fromPool = await Task.detached { (21 * 2, isOnOwnThread()) }.value
            #expect(fromPool == (42, false), "a detached task runs on the pool")
            return [before, isOnOwnThread()]
        }
        #expect(places == [true, true])
        #expect(!isOnOwnThread(), "the test goes on where it was")
    }

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
