package import Foundation
import Synchronization

/// A program a test runs to its end: both pipes read at once (a child that
/// fills one while the test reads the other would wait forever), and a
/// deadline after which it is killed, so no test waits on a hung child and
/// none outlives its test.
package enum ChildProcess {
    package struct Result: Sendable {
        package let status: Int32
        package let output: Data
        package let errors: Data
        /// It ran past its deadline and was killed (SIGKILL).
        package let timedOut: Bool

        package var outputText: String { String(decoding: output, as: UTF8.self) }
        package var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments` and waits, off the cooperative pool, until it ends or `deadline` passes.
    package static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, in directory: String? = nil,
        input: Data? = nil, deadline: Duration = .seconds(300)
    ) async throws -> Result {
        try await offThePool {
            try runBlocking(executable, arguments, environment: environment, in: directory, input: input, deadline: deadline)
        }
    }

    /// `run` on the calling thread: only for code already off the pool.
    package static func runBlocking(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, in directory: String? = nil,
        input: Data? = nil, deadline: Duration = .seconds(300)
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        let stdin = input.map { _ in Pipe() }
        if let stdin { process.standardInput = stdin } else { process.standardInput = FileHandle.nullDevice }
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        // Both pipes at once, each on a thread of its own.
        let read = DispatchGroup()
        let collected = Mutex<(output: Data, errors: Data)>((Data(), Data()))
        for (pipe, isOutput) in [(out, true), (err, false)] {
            read.enter()
            Thread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { if isOutput { $0.output = data } else { $0.errors = data } }
                read.leave()
            }.start()
        }
        if let stdin, let input {
            try? stdin.fileHandleForWriting.write(contentsOf: input)
            try? stdin.fileHandleForWriting.close()
        }
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        var timedOut = false
        if ended.wait(timeout: .now() + seconds) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
        }
        // A grandchild still holding a pipe open must not hold the test: its output is cut there.
        _ = read.wait(timeout: .now() + 10)
        let (output, errors) = collected.withLock { ($0.output, $0.errors) }
        return Result(status: process.terminationStatus, output: output, errors: errors, timedOut: timedOut)
    }
}

/// What `executable` printed (stdout, and stderr with `includingErrors`),
/// given `input` on stdin; killed after `timeout`.
package func programOutput(
    _ executable: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(30), includingErrors: Bool = false
) async throws -> String {
    let result = try await ChildProcess.run(
        URL(fileURLWithPath: executable), arguments, input: Data((input ?? "").utf8), deadline: timeout)
    return result.outputText + (includingErrors ? result.errorText : "")
}
