import Foundation

/// A failure of the store: the file cannot be opened or is not a database, it
/// is corrupt or from a newer version, or SQLite reported an error.
///
/// Errors name the file, so a user can tell which database is at fault.
package struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case cannotOpen, notADatabase, corrupt, newerSchema, readOnly, busy, constraint, notFound, io, sqlite, invalidData
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file or its directory cannot be opened or created (permissions, path).
        package static let cannotOpen = Code(.cannotOpen)
        /// The file exists but is not an SQLite database.
        package static let notADatabase = Code(.notADatabase)
        /// The database failed an integrity check; nothing is written to it.
        package static let corrupt = Code(.corrupt)
        /// The database was written by a newer Storyteller; this build will not touch it.
        package static let newerSchema = Code(.newerSchema)
        /// The database or its directory is read-only.
        package static let readOnly = Code(.readOnly)
        /// Another process holds the database locked for longer than the timeout.
        package static let busy = Code(.busy)
        /// A row contradicts a constraint (e.g. a duplicate change).
        package static let constraint = Code(.constraint)
        /// A document, peer or row that was asked for does not exist.
        package static let notFound = Code(.notFound)
        /// The disk or file system failed (full disk, I/O error).
        package static let io = Code(.io)
        /// Another SQLite error.
        package static let sqlite = Code(.sqlite)
        /// Stored bytes do not decode (a change or snapshot in the database is damaged).
        package static let invalidData = Code(.invalidData)

        package var description: String { base.rawValue }

        /// The code for an SQLite primary result code.
        static func forSQLite(_ result: Int32) -> Code {
            switch result & 0xFF {
            case 14: .cannotOpen  // SQLITE_CANTOPEN
            case 26: .notADatabase  // SQLITE_NOTADB
            case 11: .corrupt  // SQLITE_CORRUPT
            case 8: .readOnly  // SQLITE_READONLY
            case 5, 6: .busy  // SQLITE_BUSY, SQLITE_LOCKED
            case 19: .constraint  // SQLITE_CONSTRAINT
            case 10, 13: .io  // SQLITE_IOERR, SQLITE_FULL
            default: .sqlite
            }
        }
    }

    /// The kind of failure.
    package let code: Code
    /// A human explanation.
    package let message: String
    /// The database file concerned.
    package let path: String
    /// SQLite's extended result code, when SQLite reported the error.
    package let sqliteCode: Int32?

    /// Creates an error.
    package init(_ code: Code, _ message: String, path: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sqliteCode = sqliteCode
    }

    package var description: String {
        let suffix = sqliteCode.map { " (SQLite code \($0))" } ?? ""
        return "\(path): \(code): \(message)\(suffix)"
    }
}

extension StoreError: LocalizedError {
    /// The failure as one sentence for the person starting the daemon: what
    /// is wrong with which file, and what to do about it (no code names;
    /// `description` keeps the technical form for logs).
    package var errorDescription: String? {
        switch code {
        case .cannotOpen:
            "cannot open the database \(path) (\(message)); check that its directory exists and that this user may read and write both"
        case .notADatabase:
            "\(path) is not a Storyteller database (\(message)); point --data-dir at the right directory, "
                + "or move the file away to start with an empty database"
        case .corrupt:
            "the database \(path) is damaged (\(message)); move it away and put a backup in its place "
                + "(docs/operations.md, \"Backup and restore\"), or move it away to start empty and let the peers send the shared projects again"
        case .newerSchema:
            "the database \(path) was written by a newer version of Storyteller; install that version (or a later one) to open it, "
                + "it was left untouched"
        case .readOnly:
            "the database \(path) is read-only (\(message)); give this user write access to it and to its directory"
        case .busy:
            "the database \(path) is locked by another program (\(message)); stop that program and start again"
        case .io:
            "reading or writing the database \(path) failed (\(message)); check the disk: is it full or failing?"
        default:
            "the database \(path) cannot be used: \(message)"
        }
    }
}
