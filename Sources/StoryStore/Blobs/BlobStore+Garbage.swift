package import StoryCore

/// Deleting blobs no document references any more, after a grace period.
extension BlobStore {
    /// Collects garbage: a blob in `referenced` is kept and counts as
    /// referenced again; one not in it is marked as unreferenced from now
    /// (if it was not already), and deleted (file and row, complete or
    /// partial) once it has been unreferenced for longer than
    /// `garbageGrace`. A referenced blob is never deleted. O(blobs).
    ///
    /// Rows go first, in one transaction, then files: a file that cannot be
    /// deleted now (or a crash before it) is deleted when the store next opens.
    /// - Returns: The blobs deleted, in hash order.
    /// - Throws: `BlobError(.io)` if the database cannot be written (nothing is deleted then).
    package func collectGarbage(referenced: Set<BlobHash>) throws(BlobError) -> [BlobHash] {
        let now = options.clock.milliseconds
        let (seconds, attoseconds) = options.garbageGrace.components
        let grace = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        var marks: [(BlobHash, Int64?)] = []
        var expired: [BlobHash] = []
        for (hash, entry) in entries {
            if referenced.contains(hash) {
                if entry.unreferencedSince != nil { marks.append((hash, nil)) }
            } else if let since = entry.unreferencedSince {
                if now - since > grace { expired.append(hash) }
            } else {
                marks.append((hash, now))
            }
        }
        guard !marks.isEmpty || !expired.isEmpty else { return [] }
        try database.transaction { () throws(BlobError) in
            for (hash, since) in marks { try database.setUnreferencedSince(since, of: hash) }
            for hash in expired { try database.delete(hash) }
        }
        for (hash, since) in marks { entries[hash]?.unreferencedSince = since }
        for hash in expired {
            let wasComplete = entries.removeValue(forKey: hash)?.isComplete ?? false
            openPartials[hash] = nil
            try? FileSystem.remove(wasComplete ? completePath(hash) : partialPath(hash))
        }
        return expired.sorted { ($0.w0, $0.w1, $0.w2, $0.w3) < ($1.w0, $1.w1, $1.w2, $1.w3) }
    }
}
