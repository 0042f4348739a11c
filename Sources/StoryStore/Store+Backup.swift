import Foundation
package import StoryCore

/// Integrity checks, online backup, restore and replica ids.
extension Store {
    /// Problems `PRAGMA integrity_check` finds; empty when healthy.
    package func integrityProblems() throws -> [String] { try database.integrityProblems(full: true) }

    /// Writes a consistent copy of the database (as of the call) to
    /// `destination`, which must not exist. Copies on a connection and a
    /// thread of its own, in steps: edits and sync go on meanwhile.
    /// - Throws: `StoreError` (a full disk has SQLite's SQLITE_FULL); nothing
    ///   is left at `destination` after a failure.
    package nonisolated func backup(
        to destination: String, betweenSteps: (@Sendable (_ remainingPages: Int32) -> Void)? = nil, pagesPerStep: Int32 = 1024
    ) async throws {
        try await StoreBackup.copy(from: path, to: destination, pagesPerStep: pagesPerStep, betweenSteps: betweenSteps)
    }

    /// Gives this database a new replica id (a new nonce for its identity):
    /// when a peer proves, with a change signed by this identity that this
    /// replica never made, that another copy of this database is in use.
    /// Loaded documents are reloaded under the new id.
    package func mintReplicaID() throws -> ReplicaID {
        author = try database.mintAuthor(for: identity)
        loaded = [:]
        return author.replica
    }

    /// Checks a backup file without writing to it: an SQLite file of a
    /// schema this build knows, passing `integrity_check`.
    /// - Throws: `StoreError` saying what is wrong (`notADatabase`, `corrupt`, `newerSchema`).
    package static func verifyBackup(_ path: String) throws { try StoreDatabase.verify(path: path) }

    /// Restores a backup to `destination` (which must not exist); the next
    /// open mints a new replica id, so the restored database never reuses
    /// sequence numbers.
    /// - Throws: `StoreError` if the backup is not a healthy Storyteller database.
    package static func restore(backup: String, to destination: String) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError(.cannotOpen, "restore destination already exists; remove or move it first", path: destination)
        }
        // Check the backup without writing to it, so a bad one never becomes the database.
        try StoreDatabase.verify(path: backup)
        do {
            try FileManager.default.copyItem(atPath: backup, toPath: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination)
        } catch {
            throw StoreError(.io, "cannot copy the backup: \(error)", path: destination)
        }
        try StoreDatabase.open(path: destination).forgetReplica()
    }

    /// Bytes on disk (database and log), after moving the log into the database.
    package func fileSize(checkpointing: Bool = true) throws -> Int {
        if checkpointing { try database.checkpoint() }
        return database.fileSize()
    }

    /// Rewrites the database file without free pages.
    package func vacuum() throws { try database.vacuum() }
}
