extension API {
    /// `PUT /v1/projects/{id}/shares/{peer}` and `PUT /v1/library/shares/{peer}`.
    package struct SetShare: Codable, Sendable {
        /// `read-write` (the default) or `read-only`.
        package let mode: String?
        package init(mode: String? = nil) { self.mode = mode }
    }

    /// A share: a peer's rights to a project or to the library.
    package struct Share: Codable, Sendable {
        /// The shared document (a project, or the library).
        package let project: String
        package let peer: String
        /// `read-write` or `read-only` (the owner's is read-write).
        package let mode: String
        /// The role in the access list: owner, editor or reader.
        package let role: String
        /// For a folder or the library: every document the peer has through
        /// this share now (projects and the shared folders inside), exactly.
        package let shared: [SharedDocument]?
        /// For a folder or the library: what it lists that the peer was not
        /// given, and why (a project this machine may only read, one not on
        /// this machine, an entry filed by someone never given that project).
        package let notShared: [NotShared]?

        package init(project: String, peer: String, mode: String, role: String, shared: [SharedDocument]? = nil, notShared: [NotShared]? = nil) {
            self.project = project
            self.peer = peer
            self.mode = mode
            self.role = role
            self.shared = shared
            self.notShared = notShared
        }
    }

    /// A document a folder or library share gave the peer.
    package struct SharedDocument: Codable, Sendable, Equatable {
        package let document: String
        /// `project` or `folder`.
        package let kind: String
        package let name: String?
        /// Where it is listed (`Films/Shorts/Night Train`).
        package let path: String?
        /// The peer's role in it now: editor or reader (owner if it owns it).
        package let role: String

        package init(document: String, kind: String, name: String?, path: String?, role: String) {
            self.document = document
            self.kind = kind
            self.name = name
            self.path = path
            self.role = role
        }
    }

    /// An entry of a shared folder or library that the share did not give the peer.
    package struct NotShared: Codable, Sendable, Equatable {
        /// The document the entry names.
        package let document: String
        package let name: String?
        package let path: String?
        /// Why, in words.
        package let reason: String

        package init(document: String, name: String?, path: String?, reason: String) {
            self.document = document
            self.name = name
            self.path = path
            self.reason = reason
        }
    }

    /// `{"unshared": peer, keeps?}`.
    package struct Unshared: Codable, Sendable {
        package let unshared: String
        /// What the peer keeps of a project all the same, and why (a shared
        /// folder or the library listing it, which it is a member of).
        package let keeps: [Kept]?

        package init(unshared: String, keeps: [Kept]? = nil) {
            self.unshared = unshared
            self.keeps = keeps
        }

        /// One reason the peer still has a project.
        package struct Kept: Codable, Sendable, Equatable {
            /// `folder PATH` or `library`.
            package let via: String
            /// The role it gives: editor or reader.
            package let role: String

            package init(via: String, role: String) {
                self.via = via
                self.role = role
            }
        }
    }

    /// One line of `GET /v1/shares`: a peer's rights to a document here, and why it has them.
    package struct ShareListing: Codable, Sendable {
        package let document: String
        /// `project`, `folder` (a shared folder) or `library` (this daemon's whole library).
        package let kind: String
        package let name: String?
        /// Where it is in the library (`Films/Shorts/Night Train`), when listed.
        package let path: String?
        package let peer: String
        /// owner, editor or reader.
        package let role: String
        /// `read-write` or `read-only`.
        package let mode: String
        /// Why the peer has it: `direct` (shared with it on its own), `folder PATH`
        /// (listed in a shared folder the peer is a member of), `library`.
        package let via: [String]

        package init(document: String, kind: String, name: String?, path: String?, peer: String, role: String, mode: String, via: [String]) {
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
