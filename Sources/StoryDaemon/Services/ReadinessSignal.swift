import Synchronization

/// Whether the daemon is ready: its peer listener is bound and its control
/// socket answers. Waiters are resumed when both are (or the control
/// server failed), not by polling.
final class ReadinessSignal: Sendable {
    private struct State {
        var peersListening = false
        var control: Bool?  // nil: not yet; true: serving; false: failed
        var waiters: [CheckedContinuation<Void, Never>] = []
        var controlWaiters: [CheckedContinuation<Bool, Never>] = []
        var isSettled: Bool { control == false || (control == true && peersListening) }
    }

    private let state = Mutex(State())

    func peersAreListening() { update { $0.peersListening = true } }
    func controlIsServing() { update { $0.control = true } }
    func controlFailed() { update { $0.control = false } }

    private func update(_ change: (inout State) -> Void) {
        let (waiters, controlWaiters, control) = state.withLock { state in
            change(&state)
            var waiters: [CheckedContinuation<Void, Never>] = []
            if state.isSettled { swap(&waiters, &state.waiters) }
            var controlWaiters: [CheckedContinuation<Bool, Never>] = []
            if state.control != nil { swap(&controlWaiters, &state.controlWaiters) }
            return (waiters, controlWaiters, state.control ?? false)
        }
        for waiter in waiters { waiter.resume() }
        for waiter in controlWaiters { waiter.resume(returning: control) }
    }

    /// Returns when the daemon is ready or failed to start serving (or the task is cancelled).
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let settled = state.withLock { state in
                    if state.isSettled || Task.isCancelled { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if settled { continuation.resume() }
            }
        } onCancel: {
            releaseWaiters()
        }
    }

    /// Whether the control server came up (false: it failed, or the task was cancelled).
    func waitForControl() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> Bool? in
                    if let control = state.control { return control }
                    if Task.isCancelled { return false }
                    state.controlWaiters.append(continuation)
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        } onCancel: {
            releaseWaiters()
        }
    }

    /// Resumes every waiter as it stands (a cancelled wait must not hang).
    private func releaseWaiters() {
        let (waiters, controlWaiters) = state.withLock { state in
            defer {
                state.waiters = []
                state.controlWaiters = []
            }
            return (state.waiters, state.controlWaiters)
        }
        for waiter in waiters { waiter.resume() }
        for waiter in controlWaiters { waiter.resume(returning: false) }
    }
}
