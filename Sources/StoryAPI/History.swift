extension API {
    /// `GET /v1/projects/{id}/history`: newest first.
    public struct History: Codable, Sendable {
        public let project: String
        /// Older changes were folded into a snapshot and are not listed.
        public let compacted: Bool
        public let changes: [HistoryEntry]

        public init(project: String, compacted: Bool, changes: [HistoryEntry]) {
            self.project = project
            self.compacted = compacted
            self.changes = changes
        }
    }

    public struct HistoryEntry: Codable, Sendable {
        public let replica: String
        public let seq: UInt64
        /// Made on this daemon (else it came from a peer).
        public let local: Bool
        public let time: Int64
        public let operations: Int
        public let summary: String
        /// The peer id of the identity that signed it (null: unknown).
        public let author: String?

        public init(replica: String, seq: UInt64, local: Bool, time: Int64, operations: Int, summary: String, author: String?) {
            self.replica = replica
            self.seq = seq
            self.local = local
            self.time = time
            self.operations = operations
            self.summary = summary
            self.author = author
        }
    }
}
