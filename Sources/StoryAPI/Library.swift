extension API {
    /// `GET /v1/library`: this daemon's library in display order (the tree,
    /// then the trash) with the virtual Incoming, and the libraries peers share.
    package struct Library: Codable, Sendable {
        package let id: String
        package let nodes: [LibraryNode]
        /// Libraries peers share with this daemon (shown, never adopted).
        package let shared: [SharedLibrary]

        package init(id: String, nodes: [LibraryNode], shared: [SharedLibrary]) {
            self.id = id
            self.nodes = nodes
            self.shared = shared
        }
    }

    /// A folder or project entry. Well-known folders are `root`, `trash` and `incoming`.
    package struct LibraryNode: Codable, Sendable {
        package let id: String
        /// `folder` or `project`.
        package let kind: String
        package let name: String?
        package let description: String?
        package let parent: String
        package let depth: Int
        /// The project document of a project entry.
        package let project: String?
        package let createdAt: Int64
        package let updatedAt: Int64
        package let inTrash: Bool
        /// For a project entry: whether the project is on this machine (a
        /// shared library may list projects that were not shared with it).
        package let available: Bool?
        /// For a shared folder: its library document (the nodes under it are its contents).
        package let folder: String?
        /// The library document holding this node, when not the main library (it is in a shared folder).
        package let library: String?
        /// Why an entry whose document is on this machine is unavailable all
        /// the same: it was filed by someone never given that document to
        /// share (a planted entry), so it grants nobody anything.
        package let unavailable: String?
        /// For a node in the trash: the folder path it was in, where a
        /// restore puts it back (`""`: the top of the library).
        package var formerPath: String?

        package init(
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
    package struct SharedLibrary: Codable, Sendable {
        package let id: String
        /// The folder's name ("Library" for a peer's whole library).
        package let name: String?
        package let owner: String?
        /// This daemon's role in it: reader or editor.
        package let role: String
        package let nodes: [LibraryNode]

        /// When it was deleted for everyone who shares it (it is in the trash), or null.
        package let deletedAt: Int64?

        package init(id: String, owner: String?, role: String, nodes: [LibraryNode], name: String? = nil, deletedAt: Int64? = nil) {
            self.deletedAt = deletedAt
            self.name = name
            self.id = id
            self.owner = owner
            self.role = role
            self.nodes = nodes
        }
    }

    /// `POST /v1/library/folders`.
    package struct CreateFolder: Codable, Sendable {
        package let name: String
        /// The parent folder (reference); default the root.
        package let parent: String?
        package let index: Int?

        package init(name: String, parent: String? = nil, index: Int? = nil) {
            self.name = name
            self.parent = parent
            self.index = index
        }
    }

    /// `PATCH /v1/library/nodes/{ref}`.
    package struct UpdateNode: Codable, Sendable {
        package let name: String?
        package let description: String?

        package init(name: String? = nil, description: String? = nil) {
            self.name = name
            self.description = description
        }
    }

    /// `POST /v1/library/nodes/{ref}/move`.
    package struct MoveNode: Codable, Sendable {
        /// The folder to move into; absent: reorder within the current folder.
        package let folder: String?
        package let index: Int?

        package init(folder: String? = nil, index: Int? = nil) {
            self.folder = folder
            self.index = index
        }
    }
}
