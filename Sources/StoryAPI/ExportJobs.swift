extension API {
    /// What `POST /v1/projects/{id}/exports` is asked to make. Fields a kind
    /// does not use are ignored; absent ones take their defaults.
    package struct ExportRequest: Codable, Sendable {
        /// `animatic`, `edl`, `fcpxml` or `replay`.
        package var kind: String
        /// Only this scene (its number); nil: the whole project.
        package var scene: Int?
        /// Only the shots carrying this tag (in any case); nil: every shot.
        package var tag: String?
        /// The frame's size in pixels (animatic; even numbers for the video codecs); a
        /// replay's panel width (its height follows from the shot's aspect ratio).
        package var width: Int?
        package var height: Int?
        /// Frames a second (1 to 120).
        package var fps: Int?
        /// Captions (else dialogue) burned in and as a subtitle track (animatic).
        package var captions: Bool?
        /// `mp4` (H.264 + AAC), `webm` (VP9 + Opus) or `gif` (a looping preview, no sound) (animatic).
        package var format: String?
        /// Where the stills and sounds an EDL or FCPXML names will be (an absolute
        /// directory: FCPXML wants file URLs); nil: beside the file, as `NAME_media/`.
        package var mediaDirectory: String?
        /// A sound this daemon holds (its blob, uploaded with `POST /v1/media/sounds`) played
        /// under the whole animatic from its start (animatic).
        package var soundtrack: String?
        /// The shot a replay plays (its id) (replay).
        package var shot: String?
        /// How much faster than they were made the strokes and pauses play (more than 0; default 1) (replay).
        package var speed: Double?
        /// The longest pause between strokes, in seconds (default 0.3) (replay).
        package var maxPause: Double?
        /// The project as it was at this version (any form `?at=` takes: an id,
        /// a name, a time); nil: as it is now (animatic, EDL, FCPXML).
        package var at: String?

        package init(
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
        package static let kinds = ["animatic", "edl", "fcpxml", "replay"]
        /// A replay's formats.
        package static let replayFormats = ["mp4", "gif", "svg"]
        /// A replay's panel width when none is asked for, and the widths it may have (an animatic's).
        package static let defaultReplayWidth = 1280
        package static let replayWidths = 16...7680
        /// The animatic's containers.
        package static let formats = ["mp4", "webm", "gif"]
        package static let defaultWidth = 1920
        package static let defaultHeight = 1080
        package static let defaultFPS = 24
    }

    /// An export job as `GET /v1/exports/{job}` shows it.
    package struct ExportJob: Codable, Sendable {
        package var id: String
        package var kind: String
        package var project: String
        /// `queued`, `running`, `done` or `failed` (a cancelled job is deleted).
        package var state: String
        /// 0 to 1.
        package var progress: Double
        /// Why it failed.
        package var error: String?
        /// The file's size, once done.
        package var bytes: UInt64?
        /// The file's `Content-Type` and a name for it.
        package var contentType: String
        package var fileName: String
        /// What the file holds, once done: seconds, frames, shots (an animatic or a timeline).
        package var seconds: Double?
        package var frames: Int?
        package var shots: Int?
        /// Media the file refers to that the client fetches beside it (EDL, FCPXML): shot stills and sounds.
        package var media: [ExportMedia]?
        /// What the file leaves out and why, in words (a sound whose bytes are
        /// not a sound, a picture not received yet): the export is made all the same.
        package var notes: [String]?

        package init(id: String, kind: String, project: String, state: String, progress: Double, contentType: String, fileName: String) {
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
    package struct ExportMedia: Codable, Sendable, Equatable {
        /// Its name in the media directory (`1-2.png`, `sound-3fa1….wav`).
        package var name: String
        /// `still` (fetch `GET …/shots/{shot}/render?format=png`) or `sound` (fetch `GET …/media/{blob}`).
        package var kind: String
        /// The shot a still shows.
        package var shot: String?
        /// The blob a sound is.
        package var blob: String?

        package init(name: String, kind: String, shot: String? = nil, blob: String? = nil) {
            self.name = name
            self.kind = kind
            self.shot = shot
            self.blob = blob
        }
    }
}
