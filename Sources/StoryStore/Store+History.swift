import Foundation
package import StoryCore

/// A project's past, for `--at`, versions and diffs.
extension Store {
    /// What this store can rebuild of a project's past: the stored changes,
    /// and as bases the empty project (when every change since the first is
    /// still stored), the checkpoints history retention left (the project
    /// where the kept changes start, named versions) and the stored
    /// snapshot. O(stored changes) to read and decode.
    /// - Throws: `StoreError(.notFound)` for no such project, `.invalidData`
    ///   for a damaged snapshot or change.
    package func projectHistory(_ id: DocumentID) throws -> ProjectHistory {
        let current = try project(id)
        let changes = try database.changes(of: id)
        let first = try database.firstStoredSeq(of: id)
        var bases: [HistoryBase] = []
        let author = author
        if current.versionVector.sortedEntries.allSatisfy({ first[$0.replica] == 1 }) {
            bases.append(HistoryBase(ProjectDocument(id: id, author: author)))
        }
        // Checkpoints are decoded when a version is rebuilt from one (they
        // may be many: daily, then weekly); their points come from the present.
        for checkpoint in try database.checkpoints(of: id) {
            let updatedAt: Int64?
            do {
                updatedAt = try ProjectDocument.snapshotVersion(checkpoint.bytes).updatedAt
            } catch {
                throw StoreError(.invalidData, "a checkpoint of \(id) is damaged: \(error)", path: path)
            }
            let (bytes, path) = (checkpoint.bytes, path)
            bases.append(
                HistoryBase(versionVector: checkpoint.version, updatedAt: updatedAt, isCheckpoint: true) {
                    do {
                        return try ProjectDocument(snapshot: bytes, author: author, pointsFrom: current)
                    } catch {
                        throw StoreError(.invalidData, "a checkpoint of \(id) does not load: \(error)", path: path)
                    }
                })
        }
        if let stored = try database.snapshot(of: id) {
            do {
                // Points it left in the change log are in the present too.
                bases.append(
                    HistoryBase(
                        try stored.pointsInLog == nil
                            ? ProjectDocument(snapshot: stored.bytes, author: author)
                            : ProjectDocument(snapshot: stored.bytes, author: author, pointsFrom: current)))
            } catch {
                throw StoreError(.invalidData, "the snapshot of \(id) does not load: \(error)", path: path)
            }
        }
        // Neither (not expected): only the present can be shown.
        if bases.isEmpty { bases.append(HistoryBase(current)) }
        return ProjectHistory(bases: bases, changes: changes, current: current.versionVector, createdAt: current.createdAt)
    }

    /// How many checkpoints history retention keeps of a document.
    package func checkpointCount(of id: DocumentID) throws -> Int { try database.checkpoints(of: id).count }

    /// The stored size of each checkpoint of a document, oldest first.
    package func checkpointSizes(of id: DocumentID) throws -> [Int] { try database.checkpoints(of: id).map(\.bytes.count) }
}
