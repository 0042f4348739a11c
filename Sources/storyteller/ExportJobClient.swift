import ArgumentParser
import Dispatch
import Foundation
import StoryAPI
import StoryClient

/// An export made by the daemon as a job (`POST /v1/projects/{id}/exports`):
/// posted, followed with a progress bar on a terminal, downloaded into a
/// temporary file beside `--out` and renamed onto it, then deleted on the
/// daemon. Ctrl-C (or SIGTERM) deletes the job, which stops its ffmpeg.
struct ExportJobClient {
    let options: ClientOptions

    /// Runs an export of `project` to `out`; the finished job.
    func export(_ request: API.ExportRequest, of project: String, to out: String, timeoutSeconds: Int = 3 * 3600) throws -> API.ExportJob {
        var quiet = options
        quiet.json = false
        let posted = try quiet.call(API.ExportJob.self, "POST", "/v1/projects/\(segment(project))/exports", body: request)
        let jobPath = "/v1/exports/\(segment(posted.id))"
        let stopper = JobStopper(client: options.client, jobPath: jobPath)
        defer { stopper.disarm() }
        let progress = isatty(STDERR_FILENO) == 1 ? ExportProgress(label: "exporting \(out)") : nil
        let deadline = Date().addingTimeInterval(Double(timeoutSeconds))
        var job = posted
        while job.state == "queued" || job.state == "running" {
            progress?.show(job.progress)
            guard Date() < deadline else {
                progress?.end()
                _ = try? options.client.request("DELETE", jobPath)
                printError("the export did not finish within \(timeoutSeconds) s; it was stopped")
                throw ExitCode(1)
            }
            usleep(200_000)
            job = try quiet.call(API.ExportJob.self, "GET", jobPath)
        }
        progress?.show(job.progress)
        progress?.end()
        guard job.state == "done" else {
            _ = try? options.client.request("DELETE", jobPath)
            printError("the export failed: \(job.error ?? "no reason given")")
            throw ExitCode(1)
        }
        try download(jobPath + "/file", to: out)
        _ = try? options.client.request("DELETE", jobPath)
        return job
    }

    /// Sends a sound file to the daemon's blob store (`POST /v1/media/sounds`),
    /// with a progress line on a terminal; its blob.
    func uploadSound(_ file: String) throws -> String {
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let progress = isatty(STDERR_FILENO) == 1 ? TransferProgress(verb: "sending", path: file) : nil
        let response: ControlClientResponse
        do {
            response = try options.client.upload("POST", "/v1/media/sounds", file: path) { bytes, total in progress?.show(bytes, of: total) }
        } catch let failure as ControlClientFailure {
            progress?.end()
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(failure.isUnreachable ? 69 : 1)
        }
        progress?.end()
        guard response.status == 201, let media = try? API.decoder.decode(API.Media.self, from: response.body) else {
            printError("the soundtrack was refused: " + (UserWords.say(response)))
            throw ExitCode(1)
        }
        return media.blob
    }

    /// Downloads `target` into a temporary file beside `out`, then renames it onto `out`.
    func download(_ target: String, to out: String) throws {
        let temporary = URL(fileURLWithPath: out).deletingLastPathComponent().appendingPathComponent(
            ".\(URL(fileURLWithPath: out).lastPathComponent).\(getpid()).partial"
        ).path
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let output = FileHandle(forWritingAtPath: temporary) else {
            printError("cannot write beside \(out)")
            throw ExitCode(1)
        }
        let response: ControlClientResponse
        do {
            response = try options.client.download(target, into: { try output.write(contentsOf: $0) })
            try output.close()
        } catch {
            try? output.close()
            try? FileManager.default.removeItem(atPath: temporary)
            printError("\(error)")
            throw ExitCode(1)
        }
        guard response.status == 200 else {
            try? FileManager.default.removeItem(atPath: temporary)
            printError(UserWords.say(response))
            throw ExitCode(1)
        }
        guard rename(temporary, out) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            printError("cannot write \(out): \(reason)")
            throw ExitCode(1)
        }
    }

    /// A size written `1920x1080`.
    static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else { return nil }
        return (width, height)
    }

    /// Checks that `out`'s directory exists.
    static func checkDirectory(of out: String) throws {
        let directory = URL(fileURLWithPath: out).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("the directory of --out does not exist: \(directory)")
        }
    }
}

/// Deletes the job on the daemon when the command is interrupted (SIGINT,
/// SIGTERM), so its ffmpeg stops with it, then exits 130.
private final class JobStopper: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    init(client: ControlClient, jobPath: String) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                _ = try? client.request("DELETE", jobPath, timeoutSeconds: 5)
                FileHandle.standardError.write(Data("\nstoryteller: cancelled; the daemon stopped the export\n".utf8))
                exit(130)
            }
            source.resume()
            sources.append(source)
        }
    }

    func disarm() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// An export's progress on a terminal (standard error).
final class ExportProgress {
    private let label: String
    private var lastShown = Date.distantPast
    private var isShowing = false

    init(label: String) { self.label = label }

    func show(_ fraction: Double) {
        let now = Date()
        guard fraction >= 1 || now.timeIntervalSince(lastShown) >= 0.1 else { return }
        lastShown = now
        let percent = Int((min(1, max(0, fraction)) * 100).rounded(.down))
        let filled = percent / 5
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 20 - filled)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(label) \(bar) \(percent) %".utf8))
        isShowing = true
    }

    func end() {
        if isShowing { FileHandle.standardError.write(Data("\n".utf8)) }
        isShowing = false
    }
}
