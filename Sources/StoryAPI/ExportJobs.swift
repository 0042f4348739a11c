extension API {
    /// What `POST /v1/projects/{id}/exports` is asked to make. Fields a kind
    /// does not use are ignored; absent ones take their defaults.
    public struct ExportRequest: Codable, Sendable {
        /// `animatic`, `edl`, `fcpxml` or `replay`.
        public var kind: String
        /// Only this scene (its number); nil: the whole project.
        public var scene: Int?
        /// Only the shots carrying this tag (in any case); nil: every shot.
        public var tag: String?
        /// The frame's size in pixels (animatic; even numbers for the video codecs); a
        /// replay's panel width (its height follows from the shot's aspect ratio).
        public var width: Int?
        public var height: Int?
        /// Frames a second (1 to 120).
        public var fps: Int?
        /// Captions (else dialogue) burned in and as a subtitle track (animatic).
        public var captions: Bool?
        /// `mp4` (H.264 + AAC), `webm` (VP9 + Opus) or `gif` (a looping preview, no sound) (animatic).
        public var format: String?
        /// Where the stills and sounds an EDL or FCPXML names will be (an absolute
        /// directory: FCPXML wants file URLs); nil: beside the file, as `NAME_media/`.
        public var mediaDirectory: String?
        /// A sound this daemon holds (its blob, uploaded with `POST /v1/media/sounds`) played
        /// under the whole animatic from its start (animatic).
        public var soundtrack: String?
        /// The shot a replay plays (its id) (replay).
        public var shot: String?
        /// How much faster than they were made the strokes and pauses play (more than 0; default 1) (replay).
        public var speed: Double?
        /// The longest pause between strokes, in seconds (default 0.3) (replay).
        public var maxPause: Double?
        /// The project as it was at this version (any form `?at=` takes: an id,
        /// a name, a time); nil: as it is now (animatic, EDL, FCPXML).
        public var at: String?

        public init(
            kind: String, scene: Int? = nil, width: Int? = nil, height: Int? = nil, fps: Int? = nil, captions: Bool? = nil,
            format: String? = nil, mediaDirectory: String? = nil, soundtrack: String? = nil, tag: String? = nil
        ) {
            self.kind = kind
            self.scene = scene
            self.tag = tag
            self.width = width
            self.height = height
            self.fps = fps
            self.captions = captions
            self.format = format
            self.mediaDirectory = mediaDirectory
            self.soundtrack = soundtrack
        }

        /// The kinds there are.
        public static let kinds = ["animatic", "edl", "fcpxml", "replay"]
        /// A replay's formats.
        public static let replayFormats = ["mp4", "gif", "svg"]
        /// A replay's panel width when none is asked for, and the widths it may have (an animatic's).
        public static let defaultReplayWidth = 1280
        public static let replayWidths = 16...7680
        /// The animatic's containers.
        public static let formats = ["mp4", "webm", "gif"]
        public static let defaultWidth = 1920
        public static let defaultHeight = 1080
        public static let defaultFPS = 24
    }

    /// An export job as `GET /v1/exports/{job}` shows it.
    public struct ExportJob: Codable, Sendable {
        public var id: String
        public var kind: String
        public var project: String
        /// `queued`, `running`, `done` or `failed` (a cancelled job is deleted).
        public var state: String
        /// 0 to 1.
        public var progress: Double
        /// Why it failed.
        public var error: String?
        /// The file's size, once done.
        public var bytes: UInt64?
        /// The file's `Content-Type` and a name for it.
        public var contentType: String
        public var fileName: String
        /// What the file holds, once done: seconds, frames, shots (an animatic or a timeline).
        public var seconds: Double?
        public var frames: Int?
        public var shots: Int?
        /// Media the file refers to that the client fetches beside it (EDL, FCPXML): shot stills and sounds.
        public var media: [ExportMedia]?
        /// What the file leaves out and why, in words (a sound whose bytes are
        /// not a sound, a picture not received yet): the export is made all the same.
        public var notes: [String]?

        public init(id: String, kind: String, project: String, state: String, progress: Double, contentType: String, fileName: String) {
            self.id = id
            self.kind = kind
            self.project = project
            self.state = state
            self.progress = progress
            self.contentType = contentType
            self.fileName = fileName
        }
    }

    /// A file an EDL or FCPXML names, for the client to fetch into the media directory.
    public struct ExportMedia: Codable, Sendable, Equatable {
        /// Its name in the media directory (`1-2.png`, `sound-3fa1….wav`).
        public var name: String
        /// `still` (fetch `GET …/shots/{shot}/render?format=png`) or `sound` (fetch `GET …/media/{blob}`).
        public var kind: String
        /// The shot a still shows.
        public var shot: String?
        /// The blob a sound is.
        public var blob: String?

        public init(name: String, kind: String, shot: String? = nil, blob: String? = nil) {
            self.name = name
            self.kind = kind
            self.shot = shot
            self.blob = blob
        }
    }
}
