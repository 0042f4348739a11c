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
}
