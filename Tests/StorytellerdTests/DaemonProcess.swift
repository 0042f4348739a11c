import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StoryTestSupport
import Synchronization
import Testing

/// The directory the test binaries (and `storytellerd`) were built into.
var productsDirectory: URL {
    URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        .deletingLastPathComponent()
}

/// The environment every program a test starts gets: the caller's, less
/// Storyteller's own variables and systemd's notify socket, and with a
/// desktop session's `XDG_RUNTIME_DIR`, `HOME` and `XDG_DATA_HOME` pointed at
/// one scratch directory that every test shares (as the real ones would be).
/// A daemon that used them instead of the paths its test gave would collide
/// with the others and fail, so the suite passes whatever the caller's are.
/// Local discovery is off (`STORYTELLER_DISCOVERY=false`) unless a test turns
/// it on: a daemon listening on 0.0.0.0 would announce itself on the
/// machine's networks, and tests keep to loopback.
enum TestEnvironment {
    static let scratch: String = {
        let path = Self.path
        for sub in ["runtime", "home", "data"] {
            try? FileManager.default.createDirectory(atPath: path + "/" + sub, withIntermediateDirectories: true)
        }
        chmod(path + "/runtime", 0o700)
        // Removed when the test process exits (every daemon a test starts is stopped by then).
        atexit { try? FileManager.default.removeItem(atPath: TestEnvironment.path) }
        return path
    }()

