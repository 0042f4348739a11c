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
        /// For a folder or the library: every document the peer has through
        /// this share now (projects and the shared folders inside), exactly.
        public let shared: [SharedDocument]?
        /// For a folder or the library: what it lists that the peer was not
        /// given, and why (a project this machine may only read, one not on
        /// this machine, an entry filed by someone never given that project).
        public let notShared: [NotShared]?

        public init(project: String, peer: String, mode: String, role: String, shared: [SharedDocument]? = nil, notShared: [NotShared]? = nil) {
            self.project = project
            self.peer = peer
            self.mode = mode
            self.role = role
            self.shared = shared
            self.notShared = notShared
        }
    }

    /// A document a folder or library share gave the peer.
    public struct SharedDocument: Codable, Sendable, Equatable {
        public let document: String
        /// `project` or `folder`.
        public let kind: String
        public let name: String?
        /// Where it is listed (`Films/Shorts/Night Train`).
        public let path: String?
        /// The peer's role in it now: editor or reader (owner if it owns it).
        public let role: String

        public init(document: String, kind: String, name: String?, path: String?, role: String) {
            self.document = document
            self.kind = kind
            self.name = name
            self.path = path
            self.role = role
        }
    }

    /// An entry of a shared folder or library that the share did not give the peer.
    public struct NotShared: Codable, Sendable, Equatable {
        /// The document the entry names.
        public let document: String
        public let name: String?
        public let path: String?
        /// Why, in words.
        public let reason: String

        public init(document: String, name: String?, path: String?, reason: String) {
            self.document = document
            self.name = name
            self.path = path
            self.reason = reason
        }
    }

    /// `{"unshared": peer, keeps?}`.
    public struct Unshared: Codable, Sendable {
        public let unshared: String
        /// What the peer keeps of a project all the same, and why (a shared
        /// folder or the library listing it, which it is a member of).
        public let keeps: [Kept]?

        public init(unshared: String, keeps: [Kept]? = nil) {
            self.unshared = unshared
            self.keeps = keeps
        }

        /// One reason the peer still has a project.
        public struct Kept: Codable, Sendable, Equatable {
            /// `folder PATH` or `library`.
            public let via: String
            /// The role it gives: editor or reader.
            public let role: String

            public init(via: String, role: String) {
                self.via = via
                self.role = role
            }
        }
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
