package import Testing

/// Waits until `condition` holds, looking every `interval`, for at most
/// `timeout` of looks (`TestDeadline`: a machine that stalls as a whole
/// charges one look, not the stall). A look that throws counts as "not yet"
/// (a daemon still starting refuses its socket); the last error is told if
/// the wait ends without the condition. When it never holds, records an
/// issue naming `what`, the last error and what `context` says (the last
/// log lines of the nodes involved, say), and throws.
///
/// A test waits for something that must come (a positive marker), never
/// sleeps and then asserts that something did not happen.
package func eventually(
    _ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(25),
    context: () -> String? = { nil }, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async throws -> Bool
) async throws {
    var limit = TestDeadline(timeout)
    var lastError: (any Error)?
    while true {
        do {
            if try await condition() { return }
        } catch {
            lastError = error
        }
        if limit.hasPassed() { break }
        try await Task.sleep(for: interval)
    }
    var message = "timed out waiting until \(what)"
    if let lastError { message += " (the last look failed: \(lastError))" }
    if let context = context() { message += "\n\(context)" }
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    throw WaitTimedOut(what: what)
}

/// What `eventually` throws when the condition never held.
package struct WaitTimedOut: Error, CustomStringConvertible {
    package let what: String
    package var description: String { "timed out waiting until \(what)" }
}

/// Whether an element of `events` matching `predicate` arrives within
/// `timeout` (subscribe before causing it, so it cannot slip by unseen).
package func firstEvent<Event: Sendable>(
    _ events: AsyncStream<Event>, within timeout: Duration, _ predicate: @escaping @Sendable (Event) -> Bool
) async throws -> Bool {
    try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await event in events where predicate(event) { return true }
            return false
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return false
        }
        let first = try await group.next() ?? false
        group.cancelAll()
        return first
    }
}
