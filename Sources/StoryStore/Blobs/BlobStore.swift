import Foundation
package import StoryCore
import StoryMedia

/// How the blob store bounds blobs, cuts them into chunks and collects garbage.
package struct BlobStoreOptions: Sendable {
    /// The largest blob kept, uploaded or received (`blob-max-bytes`).
    package var maximumBlobBytes: UInt64 = 1 << 30
    /// The length of a chunk (a peer sends and proves a blob chunk by chunk);
    /// every chunk of a blob but its last is this long.
    package var chunkSize: Int = 256 << 10
    /// How long a blob no document references is kept, counted from the
    /// first collection that found it unreferenced.
    package var garbageGrace: Duration = .seconds(7 * 86400)
    /// The time of day (when a blob was first found unreferenced).
    package var clock: WallClock = .system

    package init() {}

    /// Options with the given values, the defaults for the rest.
    package init(
        maximumBlobBytes: UInt64 = 1 << 30, chunkSize: Int = 256 << 10, garbageGrace: Duration = .seconds(7 * 86400),
        clock: WallClock = .system
    ) {
        self.maximumBlobBytes = maximumBlobBytes
        self.chunkSize = chunkSize
        self.garbageGrace = garbageGrace
        self.clock = clock
    }
}

/// The daemon's images and sounds, stored by content: a blob is named by the
/// SHA-256 of its bytes, stored once however many documents reference it,
/// and documents hold `MediaReference`s, never bytes.
///
/// On disk, in `directory` (mode 0700; files 0600):
/// - `complete/xx/<64 hex>`: complete blobs (`xx` = the hash's first two hex
///   digits, so no directory grows past a few thousand entries);
/// - `partial/<64 hex>`: blobs being received from peers, at full length
///   from the start, chunks written where they belong;
/// - `tmp/`: local uploads until committed (emptied at open);
/// - `blobs.sqlite3`: one row per blob (see `BlobDatabase`).
///
/// A row is written before its file is put in place, in one transaction
/// with the rename, and the store mends what a crash leaves at open: a
/// complete row whose file is gone (or is not its length) is removed, a
/// partial blob whose file is gone holds no chunks, and a file without its
/// row is deleted. Nothing is ever read whole into memory: bytes are hashed
/// and copied in pieces of at most 1 MiB.
///
/// An actor on its own serial executor (file and SQLite calls block).
package actor BlobStore {
    /// The store's directory.
    package nonisolated let directory: String
    package nonisolated let options: BlobStoreOptions
    let database: BlobDatabase
    let executor: BackgroundThreadExecutor
    /// Every blob, as its row says (the database is the truth; this mirrors
    /// it after each commit).
    var entries: [BlobHash: Entry]
    /// Partial blobs being written: their files open and manifests loaded.
    var openPartials: [BlobHash: OpenPartial] = [:]
    var uses: UInt64 = 0
    let hasher = SHA256Stream()

    /// Partial blobs kept open at once.
    static let openPartialLimit = 16

    deinit { executor.stop() }

    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// One blob as the store holds it.
    struct Entry {
        var byteCount: UInt64
        var type: MediaType
        var chunkSize: Int
        /// The chunks held; nil when the blob is complete.
        var held: ChunkBitmap?
        /// When a collection first found no document referencing it.
        var unreferencedSince: Int64?
        /// Why its bytes are kept aside (`BlobRecord.problem`).
        var problem: String?

        var isComplete: Bool { held == nil }
        var chunkCount: Int { BlobRecord.chunkCount(byteCount: byteCount, chunkSize: chunkSize) }
    }

    /// A partial blob's open file and its manifest.
    struct OpenPartial {
        let file: BlobFile
        let manifest: [BlobHash]
        var lastUse: UInt64
        /// The whole blob's SHA-256 over the chunks held from the front, fed
        /// as they arrive (they mostly come in order), so that completing a
        /// blob need not read it all again.
        let prefix = PrefixHash()
    }

    /// A SHA-256 stream and how many chunks from the front it has been fed.
    final class PrefixHash {
        let stream = SHA256Stream()
        var chunks = 0
    }

    /// Opens the store in `directory`, creating it if need be, and mends what
    /// a crash left: leftovers in `tmp/` are deleted, rows whose files are
    /// gone are removed (complete) or hold nothing (partial), files without
    /// rows are deleted. O(blobs) file checks.
    /// - Throws: `BlobError` naming the directory or file at fault.
    package init(directory: String, options: BlobStoreOptions = .init()) throws(BlobError) {
        precondition(options.chunkSize > 0, "a chunk has at least one byte")
        self.directory = directory
        self.options = options
        for path in [directory, directory + "/complete", directory + "/partial", directory + "/tmp"] {
            try FileSystem.makeDirectory(path)
        }
        for name in FileSystem.names(in: directory + "/tmp") {
            do {
                try FileManager.default.removeItem(atPath: directory + "/tmp/" + name)
            } catch {
                throw BlobError(.io, "cannot delete a leftover upload: \(error)", path: directory + "/tmp/" + name)
            }
        }
        database = try BlobDatabase.open(path: directory + "/blobs.sqlite3")
        entries = try Self.mend(database, in: directory)
        // Hashing and writing blobs yields the CPU to changes (niceness 10).
        executor = BackgroundThreadExecutor(label: "storyteller.blobs", niceness: 10)
    }

    /// Loads the rows and makes them agree with the files (see `init`).
    private static func mend(_ database: BlobDatabase, in directory: String) throws(BlobError) -> [BlobHash: Entry] {
        var entries: [BlobHash: Entry] = [:]
        var gone: [BlobHash] = []
        var cleared: [(BlobHash, [UInt8])] = []
        for row in try database.rows() {
            var entry = Entry(
                byteCount: row.size, type: row.type, chunkSize: row.chunkSize, unreferencedSince: row.unreferencedSince, problem: row.problem)
            if row.isComplete {
                let path = completePath(row.hash, in: directory)
                let size = FileSystem.size(path)
                guard size == row.size else {
                    if size != nil { try FileSystem.remove(path) }
                    gone.append(row.hash)
                    continue
                }
            } else {
                let count = entry.chunkCount
                var held = row.held.flatMap { ChunkBitmap(bytes: $0, count: count) } ?? ChunkBitmap(count: count)
                let path = partialPath(row.hash, in: directory)
                let size = FileSystem.size(path)
                if size != row.size {
                    // Gone, or not the length it was made: what it held is lost.
                    if size != nil { try FileSystem.remove(path) }
                    held = ChunkBitmap(count: count)
                }
                if held.bytes != row.held { cleared.append((row.hash, held.bytes)) }
                entry.held = held
            }
            entries[row.hash] = entry
        }
        if !gone.isEmpty || !cleared.isEmpty {
            try database.transaction { () throws(BlobError) in
                for hash in gone { try database.delete(hash) }
                for (hash, held) in cleared { try database.setHeld(held, of: hash) }
            }
        }
        // Files without their row: a commit or completion that a crash cut
        // before its transaction committed.
        for name in FileSystem.names(in: directory + "/partial") {
            guard let hash = BlobHash(hex: name), entries[hash]?.isComplete != false else { continue }
            try FileSystem.remove(directory + "/partial/" + name)
        }
        for folder in FileSystem.names(in: directory + "/complete") {
            for name in FileSystem.names(in: directory + "/complete/" + folder) {
                guard let hash = BlobHash(hex: name), name.hasPrefix(folder), entries[hash]?.isComplete != true else { continue }
                try FileSystem.remove(directory + "/complete/" + folder + "/" + name)
            }
        }
        return entries
    }

    // MARK: - Paths

    /// Where a complete blob lives (for streaming it to a client). The file
    /// is there only while `record(hash)` says the blob is complete.
    package nonisolated func completePath(_ hash: BlobHash) -> String { Self.completePath(hash, in: directory) }

    static func completePath(_ hash: BlobHash, in directory: String) -> String {
        let hex = hash.description
        return directory + "/complete/" + hex.prefix(2) + "/" + hex
    }

    func partialPath(_ hash: BlobHash) -> String { Self.partialPath(hash, in: directory) }

    static func partialPath(_ hash: BlobHash, in directory: String) -> String { directory + "/partial/" + hash.description }

    // MARK: - Records

    /// What the store holds of a blob; nil if nothing. O(1).
    package func record(_ hash: BlobHash) -> BlobRecord? {
        entries[hash].map { record(hash, $0) }
    }

    /// Every blob, complete and partial, in hash order. O(n log n).
    package func records() -> [BlobRecord] {
        entries.sorted { ($0.key.w0, $0.key.w1, $0.key.w2, $0.key.w3) < ($1.key.w0, $1.key.w1, $1.key.w2, $1.key.w3) }
            .map { record($0.key, $0.value) }
    }

    func record(_ hash: BlobHash, _ entry: Entry) -> BlobRecord {
        let state: BlobRecord.State = entry.held.map { .partial(heldChunks: $0.heldCount, totalChunks: $0.count) } ?? .complete
        return BlobRecord(
            hash: hash, byteCount: entry.byteCount, type: entry.type, state: state, chunkSize: entry.chunkSize, problem: entry.problem)
    }

    // MARK: - Local uploads

    /// A new upload: its bytes go to a temporary file as they are written.
    /// - Throws: `BlobError(.io)` if the file cannot be made.
    package nonisolated func beginUpload() throws(BlobError) -> BlobUpload {
        try BlobUpload(directory: directory + "/tmp", maximumBytes: options.maximumBlobBytes, chunkSize: options.chunkSize)
    }

    /// Keeps an upload's bytes as a complete blob of `type` (finishing the
    /// upload if it was not) and returns its record; on disk when this returns.
    /// Bytes already stored complete are stored once: the upload's file is
    /// deleted. A partial blob of the same bytes becomes complete. The blob
    /// counts as referenced again (a collection finds it unreferenced anew).
    /// - Throws: `BlobError(.io)` if the disk fails (the upload is discarded
    ///   then), `.invalid` if the upload was discarded.
    package func commit(_ upload: BlobUpload, type: MediaType) throws(BlobError) -> BlobRecord {
        let (hash, byteCount) = try upload.finish()
        if let entry = entries[hash], entry.isComplete {
            try? FileSystem.remove(upload.temporaryPath)
            upload.markCommitted()
            if entry.unreferencedSince != nil {
                try database.setUnreferencedSince(nil, of: hash)
                entries[hash]?.unreferencedSince = nil
            }
            return record(hash, entries[hash]!)
        }
        let wasPartial = entries[hash] != nil
        let destination = completePath(hash)
        let manifest = upload.manifest.count == BlobRecord.chunkCount(byteCount: byteCount, chunkSize: options.chunkSize) ? upload.manifest : nil
        do {
            try database.durably { () throws(BlobError) in
                try database.putComplete(
                    hash, size: byteCount, type: type, chunkSize: options.chunkSize, manifest: manifest, clearingUnreferenced: true,
                    at: options.clock.milliseconds)
                try place(upload.temporaryPath, at: destination)
            }
        } catch {
            // The rename may have happened before the commit failed.
            try? FileSystem.remove(destination)
            upload.discard()
            throw error
        }
        upload.markCommitted()
        if wasPartial {
            openPartials[hash] = nil
            try? FileSystem.remove(partialPath(hash))
        }
        let entry = Entry(byteCount: byteCount, type: type, chunkSize: options.chunkSize)
        entries[hash] = entry
        return record(hash, entry)
    }

    /// Stores a file as a blob, streamed through an upload (for tests and the benchmark).
    /// - Throws: `BlobError(.tooLarge)` over the limit, `.notFound` or `.io` for the file.
    package func importFile(atPath path: String, type: MediaType) throws(BlobError) -> BlobRecord {
        let source = try BlobFile.openForReading(path)
        let size = try source.size()
        guard size <= options.maximumBlobBytes else { throw tooLarge(size, path: path) }
        let upload = try beginUpload()
        try source.forEachPiece(length: size) { (piece) throws(BlobError) in try upload.write(piece) }
        return try commit(upload, type: type)
    }

    // MARK: - What the bytes are

    /// Probes a file's bytes (`MediaProbe`): what they are, or, for bytes that
    /// are no picture or sound this daemon reads, why not.
    static func probe(_ path: String, declared: MediaType) -> (type: MediaType, problem: String?) {
        do {
            let info = try MediaProbe.probe(try FileMediaSource(path: path))
            return (info.type, nil)
        } catch {
            return (declared, "the bytes are not a \(declared.fileExtension) (\(error.message))")
        }
    }

    /// Probes a complete blob that came from elsewhere (a package) and records
    /// what its bytes are: their type, or why they are kept aside.
    /// O(the probe: the file's headers, more for some sounds).
    /// - Throws: `BlobError(.notFound)` if the blob is not complete here, `.io`.
    @discardableResult
    package func probeComplete(_ hash: BlobHash) throws(BlobError) -> BlobRecord {
        guard let entry = entries[hash], entry.isComplete else { throw BlobError(.notFound, "no complete blob \(hash)") }
        let (type, problem) = Self.probe(completePath(hash), declared: entry.type)
        if type != entry.type || problem != entry.problem {
            try database.setProbed(type, problem: problem, of: hash)
            entries[hash]?.type = type
            entries[hash]?.problem = problem
        }
        return record(hash, entries[hash]!)
    }

    /// Checks bytes a peer sent as chunk `index` of a blob held complete
    /// here, writing nothing: whether they hash to `expected` (the peer's
    /// manifest entry, as a chunk received for storing is checked), and
    /// whether they are this blob's own bytes at `offset` (they prove the
    /// peer holds the blob). O(the chunk).
    /// - Throws: `BlobError(.notFound)` if the blob is not complete here, `.io`.
    package func check(_ bytes: ArraySlice<UInt8>, at offset: UInt64, of hash: BlobHash, expected: BlobHash) throws(BlobError) -> (
        matchesManifest: Bool, matchesHeld: Bool
    ) {
        guard let entry = entries[hash], entry.isComplete else { throw BlobError(.notFound, "no complete blob \(hash)") }
        let matchesManifest = hasher.digest(of: bytes) == expected
        guard offset < entry.byteCount, UInt64(bytes.count) <= entry.byteCount - offset else { return (matchesManifest, false) }
        let held = try BlobFile.openForReading(completePath(hash)).read(count: bytes.count, at: offset)
        return (matchesManifest, held.elementsEqual(bytes))
    }

    /// Renames a flushed file into `complete/` and flushes the directory.
    func place(_ source: String, at destination: String) throws(BlobError) {
        let folder = String(destination.prefix(upTo: destination.lastIndex(of: "/")!))
        if try FileSystem.makeDirectory(folder) { try FileSystem.syncDirectory(directory + "/complete") }
        try FileSystem.rename(source, to: destination)
        try FileSystem.syncDirectory(folder)
    }

    func tooLarge(_ byteCount: UInt64, path: String? = nil) -> BlobError {
        BlobError(
            .tooLarge,
            "the file is \(ByteCountText.text(byteCount)), over the limit of \(ByteCountText.text(options.maximumBlobBytes)) (blob-max-bytes)",
            path: path)
    }
}
