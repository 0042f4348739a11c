extension API {
    /// What `GET /v1/projects/{id}/shots/{shot}/render` draws a shot as (`?format=`).
    package enum RenderFormat: String, CaseIterable, Sendable {
        case png, svg, pdf

        /// The format when none is asked for (the route's first and only format used to be SVG).
        package static let `default` = RenderFormat.svg
        /// The widths that may be asked for (`?width=`), in pixels (a PDF page: CSS pixels, 0.75 pt each).
        package static let widths = 16...8192
        /// The width when none is asked for.
        package static let defaultWidth = 1600
        /// How many shots on each side an onion skin may show (`?onion=`).
        package static let onionCounts = 0...10

        /// The answer's `Content-Type`.
        package var contentType: String {
            switch self {
            case .png: "image/png"
            case .svg: "image/svg+xml"
            case .pdf: "application/pdf"
            }
        }

        /// The format a file name's extension names (`.png`, `.svg`, `.pdf`, in any case), if any.
        package init?(fileName: String) {
            guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
            self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
        }
    }
}
