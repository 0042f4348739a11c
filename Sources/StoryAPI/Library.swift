extension API {
    /// `GET /v1/library`: this daemon's library in display order (the tree,
    /// then the trash) with the virtual Incoming, and the libraries peers share.
    public struct Library: Codable, Sendable {
        public let id: String
        public let nodes: [LibraryNode]
        /// Libraries peers share with this daemon (shown, never adopted).
        public let shared: [SharedLibrary]

        public init(id: String, nodes: [LibraryNode], shared: [SharedLibrary]) {
            self.id = id
            self.nodes = nodes
            self.shared = shared
        }
    }

    /// A folder or project entry. Well-known folders are `root`, `trash` and `incoming`.
    public struct LibraryNode: Codable, Sendable {
        public let id: String
        /// `folder` or `project`.
        public let kind: String
        public let name: String?
        public let description: String?
        public let parent: String
        public let depth: Int
        /// The project document of a project entry.
        public let project: String?
        public let createdAt: Int64
        public let updatedAt: Int64
        public let inTrash: Bool
        /// For a project entry: whether the project is on this machine (a
        /// shared library may list projects that were not shared with it).
        public let available: Bool?
        /// For a shared folder: its library document (the nodes under it are its contents).
        public let folder: String?
        /// The library document holding this node, when not the main library (it is in a shared folder).
        public let library: String?
        /// Why an entry whose document is on this machine is unavailable all
        /// the same: it was filed by someone never given that document to
        /// share (a planted entry), so it grants nobody anything.
        public let unavailable: String?
        /// For a node in the trash: the folder path it was in, where a
        /// restore puts it back (`""`: the top of the library).
        public var formerPath: String?

        public init(
            id: String, kind: String, name: String?, description: String?, parent: String, depth: Int, project: String?, createdAt: Int64,
            updatedAt: Int64, inTrash: Bool, available: Bool?, folder: String? = nil, library: String? = nil, unavailable: String? = nil
        ) {
            self.unavailable = unavailable
            self.folder = folder
            self.library = library
            self.id = id
            self.kind = kind
            self.name = name
            self.description = description
            self.parent = parent
            self.depth = depth
            self.project = project
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.inTrash = inTrash
            self.available = available
        }
    }

    /// A shared folder or a whole library a peer shares with this daemon, which no library here lists.
    public struct SharedLibrary: Codable, Sendable {
        public let id: String
        /// The folder's name ("Library" for a peer's whole library).
        public let name: String?
        public let owner: String?
        /// This daemon's role in it: reader or editor.
        public let role: String
        public let nodes: [LibraryNode]

        /// When it was deleted for everyone who shares it (it is in the trash), or null.
        public let deletedAt: Int64?

        public init(id: String, owner: String?, role: String, nodes: [LibraryNode], name: String? = nil, deletedAt: Int64? = nil) {
            self.deletedAt = deletedAt
            self.name = name
            self.id = id
            self.owner = owner
            self.role = role
            self.nodes = nodes
        }
    }

    /// `POST /v1/library/folders`.
    public struct CreateFolder: Codable, Sendable {
        public let name: String
        /// The parent folder (reference); default the root.
        public let parent: String?
        public let index: Int?

        public init(name: String, parent: String? = nil, index: Int? = nil) {
            self.name = name
            self.parent = parent
            self.index = index
        }
    }

    /// `PATCH /v1/library/nodes/{ref}`.
    public struct UpdateNode: Codable, Sendable {
        public let name: String?
        public let description: String?

        public init(name: String? = nil, description: String? = nil) {
            self.name = name
            self.description = description
        }
    }

    /// `POST /v1/library/nodes/{ref}/move`.
    public struct MoveNode: Codable, Sendable {
        /// The folder to move into; absent: reorder within the current folder.
        public let folder: String?
        public let index: Int?

        public init(folder: String? = nil, index: Int? = nil) {
            self.folder = folder
            self.index = index
        }
    }
}
