/// The query parameters of the routes that take any, one small type per
/// route (decoded by the daemon with Hummingbird's URL-encoded form
/// decoder: `?deleted=true&tag=night`). Absent parameters are nil; ranges
/// and names are checked by the route, in the user's words.
extension API {
    /// `GET /v1/projects`.
    package struct ProjectsQuery: Codable, Sendable {
        /// Include projects in the trash.
        package var deleted: Bool?
        /// Only projects carrying this tag.
        package var tag: String?
    }

    /// `GET /v1/projects/{id}`.
    package struct ProjectQuery: Codable, Sendable {
        /// false: strokes without their points (smaller, for listings).
        package var points: Bool?
        /// A version (id, name or time): the project as it was then.
        package var at: String?
    }

    /// `POST /v1/projects/{id}/purge`.
    package struct PurgeQuery: Codable, Sendable {
        /// Purge even while peers have not yet seen the delete.
        package var force: Bool?
    }

    /// `GET /v1/projects/{id}/history`.
    package struct HistoryQuery: Codable, Sendable {
        /// 1 to 10,000 (default 100).
        package var limit: Int?
    }

    /// `GET /v1/projects/{id}/versions`.
    package struct VersionsQuery: Codable, Sendable {
        /// 1 to 10,000 (default 100).
        package var limit: Int?
        /// Only versions at or after this time.
        package var since: String?
        /// Only versions that changed this shot (its id).
        package var shot: String?
    }

    /// `GET /v1/projects/{id}/diff`.
    package struct DiffQuery: Codable, Sendable {
        /// The version compared from (required).
        package var from: String?
        /// The version compared to (default now).
        package var to: String?
    }

    /// `GET /v1/projects/{id}/shots/{shot}/render`.
    package struct RenderQuery: Codable, Sendable {
        /// png, svg or pdf.
        package var format: String?
        package var width: Int?
        /// Neighbouring shots drawn as onion skin, 0 to 10.
        package var onion: Int?
        package var at: String?
    }

    /// `GET /v1/projects/{id}/exports/…`: which shots, as of when.
    package struct ExportQuery: Codable, Sendable {
        /// One scene (its id).
        package var scene: String?
        /// Only shots carrying this tag.
        package var tag: String?
        package var at: String?
        /// The contact sheet's width in pixels.
        package var width: Int?
    }

    /// `GET /v1/projects/{id}/exports/slideshow`.
    package struct SlideshowQuery: Codable, Sendable {
        /// file (one HTML file) or directory.
        package var form: String?
        package var width: Int?
        package var tag: String?
    }

    /// `GET /v1/events`.
    package struct EventsQuery: Codable, Sendable {
        /// Only this project's events.
        package var project: String?
        /// sse for Server-Sent Events (else JSON lines).
        package var format: String?
    }

    /// `GET /v1/shares`.
    package struct SharesQuery: Codable, Sendable {
        /// Only what is shared with this peer.
        package var peer: String?
    }

    /// `GET /v1/search`.
    package struct SearchQuery: Codable, Sendable {
        /// The text to find.
        package var q: String?
    }

    /// `POST /v1/projects/{id}/shots/{shot}/images`.
    package struct ImageUploadQuery: Codable, Sendable {
        /// contain, cover or fill (default contain).
        package var fit: String?
        /// The new layer's name.
        package var name: String?
        package var session: String?
        /// The new layer's position, 0 for the bottom.
        package var at: Int?
        /// Under this layer (its id).
        package var below: String?
    }

    /// `PUT /v1/projects/{id}/shots/{shot}/sound`.
    package struct SoundUploadQuery: Codable, Sendable {
        /// Seconds into the shot the sound starts, 0 to 86,400 (decimal).
        package var offset: String?
        package var session: String?
    }

    /// Routes that edit on the user's behalf: the undo session.
    package struct SessionQuery: Codable, Sendable {
        package var session: String?
    }

    /// `POST /v1/packages`.
    package struct PackageImportQuery: Codable, Sendable {
        /// The folder a new project is filed in (default the root).
        package var folder: String?
    }
}
