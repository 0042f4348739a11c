import Foundation
package import StoryCore

/// Receiving a blob from peers, chunk by chunk, in any order, across restarts.
extension BlobStore {
    /// Starts (or resumes) receiving a blob whose chunks hash to `manifest`.
    /// A partial blob with the same length and manifest keeps the chunks it
    /// holds; one with another manifest starts over; a complete blob is
    /// returned as it is. The file is made at full length at once.
    /// - Throws: `BlobError(.tooLarge)` over the limit, `.invalid` when the
    ///   manifest does not have ceil(byteCount / chunkSize) hashes, `.io`.
    package func beginPartial(_ hash: BlobHash, byteCount: UInt64, type: MediaType, manifest: [BlobHash]) throws(BlobError) -> BlobRecord {
        guard byteCount <= options.maximumBlobBytes else { throw tooLarge(byteCount) }
        let chunkSize = options.chunkSize
        let expected = BlobRecord.chunkCount(byteCount: byteCount, chunkSize: chunkSize)
        guard manifest.count == expected else {
            throw BlobError(
                .invalid,
                "blob \(hash) of \(byteCount) bytes has \(expected) chunks of up to \(chunkSize) bytes, but its manifest has \(manifest.count) hashes"
            )
        }
        if let entry = entries[hash] {
            if entry.isComplete { return record(hash, entry) }
            // A partial blob whose manifest or file does not load is begun anew.
            if entry.byteCount == byteCount, entry.chunkSize == chunkSize, (try? openPartial(hash))?.manifest == manifest {
                return record(hash, entry)
            }
        }
        openPartials[hash] = nil
        let held = ChunkBitmap(count: expected)
        let path = partialPath(hash)
        // Whatever an earlier manifest's chunks left is dropped, then the file
        // is made at full length (sparse) for chunks to land in place. Before
        // the row: should the row fail, an earlier manifest's chunks marked
        // held are dropped by `completePartial`'s check.
        let file = try BlobFile.openForWriting(path)
        try file.truncate(to: 0)
        try file.truncate(to: byteCount)
        try database.putPartial(
            hash, size: byteCount, type: type, chunkSize: chunkSize, held: held.bytes, manifest: manifest, at: options.clock.milliseconds)
        var entry = entries[hash] ?? Entry(byteCount: byteCount, type: type, chunkSize: chunkSize)
        (entry.byteCount, entry.type, entry.chunkSize, entry.held) = (byteCount, type, chunkSize, held)
        entries[hash] = entry
        keepOpen(hash, OpenPartial(file: file, manifest: manifest, lastUse: 0))
        return record(hash, entry)
    }

    /// The chunks of a partial blob not held yet, in order; none for a
    /// complete blob or one the store does not have. O(chunks).
    package func missingChunks(_ hash: BlobHash) -> [Int] {
        entries[hash]?.held?.missing ?? []
    }

    /// Stores one chunk of a partial blob after checking it: exactly its
    /// length and the hash its manifest gives. Marked held at once (a
    /// restart resumes after it); the write is not flushed, `completePartial`
    /// checks the bytes again. A chunk already held, or any chunk of a
    /// complete blob, is not written again. O(chunk) hashing + one
    /// positional write + one small SQLite update.
    /// - Returns: Whether every chunk is now held.
    /// - Throws: `BlobError(.chunkMismatch)` when the bytes are not the
    ///   chunk (nothing is stored), `.notFound` if the blob was not begun,
    ///   `.invalid` for an index out of range, `.io`.
    package func writeChunk(_ hash: BlobHash, index: Int, bytes: some Collection<UInt8>) throws(BlobError) -> Bool {
        guard let entry = entries[hash] else { throw BlobError(.notFound, "no blob \(hash) is being received") }
        guard var held = entry.held else { return true }
        guard index >= 0, index < held.count else {
            throw BlobError(.invalid, "blob \(hash) has no chunk \(index) (it has \(held.count))")
        }
        let (offset, length) = chunkRange(entry, index)
        let count = bytes.count
        guard count == length else {
            throw BlobError(.chunkMismatch, "chunk \(index) of blob \(hash) is \(length) bytes, not \(count); it was not kept")
        }
        let partial = try openPartial(hash)
        let digest = hasher.digest(of: bytes)
        guard digest == partial.manifest[index] else {
            throw BlobError(
                .chunkMismatch, "chunk \(index) of blob \(hash) does not have the hash its manifest gives (it has \(digest)); it was not kept")
        }
        if held[index] { return held.isFull }
        try partial.file.write(contentsOf: bytes, at: offset)
        partial.file.startWriteback(offset: offset, count: count)
        held[index] = true
        try database.setHeld(held.bytes, of: hash)
        entries[hash]?.held = held
        try feedPrefix(partial, entry, held, written: index, bytes: bytes)
        return held.isFull
    }

