/// The files a panel is rendered to. One drawing code path (cairo) writes all three.
package enum PanelFormat: String, CaseIterable, Hashable, Sendable {
    /// A bitmap (8-bit RGBA), `width`×`height` pixels.
    case png
    /// Vector drawing; pictures are embedded (their original JPEG or PNG bytes when drawn whole).
    case svg
    /// One page, vector strokes; a pixel of the requested width is a CSS pixel (0.75 pt).
    case pdf

    /// The HTTP `Content-Type` of such a file.
    package var contentType: String {
        switch self {
        case .png: "image/png"
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        }
    }

    /// Whether the file keeps strokes as vectors (pictures are then kept at up to twice their drawn size).
    var isVector: Bool { self != .png }
}
