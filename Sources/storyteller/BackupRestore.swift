import ArgumentParser
import Foundation
import StoryClient
import StoryStore

/// `storyteller restore FILE`: a backup put back as the daemon's database,
/// while the daemon is stopped (its data directory lock says so), checked
/// whole first. The database it replaces is kept beside it, with its
/// write-ahead log and shared memory, so a stale log is never replayed into
/// the backup and nothing is lost (docs/operations.md, "Backup and restore").
enum BackupRestore {
    static func run(_ file: String, dataDirectory given: String?, options: ClientOptions) throws {
        let directory = given ?? ControlClient.defaultDataDirectory(environment: ProcessInfo.processInfo.environment)
        let backup = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let database = directory + "/storyteller.sqlite"
        guard FileManager.default.fileExists(atPath: directory) else {
            printError("no Storyteller state directory at \(directory); give the daemon's with --data-dir")
            throw ExitCode(1)
        }
        // The daemon holds this lock while it runs; holding it here keeps one from starting meanwhile.
        let lock = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            printError("cannot open \(directory)/lock (\(String(cString: strerror(errno)))): run this as the daemon's user")
            throw ExitCode(1)
        }
        defer { close(lock) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: directory + "/lock", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            printError(
                "storytellerd\(holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "") is running on \(directory); stop it first "
                    + "(systemctl --user stop storytellerd, sudo systemctl stop storytellerd, or Ctrl-C where it runs), then restore")
            throw ExitCode(1)
        }
        let stamp = Int(Date().timeIntervalSince1970)
        let aside = database + ".replaced-\(stamp)"
        var moved: [(String, String)] = []
        do {
            // The backup is checked before anything moves (`Store.restore` checks it again as it copies).
            try Store.verifyBackup(backup)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
                try FileManager.default.moveItem(atPath: database + suffix, toPath: aside + suffix)
                moved.append((aside + suffix, database + suffix))
            }
            try Store.restore(backup: backup, to: database)
        } catch {
            // Put back what was moved: the database stays as it was.
            for (from, to) in moved.reversed() { try? FileManager.default.moveItem(atPath: from, toPath: to) }
            printError("not restored (the database is as it was): \(error)")
            throw ExitCode(1)
        }
        if options.json {
            try printJSON(Restored(restored: database, from: backup, replacedKeptAs: moved.isEmpty ? nil : aside))
        } else {
            print("restored \(database) from \(backup)")
            if !moved.isEmpty { print("  the database it replaced is kept as \(aside) (delete it once the daemon runs well)") }
            print("  start the daemon; edits made since the backup come back from the peers the projects are shared with")
        }
    }
}
