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
    /// Renders of single panels asked for and not answered yet: more than this
    /// at once are refused (busy) rather than queued without end.
    nonisolated let panels = AdmissionGate(capacity: 16)

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

    // MARK: - Print sheets, a page at a time

    /// The print sheets being sent, by number: each keeps its PDF surface
    /// here, on the render thread, between the pages its answer asks for.
    private var sheets: [Int: PrintSheet] = [:]
    private var lastSheet = 0
    /// The most print sheets sent at once (each holds a PDF surface: its fonts, a page).
    static let maximumOpenSheets = 4

    /// Plans a print sheet and draws its first page (so that a failure is
    /// still an error answer, not a cut-off file).
    /// - Returns: the sheet's number for `nextChunk(ofSheet:)`, its page count and the first bytes;
    ///   nil when `maximumOpenSheets` are being sent already (busy).
    /// - Throws: `RenderError.outOfRange` for pages the sheet does not have; `.cairo` if drawing fails.
    func openSheet(
        scenes: [SceneView], of project: ProjectView, title: String, date: String, layout: PrintSheetLayout, pictureFiles: [BlobHash: String]
    ) throws(RenderError) -> (sheet: Int, pageCount: Int, first: [UInt8])? {
        guard sheets.count < Self.maximumOpenSheets else { return nil }
        let sheet = try PrintSheet(scenes: scenes, of: project, title: title, date: date, layout: layout, pictureFiles: pictureFiles)
        let first = try sheet.nextChunk() ?? []
        lastSheet += 1
        sheets[lastSheet] = sheet
        return (lastSheet, sheet.pageCount, first)
    }

    /// The next page's bytes (the file's end after the last page); nil once
    /// the file is complete, when the sheet is forgotten.
    /// - Throws: `RenderError.cairo` if drawing fails (the sheet is forgotten).
    func nextChunk(ofSheet number: Int) throws(RenderError) -> [UInt8]? {
        guard let sheet = sheets[number] else { return nil }
        do {
            guard let chunk = try sheet.nextChunk() else {
                sheets[number] = nil
                return nil
            }
            return chunk
        } catch {
            sheets[number] = nil
            throw error
        }
    }

    /// Forgets a sheet whose answer was abandoned (the client left).
    func closeSheet(_ number: Int) {
        sheets[number] = nil
    }

    /// `ContactSheet.render` on the render thread.
    /// - Throws: `RenderError` as the renderer throws it.
    func contactSheet(
        _ scenes: [SceneView], of project: ProjectView, title: String, width: Int, pictureFiles: [BlobHash: String]
    ) throws(RenderError) -> [UInt8] {
        try ContactSheet.render(scenes, of: project, title: title, width: width, pictureFiles: pictureFiles)
    }

    /// `AnimaticFrame.render` on the render thread.
    /// - Throws: `RenderError` as the renderer throws it.
    func renderFrame(
        _ shot: ShotView, width: Int, height: Int, caption: String?, pictureFiles: [BlobHash: String]
    ) throws(RenderError) -> [UInt8] {
        try AnimaticFrame.render(shot, width: width, height: height, caption: caption, pictureFiles: pictureFiles)
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
