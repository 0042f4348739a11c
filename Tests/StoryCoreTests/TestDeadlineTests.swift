import StoryTestSupport
import Testing

/// The tests' own time limit (`TestDeadline`): a stall of the whole test
/// process counts as one slow look, and a wait that never succeeds ends.
struct TestDeadlineTests {
    @Test func aStallCountsAsOneSlowLook() {
        let start = ContinuousClock.now
        var limit = TestDeadline(.seconds(5), maxChargePerLook: .seconds(2), from: start)
        let passed = [1_000, 40_000, 41_000, 42_000].map { limit.hasPassed(at: start + .milliseconds($0)) }
        // 1 s used; a 39 s stall charged 2 s (3 s); 4 s; 5 s: used up.
        #expect(passed == [false, false, false, true])
    }

    @Test func looksWithoutStallsUseUpTheTimeoutAsAClockWould() {
        let start = ContinuousClock.now
        var limit = TestDeadline(.seconds(1), from: start)
        var looks = 0
        while !limit.hasPassed(at: start + .milliseconds(20 * (looks + 1))) { looks += 1 }
        #expect(looks == 49)  // the 50th look, at 1 s, finds it used up
    }
}
