import Dispatch
import Foundation

/// A serial executor on a dedicated dispatch queue: the store's database work
/// runs there, never on a NIO event loop nor on the cooperative thread pool
/// (SQLite blocks for disk writes).
final class StoreExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// A serial executor on a thread of its own, running at a lower priority
/// (a higher nice value) than the rest of the daemon: the blob store's
/// hashing and disk writes use the CPU only when changes, TLS and the
/// store do not need it, so strokes stay live while a large file moves.
/// (A dispatch queue's jobs run on shared pool threads, whose priority an
/// unprivileged process could lower but never raise back.)
final class BackgroundThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var isStopped = false

    init(label: String, niceness: Int32) {
        // The thread keeps the executor until `stop`.
        let thread = Thread { [self] in
            // On Linux a nice value is per thread: 0 names the calling thread.
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
            self.run()
        }
        thread.name = label
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs enqueued so far have run (its owner went away).
    func stop() {
        condition.lock()
        isStopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedSerialExecutor()
        while true {
            condition.lock()
            while head == jobs.count && !isStopped { condition.wait() }
            guard head < jobs.count else {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
