package import StoryCore

/// What a replay of a shot needs of the store: the project and every change still stored.
extension Store {
    /// The project, its stored changes (all of them, in causal order) and
    /// whether older changes were compacted into a snapshot (a replay then
    /// shows their strokes from the start). Reads every stored change of the
    /// project: O(changes).
    /// - Throws: `StoreError(.notFound)` for no such project; `StoreError` for a damaged change.
    package func replayHistory(of id: DocumentID) throws -> (
        document: ProjectDocument, changes: [Change], compacted: Bool
    ) {
        let document = try project(id)
        let compacted =
            try database.firstStoredSeq(of: id).values.contains { $0 > 1 }
            || (try database.changeCount(of: id) == 0 && database.snapshot(of: id) != nil)
        return (document, try database.changes(of: id).map(\.1), compacted)
    }
}
