import StoryCore

extension API {
    /// A project as `GET /v1/projects` lists it.
    public struct ProjectSummary: Codable, Sendable {
        public let id: String
        /// Always `project`.
        public let kind: String
        public let name: String?
        /// When it was created (milliseconds since 1970), and as ISO 8601 in `createdAt`.
        public let created: Int64
        public let createdAt: String
        /// In the trash on this machine (deleted for everyone, or hidden here).
        public let deleted: Bool
        /// How it is in the trash, by whom and since when; absent when it is not.
        public let trash: Trash?
        /// The project's own tags, sorted case-insensitively.
        public let tags: [String]

        public init(id: String, name: String?, created: Int64, deleted: Bool, trash: Trash? = nil, tags: [String] = []) {
            self.id = id
            self.kind = "project"
            self.name = name
            self.created = created
            self.createdAt = API.isoTime(milliseconds: created)
            self.deleted = deleted
            self.trash = trash
            self.tags = tags
        }
    }

    /// A project in the trash: deleted for everyone who shares it (a synced
    /// change, restorable by any owner or editor), or hidden on this machine
    /// only (a reader's delete).
    public struct Trash: Codable, Sendable, Equatable {
        /// `everyone` or `this-machine`.
        public let scope: String
        /// The peer id of who deleted it (for `this-machine`, this daemon).
        public let by: String?
        /// When (milliseconds since 1970; for `everyone`, on the deleting
        /// author's clock), and the same as ISO 8601 in `at`.
        public let time: Int64?
        public let at: String?
        /// When this machine purges it (`trash-retention` after it learned of
        /// the delete, once every peer it is shared with has the delete);
        /// absent when it never will (retention 0, or hidden here only).
        public let purgeTime: Int64?
        public let purgeAt: String?

        /// The scope of a project deleted for everyone.
        public static let everyone = "everyone"
        /// The scope of a project hidden on this machine only.
        public static let thisMachine = "this-machine"

        public init(scope: String, by: String?, time: Int64?, purgeTime: Int64?) {
            self.scope = scope
            self.by = by
            self.time = time
            self.at = time.map { API.isoTime(milliseconds: $0) }
            self.purgeTime = purgeTime
            self.purgeAt = purgeTime.map { API.isoTime(milliseconds: $0) }
        }

        /// Whether it was deleted for everyone (not only hidden here).
        public var isForEveryone: Bool { scope == Self.everyone }
    }

    /// `POST /v1/projects/{id}/purge`: what was purged here.
    public struct PurgeResult: Codable, Sendable {
        /// The project's id.
        public let purged: String
        public let name: String?
        /// Configured peers it is shared with that had not received the
        /// delete (only with `force=true`): they keep the project.
        public let awaiting: [String]

        public init(purged: String, name: String?, awaiting: [String]) {
            self.purged = purged
            self.name = name
            self.awaiting = awaiting
        }
    }

    /// `POST /v1/projects` (and `PATCH /v1/projects/{id}`, which reads `name` only).
    public struct CreateProject: Codable, Sendable {
        public let name: String
        /// The library folder for its entry (an id, a well-known name or a path); default the root.
        public let folder: String?

        public init(name: String, folder: String? = nil) {
            self.name = name
            self.folder = folder
        }
    }

    /// `POST /v1/projects/{id}/copy`.
    public struct CopyProject: Codable, Sendable {
        public let name: String?
        public let folder: String?

        public init(name: String? = nil, folder: String? = nil) {
            self.name = name
            self.folder = folder
        }
    }

    /// `GET /v1/projects/{id}`: the visible state. A stroke's points are a
    /// flat `[x, y, pressure, …]` array with its stroke transform applied.
    public struct Project: Codable, Sendable {
        public let id: String
        public let name: String?
        public let title: String?
        public let description: String?
        public let aspectRatio: Double
        /// The onion-skin tints the project chose (`#rrggbbaa`): the shots
        /// before the drawn one, and after it; absent: red and green.
        public let onionBefore: String?
        public let onionAfter: String?
        public let createdAt: Int64?
        public let updatedAt: Int64?
        /// In the trash on this machine (deleted for everyone, or hidden here).
        public let deleted: Bool
        /// How it is in the trash, by whom and since when; absent when it is not.
        public let trash: Trash?
        /// This daemon's role: owner, editor, reader, or none (not a member).
        public let role: String
        /// Whether this daemon's edits are refused (it is a reader or not a member).
        public let readOnly: Bool
        /// The peer id of the identity that founded it.
        public let owner: String?
        /// Made before signed authorship: kept and editable here, never synced.
        public let legacy: Bool
        /// The project's tags, sorted case-insensitively.
        public let tags: [String]
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        public var conflicts: [String]?
        public var scenes: [Scene]
        /// Set when this is the project as it was at a past version (`?at=`):
        /// that version's id. Absent for the present.
        public var version: String? = nil

        public init(
            id: String, name: String?, title: String?, description: String?, aspectRatio: Double, createdAt: Int64?, updatedAt: Int64?,
            deleted: Bool, trash: Trash? = nil, role: String, readOnly: Bool, owner: String?, legacy: Bool, tags: [String] = [],
            scenes: [Scene], onionBefore: String? = nil, onionAfter: String? = nil
        ) {
            self.id = id
            self.name = name
            self.title = title
            self.description = description
            self.aspectRatio = aspectRatio
            self.onionBefore = onionBefore
            self.onionAfter = onionAfter
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.deleted = deleted
            self.trash = trash
            self.role = role
            self.readOnly = readOnly
            self.owner = owner
            self.legacy = legacy
            self.tags = tags
            self.scenes = scenes
        }
    }

