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
/// Unlike `offThePool`, the body runs in a child task of the test's task
/// that prefers that thread's executor (SE-0417), so the test's task-local
/// context comes with it and `#expect` and `#require` inside report to the
/// test as usual. A child task starts by being enqueued on its executor.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let executor = OwnThreadExecutor()
    defer { executor.stop() }
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask(executorPreference: executor, operation: body)
        // The group has exactly this one task.
        return try await group.next()!
    }
}

/// Whether the caller runs on a thread `onOwnThread` started (a mark the
/// thread sets on itself before it runs anything: names can be inherited).
public func isOnOwnThread() -> Bool { pthread_getspecific(ownThreadKey) != nil }

private let ownThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
    return key
}()

/// A task executor that runs its jobs, in order, on one thread it starts;
/// `stop()` ends the thread once the jobs queued before it have run.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `jobs` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init() {
        Thread { [self] in
            pthread_setspecific(ownThreadKey, UnsafeRawPointer(bitPattern: 1))
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
