extension API {
    /// `PUT /v1/projects/{id}/shares/{peer}` and `PUT /v1/library/shares/{peer}`.
    public struct SetShare: Codable, Sendable {
        /// `read-write` (the default) or `read-only`.
        public let mode: String?
        public init(mode: String? = nil) { self.mode = mode }
    }

    /// A share: a peer's rights to a project or to the library.
    public struct Share: Codable, Sendable {
        /// The shared document (a project, or the library).
        public let project: String
        public let peer: String
        /// `read-write` or `read-only` (the owner's is read-write).
        public let mode: String
        /// The role in the access list: owner, editor or reader.
        public let role: String

        public init(project: String, peer: String, mode: String, role: String) {
            self.project = project
            self.peer = peer
            self.mode = mode
            self.role = role
        }
    }

    /// `{"unshared": peer}`.
    public struct Unshared: Codable, Sendable {
        public let unshared: String
        public init(unshared: String) { self.unshared = unshared }
    }

    /// One line of `GET /v1/shares`: a peer's rights to a document here, and why it has them.
    public struct ShareListing: Codable, Sendable {
        public let document: String
        /// `project`, `folder` (a shared folder) or `library` (this daemon's whole library).
        public let kind: String
        public let name: String?
        /// Where it is in the library (`Films/Shorts/Night Train`), when listed.
        public let path: String?
        public let peer: String
        /// owner, editor or reader.
        public let role: String
        /// `read-write` or `read-only`.
        public let mode: String
        /// Why the peer has it: `direct` (shared with it on its own), `folder PATH`
        /// (listed in a shared folder the peer is a member of), `library`.
        public let via: [String]

        public init(document: String, kind: String, name: String?, path: String?, peer: String, role: String, mode: String, via: [String]) {
            self.document = document
            self.kind = kind
            self.name = name
            self.path = path
            self.peer = peer
            self.role = role
            self.mode = mode
            self.via = via
        }
    }
}
