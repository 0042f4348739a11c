import Foundation
import Hummingbird
import NIOCore
import StoryAPI
import StoryCore
import StoryRender
import StoryStore

/// What a slideshow is made from: a project's shots, their panels drawn by
/// the renderer and their sounds from the blob store. Shared by the HTML
/// export and the live preview.
struct SlideshowSource: Sendable {
    let store: Store
    let blobs: BlobStore
    let renderer: PanelRenderService

    /// The page of a project as it is now (with `tag`, of only the shots
    /// carrying it), and the view it was made from.
    /// - Throws: `StoreError` (the project cannot be read), `APIError` for a
    ///   tag no shot carries.
    func page(of id: DocumentID, media: SlideshowPage.Media, tag: String? = nil) async throws -> (page: SlideshowPage, view: ProjectView) {
        let document = try await store.project(id)
        var view = document.view
        if tag != nil { view.scenes = try ExportsController.shots(of: view.scenes, in: view, taggedWith: tag) }
        let held = Set(await self.media.files(view.shots.compactMap(\.sound), of: id).keys)
        let name = try await store.document(id).name
        let title = [view.title, name].compactMap { $0 }.first { !$0.isEmpty } ?? "Untitled"
        return (SlideshowPage(title: title, slides: SlideshowPage.slides(of: view, holds: held.contains), media: media), view)
    }

    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { ProjectMedia(store: store, blobs: blobs) }

    /// Whether a project may use a blob here (complete, proven for it, of its type).
    func isUsable(_ reference: MediaReference, in project: DocumentID) async -> Bool {
        await media.files([reference], of: project)[reference.hash] != nil
    }

    /// A shot's panel as PNG, at most `width` pixels wide (narrower when the
    /// shot is so tall that the height would pass the renderer's limit).
    /// - Throws: `RenderError` when cairo cannot draw it.
    func panel(_ shot: ShotView, in view: ProjectView, of project: DocumentID, width: Int) async throws -> [UInt8] {
        let files = await media.files(PanelRenderer.pictures(drawnIn: shot), of: project)
        return try await renderer.render(
            shot, in: view, as: .png, width: Self.fittingWidth(width, aspectRatio: shot.aspectRatio), onion: 0, pictureFiles: files)
    }

    /// `width`, or less for a shot so tall that its height would pass the
    /// renderer's 8192 pixels (a 400 from `render`).
    static func fittingWidth(_ width: Int, aspectRatio: Double) -> Int {
        let ratio = aspectRatio.isFinite && aspectRatio > 0 ? aspectRatio : ProjectView.defaultAspectRatio
        return max(16, min(width, Int((8_192 * ratio).rounded(.down))))
    }

    /// The path of a blob held whole here.
    func path(of hash: BlobHash) -> String { blobs.completePath(hash) }

    /// A placeholder for a panel that cannot be drawn, as a `data:` URI
    /// (grey, with the reason), so one bad shot does not end an export.
    static func placeholder(_ label: String) -> String {
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="1280" height="720"><rect width="1280" height="720" fill="#ddd"/>\
            <text x="640" y="360" font-size="40" text-anchor="middle" fill="#555">\(SlideshowPage.escaped(label)) cannot be drawn</text></svg>
            """
        return "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString()
    }

    /// Writes a file's bytes to `writer` as base64, `chunk` bytes (a multiple
    /// of 3, so no padding falls mid-stream) at a time: a large sound never sits whole in memory.
    static func writeBase64(of path: String, to writer: inout any ResponseBodyWriter, chunk: Int = 3 << 16) async throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        var carried = Data()
        while true {
            let data = try handle.read(upToCount: chunk) ?? Data()
            carried += data
            let whole = data.isEmpty ? carried.count : carried.count - carried.count % 3
            if whole > 0 {
                try await writer.write(ByteBuffer(string: carried.prefix(whole).base64EncodedString()))
                carried = Data(carried.dropFirst(whole))
            }
            if data.isEmpty { break }
        }
    }
}