    /// Feeds the whole blob's hash with the chunks now held from the front,
    /// in order: the one just written from memory, any that came early
    /// (or were held before a restart) read back from the file.
    private func feedPrefix(
        _ partial: OpenPartial, _ entry: Entry, _ held: ChunkBitmap, written: Int, bytes: some Collection<UInt8>
    ) throws(BlobError) {
        let prefix = partial.prefix
        while prefix.chunks < held.count, held[prefix.chunks] {
            if prefix.chunks == written {
                prefix.stream.update(contentsOf: bytes)
            } else {
                let (offset, length) = chunkRange(entry, prefix.chunks)
                prefix.stream.update(contentsOf: try partial.file.read(count: length, at: offset))
            }
            prefix.chunks += 1
        }
    }

    /// Makes a partial blob whose chunks are all here complete, after
    /// checking the whole file's hash (fed chunk by chunk as they came; read
    /// again in 1 MiB pieces only when they did not come in order from the
    /// front since the file was opened): flushed, moved to
    /// `complete/`, on disk when this returns. A complete blob is returned as it is.
    ///
    /// When the bytes do not hash to the blob's name, each chunk is checked
    /// against the manifest: chunks that do not match (a crash before they
    /// reached the disk) are dropped to be fetched again (`.chunkMismatch`);
    /// if every chunk matched, the manifest itself was false, and the
    /// partial blob is reset (`.hashMismatch`: fetch it from another peer).
    /// - Throws: `BlobError(.hashMismatch)`, `.chunkMismatch`, `.invalid`
    ///   while chunks are missing, `.notFound`, `.io`.
    package func completePartial(_ hash: BlobHash) throws(BlobError) -> BlobRecord {
        guard let entry = entries[hash] else { throw BlobError(.notFound, "no blob \(hash) is being received") }
        guard var held = entry.held else { return record(hash, entry) }
        guard held.isFull else {
            throw BlobError(.invalid, "blob \(hash) still misses \(held.count - held.heldCount) of its \(held.count) chunks")
        }
        let partial = try openPartial(hash)
        let whole: BlobHash
        if partial.prefix.chunks == held.count {
            whole = partial.prefix.stream.finalize()
        } else {
            hasher.reset()
            try partial.file.forEachPiece(length: entry.byteCount) { hasher.update($0) }
            whole = hasher.finalize()
        }
        // Whatever follows, the prefix hash is spent: a partial blob kept is reopened with a new one.
        openPartials[hash] = nil
        guard whole == hash else {
            let bad = try chunksNotMatching(partial, entry)
            if bad.isEmpty {
                held = ChunkBitmap(count: held.count)
                try partial.file.truncate(to: 0)
                try partial.file.truncate(to: entry.byteCount)
                try database.setHeld(held.bytes, of: hash)
                entries[hash]?.held = held
                throw BlobError(
                    .hashMismatch,
                    "the bytes received for blob \(hash) hash to \(whole), though every chunk matched its manifest: the manifest was false; the partial blob was reset, fetch it from another peer"
                )
            }
            for index in bad { held[index] = false }
            try database.setHeld(held.bytes, of: hash)
            entries[hash]?.held = held
            let list = bad.prefix(10).map(String.init).joined(separator: ", ") + (bad.count > 10 ? " …" : "")
            throw BlobError(
                .chunkMismatch, "\(bad.count) chunks of blob \(hash) were not on disk as received (\(list)); they were dropped, fetch them again",
                path: partial.file.path)
        }
        try partial.file.sync()
        let source = partial.file.path
        let destination = completePath(hash)
        // What the bytes are: a peer's reference only declares it.
        let (type, problem) = Self.probe(source, declared: entry.type)
        do {
            try database.durably { () throws(BlobError) in
                try database.putComplete(
                    hash, size: entry.byteCount, type: type, chunkSize: entry.chunkSize, manifest: partial.manifest,
                    clearingUnreferenced: false, problem: problem, at: options.clock.milliseconds)
                try place(source, at: destination)
            }
        } catch {
            // The rename may have happened before the commit failed: the
            // partial blob stays as it was.
            if FileSystem.size(source) == nil { try? FileSystem.rename(destination, to: source) }
            throw error
        }
        openPartials[hash] = nil
        var complete = entry
        complete.held = nil
        complete.type = type
        complete.problem = problem
        entries[hash] = complete
        return record(hash, complete)
    }