    private static var path: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-tests-session-\(getpid())").path
    }

    static func make(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STORYTELLER_") && $0.key != "NOTIFY_SOCKET" }
        environment["XDG_RUNTIME_DIR"] = scratch + "/runtime"
        environment["HOME"] = scratch + "/home"
        environment["XDG_DATA_HOME"] = scratch + "/data"
        environment["STORYTELLER_DISCOVERY"] = "false"
        environment.merge(extra) { $1 }
        return environment
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// A `storytellerd` child process with its stdout and stderr collected.
/// Tests stop it with `terminate`; `kill` (in a `defer`) makes sure it never outlives the test.
final class DaemonProcess: Sendable {
    private let process: Process
    /// Its standard input: `--stop-with-stdin` stops it when this closes.
    private let lifeline: Pipe
    private final class Collected: Sendable {
        let text = Mutex((output: "", errors: ""))
    }
    private let collected = Collected()

    var output: String { collected.text.withLock { $0.output } }
    /// The process id.
    var pid: Int32 { process.processIdentifier }
    var errors: String { collected.text.withLock { $0.errors } }

    /// - Parameter journal: run as systemd runs a service whose stderr is the
    ///   journal's stream: `JOURNAL_STREAM` names the device and inode of the
    ///   pipe given as its stderr.
    /// - Parameter setpriv: run it through `setpriv` with these options
    ///   (`--reuid=65534 …`: as another user; needs root).
    /// - Parameter launcher: run it through this command (`ip netns exec NAME`:
    ///   in a network namespace), which must exec it in its own process.
    init(
        arguments: [String], environment: [String: String], journal: Bool = false, setpriv: [String]? = nil, launcher: [String]? = nil
    ) throws {
        let process = Process()
        let binary = productsDirectory.appendingPathComponent("storytellerd")
        let arguments = arguments + ["--stop-with-stdin"]
        if let setpriv {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = setpriv + [binary.path] + arguments
        } else if let launcher, let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        let (out, err) = (Pipe(), Pipe())
        var environment = environment
        if journal {
            var info = stat()
            guard fstat(err.fileHandleForWriting.fileDescriptor, &info) == 0 else { throw TimedOut(description: "fstat of a pipe failed") }
            environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        }
        process.environment = TestEnvironment.make(environment)
        // The daemon stops when this pipe closes: when this process exits,
        // however it ends (a crashed or killed test run leaves no daemons).
        let lifeline = Pipe()
        process.standardInput = lifeline
        self.lifeline = lifeline
        process.standardOutput = out
        process.standardError = err
        self.process = process
        try process.run()
        // Each pipe read on a thread of its own until its end: not through
        // dispatch read sources, which fire without end at EOF unless
        // removed, and whose fds closed under them have crashed the runner.
        let (output, errors) = (out.fileHandleForReading, err.fileHandleForReading)
        Thread { [collected] in
            while case let data = output.availableData, !data.isEmpty {
                collected.text.withLock { $0.output += String(decoding: data, as: UTF8.self) }
            }
        }.start()
        Thread { [collected] in
            while case let data = errors.availableData, !data.isEmpty {
                collected.text.withLock { $0.errors += String(decoding: data, as: UTF8.self) }
            }
        }.start()
    }

    /// Waits (at most `timeout`) until stdout or stderr contains `text`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(60)) async throws {
        var limit = TestDeadline(timeout)
        while true {
            if output.contains(text) || errors.contains(text) { return }
            if !process.isRunning || limit.hasPassed() { break }
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
        var limit = TestDeadline(timeout)
        while process.isRunning && !limit.hasPassed() {
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
    /// Closes this end of its standard input, as the kernel does when the
    /// process that started it dies, however it dies.
    func dropLifeline() { try? lifeline.fileHandleForWriting.close() }

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

/// A daemon started on loopback (peer port 0) in a fresh temporary directory,
/// ready to serve, with a CLI runner for its socket. `stop()` (in a `defer`)
/// kills it and removes the directory.
struct StartedDaemon {
    let home: TemporaryDirectory
    let daemon: DaemonProcess
    let extraArguments: [String]
    var socket: String { home.path + "/control.sock" }
    var client: ControlClient { ControlClient(path: socket) }

    /// Starts `storytellerd --data-dir HOME --listen 127.0.0.1:0 ARGUMENTS…` and waits for "ready".
    static func start(name: String = "test", _ arguments: [String] = [], environment: [String: String] = [:]) async throws -> StartedDaemon {
        let home = try TemporaryDirectory()
        return try await start(in: home, name: name, arguments, environment: environment)
    }

    /// Starts (again) in an existing directory.
    static func start(
        in home: TemporaryDirectory, name: String = "test", _ arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> StartedDaemon {
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0", "--name", name] + arguments, environment: environment)
        let started = StartedDaemon(home: home, daemon: daemon, extraArguments: arguments)
        do {
            try await daemon.waitForLog("ready")
        } catch {
            started.stop()
            throw error
        }
        return started
    }

    /// Runs the CLI against this daemon.
    func cli(_ arguments: String...) async throws -> (status: Int32, output: String, errors: String) {
        try await storyteller(arguments + ["--socket", socket])
    }

    /// Runs the CLI with `--json` and parses its output.
    func json(_ arguments: String...) async throws -> Any {
        let result = try await storyteller(arguments + ["--json", "--socket", socket])
        guard result.status == 0 else { throw TimedOut(description: "storyteller \(arguments) failed: \(result.errors)") }
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    }

    /// The peer port (from the status).
    func port() throws -> Int {
        guard let status = try client.get("/v1/status").json as? [String: Any], let port = status["listenPort"] as? Int else {
            throw TimedOut(description: "no listenPort in the status")
        }
        return port
    }

    func peerID() throws -> String {
        guard let identity = try client.get("/v1/identity").json as? [String: Any], let id = identity["peerID"] as? String else {
            throw TimedOut(description: "no peer id")
        }
        return id
    }

    func stop() {
        daemon.kill()
        home.remove()
    }

    /// Two daemons started and paired both ways through the CLI, each
    /// calling the other by its name; both stopped if either fails to start.
    static func startedPair(_ firstName: String = "a", _ secondName: String = "b") async throws -> (StartedDaemon, StartedDaemon) {
        let first = try await StartedDaemon.start(name: firstName)
        var second: StartedDaemon?
        do {
            second = try await StartedDaemon.start(name: secondName)
            for (daemon, other, name) in [(first, second!, secondName), (second!, first, firstName)] {
                let result = try await daemon.cli("peers", "add", try other.peerID(), "--address", "127.0.0.1:\(try other.port())", "--name", name)
                guard result.status == 0 else { throw TimedOut(description: "pairing failed: \(result.errors)") }
            }
            return (first, second!)
        } catch {
            first.stop()
            second?.stop()
            throw error
        }
    }
}
