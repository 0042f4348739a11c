/// The query parameters of the routes that take any, one small type per
/// route (decoded by the daemon with Hummingbird's URL-encoded form
/// decoder: `?deleted=true&tag=night`). Absent parameters are nil; ranges
/// and names are checked by the route, in the user's words.
extension API {
    /// `GET /v1/projects`.
    public struct ProjectsQuery: Codable, Sendable {
        /// Include projects in the trash.
        public var deleted: Bool?
        /// Only projects carrying this tag.
        public var tag: String?
    }

    /// `GET /v1/projects/{id}`.
    public struct ProjectQuery: Codable, Sendable {
        /// false: strokes without their points (smaller, for listings).
        public var points: Bool?
        /// A version (id, name or time): the project as it was then.
        public var at: String?
    }

    /// `POST /v1/projects/{id}/purge`.
    public struct PurgeQuery: Codable, Sendable {
        /// Purge even while peers have not yet seen the delete.
        public var force: Bool?
    }

    /// `GET /v1/projects/{id}/history`.
    public struct HistoryQuery: Codable, Sendable {
        /// 1 to 10,000 (default 100).
        public var limit: Int?
    }

    /// `GET /v1/projects/{id}/versions`.
    public struct VersionsQuery: Codable, Sendable {
        /// 1 to 10,000 (default 100).
        public var limit: Int?
        /// Only versions at or after this time.
        public var since: String?
        /// Only versions that changed this shot (its id).
        public var shot: String?
    }

    /// `GET /v1/projects/{id}/diff`.
    public struct DiffQuery: Codable, Sendable {
        /// The version compared from (required).
        public var from: String?
        /// The version compared to (default now).
        public var to: String?
    }

    /// `GET /v1/projects/{id}/shots/{shot}/render`.
    public struct RenderQuery: Codable, Sendable {
        /// png, svg or pdf.
        public var format: String?
        public var width: Int?
        /// Neighbouring shots drawn as onion skin, 0 to 10.
        public var onion: Int?
        public var at: String?
    }

    /// `GET /v1/projects/{id}/exports/…`: which shots, as of when.
    public struct ExportQuery: Codable, Sendable {
        /// One scene (its id).
        public var scene: String?
        /// Only shots carrying this tag.
        public var tag: String?
        public var at: String?
        /// The contact sheet's width in pixels.
        public var width: Int?
    }

    /// `GET /v1/projects/{id}/exports/slideshow`.
    public struct SlideshowQuery: Codable, Sendable {
        /// file (one HTML file) or directory.
        public var form: String?
        public var width: Int?
        public var tag: String?
    }

    /// `GET /v1/events`.
    public struct EventsQuery: Codable, Sendable {
        /// Only this project's events.
        public var project: String?
        /// sse for Server-Sent Events (else JSON lines).
        public var format: String?
    }

    /// `GET /v1/shares`.
    public struct SharesQuery: Codable, Sendable {
        /// Only what is shared with this peer.
        public var peer: String?
    }

    /// `GET /v1/search`.
    public struct SearchQuery: Codable, Sendable {
        /// The text to find.
        public var q: String?
    }

    /// `POST /v1/projects/{id}/shots/{shot}/images`.
    public struct ImageUploadQuery: Codable, Sendable {
        /// contain, cover or fill (default contain).
        public var fit: String?
        /// The new layer's name.
        public var name: String?
        public var session: String?
        /// The new layer's position, 0 for the bottom.
        public var at: Int?
        /// Under this layer (its id).
        public var below: String?
    }

    /// `PUT /v1/projects/{id}/shots/{shot}/sound`.
    public struct SoundUploadQuery: Codable, Sendable {
        /// Seconds into the shot the sound starts, 0 to 86,400 (decimal).
        public var offset: String?
        public var session: String?
    }

    /// Routes that edit on the user's behalf: the undo session.
    public struct SessionQuery: Codable, Sendable {
        public var session: String?
    }

    /// `POST /v1/packages`.
    public struct PackageImportQuery: Codable, Sendable {
        /// The folder a new project is filed in (default the root).
        public var folder: String?
    }
}
