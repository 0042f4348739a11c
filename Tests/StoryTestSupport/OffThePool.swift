import Foundation

/// Runs blocking work (a child process, a blocking socket read) on a thread
/// of its own and waits for it without holding a thread of Swift's
/// cooperative pool.
///
/// That pool has one thread per core, two on a CI machine, and every test of
/// the run shares it. A test that blocks one of them, even for a CLI call of
/// a second, stalls every other test's tasks: the in-process sync nodes, an
/// in-process daemon the blocked call may be waiting for. A CI run failed so
/// (two nodes did not sync their project within 60 s of looks while other
/// tests waited for exports and child processes on the pool's threads).
package func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
