import Foundation
import StoryCore

/// Upgrading documents made before signed authorship.
extension Store {
    /// Turns the documents of a database written before signed authorship
    /// into legacy documents owned by this daemon: each is loaded as it was
    /// (unsigned changes on its snapshot), saved as one snapshot whose access
    /// list names this daemon as owner, and its unsigned changes are dropped.
    /// Nothing is lost; such documents are edited as before but never synced
    /// (a copy of one can be shared). One transaction: all or nothing.
    static func upgradeLegacyDocuments(_ database: StoreDatabase, author: LocalAuthor) throws {
        guard try database.connection.scalar("SELECT value FROM meta WHERE key = 'legacy_upgrade'") != nil else { return }
        try database.connection.transaction {
            for record in try database.documents() {
                let tail = try database.changes(of: record.id)
                let snapshot = try database.snapshot(of: record.id)?.bytes
                let bytes: [UInt8]
                do {
                    switch record.kind {
                    case .project:
                        var old =
                            try snapshot.map { try ProjectDocument(snapshot: $0, replica: ReplicaID(1)) }
                            ?? ProjectDocument(id: record.id, replica: ReplicaID(1))
                        try old.apply(tail)
                        var upgraded = try ProjectDocument(snapshot: old.snapshot(), author: author)
                        try upgraded.upgradeToLegacyOwnership()
                        bytes = upgraded.snapshot()
                    case .library:
                        var old =
                            try snapshot.map { try LibraryDocument(snapshot: $0, replica: ReplicaID(1)) }
                            ?? LibraryDocument(id: record.id, replica: ReplicaID(1))
                        try old.apply(tail)
                        var upgraded = try LibraryDocument(snapshot: old.snapshot(), author: author)
                        try upgraded.upgradeToLegacyOwnership()
                        bytes = upgraded.snapshot()
                    }
                } catch {
                    throw StoreError(.invalidData, "cannot upgrade \(record.kind) \(record.id): \(error)", path: database.path)
                }
                let version = try SnapshotSummary(reading: bytes).version
                try database.saveSnapshot(bytes, version: version, of: record.id, created: record.created)
                try database.dropChanges(of: record.id, coveredBy: version)
                try database.setMembers([(author.identity.peer, .owner)], of: record.id)
            }
            try database.connection.run("DELETE FROM meta WHERE key = 'legacy_upgrade'")
        }
    }
}
