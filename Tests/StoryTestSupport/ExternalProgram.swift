import Foundation

/// Independent programs tests check outputs with (poppler's `pdfinfo`,
/// `pdftoppm` and `pdfimages`, librsvg's `rsvg-convert`), found on PATH.
package enum ExternalProgram {
    /// Runs `name` with `arguments`; its exit status (-1: killed after 2 minutes) and what it printed (stdout, then stderr).
    /// - Throws: when it cannot be started.
    /// It waits off the cooperative pool (see `offThePool`).
    package static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await offThePool { try runBlocking(name, arguments) }
    }

    private static func runBlocking(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try ChildProcess.runBlocking(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, deadline: .seconds(120))
        return (result.timedOut ? -1 : result.status, result.outputText + result.errorText)
    }
}
