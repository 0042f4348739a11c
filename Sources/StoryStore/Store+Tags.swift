package import StoryCore

/// Projects' own tags, mirrored into the `project_tags` table in the
/// transaction of every change (as the deleted flag is into the record), so
/// `GET /v1/projects?tag=` and the listing answer from one indexed query
/// instead of loading every document.
extension Store {
    /// Writes a project's tags into the index when they differ from it.
    func mirrorTags(of id: DocumentID, in document: any StoredDocument) throws {
        guard let project = document as? ProjectDocument else { return }
        try database.mirrorTags(project.tags(), of: id)
    }

    /// The projects carrying `tag` (in any case). One indexed query.
    package func projects(taggedWith tag: String) throws -> Set<DocumentID> {
        try database.documents(taggedWith: Tag.key(tag))
    }

    /// Every project's tags, in their shown spellings, sorted (projects
    /// without tags are absent). One query.
    package func projectTags() throws -> [DocumentID: [String]] {
        try database.projectTags()
    }
}

extension StoreDatabase {
    /// Replaces the mirrored tags of a project by `tags` (shown spellings)
    /// when they differ. O(tags of the project).
    func mirrorTags(_ tags: [String], of document: DocumentID) throws {
        let stored = try connection.query("SELECT name FROM project_tags WHERE doc = ? ORDER BY tag", [document.blob]) { $0.text(0) ?? "" }
        guard stored != tags.sorted(by: { Tag.key($0) < Tag.key($1) }) else { return }
        try connection.run("DELETE FROM project_tags WHERE doc = ?", [document.blob])
        let statement = try connection.prepare("INSERT OR REPLACE INTO project_tags (doc, tag, name) VALUES (?, ?, ?)")
        for tag in tags {
            try statement.bind([document.blob, .text(Tag.key(tag)), .text(tag)])
            while try statement.step() {}
        }
    }

    func documents(taggedWith key: String) throws -> Set<DocumentID> {
        Set(try connection.query("SELECT doc FROM project_tags WHERE tag = ?", [.text(key)]) { DocumentID(blob: $0.bytes(0)) }.compactMap { $0 })
    }

    func projectTags() throws -> [DocumentID: [String]] {
        var result: [DocumentID: [String]] = [:]
        let rows = try connection.query("SELECT doc, name FROM project_tags ORDER BY doc, tag") { ($0.bytes(0), $0.text(1)) }
        for (document, name) in rows {
            guard let id = DocumentID(blob: document), let name else { continue }
            result[id, default: []].append(name)
        }
        return result
    }
}
