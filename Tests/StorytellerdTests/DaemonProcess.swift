import Foundation
import Synchronization
import Testing

/// The directory the test binaries (and `storytellerd`) were built into.
var productsDirectory: URL {
    URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        .deletingLastPathComponent()
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// A `storytellerd` child process with its stdout and stderr collected.
/// Tests stop it with `terminate`; `kill` (in a `defer`) makes sure it never outlives the test.
final class DaemonProcess: Sendable {
    private let process: Process
    private final class Collected: Sendable {
        let text = Mutex((output: "", errors: ""))
    }
    private let collected = Collected()

    var output: String { collected.text.withLock { $0.output } }
    var errors: String { collected.text.withLock { $0.errors } }

    init(arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("storytellerd")
        process.arguments = arguments
        var base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STORYTELLER_") && $0.key != "NOTIFY_SOCKET" }
        base.merge(environment) { $1 }
        process.environment = base
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        self.process = process
        out.fileHandleForReading.readabilityHandler = { [collected] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            collected.text.withLock { $0.output += text }
        }
        err.fileHandleForReading.readabilityHandler = { [collected] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            collected.text.withLock { $0.errors += text }
        }
        try process.run()
    }

    /// Waits (at most `timeout`) until stdout or stderr contains `text`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) || errors.contains(text) { return }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no '\(text)' in the daemon's output:\n\(output)\n\(errors)")
        throw TimedOut(description: "waiting for '\(text)'")
    }

    /// The peer port the daemon logged once it listened.
    func waitForPort() async throws -> Int {
        try await waitForLog("ready")
        let line = errors.split(separator: "\n").first { $0.contains("listening for peers on") } ?? ""
        let address = line.split(separator: " ").drop { $0 != "on" }.dropFirst().first ?? ""
        guard let port = address.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw TimedOut(description: "no port in '\(line)'")
        }
        return port
    }

    /// Waits (at most `timeout`) for the process to exit; its exit status.
    func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard !process.isRunning else {
            kill()
            throw TimedOut(description: "the daemon did not exit within \(timeout)")
        }
        process.waitUntilExit()
        try await Task.sleep(for: .milliseconds(50))  // let the pipe handlers drain
        return process.terminationStatus
    }

    /// Sends `signal` and waits for the exit status.
    func terminate(signal: Int32 = SIGTERM) async throws -> Int32 {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
        return try await waitForExit()
    }

    func kill() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

struct TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("storytellerd-test-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, then closed).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TimedOut(description: "socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw TimedOut(description: "bind failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
