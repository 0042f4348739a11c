import Foundation

/// Independent programs tests check outputs with (poppler's `pdfinfo`,
/// `pdftoppm` and `pdfimages`, librsvg's `rsvg-convert`), found on PATH.
public enum ExternalProgram {
    /// Runs `name` with `arguments`; its exit status and what it printed (stdout and stderr, as they came).
    /// - Throws: when it cannot be started.
    /// It waits off the cooperative pool (see `offThePool`).
    public static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await offThePool { try runBlocking(name, arguments) }
    }

    private static func runBlocking(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
