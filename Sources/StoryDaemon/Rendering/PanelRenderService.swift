import Dispatch
import StoryCore
import StoryRender

/// Renders panels one at a time on a thread of its own (a serial executor on
/// a dispatch queue), never on a NIO event loop, the store's executor or the
/// cooperative pool: drawing is CPU-bound C code that can take a while for a
/// large panel, and sync and the control API must not wait behind it. One at
/// a time also bounds the memory renders take, whatever arrives at once
/// (the largest surface is 8192 pixels wide, 4 bytes a pixel).
actor PanelRenderService {
    nonisolated let executor: RenderExecutor

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// - Parameter label: the thread's (dispatch queue's) name.
    init(label: String = "storyteller.render") {
        executor = RenderExecutor(label: label)
    }

    /// `PanelRenderer.render` on the render thread.
    /// - Throws: `RenderError` as the renderer throws it.
    func render(
        _ shot: ShotView, in project: ProjectView, as format: PanelFormat, width: Int, onion: Int, pictureFiles: [BlobHash: String]
    ) throws(RenderError) -> [UInt8] {
        try PanelRenderer.render(shot, in: project, as: format, width: width, onion: onion, pictureFiles: pictureFiles)
    }
}

/// A serial executor on a dedicated dispatch queue.
final class RenderExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .utility)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
