import Foundation
import StoryCore
import StoryMedia

/// The blob store's own SQLite database (`blobs.sqlite3` beside the files):
/// one row per blob, complete or partial. Apart from the store's database so
/// that neither's backup, integrity check or lock involves the other.
///
/// Synchronous and not thread-safe: the `BlobStore` actor confines it to its
/// own executor. WAL with `synchronous=NORMAL`: a chunk marked held costs no
/// fsync (a crash is covered, since completing a partial blob verifies the
/// bytes again), and the writes a caller is told are durable (a commit, a
/// partial becoming complete) run with `synchronous=FULL` (`durably`).
final class BlobDatabase {
    let connection: Connection
    var path: String { connection.path }

    /// The schema, as ordered, forward-only migrations with string ids (see `Schema`).
    static let migrations: [Migration] = [
        Migration(
            id: "2026-12-01-blobs",
            sql: """
                -- One row per blob. Marking a chunk held rewrites `held` with a
                -- bitmap of the same length, so the record keeps its size and SQLite
                -- overwrites it in place, writing only the page that changed: one
                -- 4 KiB WAL frame per chunk even beside a 128 KiB manifest (measured).
                CREATE TABLE blobs (
                    hash BLOB PRIMARY KEY CHECK (length(hash) = 32),
                    size INTEGER NOT NULL CHECK (size >= 0),
                    type INTEGER NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('complete', 'partial')),
                    chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
                    held BLOB,
                    manifest BLOB CHECK (manifest IS NULL OR length(manifest) % 32 = 0),
                    created INTEGER NOT NULL,
                    unreferenced_since INTEGER
                );
                """),
        Migration(
            id: "2026-12-06-blob-problems",
            sql: """
                -- A complete blob's bytes are probed (`MediaProbe`) when they
                -- arrive from a peer or a package: `type` is then what the bytes
                -- are, and `problem` (NULL: none) says why bytes that are no
                -- picture or sound at all are kept aside: not served, not used
                -- by renders and exports (docs/protocol.md, "Blobs").
                ALTER TABLE blobs ADD COLUMN problem TEXT;
                """),
    ]

