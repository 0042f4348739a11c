extension API {
    /// What `GET /v1/projects/{id}/exports/html` makes: a slideshow page that
    /// plays the boards at their shot durations, in a browser, with nothing
    /// fetched from the network.
    package enum Slideshow {
        /// The panels' width when none is asked for (`?width=`): sharp on a laptop screen, a few hundred KB a panel.
        package static let defaultWidth = 1280
        /// The widths that may be asked for, in pixels.
        package static let widths = 160...4096
        /// How long a shot without a duration is shown, in seconds.
        package static let defaultDuration = 2.0

        /// What the page is answered as (`?form=`).
        package enum Form: String, CaseIterable, Sendable {
            /// One self-contained `.html`, pictures and sounds inline as `data:` URIs.
            case file
            /// An `index.html` referring to files beside it (`SlideshowDirectory`).
            case directory
        }

        /// Whether `path` is one a directory export may write: `index.html`, or
        /// a file name of letters, digits, `-`, `_` and `.` in `panels/` or
        /// `sounds/` (never `..`, never absolute). The CLI checks every path it is told.
        package static func isFilePath(_ path: String) -> Bool {
            if path == "index.html" { return true }
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, ["panels", "sounds"].contains(parts[0]) else { return false }
            let name = parts[1]
            guard !name.isEmpty, name.utf8.count <= 120, !name.hasPrefix("."), !name.contains("..") else { return false }
            return name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
            }
        }
    }

    /// `GET /v1/projects/{id}/exports/html?form=directory`: the page and
    /// where each file beside it comes from.
    package struct SlideshowDirectory: Codable, Sendable, Hashable {
        /// The page (`index.html`), referring to the files by their paths.
        package var index: String
        package var files: [SlideshowFile]

        package init(index: String, files: [SlideshowFile]) {
            self.index = index
            self.files = files
        }
    }

    /// One file of a directory export.
    package struct SlideshowFile: Codable, Sendable, Hashable {
        /// Relative to the directory (`panels/1-2.png`, `sounds/1-2.ogg`).
        package var path: String
        /// The control API target that answers its bytes (`/v1/projects/…/render?…`).
        package var source: String

        package init(path: String, source: String) {
            self.path = path
            self.source = source
        }
    }

    /// A live preview of a project (`POST /v1/projects/{id}/previews`): a
    /// page served on a loopback port, behind a one-time token.
    package struct Preview: Codable, Sendable, Hashable {
        /// Names it in `DELETE /v1/previews/{id}` and `GET /v1/previews/{id}/hold`.
        package var id: String
        package var project: String
        /// The page, token included (`http://127.0.0.1:PORT/TOKEN/`).
        package var url: String
        package var token: String
        package var port: Int
        /// Whether a client holds it open (`hold`); one not held within `PreviewLease.unheldSeconds` is closed.
        package var held: Bool

        package init(id: String, project: String, url: String, token: String, port: Int, held: Bool) {
            self.id = id
            self.project = project
            self.url = url
            self.token = token
            self.port = port
            self.held = held
        }
    }

    /// How long previews live.
    package enum PreviewLease {
        /// A preview nobody holds (`GET /v1/previews/{id}/hold`) within this many seconds of its start is closed.
        package static let unheldSeconds = 30
        /// At most this many previews are open at once (each is a listener and renders).
        package static let maximumOpen = 8
    }
}
