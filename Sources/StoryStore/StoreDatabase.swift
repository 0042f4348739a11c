import Foundation
import StoryCore

/// The database of one daemon: documents, their change logs and snapshots,
/// peers, shares and acknowledged versions, and the local replica id.
///
/// Synchronous and not thread-safe: the `Store` actor confines it to its own
/// executor. Every write that a caller is told succeeded has been committed
/// (WAL, `synchronous=FULL`).
final class StoreDatabase {
    let connection: Connection
    var path: String { connection.path }

    /// Opens a database, creating it if the file does not exist.
    ///
    /// Checks before writing anything: the file must be an SQLite database that
    /// passes `PRAGMA quick_check` (or `integrity_check` with `fullCheck`), and
    /// must not come from a newer schema. Then migrates and turns on WAL.
    /// - Throws: `StoreError` naming the file; the file is left untouched.
    static func open(path: String, fullCheck: Bool = false, migrations: Int = Schema.migrations.count) throws -> StoreDatabase {
        let exists = FileManager.default.fileExists(atPath: path)
        if exists {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw StoreError(.cannotOpen, "the file cannot be read", path: path)
            }
            try checkHeader(path)
        }
        try restrictPermissions(path, creating: !exists)
        let connection = try Connection(path: path)
        if exists {
            let problems = try integrityProblems(connection, full: fullCheck)
            guard problems.isEmpty else {
                throw StoreError(.corrupt, "integrity check failed: \(problems.prefix(3).joined(separator: "; "))", path: path)
            }
            guard FileManager.default.isWritableFile(atPath: path) else {
                throw StoreError(.readOnly, "the database file is read-only", path: path)
            }
        }
        // Refuse a newer schema before changing anything (WAL mode writes the header).
        if try connection.scalar("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'") != nil {
            let known = Set(Schema.migrations.map(\.id))
            if let unknown = try Schema.applied(connection).first(where: { !known.contains($0) }) {
                throw StoreError(
                    .newerSchema, "the database was written by a newer Storyteller (migration \(unknown)); upgrade to open it",
                    path: path)
            }
        }
        let mode = try connection.scalar("PRAGMA journal_mode = WAL")?.text
        guard mode == "wal" else { throw StoreError(.sqlite, "cannot turn on write-ahead logging (\(mode ?? "?"))", path: path) }
        try connection.execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
        try Schema.migrate(connection, upTo: migrations)
        return StoreDatabase(connection: connection)
    }

    private init(connection: Connection) {
        self.connection = connection
    }

    /// The author of this database's local changes: the identity with the
    /// stored nonce, or a fresh nonce (stored) when there is none or the
    /// identity is not the one the nonce was minted for.
    func author(for identity: SigningIdentity) throws -> LocalAuthor {
        let peer = try connection.scalar("SELECT value FROM meta WHERE key = 'replica_peer'")?.text
        if peer == identity.peer.description,
            let nonce = try connection.scalar("SELECT value FROM meta WHERE key = 'replica_nonce'")?.integer,
            let author = LocalAuthor(identity: identity, nonce: UInt64(bitPattern: nonce))
        {
            return author
        }
        return try mintAuthor(for: identity)
    }

    /// Gives this database a new replica id (a new nonce for the identity):
    /// after a restore, or when a peer proves another copy uses the old one.
    @discardableResult
    func mintAuthor(for identity: SigningIdentity) throws -> LocalAuthor {
        let author = LocalAuthor.fresh(identity: identity)
        try connection.transaction {
            try connection.run(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('replica_nonce', ?)", [.integer(Int64(bitPattern: author.nonce))])
            try connection.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('replica_peer', ?)", [.text(identity.peer.description)])
        }
        return author
    }

    /// Forgets the replica nonce, so the next open mints a new replica id
    /// (a restored backup must never reuse sequence numbers).
    func forgetReplica() throws {
        try connection.run("DELETE FROM meta WHERE key IN ('replica_nonce', 'replica_peer', 'replica_id')")
    }

    /// Checks a database file without writing to it: an SQLite file of a schema
    /// this build knows, passing `integrity_check`.
    /// - Throws: `StoreError` naming the file.
    static func verify(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.notFound, "no such file", path: path)
        }
        try checkHeader(path)
        let connection = try Connection(path: path, readOnly: true, create: false)
        let problems = try integrityProblems(connection, full: true)
        guard problems.isEmpty else {
            throw StoreError(.corrupt, "integrity check failed: \(problems.prefix(3).joined(separator: "; "))", path: path)
        }
        guard try connection.scalar("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'") != nil else {
            throw StoreError(.notADatabase, "an SQLite file, but not a Storyteller database", path: path)
        }
        let known = Set(Schema.migrations.map(\.id))
        if let unknown = try Schema.applied(connection).first(where: { !known.contains($0) }) {
            throw StoreError(.newerSchema, "written by a newer Storyteller (migration \(unknown))", path: path)
        }
    }

    /// Makes the database readable by its owner only (SQLite gives its `-wal`
    /// and `-shm` files the database file's mode): creates it 0600, or
    /// tightens an existing one and its companions.
    private static func restrictPermissions(_ path: String, creating: Bool) throws(StoreError) {
        let manager = FileManager.default
        if creating {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw StoreError(.cannotOpen, "cannot create the database file", path: path)
            }
            return
        }
        for file in [path, path + "-wal", path + "-shm"] where manager.fileExists(atPath: file) {
            guard let mode = (try? manager.attributesOfItem(atPath: file))?[.posixPermissions] as? Int, mode & 0o077 != 0 else { continue }
            do {
                try manager.setAttributes([.posixPermissions: mode & 0o700], ofItemAtPath: file)
            } catch {
                throw StoreError(.cannotOpen, "cannot make \(file) private to its owner (mode \(String(mode, radix: 8))): \(error)", path: path)
            }
        }
    }

    /// The first 16 bytes of an SQLite file are "SQLite format 3\0"; an empty
    /// file is a database not yet written.
    private static func checkHeader(_ path: String) throws(StoreError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.cannotOpen, "the file cannot be read", path: path)
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        guard header.isEmpty || header == Data("SQLite format 3\0".utf8) else {
            throw StoreError(.notADatabase, "the file is not an SQLite database; it was left as it is", path: path)
        }
    }

    /// Problems found by `quick_check` (or `integrity_check`); empty when healthy.
    static func integrityProblems(_ connection: Connection, full: Bool) throws(StoreError) -> [String] {
        let rows = try connection.query(full ? "PRAGMA integrity_check" : "PRAGMA quick_check") { $0.text(0) ?? "" }
        return rows == ["ok"] ? [] : rows
    }

    /// Runs a full integrity check; empty when healthy.
    func integrityProblems(full: Bool = true) throws(StoreError) -> [String] {
        try Self.integrityProblems(connection, full: full)
    }

    // MARK: - Documents

    func createDocument(_ id: DocumentID, kind: DocumentKind, name: String?, created: Int64, origin: String? = nil) throws {
        try connection.run(
            "INSERT INTO documents (id, kind, name, created, origin_peer) VALUES (?, ?, ?, ?, ?)",
            [id.blob, .integer(kind.rawValue), name.map(SQLValue.text) ?? .null, .integer(created), origin.map(SQLValue.text) ?? .null])
    }

    /// Forgets which peer a document was taken from (once it is founded, its
    /// access list says who syncs it).
    func clearOrigin(of id: DocumentID) throws {
        try connection.run("UPDATE documents SET origin_peer = NULL WHERE id = ?", [id.blob])
    }

    func setDocument(_ id: DocumentID, name: String?) throws {
        try connection.run("UPDATE documents SET name = ? WHERE id = ?", [name.map(SQLValue.text) ?? .null, id.blob])
        guard connection.changes == 1 else { throw StoreError(.notFound, "no project or library \(id) here", path: path) }
    }

    /// Hides a document on this machine only, or shows it again.
    /// Returns whether that changed anything.
    func setDocument(_ id: DocumentID, hidden: Bool, at time: Int64) throws -> Bool {
        guard try hasDocument(id) else {
            throw StoreError(.notFound, "no project or library \(id) here", path: path)
        }
        try connection.run(
            "UPDATE documents SET hidden = ?, hidden_at = ? WHERE id = ? AND hidden != ?",
            [.integer(hidden ? 1 : 0), hidden ? .integer(time) : .null, id.blob, .integer(hidden ? 1 : 0)])
        return connection.changes == 1
    }

    /// Mirrors a project's deleted flag (nil: not deleted) into its record,
    /// noting when this machine first saw it deleted. One statement that
    /// writes only when something differs. Returns whether it wrote.
    func mirrorDeletion(_ deletion: (by: PeerID?, time: Int64?)?, of id: DocumentID, seenAt now: Int64) throws -> Bool {
        let deleted: SQLValue = .integer(deletion == nil ? 0 : 1)
        let by: SQLValue = deletion?.by.map { .text($0.description) } ?? .null
        let time: SQLValue = deletion?.time.map(SQLValue.integer) ?? .null
        try connection.run(
            """
            UPDATE documents SET deleted = ?1, deleted_by = ?2, deleted_time = ?3,
                deleted_seen = CASE WHEN ?1 = 0 THEN NULL WHEN deleted = 1 THEN deleted_seen ELSE ?4 END
            WHERE id = ?5 AND (deleted IS NOT ?1 OR deleted_by IS NOT ?2 OR deleted_time IS NOT ?3)
            """, [deleted, by, time, .integer(now), id.blob])
        return connection.changes == 1
    }

    /// The sequence number of the stored change of `replica` that holds the
    /// operation `counter` (nil: not stored, e.g. compacted away). A
    /// replica's counters grow with its sequence numbers.
    func storedChangeSeq(of document: DocumentID, replica: ReplicaID, holding counter: UInt64) throws -> UInt64? {
        try connection.scalar(
            "SELECT seq FROM changes WHERE doc = ? AND replica = ? AND counter <= ? ORDER BY seq DESC LIMIT 1",
            [document.blob, replica.sql, .integer(Int64(counter))]
        )?.integer.map { UInt64($0) }
    }

    // MARK: - Purged documents

    /// Forgets a document here, keeping what an offer of it is checked
    /// against: every row of it goes (its changes, snapshot, members,
    /// acknowledgements and undo records with it), and its record becomes a
    /// purged one. Call inside a transaction.
    func purgeDocument(_ record: DocumentRecord, version: VersionVector, at time: Int64) throws {
        try connection.run(
            """
            INSERT INTO purged_documents (doc, kind, name, version_vector, hidden, purged) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (doc) DO UPDATE SET kind = excluded.kind, name = excluded.name,
                version_vector = excluded.version_vector, hidden = excluded.hidden, purged = excluded.purged
            """,
            [
                record.id.blob, .integer(record.kind.rawValue), record.name.map(SQLValue.text) ?? .null, .blob(version.encoded()),
                .integer(record.isHidden ? 1 : 0), .integer(time),
            ])
        try connection.run("DELETE FROM documents WHERE id = ?", [record.id.blob])
        try connection.run("DELETE FROM offers WHERE doc = ?", [record.id.blob])
    }

    /// What is remembered of a purged document, if it was purged here.
    func purgedDocument(_ id: DocumentID) throws -> PurgedRecord? {
        try connection.query(
            "SELECT kind, name, version_vector, hidden, purged FROM purged_documents WHERE doc = ?", [id.blob]
        ) { row throws(StoreError) in
            guard let kind = DocumentKind(rawValue: row.int64(0)), let version = try? VersionVector(decoding: row.bytes(2)[...]) else {
                throw StoreError(.invalidData, "a purged document's row is damaged", path: path)
            }
            return PurgedRecord(id: id, kind: kind, name: row.text(1), version: version, wasHidden: row.int64(3) != 0, purged: row.int64(4))
        }.first
    }

    func forgetPurged(_ id: DocumentID) throws {
        try connection.run("DELETE FROM purged_documents WHERE doc = ?", [id.blob])
    }

    /// Removes a document and everything stored for it.
    func removeDocument(_ id: DocumentID) throws {
        try connection.run("DELETE FROM documents WHERE id = ?", [id.blob])
    }

    /// Every document, without loading any (only those in the trash here
    /// with `inTrash`). O(documents).
    func documents(inTrash: Bool = false) throws -> [DocumentRecord] {
        try connection.query(
            """
            SELECT d.id, d.kind, d.name, d.created, d.deleted,
                   (SELECT count(*) FROM changes c WHERE c.doc = d.id), s.version_vector, d.origin_peer,
                   d.deleted_by, d.deleted_time, d.deleted_seen, d.hidden, d.hidden_at
            FROM documents d LEFT JOIN snapshots s ON s.doc = d.id\(inTrash ? " WHERE d.deleted = 1 OR d.hidden = 1" : "")
            ORDER BY d.created, d.id
            """
        ) { row throws(StoreError) in
            try record(row)
        }
    }

    /// Whether a document is stored (one indexed lookup).
    func hasDocument(_ id: DocumentID) throws -> Bool {
        try connection.scalar("SELECT 1 FROM documents WHERE id = ?", [id.blob]) != nil
    }

    func document(_ id: DocumentID) throws -> DocumentRecord? {
        try connection.query(
            """
            SELECT d.id, d.kind, d.name, d.created, d.deleted,
                   (SELECT count(*) FROM changes c WHERE c.doc = d.id), s.version_vector, d.origin_peer,
                   d.deleted_by, d.deleted_time, d.deleted_seen, d.hidden, d.hidden_at
            FROM documents d LEFT JOIN snapshots s ON s.doc = d.id WHERE d.id = ?
            """, [id.blob]
        ) { row throws(StoreError) in
            try record(row)
        }.first
    }

    private func record(_ row: Statement) throws(StoreError) -> DocumentRecord {
        guard let id = DocumentID(blob: row.bytes(0)), let kind = DocumentKind(rawValue: row.int64(1)) else {
            throw StoreError(.invalidData, "a document row is damaged", path: path)
        }
        let vector = row.value(6).blob.flatMap { try? VersionVector(decoding: $0[...]) }
        return DocumentRecord(
            id: id, kind: kind, name: row.text(2), created: row.int64(3), isDeletedForEveryone: row.int64(4) != 0,
            deletedBy: row.text(8).flatMap { PeerID($0) }, deletedTime: row.value(9).integer, deletedSeen: row.value(10).integer,
            isHidden: row.int64(11) != 0, hiddenAt: row.value(12).integer, changeCount: Int(row.int64(5)), snapshotVersion: vector,
            origin: row.text(7))
    }

    // MARK: - Changes

    /// Inserts changes; a change already stored with the same bytes is skipped.
    /// Call inside a transaction to commit a batch at once.
    func append(_ changes: [EncodedChange], to document: DocumentID) throws {
        let statement = try connection.prepare(
            "INSERT INTO changes (doc, replica, seq, counter, bytes, anchor, signature, wall_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
        )
        let doc = document.blob
        for change in changes {
            try statement.bind([
                doc, change.replica.sql, .integer(Int64(change.seq)), .integer(Int64(change.startCounter)), .blob(Array(change.bytes)),
                .integer(change.isAnchor ? 1 : 0), change.signature.map { .blob($0) } ?? .null, .integer(change.wallTime),
            ])
            while try statement.step() {}
        }
    }

    /// Stored changes of a document not covered by `vector`, decoded, in causal (counter) order.
    func changes(of document: DocumentID, notCoveredBy vector: VersionVector = VersionVector()) throws -> [(EncodedChange, Change)] {
        var result: [(EncodedChange, Change)] = []
        // Read in key order (replica, seq); the bytes only of those not covered.
        let rows = try connection.query(
            "SELECT replica, seq, counter, anchor, signature, bytes FROM changes WHERE doc = ?", [document.blob]
        ) { row -> (replica: ReplicaID, seq: UInt64, counter: Int64, anchor: Bool, signature: [UInt8]?, bytes: [UInt8])? in
            let (replica, seq) = (ReplicaID(sql: row.int64(0)), UInt64(row.int64(1)))
            guard seq > vector[replica] else { return nil }
            return (replica, seq, row.int64(2), row.int64(3) != 0, row.value(4).blob, row.bytes(5))
        }.compactMap { $0 }.sorted { ($0.counter, $0.replica) < ($1.counter, $1.replica) }
        for (replica, seq, _, anchor, signature, bytes) in rows {
            do {
                let (encoded, change) = try EncodedChange.decoding(bytes[...], signature: signature)
                result.append((encoded.markedAnchor(anchor), change))
            } catch {
                throw StoreError(.invalidData, "stored change \(seq) of \(replica) in \(document) is damaged: \(error)", path: path)
            }
        }
        return result
    }

    /// A daemon setting kept in the database (the `meta` table, keys prefixed `setting.`).
    func setting(_ key: String) throws -> String? {
        try connection.scalar("SELECT value FROM meta WHERE key = ?", [.text("setting." + key)])?.text
    }

    func setSetting(_ key: String, to value: String?) throws {
        if let value {
            try connection.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [.text("setting." + key), .text(value)])
        } else {
            try connection.run("DELETE FROM meta WHERE key = ?", [.text("setting." + key)])
        }
    }

    /// The latest `limit` stored changes of a document, newest (highest counter) first.
    func recentChanges(of document: DocumentID, limit: Int) throws -> [Change] {
        let rows = try connection.query(
            "SELECT replica, seq, bytes FROM changes WHERE doc = ? ORDER BY counter DESC, replica DESC LIMIT ?",
            [document.blob, .integer(Int64(limit))]
        ) { row in (ReplicaID(sql: row.int64(0)), UInt64(row.int64(1)), row.bytes(2)) }
        return try rows.map { replica, seq, bytes in
            do {
                return try EncodedChange.decoding(bytes[...]).1
            } catch {
                throw StoreError(.invalidData, "stored change \(seq) of \(replica) in \(document) is damaged: \(error)", path: path)
            }
        }
    }

    /// The lowest stored sequence number of each replica's changes (what a
    /// peer at a lower one can no longer get as changes); with `time`, of
    /// its changes made at or after it (changes stored before
    /// their times were kept count as older).
    func firstStoredSeq(of document: DocumentID, madeSince time: Int64? = nil) throws -> [ReplicaID: UInt64] {
        var result: [ReplicaID: UInt64] = [:]
        let rows = try connection.query(
            "SELECT replica, min(seq) FROM changes WHERE doc = ?\(time == nil ? "" : " AND wall_time >= ?") GROUP BY replica",
            [document.blob] + (time.map { [.integer($0)] } ?? []),
            { (ReplicaID(sql: $0.int64(0)), UInt64($0.int64(1))) })
        for (replica, seq) in rows { result[replica] = seq }
        return result
    }

    /// The highest stored sequence number of each replica's changes.
    func lastStoredSeq(of document: DocumentID) throws -> [ReplicaID: UInt64] {
        var result: [ReplicaID: UInt64] = [:]
        for (replica, seq) in try connection.query(
            "SELECT replica, max(seq) FROM changes WHERE doc = ? GROUP BY replica", [document.blob],
            { (ReplicaID(sql: $0.int64(0)), UInt64($0.int64(1))) })
        {
            result[replica] = seq
        }
        return result
    }

    func changeCount(of document: DocumentID) throws -> Int {
        Int(try connection.scalar("SELECT count(*) FROM changes WHERE doc = ?", [document.blob])?.integer ?? 0)
    }

    // MARK: - Snapshots

    /// Stores a checkpoint: the document as it was at `version`.
    func saveCheckpoint(_ bytes: [UInt8], version: VersionVector, of document: DocumentID, kept: Bool, created: Int64) throws {
        try connection.run(
            "INSERT INTO checkpoints (doc, version_vector, bytes, kept, created) VALUES (?, ?, ?, ?, ?)",
            [document.blob, .blob(version.encoded()), .blob(bytes), .integer(kept ? 1 : 0), .integer(created)])
    }

    /// A document's checkpoints, oldest first (by the changes they cover).
    func checkpoints(of document: DocumentID) throws -> [(rowid: Int64, version: VersionVector, bytes: [UInt8], kept: Bool)] {
        let rows = try connection.query(
            "SELECT rowid, version_vector, bytes, kept FROM checkpoints WHERE doc = ? ORDER BY rowid", [document.blob],
            { ($0.int64(0), $0.bytes(1), $0.bytes(2), $0.int64(3) != 0) })
        return try rows.map { rowid, vector, bytes, kept in
            do {
                return (rowid, try VersionVector(decoding: vector[...]), bytes, kept)
            } catch {
                throw StoreError(.invalidData, "a checkpoint of \(document) has a damaged version vector", path: path)
            }
        }.sorted { $0.version.totalChanges < $1.version.totalChanges }
    }

    func dropCheckpoint(_ rowid: Int64) throws {
        try connection.run("DELETE FROM checkpoints WHERE rowid = ?", [.integer(rowid)])
    }

    /// Stores a document's snapshot. `pointsInLog`: the snapshot leaves out
    /// the point blobs of each named replica's stored changes from that
    /// sequence number up to `version` (nil: it leaves none out).
    func saveSnapshot(
        _ bytes: [UInt8], version: VersionVector, of document: DocumentID, created: Int64, pointsInLog: VersionVector? = nil
    ) throws {
        try connection.run(
            """
            INSERT INTO snapshots (doc, version_vector, bytes, created, points_in_log) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (doc) DO UPDATE SET version_vector = excluded.version_vector, bytes = excluded.bytes,
                created = excluded.created, points_in_log = excluded.points_in_log
            """,
            [document.blob, .blob(version.encoded()), .blob(bytes), .integer(created), pointsInLog.map { .blob($0.encoded()) } ?? .null])
    }

    /// A document's stored snapshot: the version it covers, its bytes, and
    /// where the points it leaves out are (`saveSnapshot`).
    func snapshot(of document: DocumentID) throws -> StoredSnapshot? {
        guard
            let row = try connection.query(
                "SELECT version_vector, bytes, points_in_log FROM snapshots WHERE doc = ?", [document.blob],
                { ($0.bytes(0), $0.bytes(1), $0.value(2).blob) }
            ).first
        else { return nil }
        do {
            return StoredSnapshot(
                version: try VersionVector(decoding: row.0[...]), bytes: row.1, pointsInLog: try row.2.map { try VersionVector(decoding: $0[...]) })
        } catch {
            throw StoreError(.invalidData, "the snapshot of \(document) has a damaged version vector", path: path)
        }
    }

    /// Where the points a document's stored snapshot left out are
    /// (`StoredSnapshot.pointsInLog`), without reading the snapshot.
    func snapshotPointsInLog(of document: DocumentID) throws -> VersionVector? {
        guard let blob = try connection.scalar("SELECT points_in_log FROM snapshots WHERE doc = ?", [document.blob])?.blob else {
            return nil
        }
        do {
            return try VersionVector(decoding: blob[...])
        } catch {
            throw StoreError(.invalidData, "the snapshot of \(document) has a damaged points_in_log vector", path: path)
        }
    }

    /// For each replica of `version`, where its stored changes up to its
    /// entry form an unbroken run (none missing between the first stored and
    /// that entry): the run's first sequence number and that change's first
    /// operation counter. Every operation of the replica from that counter
    /// up to the entry is then in a stored change. O(replicas × log lookups).
    func unbrokenLogRuns(of document: DocumentID, upTo version: VersionVector) throws -> [ReplicaID: (seq: UInt64, counter: UInt64)] {
        var runs: [ReplicaID: (seq: UInt64, counter: UInt64)] = [:]
        for (replica, last) in version.sortedEntries {
            guard
                let (first, count) = try connection.query(
                    "SELECT min(seq), count(*) FROM changes WHERE doc = ? AND replica = ? AND seq <= ?",
                    [document.blob, replica.sql, .integer(Int64(last))], { ($0.value(0).integer, $0.int64(1)) }
                ).first, let first, count > 0, UInt64(count) == last - UInt64(first) + 1,
                let counter = try connection.scalar(
                    "SELECT counter FROM changes WHERE doc = ? AND replica = ? AND seq = ?", [document.blob, replica.sql, .integer(first)]
                )?.integer
            else { continue }
            runs[replica] = (UInt64(first), UInt64(counter))
        }
        return runs
    }

    /// The point blobs a snapshot left in the log (`StoredSnapshot.pointsInLog`):
    /// those the stored changes from each replica's sequence number up to
    /// `version` add.
    /// - Throws: `StoreError(.invalidData)` when one of those changes is missing or damaged.
    func pointsInLog(of document: DocumentID, from first: VersionVector, upTo version: VersionVector) throws -> [OpID: PointsBlob] {
        var points: [OpID: PointsBlob] = [:]
        for (replica, from) in first.sortedEntries where from <= version[replica] {
            let rows = try connection.query(
                "SELECT seq, bytes FROM changes WHERE doc = ? AND replica = ? AND seq >= ? AND seq <= ?",
                [document.blob, replica.sql, .integer(Int64(from)), .integer(Int64(version[replica]))], { (UInt64($0.int64(0)), $0.bytes(1)) })
            guard rows.count == Int(version[replica] - from + 1) else {
                throw StoreError(
                    .invalidData, "changes of \(replica) in \(document) that hold points of its snapshot are missing", path: path)
            }
            for (seq, bytes) in rows {
                do {
                    for (id, blob) in try Change(decoding: bytes[...]).addedPoints { points[id] = blob }
                } catch {
                    throw StoreError(.invalidData, "stored change \(seq) of \(replica) in \(document) is damaged: \(error)", path: path)
                }
            }
        }
        return points
    }

    /// Keeps a stored change's signature only where a sender may need it:
    /// the newest stored change of each replica, and those a receiver checks
    /// inside a run (`Authorship.isCheckedInRun`: every 256th, and large
    /// ones). The others are covered by a later one through the hash chain,
    /// and a sender extends a run to the next signed change (`ChangeBatch.split`).
    /// Returns how many signatures went.
    @discardableResult
    func dropCoveredSignatures(of document: DocumentID) throws -> Int {
        try connection.run(
            """
            UPDATE changes SET signature = NULL, anchor = 0
            WHERE doc = ?1 AND signature IS NOT NULL AND seq % ?2 != 0 AND length(bytes) < ?3
              AND seq < (SELECT max(c.seq) FROM changes c WHERE c.doc = ?1 AND c.replica = changes.replica)
            """, [document.blob, .integer(Int64(Authorship.anchorInterval)), .integer(Int64(Authorship.anchorBytes))])
        return connection.changes
    }

    /// Drops stored changes covered by `horizon`. Returns how many.
    @discardableResult
    func dropChanges(of document: DocumentID, coveredBy horizon: VersionVector) throws -> Int {
        var dropped = 0
        for (replica, seq) in horizon.sortedEntries {
            try connection.run(
                "DELETE FROM changes WHERE doc = ? AND replica = ? AND seq <= ?", [document.blob, replica.sql, .integer(Int64(seq))])
            dropped += connection.changes
        }
        return dropped
    }

    // MARK: - Peers

    func upsertPeer(_ peer: PeerRecord) throws {
        try connection.run(
            """
            INSERT INTO peers (id, name, address, other_addresses, state, added, last_seen, last_address) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, address = excluded.address,
                other_addresses = excluded.other_addresses, state = excluded.state,
                last_seen = excluded.last_seen, last_address = excluded.last_address
            """,
            [
                .text(peer.id.description), peer.name.map(SQLValue.text) ?? .null, peer.address.map(SQLValue.text) ?? .null,
                peer.otherAddresses.isEmpty ? .null : .text(peer.otherAddresses.joined(separator: "\n")),
                .text(peer.state.rawValue), .integer(peer.added), peer.lastSeen.map(SQLValue.integer) ?? .null,
                peer.lastAddress.map(SQLValue.text) ?? .null,
            ])
    }

    func peers() throws -> [PeerRecord] {
        try connection.query(
            "SELECT id, name, address, state, added, last_seen, last_address, other_addresses, announced_name, offers_dropped FROM peers ORDER BY added, id"
        ) { row throws(StoreError) in
            guard let state = PeerRecord.State(rawValue: row.text(3) ?? ""), let id = PeerID(row.text(0) ?? "") else {
                throw StoreError(.invalidData, "a peer row is damaged", path: path)
            }
            return PeerRecord(
                id: id, name: row.text(1), address: row.text(2),
                otherAddresses: row.text(7).map { $0.split(separator: "\n").map(String.init) } ?? [], state: state,
                added: row.int64(4), lastSeen: row.value(5).integer, lastAddress: row.text(6), announcedName: row.text(8),
                offersDropped: Int(row.int64(9)))
        }
    }

    /// Keeps the name a peer announced (its row's other fields are left as they are).
    func setAnnouncedName(_ name: String, of id: PeerID) throws {
        try connection.run("UPDATE peers SET announced_name = ? WHERE id = ?", [.text(name), .text(id.description)])
    }

    func peer(_ id: PeerID) throws -> PeerRecord? { try peers().first { $0.id == id } }

    func removePeer(_ id: PeerID) throws {
        try connection.run("DELETE FROM peers WHERE id = ?", [.text(id.description)])
        guard connection.changes == 1 else { throw StoreError(.notFound, "no peer \(id)", path: path) }
    }

    /// Keeps at most `limit` pending peers, forgetting the oldest.
    func prunePendingPeers(keeping limit: Int) throws {
        try connection.run(
            """
            DELETE FROM peers WHERE state = 'pending' AND id NOT IN
                (SELECT id FROM peers WHERE state = 'pending' ORDER BY coalesce(last_seen, added) DESC LIMIT ?)
            """, [.integer(Int64(limit))])
    }

    // MARK: - Members, offers and acknowledged versions

    /// Mirrors a document's access list (its members other than nobody).
    func setMembers(_ members: [(peer: PeerID, role: Role)], of document: DocumentID) throws {
        try connection.run("DELETE FROM members WHERE doc = ?", [document.blob])
        let statement = try connection.prepare("INSERT INTO members (doc, peer, role) VALUES (?, ?, ?)")
        for (peer, role) in members where role > .none {
            try statement.bind([document.blob, .text(peer.description), .text(role.description)])
            while try statement.step() {}
        }
    }

    /// Members of one document, or of every document.
    func members(of document: DocumentID? = nil) throws -> [MemberRecord] {
        let filter = document == nil ? "" : " WHERE doc = ?"
        return try connection.query(
            "SELECT doc, peer, role FROM members\(filter) ORDER BY doc, peer", document.map { [$0.blob] } ?? []
        ) { row throws(StoreError) in
            guard let id = DocumentID(blob: row.bytes(0)), let peer = PeerID(row.text(1) ?? ""),
                let role = Role(name: row.text(2) ?? "")
            else {
                throw StoreError(.invalidData, "a member row is damaged", path: path)
            }
            return MemberRecord(document: id, peer: peer, role: role)
        }
    }

    /// The documents a peer is a member of.
    func documents(sharedWith peer: PeerID) throws -> [MemberRecord] {
        try connection.query(
            "SELECT doc, role FROM members WHERE peer = ? ORDER BY doc", [.text(peer.description)]
        ) { row throws(StoreError) in
            guard let id = DocumentID(blob: row.bytes(0)), let role = Role(name: row.text(1) ?? "") else {
                throw StoreError(.invalidData, "a member row is damaged", path: path)
            }
            return MemberRecord(document: id, peer: peer, role: role)
        }
    }

    func recordOffer(_ offer: OfferRecord) throws {
        try connection.run(
            """
            INSERT INTO offers (doc, peer, kind, name, received) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (doc, peer) DO UPDATE SET name = excluded.name, received = excluded.received
            """,
            [
                offer.document.blob, .text(offer.peer.description), .integer(offer.kind.rawValue), offer.name.map(SQLValue.text) ?? .null,
                .integer(offer.received),
            ])
    }

    func offers() throws -> [OfferRecord] {
        try connection.query("SELECT doc, peer, kind, name, received FROM offers WHERE declined = 0 ORDER BY received, doc") {
            row throws(StoreError) in
            guard let id = DocumentID(blob: row.bytes(0)), let peer = PeerID(row.text(1) ?? ""),
                let kind = DocumentKind(rawValue: row.int64(2))
            else {
                throw StoreError(.invalidData, "an offer row is damaged", path: path)
            }
            return OfferRecord(document: id, peer: peer, kind: kind, name: row.text(3), received: row.int64(4))
        }
    }

    /// Keeps a peer's newest `limit` offers waiting for a user (declined ones
    /// are kept: they are how a refusal is remembered), drops the older, and
    /// counts them on the peer's row.
    /// - Returns: how many were dropped now.
    @discardableResult
    func pruneOffers(from peer: PeerID, keeping limit: Int) throws -> Int {
        let id = SQLValue.text(peer.description)
        try connection.run(
            """
            DELETE FROM offers WHERE peer = ? AND declined = 0 AND doc NOT IN
                (SELECT doc FROM offers WHERE peer = ? AND declined = 0 ORDER BY received DESC, doc DESC LIMIT ?)
            """, [id, id, .integer(Int64(limit))])
        let dropped = connection.changes
        if dropped > 0 { try connection.run("UPDATE peers SET offers_dropped = offers_dropped + ? WHERE id = ?", [.integer(Int64(dropped)), id]) }
        return dropped
    }

    func declineOffer(of document: DocumentID, from peer: PeerID) throws {
        try connection.run("UPDATE offers SET declined = 1 WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])
    }

    func isDeclined(_ document: DocumentID, from peer: PeerID) throws -> Bool {
        try connection.scalar("SELECT declined FROM offers WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])?.integer == 1
    }

    func autoAccept() throws -> [PeerID: Bool] {
        var result: [PeerID: Bool] = [:]
        for (text, value) in try connection.query(
            "SELECT id, auto_accept FROM peers WHERE auto_accept IS NOT NULL", [], { ($0.text(0) ?? "", $0.int64(1)) })
        {
            if let peer = PeerID(text) { result[peer] = value == 1 }
        }
        return result
    }

    func setAutoAccept(_ value: Bool?, for peer: PeerID) throws {
        try connection.run(
            "UPDATE peers SET auto_accept = ? WHERE id = ?", [value.map { .integer($0 ? 1 : 0) } ?? .null, .text(peer.description)])
    }

    func setDirectShare(_ shared: Bool, of document: DocumentID, with peer: PeerID) throws {
        if shared {
            try connection.run("INSERT OR IGNORE INTO direct_shares (doc, peer) VALUES (?, ?)", [document.blob, .text(peer.description)])
        } else {
            try connection.run("DELETE FROM direct_shares WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])
        }
    }

    func setFarewell(_ version: VersionVector?, of document: DocumentID, to peer: PeerID) throws {
        if let version {
            try connection.run(
                "INSERT OR REPLACE INTO farewells (doc, peer, version_vector) VALUES (?, ?, ?)",
                [document.blob, .text(peer.description), .blob(version.encoded())])
        } else {
            try connection.run("DELETE FROM farewells WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])
        }
    }

    func farewell(of document: DocumentID, to peer: PeerID) throws -> VersionVector? {
        guard
            let bytes = try connection.scalar(
                "SELECT version_vector FROM farewells WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])?.blob
        else { return nil }
        return try? VersionVector(decoding: bytes[...])
    }

    func directShares() throws -> [(document: DocumentID, peer: PeerID)] {
        try connection.query("SELECT doc, peer FROM direct_shares", []) { ($0.bytes(0), $0.text(1) ?? "") }.compactMap { doc, text in
            guard let id = DocumentID(blob: doc), let peer = PeerID(text) else { return nil }
            return (id, peer)
        }
    }

    func removeOffers(of document: DocumentID) throws {
        try connection.run("DELETE FROM offers WHERE doc = ?", [document.blob])
    }

    func forgetAcknowledged(_ document: DocumentID, by peer: PeerID) throws {
        try connection.run("DELETE FROM peer_versions WHERE doc = ? AND peer = ?", [document.blob, .text(peer.description)])
    }

    func setAcknowledged(_ version: VersionVector, of document: DocumentID, by peer: PeerID, at time: Int64) throws {
        try connection.run(
            """
            INSERT INTO peer_versions (doc, peer, version_vector, updated) VALUES (?, ?, ?, ?)
            ON CONFLICT (doc, peer) DO UPDATE SET version_vector = excluded.version_vector, updated = excluded.updated
            """, [document.blob, .text(peer.description), .blob(version.encoded()), .integer(time)])
    }

    func acknowledged(_ document: DocumentID) throws -> [PeerID: VersionVector] {
        var result: [PeerID: VersionVector] = [:]
        for (peer, bytes) in try connection.query(
            "SELECT peer, version_vector FROM peer_versions WHERE doc = ?", [document.blob], { ($0.text(0) ?? "", $0.bytes(1)) })
        {
            guard let peer = PeerID(peer) else { continue }
            result[peer] = try? VersionVector(decoding: bytes[...])
        }
        return result
    }

    /// What peers acknowledged, of every document.
    func acknowledgedByDocument() throws -> [DocumentID: [PeerID: VersionVector]] {
        var result: [DocumentID: [PeerID: VersionVector]] = [:]
        var peers: [String: PeerID] = [:]
        for (doc, text, bytes) in try connection.query(
            "SELECT doc, peer, version_vector FROM peer_versions", [], { ($0.bytes(0), $0.text(1) ?? "", $0.bytes(2)) })
        {
            guard let id = DocumentID(blob: doc) else { continue }
            if peers[text] == nil { peers[text] = PeerID(text) }
            guard let peer = peers[text], let version = try? VersionVector(decoding: bytes[...]) else { continue }
            result[id, default: [:]][peer] = version
        }
        return result
    }

    // MARK: - Backup

    /// Bytes of the main database file and its write-ahead log.
    func fileSize() -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Moves the log into the main file (after big deletes, before measuring size).
    func checkpoint() throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    func vacuum() throws {
        try connection.execute("VACUUM")
    }
}

/// A stored snapshot (`StoreDatabase.snapshot(of:)`).
struct StoredSnapshot: Sendable {
    let version: VersionVector
    let bytes: [UInt8]
    /// Per replica, the sequence number from which the stored changes hold
    /// the point blobs this snapshot leaves out (nil: it leaves none out).
    let pointsInLog: VersionVector?
}
