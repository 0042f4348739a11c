/// A test's time limit that counts only the time the test could look.
///
/// On a loaded machine a test process can stall as a whole for tens of
/// seconds: every thread of Swift's cooperative pool blocked in other tests'
/// disk writes while a build's output is still being written back, or a
/// paused VM. A plain deadline passes during such a stall, and a wait that
/// polls every 20 ms then fails on its first look afterwards, although what
/// it waited for came during the stall. (A CI run failed so: seven daemons
/// logged `ready` 35 s after they started, all within the same quarter
/// second, and the seven tests waiting for them had given up.)
///
/// This limit charges each look at most `maxChargePerLook`, so a stall
/// counts as one slow look; a wait that never succeeds still ends, after
/// `timeout` of looks.
package struct TestDeadline: Sendable {
    private var left: Duration
    private var last: ContinuousClock.Instant
    private let maxChargePerLook: Duration

    package init(_ timeout: Duration, maxChargePerLook: Duration = .seconds(2), from start: ContinuousClock.Instant = .now) {
        self.left = timeout
        self.last = start
        self.maxChargePerLook = maxChargePerLook
    }

    /// Charges the time since the last look (at most `maxChargePerLook`);
    /// whether the limit is used up.
    package mutating func hasPassed(at now: ContinuousClock.Instant = .now) -> Bool {
        left -= min(now - last, maxChargePerLook)
        last = now
        return left <= .zero
    }
}
