import Synchronization

/// Runs work one at a time, in the order it came: the next waits (without
/// holding a thread) until the one before has finished. For work whose
/// memory must not add up when two come at once (a package import holds its
/// project's snapshot and change log while it checks them).
package final class SerialGate: Sendable {
    private struct State {
        var isBusy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Work waiting for its turn now.
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `work` once every earlier work has finished.
    package func run<T: Sendable>(_ work: () async throws -> T) async rethrows -> T {
        await enter()
        defer { leave() }
        return try await work()
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let goes = state.withLock { state in
                guard state.isBusy else {
                    state.isBusy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if goes { continuation.resume() }
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.isBusy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
