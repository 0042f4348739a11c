import Foundation
import StoryAPI
import StoryCore
import Synchronization

/// One export the daemon makes for a client (an animatic, an EDL …): what
/// it makes, its state and progress, and, once done, a file in its own
/// scratch directory that the client downloads. Made by `ExportJobs`.
final class ExportJob: Sendable {
    /// What a job's work does: writes `job.filePath`, reporting progress; what the file holds.
    typealias Work = @Sendable (ExportJob) async throws(ExportError) -> Outcome

    /// What a finished file holds (shown with the job).
    struct Outcome: Sendable {
        var seconds: Double?
        var frames: Int?
        var shots: Int?
        var media: [API.ExportMedia]?
        /// What the file leaves out and why (`API.ExportJob.notes`).
        var notes: [String]? = nil
    }

    enum State: String, Sendable { case queued, running, done, failed }

    let id: String
    let kind: String
    let project: DocumentID
    let fileName: String
    let contentType: String
    /// The job's own scratch directory (in the daemon's), removed with the job.
    let directory: String
    let work: Work

    private struct Status {
        var state = State.queued
        var progress = 0.0
        var error: String?
        var bytes: UInt64?
        var outcome: Outcome?
        var finished: ContinuousClock.Instant?
        var isCancelled = false
    }
    private let status = Mutex(Status())
    private let cancellation: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)

    init(id: String, kind: String, project: DocumentID, fileName: String, contentType: String, directory: String, work: @escaping Work) {
        self.id = id
        self.kind = kind
        self.project = project
        self.fileName = fileName
        self.contentType = contentType
        self.directory = directory
        self.work = work
        cancellation = AsyncStream<Void>.makeStream()
    }

    /// The finished file.
    var filePath: String { directory + "/" + "output" }

    var state: State { status.withLock { $0.state } }
    var isCancelled: Bool { status.withLock { $0.isCancelled } }
    var bytes: UInt64? { status.withLock { $0.bytes } }
    /// Why it failed.
    var error: String? { status.withLock { $0.error } }
    var progress: Double { status.withLock { $0.progress } }

    /// When it finished (done or failed), for expiry.
    var finished: ContinuousClock.Instant? { status.withLock { $0.finished } }

    /// Progress from 0 to 1 (never backwards).
    func report(progress: Double) {
        status.withLock { $0.progress = min(1, max($0.progress, progress)) }
    }

    func markRunning() { status.withLock { $0.state = .running } }

    func markDone(_ outcome: Outcome, bytes: UInt64) {
        status.withLock {
            $0.state = .done
            $0.progress = 1
            $0.outcome = outcome
            $0.bytes = bytes
            $0.finished = .now
        }
    }

    func markFailed(_ message: String) {
        status.withLock {
            $0.state = .failed
            $0.error = message
            $0.finished = .now
        }
    }

    /// Asks the work to stop (it is cancelled, ffmpeg killed); idempotent.
    func cancel() {
        status.withLock { $0.isCancelled = true }
        cancellation.continuation.finish()
    }

    /// Returns once `cancel()` was called, or when the calling task is cancelled.
    func waitUntilCancelled() async {
        for await _ in cancellation.stream {}
    }

    /// As the API shows it.
    var view: API.ExportJob {
        status.withLock { status in
            var view = API.ExportJob(
                id: id, kind: kind, project: project.description, state: status.state.rawValue, progress: status.progress,
                contentType: contentType, fileName: fileName)
            view.error = status.error
            view.bytes = status.bytes
            view.seconds = status.outcome?.seconds
            view.frames = status.outcome?.frames
            view.shots = status.outcome?.shots
            view.media = status.outcome?.media
            view.notes = status.outcome?.notes
            return view
        }
    }
}
