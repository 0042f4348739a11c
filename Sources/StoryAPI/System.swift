extension API {
    /// One hit of `GET /v1/search?q=`.
    package struct SearchHit: Codable, Sendable {
        package let project: String
        package let projectName: String?
        /// The matching object (absent for the project itself).
        package let object: String?
        package let label: String
        package let field: String
        package let text: String
        /// True when `text` is not the field's value but one it overwrote
        /// (a concurrent edit; `storyteller conflicts` lists it); absent otherwise.
        package var overwritten: Bool?
        /// The field as `conflicts keep` takes it, with `overwritten`.
        package var reference: String?

        package init(
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
    package struct Event: Codable, Sendable {
        /// `hello`, `document.changed`, `library.changed`, `document.created`,
        /// `peer.connected`, `peer.disconnected`, `peer.pending`, `peers.changed`, `shares.changed`,
        /// `media.started`, `media.progressed`, `media.completed`, `media.failed`,
        /// `conflict.opened` (a text field of `document` kept one value over
        /// another written concurrently: `GET /v1/projects/{id}/conflicts`).
        package let type: String
        package let time: Int64
        package var document: String? = nil
        package var kind: String? = nil
        /// For changes: `local`, `peer` or `snapshot`.
        package var origin: String? = nil
        package var peer: String? = nil
        package var changes: Int? = nil
        package var address: String? = nil
        /// `time` as ISO 8601 (UTC).
        package var at: String?
        /// Media transfers (`media.started`, `media.progressed`,
        /// `media.completed`, `media.failed`): the blob's SHA-256, its size,
        /// the bytes held so far, and why a transfer failed.
        package var blob: String? = nil
        package var bytes: UInt64? = nil
        package var heldBytes: UInt64? = nil
        package var reason: String? = nil

        package init(
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
