extension API {
    /// What `POST /v1/imports` did with a project package.
    package struct PackageImported: Codable, Sendable {
        /// `added` (the project was new to this machine) or `merged` (into the copy held here).
        package var outcome: String
        /// The project's id.
        package var project: String
        /// Its title.
        package var title: String?
        /// Changes this machine did not have before (edits that came back in).
        package var newChanges: UInt64
        /// Blobs (images, sounds) stored that were not here before.
        package var blobsAdded: Int
        /// Bytes of those blobs.
        package var blobBytesAdded: UInt64
        /// Whether the package's snapshot was merged, taken on the word of the
        /// exporter (its change log did not reach back far enough); otherwise
        /// only its signed changes were applied.
        package var usedSnapshot: Bool
        /// The peer id of the daemon that made the package (it signed the manifest).
        package var exportedBy: String
        /// This machine's rights in the project: `owner`, `editor`, `reader` or `none`.
        package var role: String

        package init(
            outcome: String, project: String, title: String?, newChanges: UInt64, blobsAdded: Int, blobBytesAdded: UInt64,
            usedSnapshot: Bool, exportedBy: String, role: String
        ) {
            self.outcome = outcome
            self.project = project
            self.title = title
            self.newChanges = newChanges
            self.blobsAdded = blobsAdded
            self.blobBytesAdded = blobBytesAdded
            self.usedSnapshot = usedSnapshot
            self.exportedBy = exportedBy
            self.role = role
        }
    }
}