    /// A row without its manifest (what the store keeps in memory).
    struct Row {
        var hash: BlobHash
        var size: UInt64
        var type: MediaType
        var isComplete: Bool
        var chunkSize: Int
        var held: [UInt8]?
        var unreferencedSince: Int64?
        var problem: String?
    }

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Opens the database, creating it (mode 0600) if absent: checks it,
    /// refuses a newer schema without writing, turns on WAL and migrates.
    /// - Throws: `BlobError` naming the file.
    static func open(path: String) throws(BlobError) -> BlobDatabase {
        do {
            if FileSystem.size(path) == nil {
                let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw FileSystem.error(errno, "cannot create the blob database", path: path) }
                Foundation.close(descriptor)
            }
            let connection = try Connection(path: path)
            let problems = try connection.query("PRAGMA quick_check") { $0.text(0) ?? "" }
            guard problems == ["ok"] else {
                throw BlobError(.corrupt, "integrity check failed: \(problems.prefix(3).joined(separator: "; "))", path: path)
            }
            if try connection.scalar("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'") != nil {
                let known = Set(migrations.map(\.id))
                if let unknown = try Schema.applied(connection).first(where: { !known.contains($0) }) {
                    throw BlobError(
                        .newerSchema, "the blob database was written by a newer Storyteller (migration \(unknown)); upgrade to open it",
                        path: path)
                }
            }
            let mode = try connection.scalar("PRAGMA journal_mode = WAL")?.text
            guard mode == "wal" else { throw BlobError(.io, "cannot turn on write-ahead logging (\(mode ?? "?"))", path: path) }
            try connection.execute("PRAGMA synchronous = NORMAL")
            try Schema.migrate(connection, migrations)
            return BlobDatabase(connection: connection)
        } catch {
            throw Self.blobError(error, path: path)
        }
    }

    /// Any error of a database call as a `BlobError`.
    private static func blobError(_ error: any Error, path: String) -> BlobError {
        switch error {
        case let error as BlobError: error
        case let error as StoreError: BlobError(error)
        default: BlobError(.io, "\(error)", path: path)
        }
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws(BlobError) -> T) throws(BlobError) -> T {
        do {
            return try connection.transaction { try body() }
        } catch {
            throw Self.blobError(error, path: path)
        }
    }

    /// Runs `body` in a transaction that is on the disk when this returns
    /// (`synchronous=FULL` for its commit, which also makes every earlier
    /// `NORMAL` commit durable).
    func durably<T>(_ body: () throws(BlobError) -> T) throws(BlobError) -> T {
        try run { try connection.execute("PRAGMA synchronous = FULL") }
        defer { try? connection.execute("PRAGMA synchronous = NORMAL") }
        return try transaction(body)
    }

    /// Runs database calls, their errors as `BlobError`s.
    private func run<T>(_ body: () throws -> T) throws(BlobError) -> T {
        do {
            return try body()
        } catch {
            throw Self.blobError(error, path: path)
        }
    }

    // MARK: - Rows

    /// Every row, without manifests.
    func rows() throws(BlobError) -> [Row] {
        let raw = try run {
            try connection.query("SELECT hash, size, type, state, chunk_size, held, unreferenced_since, problem FROM blobs") { statement in
                (
                    hash: statement.bytes(0), size: statement.int64(1), type: statement.int64(2), state: statement.text(3),
                    chunkSize: statement.int64(4), held: statement.value(5).blob, since: statement.value(6).integer, problem: statement.text(7)
                )
            }
        }
        var rows: [Row] = []
        rows.reserveCapacity(raw.count)
        for row in raw {
            guard let hash = BlobHash(row.hash), row.size >= 0, row.chunkSize > 0, row.chunkSize <= Int64(Int32.max),
                let type = UInt8(exactly: row.type).flatMap(MediaType.init(rawValue:)), let state = row.state,
                state == "complete" || state == "partial"
            else {
                throw BlobError(.corrupt, "a row of the blobs table does not read (hash \(row.hash.count) bytes, type \(row.type))", path: path)
            }
            rows.append(
                Row(
                    hash: hash, size: UInt64(row.size), type: type, isComplete: state == "complete", chunkSize: Int(row.chunkSize),
                    held: row.held, unreferencedSince: row.since, problem: row.problem))
        }
        return rows
    }

    /// A blob's manifest: nil when none is stored (a complete blob whose
    /// manifest was never asked for).
    func manifest(of hash: BlobHash) throws(BlobError) -> [BlobHash]? {
        let stored = try run { try connection.scalar("SELECT manifest FROM blobs WHERE hash = ?", [.blob(hash.bytes)]) }
        guard let bytes = stored?.blob else { return nil }
        return stride(from: 0, to: bytes.count, by: 32).map { BlobHash(bytes[$0..<$0 + 32])! }
    }

    /// Adds a complete blob's row, or makes a partial one complete (and, with
    /// `clearingUnreferenced`, counts it as referenced again).
    func putComplete(
        _ hash: BlobHash, size: UInt64, type: MediaType, chunkSize: Int, manifest: [BlobHash]?, clearingUnreferenced: Bool,
        problem: String? = nil, at time: Int64
    ) throws(BlobError) {
        let since = clearingUnreferenced ? "NULL" : "unreferenced_since"
        try run {
            try connection.run(
                """
                INSERT INTO blobs (hash, size, type, state, chunk_size, held, manifest, created, unreferenced_since, problem)
                VALUES (?, ?, ?, 'complete', ?, NULL, ?, ?, NULL, ?)
                ON CONFLICT (hash) DO UPDATE SET size = excluded.size, type = excluded.type, state = 'complete',
                    chunk_size = excluded.chunk_size, held = NULL, manifest = excluded.manifest, unreferenced_since = \(since),
                    problem = excluded.problem
                """,
                [
                    .blob(hash.bytes), .integer(Int64(size)), .integer(Int64(type.rawValue)), .integer(Int64(chunkSize)),
                    manifest.map { .blob(Self.encode($0)) } ?? .null, .integer(time), problem.map { .text($0) } ?? .null,
                ])
        }
    }

    /// Records what a complete blob's bytes are (`type`) and, for bytes that
    /// are no picture or sound, why they are kept aside (`problem`).
    func setProbed(_ type: MediaType, problem: String?, of hash: BlobHash) throws(BlobError) {
        try run {
            try connection.run(
                "UPDATE blobs SET type = ?, problem = ? WHERE hash = ?",
                [.integer(Int64(type.rawValue)), problem.map { .text($0) } ?? .null, .blob(hash.bytes)])
        }
    }

    /// Adds a partial blob's row, or replaces one (a new manifest: nothing
    /// held); when it was first found unreferenced is kept.
    func putPartial(
        _ hash: BlobHash, size: UInt64, type: MediaType, chunkSize: Int, held: [UInt8], manifest: [BlobHash], at time: Int64
    ) throws(BlobError) {
        try run {
            try connection.run(
                """
                INSERT INTO blobs (hash, size, type, state, chunk_size, held, manifest, created, unreferenced_since)
                VALUES (?, ?, ?, 'partial', ?, ?, ?, ?, NULL)
                ON CONFLICT (hash) DO UPDATE SET size = excluded.size, type = excluded.type, state = 'partial',
                    chunk_size = excluded.chunk_size, held = excluded.held, manifest = excluded.manifest
                """,
                [
                    .blob(hash.bytes), .integer(Int64(size)), .integer(Int64(type.rawValue)), .integer(Int64(chunkSize)),
                    .blob(held), .blob(Self.encode(manifest)), .integer(time),
                ])
        }
    }

    /// Records the chunks a partial blob holds (a bitmap of the same length
    /// each time, so SQLite overwrites the record in place).
    func setHeld(_ held: [UInt8], of hash: BlobHash) throws(BlobError) {
        try run { try connection.run("UPDATE blobs SET held = ? WHERE hash = ? AND state = 'partial'", [.blob(held), .blob(hash.bytes)]) }
    }

    /// Stores a complete blob's manifest once computed.
    func setManifest(_ manifest: [BlobHash], of hash: BlobHash) throws(BlobError) {
        try run { try connection.run("UPDATE blobs SET manifest = ? WHERE hash = ?", [.blob(Self.encode(manifest)), .blob(hash.bytes)]) }
    }

    /// Sets (or, with nil, clears) when a blob was first seen unreferenced.
    func setUnreferencedSince(_ time: Int64?, of hash: BlobHash) throws(BlobError) {
        try run {
            try connection.run("UPDATE blobs SET unreferenced_since = ? WHERE hash = ?", [time.map { .integer($0) } ?? .null, .blob(hash.bytes)])
        }
    }

    /// Removes a blob's row.
    func delete(_ hash: BlobHash) throws(BlobError) {
        try run { try connection.run("DELETE FROM blobs WHERE hash = ?", [.blob(hash.bytes)]) }
    }

    private static func encode(_ manifest: [BlobHash]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(manifest.count * 32)
        for hash in manifest { hash.withUnsafeBytes { bytes.append(contentsOf: $0) } }
        return bytes
    }
}
