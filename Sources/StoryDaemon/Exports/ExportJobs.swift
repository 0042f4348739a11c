import Foundation
import Logging
import StoryAPI
import StoryCore

/// The daemon's export jobs: long work (an animatic takes many seconds)
/// that a client starts with `POST /v1/projects/{id}/exports`, follows with
/// `GET /v1/exports/{job}`, downloads, and deletes. Any kind of export is a
/// job: a name, a content type and a `Work` closure that writes one file.
///
/// Jobs run one at a time, in order, in `run()` (the export service's task,
/// so the daemon's shutdown cancels the one running and its ffmpeg with
/// it): exports are CPU-bound, and the machine has other work. At most
/// `maximumJobs` are kept; a finished one expires `retention` after it
/// finished, its file with it. Files live in the daemon's scratch directory
/// (`DaemonPaths.temporaryDirectory`, emptied at start), never in /tmp,
/// which the hardened system unit makes private and small.
actor ExportJobs {
    /// Jobs kept at once (queued, running and finished).
    static let maximumJobs = 16
    /// How long a finished job (and its file) is kept.
    static let retention: Duration = .seconds(30 * 60)

    let directory: String
    let logger: Logger
    private var jobs: [String: ExportJob] = [:]
    private let queue: (stream: AsyncStream<ExportJob>, continuation: AsyncStream<ExportJob>.Continuation)
    /// What `checkFFmpeg` found (the program's path and its encoders), once.
    private var ffmpegFound: (FFmpeg, Set<String>)?

    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
        queue = AsyncStream<ExportJob>.makeStream()
    }

    /// Queues a job.
    /// - Throws: `APIError.conflict` when `maximumJobs` are kept;
    ///   `.storeFailure` when its scratch directory cannot be made.
    func submit(
        kind: String, project: DocumentID, fileName: String, contentType: String, work: @escaping ExportJob.Work
    ) throws(APIError) -> ExportJob {
        expire()
        guard jobs.count < Self.maximumJobs else {
            throw APIError(
                .conflict, "\(Self.maximumJobs) exports are kept already; download and delete finished ones (DELETE /v1/exports/{job}) first")
        }
        let id = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let jobDirectory = directory + "/export-" + id
        do {
            try FileManager.default.createDirectory(
                atPath: jobDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            logger.error("cannot make \(jobDirectory) for an export: \(error)")
            throw APIError(.storeFailure, "cannot use the daemon's scratch directory \(directory) for an export")
        }
        let job = ExportJob(
            id: String(id), kind: kind, project: project, fileName: fileName, contentType: contentType, directory: jobDirectory, work: work)
        jobs[job.id] = job
        queue.continuation.yield(job)
        return job
    }

    /// A job kept here.
    func job(_ id: String) -> ExportJob? {
        expire()
        return jobs[id]
    }

    /// Cancels a job (its ffmpeg is killed) and removes it with its file; false when there is none.
    func remove(_ id: String) -> Bool {
        guard let job = jobs.removeValue(forKey: id) else { return false }
        job.cancel()
        // A running job's files are removed by `run` once its work has stopped.
        if job.state != .running { try? FileManager.default.removeItem(atPath: job.directory) }
        return true
    }

    /// Runs the jobs as they come, one at a time, until the task is
    /// cancelled (the daemon's shutdown); then removes every file.
    func run() async {
        for await job in queue.stream {
            if Task.isCancelled { break }
            guard !job.isCancelled else { continue }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await job.waitUntilCancelled() }
                group.addTask { await Self.perform(job) }
                await group.next()
                group.cancelAll()
            }
            if job.isCancelled { try? FileManager.default.removeItem(atPath: job.directory) }
        }
        for job in jobs.values { job.cancel() }
        jobs.removeAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Does a job's work and records how it ended.
    private static func perform(_ job: ExportJob) async {
        job.markRunning()
        do {
            let outcome = try await job.work(job)
            try Task.checkCancellation()
            let size = (try? FileManager.default.attributesOfItem(atPath: job.filePath)[.size] as? NSNumber)?.uint64Value
            guard let size else { throw ExportError(.files, "the export wrote no file") }
            job.markDone(outcome, bytes: size)
        } catch let error as ExportError {
            job.markFailed(error.message)
        } catch {
            job.markFailed(Task.isCancelled ? "cancelled" : "\(error)")
        }
    }

    /// Removes finished jobs older than `retention`, and their files.
    private func expire() {
        let now = ContinuousClock.now
        for (id, job) in jobs {
            guard let finished = job.finished, now - finished > Self.retention else { continue }
            jobs[id] = nil
            try? FileManager.default.removeItem(atPath: job.directory)
        }
    }

    /// ffmpeg, checked to have `encoders`.
    /// - Throws: `APIError.unavailable` saying what is missing and how to install it.
    func checkFFmpeg(needing encoders: [String], for what: String) async throws(APIError) -> FFmpeg {
        let install = "install it on the machine running the daemon: sudo apt-get install ffmpeg"
        var found = ffmpegFound
        if found == nil {
            guard let ffmpeg = FFmpeg.locate() else {
                throw APIError(.unavailable, "\(what) needs ffmpeg, which is not on the daemon's PATH; \(install)")
            }
            do {
                found = (ffmpeg, try await ffmpeg.encoders())
            } catch {
                throw APIError(.unavailable, "\(what) needs ffmpeg, which does not run (\(error.message)); \(install)")
            }
            ffmpegFound = found
        }
        guard let (ffmpeg, available) = found else { preconditionFailure("found above") }
        let missing = encoders.filter { !available.contains($0) }
        guard missing.isEmpty else {
            throw APIError(
                .unavailable,
                "\(what) needs ffmpeg's \(missing.joined(separator: " and ")) encoder\(missing.count > 1 ? "s" : ""), which \(ffmpeg.path) "
                    + "lacks; Debian's ffmpeg has them: sudo apt-get install ffmpeg")
        }
        return ffmpeg
    }
}
