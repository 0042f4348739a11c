import Dispatch

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
