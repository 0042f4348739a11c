import StoryCore

/// Open conflicts (text fields whose concurrent writes are still listed,
/// `ProjectDocument.fieldConflicts`), counted per project in its record in
/// the transaction of every change, so `status` answers from one query.
extension Store {
    /// Mirrors what listings read without loading a document: its tags and
    /// its open conflicts.
    func mirrorIndexes(of id: DocumentID, in document: any StoredDocument) throws {
        try mirrorTags(of: id, in: document)
        guard let project = document as? ProjectDocument else { return }
        try database.mirrorOpenConflicts(project.openConflicts, of: id)
    }

    /// Open conflicts across the projects listed here (not in the trash, not
    /// awaiting founding): how many fields, in how many projects. A project
    /// stored before they were counted is loaded once to count them.
    package func openConflicts() throws -> (fields: Int, projects: Int) {
        var fields = 0
        var projects = 0
        for (id, counted) in try database.openConflictCounts() {
            var count = counted
            if count == nil {
                let project = try self.project(id)
                count = project.openConflicts
                try database.mirrorOpenConflicts(project.openConflicts, of: id)
            }
            if let count, count > 0 {
                fields += count
                projects += 1
            }
        }
        return (fields, projects)
    }
}

extension StoreDatabase {
    func mirrorOpenConflicts(_ count: Int, of document: DocumentID) throws {
        try connection.run(
            "UPDATE documents SET open_conflicts = ?1 WHERE id = ?2 AND open_conflicts IS NOT ?1", [.integer(Int64(count)), document.blob])
    }

    /// Each listed project's mirrored count (nil: not counted yet).
    func openConflictCounts() throws -> [(DocumentID, Int?)] {
        try connection.query(
            """
            SELECT id, open_conflicts FROM documents
            WHERE kind = ? AND deleted = 0 AND hidden = 0 AND origin_peer IS NULL
            """, [.integer(DocumentKind.project.rawValue)]
        ) { row in
            (DocumentID(blob: row.bytes(0)), row.value(1).integer.map { Int($0) })
        }.compactMap { id, count in id.map { ($0, count) } }
    }
}
