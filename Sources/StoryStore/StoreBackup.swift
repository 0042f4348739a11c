import CSQLite
import Foundation

/// A consistent copy of a live database, made through SQLite's online backup
/// API on a connection of its own, on a thread of its own: the store's actor
/// and its writers go on while pages are copied. The copy is the state as
/// of the backup's start (one read transaction holds that snapshot; in WAL
/// mode writers do not wait for readers).
enum StoreBackup {
    /// Pages copied per step; between steps a test may look in (`betweenSteps`).
    static let pagesPerStep: Int32 = 1024

    /// Copies the database at `source` to `destination` (which must not exist),
    /// mode 0600. Runs on a new thread; returns when the copy is complete.
    /// - Parameter betweenSteps: called after each step with the pages left (tests).
    /// - Throws: `StoreError`; nothing is left at `destination` after a failure.
    static func copy(
        from source: String, to destination: String, pagesPerStep: Int32 = pagesPerStep,
        betweenSteps: (@Sendable (_ remaining: Int32) -> Void)? = nil
    ) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do {
                    try copyNow(from: source, to: destination, pagesPerStep: pagesPerStep, betweenSteps: betweenSteps)
                    continuation.resume(returning: .success(()))
                } catch let error as StoreError {
                    continuation.resume(returning: .failure(error))
                } catch {
                    continuation.resume(returning: .failure(StoreError(.io, "\(error)", path: destination)))
                }
            }
            thread.name = "storyteller backup"
            thread.start()
        }
        try result.get()
    }

    private static func copyNow(
        from source: String, to destination: String, pagesPerStep: Int32, betweenSteps: (@Sendable (Int32) -> Void)?
    ) throws(StoreError) {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError(.cannotOpen, "backup destination \(destination) already exists", path: destination)
        }
        let reader = try Connection(path: source, readOnly: true, create: false)
        // One read transaction for the whole copy: every step sees the same snapshot.
        try reader.execute("BEGIN")
        defer { try? reader.execute("COMMIT") }
        _ = try reader.scalar("SELECT count(*) FROM sqlite_master")
        guard FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw StoreError(.cannotOpen, "cannot create the backup file", path: destination)
        }
        do {
            let target = try Connection(path: destination, create: false)
            try reader.copy(into: target, pagesPerStep: pagesPerStep, betweenSteps: betweenSteps)
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
    }
}

extension Connection {
    /// Copies this connection's `main` database into `target`'s, `pagesPerStep` at a time.
    /// - Throws: `StoreError` with SQLite's code (SQLITE_FULL as a full disk).
    func copy(into target: Connection, pagesPerStep: Int32, betweenSteps: (@Sendable (Int32) -> Void)?) throws(StoreError) {
        try target.withHandle { (targetHandle) throws(StoreError) in
            try withHandle { (sourceHandle) throws(StoreError) in
                guard let backup = sqlite3_backup_init(targetHandle, "main", sourceHandle, "main") else {
                    throw target.error(sqlite3_errcode(targetHandle), "cannot start the backup")
                }
                var result = SQLITE_OK
                var busyRetries = 0
                while true {
                    result = sqlite3_backup_step(backup, pagesPerStep)
                    if result == SQLITE_DONE { break }
                    if result == SQLITE_BUSY || result == SQLITE_LOCKED {
                        // Bounded: a lock held for minutes is a failure, not a wait.
                        busyRetries += 1
                        guard busyRetries < 600 else { break }
                        usleep(100_000)
                        continue
                    }
                    guard result == SQLITE_OK else { break }
                    betweenSteps?(sqlite3_backup_remaining(backup))
                }
                let finish = sqlite3_backup_finish(backup)
                if result != SQLITE_DONE { throw target.error(result == SQLITE_OK ? finish : result, "the backup failed") }
                guard finish == SQLITE_OK else { throw target.error(finish, "the backup failed") }
            }
        }
    }
}