    /// The chunks whose bytes on disk do not hash to the manifest's entry.
    /// Reads the whole file, a chunk at a time in pieces of at most 1 MiB.
    private func chunksNotMatching(_ partial: OpenPartial, _ entry: Entry) throws(BlobError) -> [Int] {
        try chunkDigests(of: partial.file, entry).enumerated().filter { $0.element != partial.manifest[$0.offset] }.map(\.offset)
    }

    /// The SHA-256 of each chunk of a file.
    func chunkDigests(of file: BlobFile, _ entry: Entry) throws(BlobError) -> [BlobHash] {
        var digests: [BlobHash] = []
        digests.reserveCapacity(entry.chunkCount)
        for index in 0..<entry.chunkCount {
            let (offset, length) = chunkRange(entry, index)
            hasher.reset()
            try file.forEachPiece(from: offset, length: UInt64(length)) { hasher.update($0) }
            digests.append(hasher.finalize())
        }
        return digests
    }

    /// Where chunk `index` starts and how long it is.
    func chunkRange(_ entry: Entry, _ index: Int) -> (offset: UInt64, length: Int) {
        let offset = UInt64(index) * UInt64(entry.chunkSize)
        return (offset, Int(min(UInt64(entry.chunkSize), entry.byteCount - offset)))
    }

    /// A partial blob's file, open, and its manifest: kept for the next
    /// chunks (up to `openPartialLimit` blobs, the least recently used closed).
    /// A file gone or cut short meanwhile is made again, holding nothing.
    func openPartial(_ hash: BlobHash) throws(BlobError) -> OpenPartial {
        uses += 1
        if var partial = openPartials[hash] {
            partial.lastUse = uses
            openPartials[hash] = partial
            return partial
        }
        guard let entry = entries[hash], var held = entry.held else {
            throw BlobError(.notFound, "no blob \(hash) is being received")
        }
        guard let manifest = try database.manifest(of: hash), manifest.count == held.count else {
            throw BlobError(.corrupt, "the row of partial blob \(hash) has no manifest of \(held.count) hashes", path: database.path)
        }
        let file = try BlobFile.openForWriting(partialPath(hash))
        if try file.size() != entry.byteCount {
            try file.truncate(to: 0)
            try file.truncate(to: entry.byteCount)
            if held.heldCount > 0 {
                held = ChunkBitmap(count: held.count)
                try database.setHeld(held.bytes, of: hash)
                entries[hash]?.held = held
            }
        }
        let partial = OpenPartial(file: file, manifest: manifest, lastUse: uses)
        keepOpen(hash, partial)
        return partial
    }

    /// Caches an open partial blob, closing the least recently used beyond the limit.
    func keepOpen(_ hash: BlobHash, _ partial: OpenPartial) {
        uses += 1
        var partial = partial
        partial.lastUse = uses
        openPartials[hash] = partial
        while openPartials.count > Self.openPartialLimit, let oldest = openPartials.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            openPartials[oldest.key] = nil
        }
    }
}
