extension API {
    /// A blob a project references, as `GET /v1/projects/{id}/media` lists it.
    package struct MediaEntry: Codable, Sendable {
        /// SHA-256, 64 hex digits.
        package var blob: String
        package var type: String
        package var bytes: UInt64
        /// `complete`, `partial` or `missing` on this daemon for this project
        /// (`missing` too while bytes held for another project were not yet
        /// received for this one), or `kept-aside`: bytes that are no picture
        /// or sound, or not the type the project names (`problem` says which).
        package var state: String
        /// Why a `kept-aside` blob is not used.
        package var problem: String?
        /// Bytes held here (all of them when complete).
        package var heldBytes: UInt64
        /// Where it is used: `1-2 sound`, `2-1 layer Plate`.
        package var usedBy: [String]
        /// Peers known to hold it (peer ids).
        package var peers: [String]

        package init(
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
    package struct MediaTransfer: Codable, Sendable {
        package var blob: String
        package var type: String
        /// The peer it comes from.
        package var peer: String?
        package var bytes: UInt64
        package var heldBytes: UInt64
        /// Bytes per second since the transfer started.
        package var rate: Double
        package var projects: [String]

        package init(blob: String, type: String, peer: String?, bytes: UInt64, heldBytes: UInt64, rate: Double, projects: [String]) {
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
    package struct MediaStatus: Codable, Sendable {
        package var transfers: [MediaTransfer]
        /// Blobs referenced here and not (completely) held yet, and their bytes.
        package var missing: Int
        package var missingBytes: UInt64
        /// Blobs held, and their bytes.
        package var stored: Int
        package var storedBytes: UInt64

        package init(transfers: [MediaTransfer], missing: Int, missingBytes: UInt64, stored: Int, storedBytes: UInt64) {
            self.transfers = transfers
            self.missing = missing
            self.missingBytes = missingBytes
            self.stored = stored
            self.storedBytes = storedBytes
        }
    }
}
