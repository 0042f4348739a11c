extension API {
    /// One hit of `GET /v1/search?q=`.
    public struct SearchHit: Codable, Sendable {
        public let project: String
        public let projectName: String?
        /// The matching object (absent for the project itself).
        public let object: String?
        public let label: String
        public let field: String
        public let text: String
        /// True when `text` is not the field's value but one it overwrote
        /// (a concurrent edit; `storyteller conflicts` lists it); absent otherwise.
        public var overwritten: Bool?
        /// The field as `conflicts keep` takes it, with `overwritten`.
        public var reference: String?

        public init(
            project: String, projectName: String?, object: String?, label: String, field: String, text: String, overwritten: Bool? = nil,
            reference: String? = nil
        ) {
            self.project = project
            self.projectName = projectName
            self.object = object
            self.label = label
            self.field = field
            self.text = text
            self.overwritten = overwritten
            self.reference = reference
        }
    }

    /// One line of the event stream (`GET /v1/events`).
    public struct Event: Codable, Sendable {
        /// `hello`, `document.changed`, `library.changed`, `document.created`,
        /// `peer.connected`, `peer.disconnected`, `peer.pending`, `peers.changed`, `shares.changed`,
        /// `media.started`, `media.progressed`, `media.completed`, `media.failed`,
        /// `conflict.opened` (a text field of `document` kept one value over
        /// another written concurrently: `GET /v1/projects/{id}/conflicts`).
        public let type: String
        public let time: Int64
        public var document: String? = nil
        public var kind: String? = nil
        /// For changes: `local`, `peer` or `snapshot`.
        public var origin: String? = nil
        public var peer: String? = nil
        public var changes: Int? = nil
        public var address: String? = nil
        /// `time` as ISO 8601 (UTC).
        public var at: String?
        /// Media transfers (`media.started`, `media.progressed`,
        /// `media.completed`, `media.failed`): the blob's SHA-256, its size,
        /// the bytes held so far, and why a transfer failed.
        public var blob: String? = nil
        public var bytes: UInt64? = nil
        public var heldBytes: UInt64? = nil
        public var reason: String? = nil

        public init(
            type: String, time: Int64, document: String? = nil, kind: String? = nil, origin: String? = nil, peer: String? = nil,
            changes: Int? = nil, address: String? = nil
        ) {
            self.type = type
            self.time = time
            self.at = API.isoTime(milliseconds: time)
            self.document = document
            self.kind = kind
            self.origin = origin
            self.peer = peer
            self.changes = changes
            self.address = address
        }
    }
}
