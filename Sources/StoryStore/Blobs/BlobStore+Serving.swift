package import StoryCore

/// Serving blobs to peers (chunk by chunk) and clients (the file).
extension BlobStore {
    /// The SHA-256 of each chunk of a blob: for a complete blob computed once
    /// (a pass over the file in pieces of at most 1 MiB) and then kept in its
    /// row; for a partial blob the manifest it is being received with (checked
    /// against the bytes only once complete).
    /// - Throws: `BlobError(.notFound)` if the store does not have the blob, `.io`, `.corrupt`.
    package func manifest(_ hash: BlobHash) throws(BlobError) -> [BlobHash] {
        guard let entry = entries[hash] else { throw BlobError(.notFound, "no blob \(hash)") }
        if !entry.isComplete { return try openPartial(hash).manifest }
        if let stored = try database.manifest(of: hash), stored.count == entry.chunkCount { return stored }
        let file = try openComplete(hash)
        guard try file.size() == entry.byteCount else {
            throw BlobError(.corrupt, "the file of blob \(hash) is not \(entry.byteCount) bytes long", path: file.path)
        }
        let manifest = try chunkDigests(of: file, entry)
        try database.setManifest(manifest, of: hash)
        return manifest
    }

    /// One chunk of a blob: any of a complete blob, or a held chunk of a partial one.
    /// O(chunk): one positional read.
    /// - Throws: `BlobError(.notFound)` if the blob or the chunk is not here,
    ///   `.invalid` for an index out of range, `.corrupt` if the file is
    ///   shorter than its row says, `.io`.
    package func readChunk(_ hash: BlobHash, index: Int) throws(BlobError) -> [UInt8] {
        guard let entry = entries[hash] else { throw BlobError(.notFound, "no blob \(hash)") }
        guard index >= 0, index < entry.chunkCount else {
            throw BlobError(.invalid, "blob \(hash) has no chunk \(index) (it has \(entry.chunkCount))")
        }
        let (offset, length) = chunkRange(entry, index)
        if let held = entry.held {
            guard held[index] else { throw BlobError(.notFound, "chunk \(index) of blob \(hash) is not here yet") }
            return try openPartial(hash).file.read(count: length, at: offset)
        }
        return try openComplete(hash).read(count: length, at: offset)
    }

    /// A complete blob's file, open for reading.
    /// - Throws: `BlobError(.corrupt)` if it is gone (the row says it is there).
    private func openComplete(_ hash: BlobHash) throws(BlobError) -> BlobFile {
        do {
            return try BlobFile.openForReading(completePath(hash))
        } catch  where error.kind == .notFound {
            throw BlobError(.corrupt, "the file of complete blob \(hash) is gone", path: completePath(hash))
        }
    }
}
