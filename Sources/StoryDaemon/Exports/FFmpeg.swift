import Foundation
import Synchronization

/// The `ffmpeg` program (Debian's package), run as a child process — never
/// linked: its libraries' licences and ABI churn stay out of the daemon,
/// and a crash in a decoder ends the child, not the daemon.
///
/// One run: its progress is read back from `-progress pipe:1` (its
/// `frame=` lines), its standard error kept (the last 16 KiB) to say why it
/// failed, and it is bounded in time. Cancelling the task that awaits it
/// (a `DELETE` of the job, the daemon's shutdown) sends SIGTERM, then
/// SIGKILL two seconds later; the run returns only once the child has
/// exited and been reaped, so no ffmpeg outlives its job.
struct FFmpeg: Sendable {
    /// The program's path.
    let path: String

    /// `ffmpeg` on `PATH` (the daemon's environment), if it is there.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> FFmpeg? {
        let directories = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for directory in directories where !directory.isEmpty {
            let path = String(directory) + "/ffmpeg"
            if access(path, X_OK) == 0 { return FFmpeg(path: path) }
        }
        return nil
    }

    /// The names of the encoders this ffmpeg has (`libx264`, `aac`, `libvpx-vp9` …).
    /// - Throws: `ExportError.ffmpegFailed` when it cannot be run.
    func encoders() async throws(ExportError) -> Set<String> {
        let output = try await run(["-hide_banner", "-nostdin", "-encoders"], timeout: .seconds(20))
        var names: Set<String> = []
        // " V....D libx264  libx264 H.264 …": flags, then the name.
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[0].count == 6, !fields[0].contains("=") else { continue }
            names.insert(String(fields[1]))
        }
        return names
    }

    /// Runs ffmpeg with `arguments` until it exits (at most `timeout`);
    /// `progress` gets each frame count it reports. What it printed on standard output.
    /// - Throws: `ExportError.ffmpegFailed` (with the end of its standard
    ///   error) when it cannot start, exits with a failure, or runs out of
    ///   time; `.cancelled` when the task was cancelled.
    @discardableResult
    func run(
        _ arguments: [String], timeout: Duration, progress: @escaping @Sendable (_ frame: Int) -> Void = { _ in }
    ) async throws(ExportError) -> String {
        let child = Child(path: path, arguments: arguments, progress: progress)
        let outcome = await withTaskCancellationHandler {
            await child.run(timeout: timeout)
        } onCancel: {
            child.stop(reason: .cancelled)
        }
        switch outcome {
        case .exited(0): return child.output
        case .exited(let status):
            throw ExportError(.ffmpegFailed, "ffmpeg failed (exit status \(status)): \(child.errorTail)")
        case .couldNotStart(let reason): throw ExportError(.ffmpegMissing, "cannot run \(path): \(reason)")
        case .stopped(.cancelled): throw ExportError(.cancelled, "cancelled")
        case .stopped(.timedOut): throw ExportError(.ffmpegFailed, "ffmpeg did not finish within \(timeout) and was stopped")
        }
    }

    /// How a run ended.
    enum Outcome: Sendable {
        case exited(Int32)
        case couldNotStart(String)
        case stopped(StopReason)
    }

    enum StopReason: Sendable { case cancelled, timedOut }

    /// One child process and what it printed. `Process` is not `Sendable`;
    /// it is only touched under the lock.
    private final class Child: @unchecked Sendable {
        private let process = Process()
        private let state = Mutex(State())
        private let progress: @Sendable (Int) -> Void

        private struct State {
            var output = Data()
            var lineBuffer = Data()
            var errors = Data()
            var stopReason: StopReason?
            var hasStarted = false
            var hasExited = false
        }

        /// The most standard error kept (the end of it says why ffmpeg failed).
        static let errorBytesKept = 16 << 10

        init(path: String, arguments: [String], progress: @escaping @Sendable (Int) -> Void) {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            self.progress = progress
        }

        var output: String { state.withLock { String(decoding: $0.output, as: UTF8.self) } }

        var errorTail: String {
            let text = state.withLock { String(decoding: $0.errors, as: UTF8.self) }
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return lines.suffix(6).joined(separator: "; ")
        }

        func run(timeout: Duration) async -> Outcome {
            let (out, err) = (Pipe(), Pipe())
            process.standardOutput = out
            process.standardError = err
            out.fileHandleForReading.readabilityHandler = { [self] handle in received(output: handle.availableData) }
            err.fileHandleForReading.readabilityHandler = { [self] handle in received(errors: handle.availableData) }
            let timer = DispatchWorkItem { [self] in stop(reason: .timedOut) }
            let launchFailure: String? = await withCheckedContinuation { continuation in
                process.terminationHandler = { _ in continuation.resume(returning: nil) }
                let failure: String? = state.withLock { state in
                    // Cancelled before it started: it never starts.
                    guard state.stopReason == nil else { return "stopped before it started" }
                    do {
                        try process.run()
                        state.hasStarted = true
                        return nil
                    } catch {
                        return "\(error)"
                    }
                }
                if let failure {
                    continuation.resume(returning: failure)
                } else {
                    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: timer)
                }
            }
            timer.cancel()
            if launchFailure == nil {
                // The termination handler ran: drain what is left in the pipes.
                out.fileHandleForReading.readabilityHandler = nil
                err.fileHandleForReading.readabilityHandler = nil
                received(output: (try? out.fileHandleForReading.readToEnd()) ?? Data())
                received(errors: (try? err.fileHandleForReading.readToEnd()) ?? Data())
            }
            return state.withLock { state in
                state.hasExited = true
                if let reason = state.stopReason { return .stopped(reason) }
                if let launchFailure { return .couldNotStart(launchFailure) }
                return .exited(process.terminationStatus)
            }
        }

        /// Sends SIGTERM (ffmpeg then finishes writing and exits), and SIGKILL two seconds later if it has not.
        func stop(reason: StopReason) {
            let pid: Int32? = state.withLock { state in
                if state.stopReason == nil { state.stopReason = reason }
                guard state.hasStarted, !state.hasExited, process.isRunning else { return nil }
                return process.processIdentifier
            }
            guard let pid else { return }
            kill(pid, SIGTERM)
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [self] in
                let stillRunning = state.withLock { !$0.hasExited && process.isRunning }
                if stillRunning { kill(pid, SIGKILL) }
            }
        }

        private func received(output data: Data) {
            guard !data.isEmpty else { return }
            var frames: [Int] = []
            state.withLock { state in
                state.output.append(data)
                state.lineBuffer.append(data)
                while let newline = state.lineBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: state.lineBuffer[state.lineBuffer.startIndex..<newline], as: UTF8.self)
                    state.lineBuffer.removeSubrange(state.lineBuffer.startIndex...newline)
                    if line.hasPrefix("frame="), let frame = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) {
                        frames.append(frame)
                    }
                }
                // -progress prints a block every half second; keep only the last 64 KiB of it.
                if state.output.count > 1 << 16 { state.output.removeFirst(state.output.count - (1 << 16)) }
            }
            if let last = frames.last { progress(last) }
        }

        private func received(errors data: Data) {
            guard !data.isEmpty else { return }
            state.withLock { state in
                state.errors.append(data)
                if state.errors.count > Self.errorBytesKept { state.errors.removeFirst(state.errors.count - Self.errorBytesKept) }
            }
        }
    }
}
