/// The schema, as ordered, forward-only migrations with string ids.
///
/// A migration never changes once released; a new schema is a new entry at the
/// end. A database that has applied a migration this build does not know was
/// written by a newer Storyteller and is refused, never modified.
struct Migration: Sendable {
    let id: String
    let sql: String
}

enum Schema {
    static let migrations: [Migration] = [
        Migration(
            id: "2026-11-22-initial",
            sql: """
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY,
                    value
                ) WITHOUT ROWID;
                CREATE TABLE documents (
                    id BLOB PRIMARY KEY CHECK (length(id) = 16),
                    kind INTEGER NOT NULL CHECK (kind IN (1, 2)),
                    name TEXT,
                    created INTEGER NOT NULL,
                    deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1))
                ) WITHOUT ROWID;
                CREATE TABLE changes (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    replica INTEGER NOT NULL,
                    seq INTEGER NOT NULL CHECK (seq >= 1),
                    counter INTEGER NOT NULL,
                    bytes BLOB NOT NULL,
                    PRIMARY KEY (doc, replica, seq)
                ) WITHOUT ROWID;
                CREATE TABLE snapshots (
                    doc BLOB PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
                    version_vector BLOB NOT NULL,
                    bytes BLOB NOT NULL,
                    created INTEGER NOT NULL
                );
                CREATE TABLE peers (
                    id TEXT PRIMARY KEY,
                    name TEXT,
                    address TEXT,
                    state TEXT NOT NULL CHECK (state IN ('configured', 'pending')),
                    added INTEGER NOT NULL,
                    last_seen INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE shares (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL REFERENCES peers(id) ON DELETE CASCADE,
                    mode TEXT NOT NULL CHECK (mode IN ('read-write', 'read-only')),
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                CREATE TABLE peer_versions (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL REFERENCES peers(id) ON DELETE CASCADE,
                    version_vector BLOB NOT NULL,
                    updated INTEGER NOT NULL,
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                """),
        Migration(
            id: "2026-11-22-change-order",
            sql: """
                -- Loading the tail after a snapshot reads changes in counter order.
                CREATE INDEX changes_by_counter ON changes (doc, counter);
                ALTER TABLE peers ADD COLUMN last_address TEXT;
                """),
        Migration(
            id: "2026-11-23-authorship",
            sql: """
                -- Signed authorship (docs/crdt.md, "Authorship and access"): who may
                -- do what is the documents' own replicated access list; `members`
                -- mirrors it so sessions need not load documents. The old
                -- per-peer `shares` are gone: documents made before are upgraded
                -- to local-only ones (Store.upgradeLegacyDocuments) and shared anew.
                -- `anchor`: this daemon checked (or made) the change's signature, kept
                -- in `signature` (a change inside a run is covered by its run's end
                -- and keeps none).
                ALTER TABLE changes ADD COLUMN anchor INTEGER NOT NULL DEFAULT 1 CHECK (anchor IN (0, 1));
                ALTER TABLE changes ADD COLUMN signature BLOB CHECK (signature IS NULL OR length(signature) = 64);
                ALTER TABLE documents ADD COLUMN origin_peer TEXT;
                CREATE TABLE members (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL,
                    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'reader')),
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                CREATE INDEX members_by_peer ON members (peer);
                CREATE TABLE offers (
                    doc BLOB NOT NULL CHECK (length(doc) = 16),
                    peer TEXT NOT NULL,
                    kind INTEGER NOT NULL CHECK (kind IN (1, 2)),
                    name TEXT,
                    received INTEGER NOT NULL,
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                DROP TABLE shares;
                INSERT INTO meta (key, value) SELECT 'legacy_upgrade', 1 WHERE EXISTS (SELECT 1 FROM documents);
                DELETE FROM meta WHERE key = 'replica_id';
                """),
        Migration(
            id: "2026-11-25-undo-history",
            sql: """
                -- Undo and redo stacks per document and control-API session, so
                -- they survive a restart: one row per record, pushed and removed
                -- as the stacks change (UndoStorageChange), ordered by position.
                CREATE TABLE undo_records (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    session TEXT NOT NULL,
                    stack INTEGER NOT NULL CHECK (stack IN (0, 1)),
                    position INTEGER NOT NULL,
                    record BLOB NOT NULL,
                    PRIMARY KEY (doc, session, stack, position)
                ) WITHOUT ROWID;
                """),
        Migration(
            id: "2026-11-28-peer-addresses",
            sql: """
                -- A peer may be dialed at several addresses, tried in turn:
                -- `address` stays the first (what listings show), the others
                -- follow here, one per line.
                ALTER TABLE peers ADD COLUMN other_addresses TEXT;
                """),
        Migration(
            id: "2026-11-29-offers-and-shares",
            sql: """
                -- Whether this daemon takes what a peer shares without asking
                -- (NULL: the accept-shares setting decides); offers a user
                -- declined (kept so the next Advertise does not offer again);
                -- shares made to a peer directly (a project leaving a shared
                -- folder keeps them).
                ALTER TABLE peers ADD COLUMN auto_accept INTEGER CHECK (auto_accept IS NULL OR auto_accept IN (0, 1));
                ALTER TABLE offers ADD COLUMN declined INTEGER NOT NULL DEFAULT 0 CHECK (declined IN (0, 1));
                CREATE TABLE direct_shares (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL,
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                -- A peer whose rights were taken while it was away: the version
                -- that says so, sent to it when it next advertises the document.
                CREATE TABLE farewells (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    peer TEXT NOT NULL,
                    version_vector BLOB NOT NULL,
                    PRIMARY KEY (doc, peer)
                ) WITHOUT ROWID;
                """),
        Migration(
            id: "2026-11-30-project-trash",
            sql: """
                -- Deleting a project is document state (docs/crdt.md, "Deleting a
                -- project"): `deleted` now mirrors the project's own flag, with who
                -- deleted it, when (their clock) and when this machine saw it.
                -- `hidden` is the local-only flag (a reader's delete); what
                -- `deleted` meant before was that, so it moves there.
                ALTER TABLE documents ADD COLUMN deleted_by TEXT;
                ALTER TABLE documents ADD COLUMN deleted_time INTEGER;
                ALTER TABLE documents ADD COLUMN deleted_seen INTEGER;
                ALTER TABLE documents ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1));
                ALTER TABLE documents ADD COLUMN hidden_at INTEGER;
                UPDATE documents SET hidden = deleted, hidden_at = CASE WHEN deleted = 1 THEN strftime('%s', 'now') * 1000 END;
                UPDATE documents SET deleted = 0;
                -- Projects purged here after the trash retention (or by hand): what
                -- they held, so an offer of one with nothing new is not taken back.
                CREATE TABLE purged_documents (
                    doc BLOB PRIMARY KEY CHECK (length(doc) = 16),
                    kind INTEGER NOT NULL CHECK (kind IN (1, 2)),
                    name TEXT,
                    version_vector BLOB NOT NULL,
                    hidden INTEGER NOT NULL CHECK (hidden IN (0, 1)),
                    purged INTEGER NOT NULL
                ) WITHOUT ROWID;
                """),
        Migration(
            id: "2026-12-01-blob-references",
            sql: """
                -- Which blobs (images, sounds) each project's fields have held
                -- (docs/architecture.md, "Media"): what this daemon fetches, what a
                -- peer sharing the project may fetch from it, and what garbage
                -- collection keeps. Rows are added in the transaction of the change
                -- that wrote the reference and go when the project is purged.
                CREATE TABLE blob_refs (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    hash BLOB NOT NULL CHECK (length(hash) = 32),
                    type INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    PRIMARY KEY (doc, hash)
                ) WITHOUT ROWID;
                CREATE INDEX blob_refs_by_hash ON blob_refs (hash);
                """),
        Migration(
            id: "2026-12-02-project-tags",
            sql: """
                -- A project's own tags (docs/crdt.md, "Tags"), mirrored from the
                -- document in the transaction of each change, so listing the
                -- projects with a tag loads no document. `tag` is the key (lower
                -- case), `name` the spelling shown.
                CREATE TABLE project_tags (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    tag TEXT NOT NULL,
                    name TEXT NOT NULL,
                    PRIMARY KEY (doc, tag)
                ) WITHOUT ROWID;
                CREATE INDEX project_tags_by_tag ON project_tags (tag);
                """),
        Migration(
            id: "2026-12-03-history-retention",
            sql: """
                -- History retention (docs/architecture.md, "History retention"):
                -- each change's wall time, so compaction keeps what is younger
                -- than the retention window (NULL: stored before, compacted as
                -- before), and checkpoints: a project as it was at a version,
                -- the base the retained changes start from, and named versions
                -- (`kept`), which stay for good.
                ALTER TABLE changes ADD COLUMN wall_time INTEGER;
                CREATE TABLE checkpoints (
                    doc BLOB NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                    version_vector BLOB NOT NULL,
                    bytes BLOB NOT NULL,
                    kept INTEGER NOT NULL CHECK (kept IN (0, 1)),
                    created INTEGER NOT NULL
                );
                CREATE INDEX checkpoints_by_doc ON checkpoints (doc);
                """),
        Migration(
            id: "2026-12-04-peer-announced-name",
            sql: """
                -- The name a peer gave itself in its last hello, kept after it
                -- disconnects and across restarts (`storyteller peers`, `watch`).
                ALTER TABLE peers ADD COLUMN announced_name TEXT;
                """),
        Migration(
            id: "2026-12-05-snapshot-points-in-log",
            sql: """
                -- Points stored once (docs/architecture.md, "History retention"):
                -- a project's snapshot written while history retention keeps its
                -- changes leaves out the point blobs those changes hold.
                -- `points_in_log` (a version vector, NULL: none left out) gives,
                -- per replica, the first sequence number from which the stored
                -- changes up to the snapshot's version hold them, all present.
                ALTER TABLE snapshots ADD COLUMN points_in_log BLOB;
                -- The log is read by replica and sequence number (its key),
                -- sorted in memory: an index by counter cost 8 % of the log's size.
                DROP INDEX changes_by_counter;
                """),
        Migration(
            id: "2026-12-06-blob-reference-proofs",
            sql: """
                -- Knowing a hash grants nothing (docs/protocol.md, "Blobs"): a
                -- reference is `proven` for its document once the bytes reached
                -- this daemon through that document (uploaded into it, carried by
                -- a package of it, or fetched over it from a peer that served them
                -- for it); only then are they served to the document's members.
                -- References recorded before this are taken as proven (they were
                -- served so far, and nothing says who made them).
                ALTER TABLE blob_refs ADD COLUMN proven INTEGER NOT NULL DEFAULT 0 CHECK (proven IN (0, 1));
                UPDATE blob_refs SET proven = 1;
                """),
        Migration(
            id: "2026-12-07-offers-dropped",
            sql: """
                -- Offers kept for a user are bounded per peer (the oldest dropped
                -- first); how many of a peer's were dropped is kept to be shown.
                ALTER TABLE peers ADD COLUMN offers_dropped INTEGER NOT NULL DEFAULT 0;
                """),
        Migration(
            id: "2026-12-08-library-aliases",
            sql: """
                -- A folder keeps its id when it is shared (docs/architecture.md,
                -- "Folder shares"): sharing makes it a library document of its
                -- own, listed where it was by a new entry; the folder's old node
                -- id (`node`, as text) in `library` names that entry from then on.
                CREATE TABLE library_aliases (
                    library BLOB NOT NULL,
                    node TEXT NOT NULL,
                    entry TEXT NOT NULL,
                    PRIMARY KEY (library, node)
                ) WITHOUT ROWID;
                """),
        Migration(
            id: "2026-12-09-open-conflicts",
            sql: """
                -- Text fields of a project with overwritten values still open
                -- (`ProjectDocument.openConflicts`), mirrored in the transaction
                -- of every change as the deleted flag and tags are, so `status`
                -- counts them without loading every project. NULL: not counted
                -- yet (a project stored before this column, counted once when
                -- first asked).
                ALTER TABLE documents ADD COLUMN open_conflicts INTEGER;
                """),
    ]