    public struct Scene: Codable, Sendable {
        public let id: String
        public let number: Int
        public let title: String?
        public let description: String?
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        public var conflicts: [String]?
        public var shots: [Shot]

        public init(id: String, number: Int, title: String?, description: String?, shots: [Shot]) {
            self.id = id
            self.number = number
            self.title = title
            self.description = description
            self.shots = shots
        }
    }

    public struct Shot: Codable, Sendable {
        public let id: String
        /// `1A`-style label: scene number and position.
        public let label: String
        /// `#rrggbbaa`.
        public let background: String?
        public let caption: String?
        public let notes: String?
        /// The line spoken in the shot, and what happens in it.
        public let dialogue: String?
        public let action: String?
        /// Seconds.
        public let duration: Double?
        /// The shot's sound, when it has one.
        public var sound: Media?
        public let aspectRatio: Double
        /// The shot's tags, sorted case-insensitively.
        public let tags: [String]
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        public var conflicts: [String]?
        public var layers: [Layer]

        public init(
            id: String, label: String, background: String?, caption: String?, notes: String?, dialogue: String? = nil, action: String? = nil,
            duration: Double?, sound: Media? = nil, aspectRatio: Double, tags: [String] = [], layers: [Layer]
        ) {
            self.id = id
            self.label = label
            self.background = background
            self.caption = caption
            self.notes = notes
            self.dialogue = dialogue
            self.action = action
            self.duration = duration
            self.sound = sound
            self.aspectRatio = aspectRatio
            self.tags = tags
            self.layers = layers
        }
    }

    public struct Layer: Codable, Sendable {
        public let id: String
        public let name: String?
        public let visible: Bool
        public let locked: Bool
        public let opacity: Double
        /// `[a, b, c, d, tx, ty]`.
        public let transform: [Double]
        public let group: String?
        /// `strokes` or `image`.
        public let kind: String
        /// An image layer's picture, and how it fits the frame (`contain`, `cover`, `stretch`).
        public var image: Media?
        public let fit: String?
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        public var conflicts: [String]?
        public var strokes: [Stroke]

        public init(
            id: String, name: String?, visible: Bool, locked: Bool, opacity: Double, transform: [Double], group: String?,
            image: Media? = nil, fit: String? = nil, strokes: [Stroke]
        ) {
            self.kind = image == nil ? "strokes" : "image"
            self.image = image
            self.fit = image == nil ? nil : fit
            self.id = id
            self.name = name
            self.visible = visible
            self.locked = locked
            self.opacity = opacity
            self.transform = transform
            self.group = group
            self.strokes = strokes
        }
    }

    public struct Stroke: Codable, Sendable {
        public let id: String
        public let brush: BrushStyle
        /// Flat `[x, y, pressure, …]`, the stroke's transform applied.
        public let points: [Double]

        public init(id: String, brush: BrushStyle, points: [Double]) {
            self.id = id
            self.brush = brush
            self.points = points
        }
    }

    /// A stroke's brush as answers show it (every field present).
    public struct BrushStyle: Codable, Sendable {
        public let tool: String
        /// `#rrggbbaa`.
        public let color: String
        /// A fraction of the frame's width.
        public let width: Float
        public let cap: String
        public let join: String

        public init(tool: String, color: String, width: Float, cap: String, join: String) {
            self.tool = tool
            self.color = color
            self.width = width
            self.cap = cap
            self.join = join
        }
    }
}

extension API {
    /// An image or a sound as answers show it (and as `set` takes it): the
    /// blob's SHA-256 in hex, its MIME type and size, the picture's pixel size
    /// or the sound's duration and start offset, and whether this daemon holds
    /// the bytes yet.
    public struct Media: Codable, Sendable, Equatable {
        /// SHA-256 of the bytes, 64 hex digits.
        public var blob: String
        /// MIME type, e.g. `image/png`.
        public var type: String
        public var bytes: UInt64
        public var width: UInt32?
        public var height: UInt32?
        /// Seconds (sound).
        public var duration: Double?
        /// Seconds into the shot at which the sound starts.
        public var offset: Double?
        /// `complete`, `partial` or `missing` on this daemon (answers only).
        public var state: String?

        public init(_ media: MediaReference, state: String? = nil) {
            blob = media.hash.description
            type = media.type.mimeType
            bytes = media.byteCount
            width = media.type.isImage ? media.pixelWidth : nil
            height = media.type.isImage ? media.pixelHeight : nil
            duration = media.type.isSound ? media.duration : nil
            offset = media.type.isSound ? media.offset : nil
            self.state = state
        }

        /// The reference it describes, or a sentence saying what is wrong.
        public func reference() -> Result<MediaReference, APIError> {
            guard let hash = BlobHash(hex: blob) else {
                return .failure(APIError.badField("blob", "must be a SHA-256 in 64 hex digits"))
            }
            guard let mediaType = MediaType(mimeType: type) else {
                let known = MediaType.allCases.map(\.mimeType).joined(separator: ", ")
                return .failure(APIError.badField("type", "is '\(type)', not a media type Storyteller takes (\(known))"))
            }
            let media = MediaReference(
                hash: hash, type: mediaType, byteCount: bytes, pixelWidth: width ?? 0, pixelHeight: height ?? 0,
                duration: duration ?? 0, offset: offset ?? 0)
            guard media.isWellFormed else { return .failure(APIError(.badRequest, "the media's size, pixels or duration are out of range")) }
            return .success(media)
        }
    }
}
