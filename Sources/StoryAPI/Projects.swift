package import StoryCore

extension API {
    /// A project as `GET /v1/projects` lists it.
    package struct ProjectSummary: Codable, Sendable {
        package let id: String
        /// Always `project`.
        package let kind: String
        package let name: String?
        /// When it was created (milliseconds since 1970), and as ISO 8601 in `createdAt`.
        package let created: Int64
        package let createdAt: String
        /// In the trash on this machine (deleted for everyone, or hidden here).
        package let deleted: Bool
        /// How it is in the trash, by whom and since when; absent when it is not.
        package let trash: Trash?
        /// The project's own tags, sorted case-insensitively.
        package let tags: [String]

        package init(id: String, name: String?, created: Int64, deleted: Bool, trash: Trash? = nil, tags: [String] = []) {
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
    package struct Trash: Codable, Sendable, Equatable {
        /// `everyone` or `this-machine`.
        package let scope: String
        /// The peer id of who deleted it (for `this-machine`, this daemon).
        package let by: String?
        /// When (milliseconds since 1970; for `everyone`, on the deleting
        /// author's clock), and the same as ISO 8601 in `at`.
        package let time: Int64?
        package let at: String?
        /// When this machine purges it (`trash-retention` after it learned of
        /// the delete, once every peer it is shared with has the delete);
        /// absent when it never will (retention 0, or hidden here only).
        package let purgeTime: Int64?
        package let purgeAt: String?

        /// The scope of a project deleted for everyone.
        package static let everyone = "everyone"
        /// The scope of a project hidden on this machine only.
        package static let thisMachine = "this-machine"

        package init(scope: String, by: String?, time: Int64?, purgeTime: Int64?) {
            self.scope = scope
            self.by = by
            self.time = time
            self.at = time.map { API.isoTime(milliseconds: $0) }
            self.purgeTime = purgeTime
            self.purgeAt = purgeTime.map { API.isoTime(milliseconds: $0) }
        }

        /// Whether it was deleted for everyone (not only hidden here).
        package var isForEveryone: Bool { scope == Self.everyone }
    }

    /// `POST /v1/projects/{id}/purge`: what was purged here.
    package struct PurgeResult: Codable, Sendable {
        /// The project's id.
        package let purged: String
        package let name: String?
        /// Configured peers it is shared with that had not received the
        /// delete (only with `force=true`): they keep the project.
        package let awaiting: [String]

        package init(purged: String, name: String?, awaiting: [String]) {
            self.purged = purged
            self.name = name
            self.awaiting = awaiting
        }
    }

    /// `POST /v1/projects` (and `PATCH /v1/projects/{id}`, which reads `name` only).
    package struct CreateProject: Codable, Sendable {
        package let name: String
        /// The library folder for its entry (an id, a well-known name or a path); default the root.
        package let folder: String?

        package init(name: String, folder: String? = nil) {
            self.name = name
            self.folder = folder
        }
    }

    /// `POST /v1/projects/{id}/copy`.
    package struct CopyProject: Codable, Sendable {
        package let name: String?
        package let folder: String?

        package init(name: String? = nil, folder: String? = nil) {
            self.name = name
            self.folder = folder
        }
    }

    /// `GET /v1/projects/{id}`: the visible state. A stroke's points are a
    /// flat `[x, y, pressure, …]` array with its stroke transform applied.
    package struct Project: Codable, Sendable {
        package let id: String
        package let name: String?
        package let title: String?
        package let description: String?
        package let aspectRatio: Double
        /// The onion-skin tints the project chose (`#rrggbbaa`): the shots
        /// before the drawn one, and after it; absent: red and green.
        package let onionBefore: String?
        package let onionAfter: String?
        package let createdAt: Int64?
        package let updatedAt: Int64?
        /// In the trash on this machine (deleted for everyone, or hidden here).
        package let deleted: Bool
        /// How it is in the trash, by whom and since when; absent when it is not.
        package let trash: Trash?
        /// This daemon's role: owner, editor, reader, or none (not a member).
        package let role: String
        /// Whether this daemon's edits are refused (it is a reader or not a member).
        package let readOnly: Bool
        /// The peer id of the identity that founded it.
        package let owner: String?
        /// Made before signed authorship: kept and editable here, never synced.
        package let legacy: Bool
        /// The project's tags, sorted case-insensitively.
        package let tags: [String]
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        package var conflicts: [String]?
        package var scenes: [Scene]
        /// Set when this is the project as it was at a past version (`?at=`):
        /// that version's id. Absent for the present.
        package var version: String? = nil

        package init(
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

    package struct Scene: Codable, Sendable {
        package let id: String
        package let number: Int
        package let title: String?
        package let description: String?
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        package var conflicts: [String]?
        package var shots: [Shot]

        package init(id: String, number: Int, title: String?, description: String?, shots: [Shot]) {
            self.id = id
            self.number = number
            self.title = title
            self.description = description
            self.shots = shots
        }
    }

    package struct Shot: Codable, Sendable {
        package let id: String
        /// `1A`-style label: scene number and position.
        package let label: String
        /// `#rrggbbaa`.
        package let background: String?
        package let caption: String?
        package let notes: String?
        /// The line spoken in the shot, and what happens in it.
        package let dialogue: String?
        package let action: String?
        /// Seconds.
        package let duration: Double?
        /// The shot's sound, when it has one.
        package var sound: Media?
        package let aspectRatio: Double
        /// The shot's tags, sorted case-insensitively.
        package let tags: [String]
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        package var conflicts: [String]?
        package var layers: [Layer]

        package init(
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

    package struct Layer: Codable, Sendable {
        package let id: String
        package let name: String?
        package let visible: Bool
        package let locked: Bool
        package let opacity: Double
        /// `[a, b, c, d, tx, ty]`.
        package let transform: [Double]
        package let group: String?
        /// `strokes` or `image`.
        package let kind: String
        /// An image layer's picture, and how it fits the frame (`contain`, `cover`, `stretch`).
        package var image: Media?
        package let fit: String?
        /// Fields whose value overwrote a value written concurrently, still
        /// open (`storyteller conflicts` lists them); absent when none.
        package var conflicts: [String]?
        package var strokes: [Stroke]

        package init(
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

    package struct Stroke: Codable, Sendable {
        package let id: String
        package let brush: BrushStyle
        /// Flat `[x, y, pressure, …]`, the stroke's transform applied.
        package let points: [Double]

        package init(id: String, brush: BrushStyle, points: [Double]) {
            self.id = id
            self.brush = brush
            self.points = points
        }
    }

    /// A stroke's brush as answers show it (every field present).
    package struct BrushStyle: Codable, Sendable {
        package let tool: String
        /// `#rrggbbaa`.
        package let color: String
        /// A fraction of the frame's width.
        package let width: Float
        package let cap: String
        package let join: String

        package init(tool: String, color: String, width: Float, cap: String, join: String) {
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
    package struct Media: Codable, Sendable, Equatable {
        /// SHA-256 of the bytes, 64 hex digits.
        package var blob: String
        /// MIME type, e.g. `image/png`.
        package var type: String
        package var bytes: UInt64
        package var width: UInt32?
        package var height: UInt32?
        /// Seconds (sound).
        package var duration: Double?
        /// Seconds into the shot at which the sound starts.
        package var offset: Double?
        /// `complete`, `partial` or `missing` on this daemon (answers only).
        package var state: String?

        package init(_ media: MediaReference, state: String? = nil) {
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
        package func reference() -> Result<MediaReference, APIError> {
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
