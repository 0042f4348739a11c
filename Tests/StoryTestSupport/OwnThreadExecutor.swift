import Foundation

/// Runs a CPU-bound test (a property test of thousands of random histories)
/// on a thread of its own instead of a thread of Swift's cooperative pool.
///
/// The pool has one thread per core, two on a CI machine. Two such tests at
/// once held both for half a minute, and a daemon running in the test
/// process, which answers on that pool, made a test beside them wait 30 s
/// for its reply: a CI run failed so. On a thread of its own the test shares
/// the cores with the pool through the kernel's scheduler instead.
///
/// Unlike `offThePool`, the body stays in the test's task (a task executor
/// preference, SE-0417), so `#expect` and `#require` inside it report to the
/// test as usual.
///
/// The body is `@Sendable`, hence nonisolated: a closure that inherited the
/// caller's isolation would not move to the preferred executor at all.
public func onOwnThread<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
    let executor = OwnThreadExecutor()
    defer { executor.stop() }
    return try await withTaskExecutorPreference(executor, operation: body)
}

/// The name of the thread `onOwnThread` runs its body on.
public let ownThreadName = "test-own-thread"  // at most 15 bytes: the kernel keeps no longer name

/// A task executor that runs its jobs, in order, on one thread it starts;
/// `stop()` ends the thread once the jobs queued before it have run.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `jobs` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init() {
        // Named from inside: on Linux, naming a thread not started yet is lost.
        Thread { [self] in
            Thread.current.name = ownThreadName
            runJobs()
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
