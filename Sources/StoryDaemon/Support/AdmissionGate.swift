import Synchronization

/// A bound on work waiting and running at once: the work asked for beyond
/// `capacity` is refused at once instead of queued without end (a client
/// that asks for 1,000 renders gets "busy" for most of them, and the daemon's
/// memory and the renderer's queue stay bounded).
package final class AdmissionGate: Sendable {
    /// Work admitted and not finished.
    private let admitted = Mutex(0)
    /// The most admitted at once.
    package let capacity: Int

    package init(capacity: Int) {
        precondition(capacity > 0, "an admission gate admits at least one")
        self.capacity = capacity
    }

    /// Work admitted and not finished now.
    package var count: Int { admitted.withLock { $0 } }

    /// Runs `work` if fewer than `capacity` are admitted, else returns nil without running it.
    package func ifAdmitted<T: Sendable>(_ work: () async throws -> T) async rethrows -> T? {
        let entered = admitted.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        guard entered else { return nil }
        defer { admitted.withLock { $0 -= 1 } }
        return try await work()
    }
}
