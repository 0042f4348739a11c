import Foundation
import Synchronization

/// The time of day as the daemon reads it: one value injected into the
/// store's callers, the sync and the daemon, so tests can set the time.
/// Milliseconds since the epoch.
package struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock that answers `read`.
    package init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// Milliseconds since the epoch, now.
    package var milliseconds: Int64 { read() }

    /// The system's clock.
    package static let system = WallClock { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// A clock that only moves when told to (tests).
    package static func manual(_ manual: ManualWallClock) -> WallClock { WallClock { manual.milliseconds } }
}

/// A wall clock a test sets and advances.
package final class ManualWallClock: Sendable {
    private let current: Mutex<Int64>

    package init(milliseconds: Int64) { current = Mutex(milliseconds) }

    package var milliseconds: Int64 { current.withLock { $0 } }

    /// Moves the time forward (or back, to test clocks that jump).
    package func advance(by milliseconds: Int64) { current.withLock { $0 += milliseconds } }

    package var clock: WallClock { .manual(self) }
}
