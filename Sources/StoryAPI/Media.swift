extension API {
    /// A blob a project references, as `GET /v1/projects/{id}/media` lists it.
    public struct MediaEntry: Codable, Sendable {
        /// SHA-256, 64 hex digits.
        public var blob: String
        public var type: String
        public var bytes: UInt64
        /// `complete`, `partial` or `missing` on this daemon for this project
        /// (`missing` too while bytes held for another project were not yet
        /// received for this one), or `kept-aside`: bytes that are no picture
        /// or sound, or not the type the project names (`problem` says which).
        public var state: String
        /// Why a `kept-aside` blob is not used.
        public var problem: String?
        /// Bytes held here (all of them when complete).
        public var heldBytes: UInt64
        /// Where it is used: `1-2 sound`, `2-1 layer Plate`.
        public var usedBy: [String]
        /// Peers known to hold it (peer ids).
        public var peers: [String]

        public init(
            blob: String, type: String, bytes: UInt64, state: String, heldBytes: UInt64, usedBy: [String], peers: [String], problem: String? = nil
        ) {
            self.problem = problem
            self.blob = blob
            self.type = type
            self.bytes = bytes
            self.state = state
            self.heldBytes = heldBytes
            self.usedBy = usedBy
            self.peers = peers
        }
    }

    /// A blob on its way here (`GET /v1/media/transfers`).
    public struct MediaTransfer: Codable, Sendable {
        public var blob: String
        public var type: String
        /// The peer it comes from.
        public var peer: String?
        public var bytes: UInt64
        public var heldBytes: UInt64
        /// Bytes per second since the transfer started.
        public var rate: Double
        public var projects: [String]

        public init(blob: String, type: String, peer: String?, bytes: UInt64, heldBytes: UInt64, rate: Double, projects: [String]) {
            self.blob = blob
            self.type = type
            self.peer = peer
            self.bytes = bytes
            self.heldBytes = heldBytes
            self.rate = rate
            self.projects = projects
        }
    }

    /// What the blob store holds and what is moving.
    public struct MediaStatus: Codable, Sendable {
        public var transfers: [MediaTransfer]
        /// Blobs referenced here and not (completely) held yet, and their bytes.
        public var missing: Int
        public var missingBytes: UInt64
        /// Blobs held, and their bytes.
        public var stored: Int
        public var storedBytes: UInt64

        public init(transfers: [MediaTransfer], missing: Int, missingBytes: UInt64, stored: Int, storedBytes: UInt64) {
            self.transfers = transfers
            self.missing = missing
            self.missingBytes = missingBytes
            self.stored = stored
            self.storedBytes = storedBytes
        }
    }
}
