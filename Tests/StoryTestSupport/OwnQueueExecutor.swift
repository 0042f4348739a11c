import Foundation

/// Runs a CPU-bound test (a property test of thousands of random histories)
/// on a thread of its own instead of a thread of Swift's cooperative pool:
/// on a serial dispatch queue, whose jobs run on threads dispatch adds as
/// needed, not on the pool's one per core (as the store's executor does).
///
/// The pool has one thread per core, two on a CI machine. Two such tests at
/// once held both for half a minute, and a daemon running in the test
/// process, which answers on that pool, made a test beside them wait 30 s
/// for its reply: a CI run failed so. On a thread of its own the test shares
/// the cores with the pool through the kernel's scheduler instead.
///
/// Unlike `offThePool`, the body runs in a child task of the test's task
/// that prefers that queue's executor (SE-0417), so the test's task-local
/// context comes with it and `#expect` and `#require` inside report to the
/// test as usual. A child task starts by being enqueued on its executor.
package func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let executor = OwnQueueExecutor()
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask(executorPreference: executor, operation: body)
        // The group has exactly this one task.
        return try await group.next()!
    }
}

/// Whether the caller runs on the queue of an `onOwnThread` body.
package func isOnOwnThread() -> Bool { DispatchQueue.getSpecific(key: ownQueueKey) == true }

private let ownQueueKey = DispatchSpecificKey<Bool>()

/// A task executor that runs its jobs, in order, on a serial dispatch queue of its own.
final class OwnQueueExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "test: own thread")

    init() { queue.setSpecific(key: ownQueueKey, value: true) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