    /// Applies the migrations the database lacks, each in its own transaction.
    /// `list` is the store's schema unless another database (the blob store's)
    /// keeps its own.
    /// - Throws: `StoreError(.newerSchema)` if the database knows migrations this build does not.
    static func migrate(_ connection: Connection, _ list: [Migration] = migrations, upTo count: Int? = nil) throws {
        let count = count ?? list.count
        try connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied INTEGER NOT NULL)")
        let applied = Set(try connection.query("SELECT id FROM schema_migrations") { $0.text(0) ?? "" })
        let known = Set(list.map(\.id))
        if let unknown = applied.subtracting(known).sorted().first {
            throw StoreError(
                .newerSchema, "the database was written by a newer Storyteller (migration \(unknown)); upgrade to open it",
                path: connection.path)
        }
        for migration in list.prefix(count) where !applied.contains(migration.id) {
            try connection.transaction {
                try connection.execute(migration.sql)
                try connection.run(
                    "INSERT INTO schema_migrations (id, applied) VALUES (?, strftime('%s','now'))", [.text(migration.id)])
            }
        }
        try connection.execute("PRAGMA user_version = \(min(count, list.count))")
    }

    /// The ids of the migrations a database has applied, in order of application.
    static func applied(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT id FROM schema_migrations ORDER BY rowid") { $0.text(0) ?? "" }
    }
}
