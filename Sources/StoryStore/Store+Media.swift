package import StoryCore

/// Which blobs documents reference (the `blob_refs` table): kept in the
/// transaction of the change that wrote a reference, never dropped while the
/// project exists (undo and history can bring an old image back), gone with
/// the project when it is purged.
extension Store {
    /// Adds the references a project holds now to `blob_refs`, when a media
    /// value was written since it was last looked at. Runs inside the
    /// transaction of the change (`changingDocument`).
    func recordMediaReferences(of id: DocumentID, in document: any StoredDocument) throws {
        guard let project = document as? ProjectDocument, project.mediaWrites != recordedMediaWrites[id] else { return }
        let known = Set(try database.blobReferences(of: id).map(\.hash))
        let added = project.mediaReferences.filter { !known.contains($0.hash) }
        if !added.isEmpty {
            try database.addBlobReferences(added, of: id)
            publish(.blobsReferenced(id))
        }
        recordedMediaWrites[id] = project.mediaWrites
    }

    /// Every blob any document references, with the documents referencing it.
    package func referencedBlobs() throws -> [BlobHash: (media: MediaReference, documents: Set<DocumentID>)] {
        try database.blobReferences()
    }

    /// The blobs one document references.
    package func blobReferences(of id: DocumentID) throws -> [MediaReference] {
        try database.blobReferences(of: id)
    }

    /// The documents referencing a blob.
    package func documents(referencing hash: BlobHash) throws -> Set<DocumentID> {
        try database.documents(referencing: hash)
    }

    /// The documents referencing a blob for which the reference is proven:
    /// the bytes reached this daemon through that document. Only these are
    /// served to a document's members and announced to them.
    package func provenDocuments(referencing hash: BlobHash) throws -> Set<DocumentID> {
        try database.documents(referencing: hash, provenOnly: true)
    }

    /// The blobs a document references whose references are proven.
    package func provenBlobs(of id: DocumentID) throws -> Set<BlobHash> {
        try database.provenBlobs(of: id)
    }

    /// References not proven yet, with the documents holding them: what the
    /// blob exchange fetches (or, for bytes held already, fetches again to
    /// check against them: whether a peer's reference makes this daemon ask
    /// must not tell whether it holds the bytes).
    package func unprovenBlobReferences() throws -> [BlobHash: (media: MediaReference, documents: Set<DocumentID>)] {
        try database.blobReferences(provenOnly: false)
    }

    /// Records that a blob's bytes reached this daemon through `document`
    /// (uploaded into it here, carried by a package of it, fetched over it):
    /// from now on they are served to its members. Nothing if the document
    /// does not reference the blob.
    package func proveBlobReference(_ hash: BlobHash, in document: DocumentID) throws {
        try database.connection.run("UPDATE blob_refs SET proven = 1 WHERE doc = ? AND hash = ?", [document.blob, .blob(hash.bytes)])
    }

    /// Gives a copy the proofs of its source (`copyProject`): what the source
    /// was given, the copy may pass on; what it only references, not.
    func copyBlobProofs(from source: DocumentID, to copy: DocumentID) throws {
        try database.connection.run(
            "UPDATE blob_refs SET proven = 1 WHERE doc = ? AND hash IN (SELECT hash FROM blob_refs WHERE doc = ? AND proven = 1)",
            [copy.blob, source.blob])
    }
}

extension StoreDatabase {
    func addBlobReferences(_ references: [MediaReference], of document: DocumentID) throws {
        let statement = try connection.prepare("INSERT OR IGNORE INTO blob_refs (doc, hash, type, size) VALUES (?, ?, ?, ?)")
        for media in references {
            try statement.bind([
                document.blob, .blob(media.hash.bytes), .integer(Int64(media.type.rawValue)), .integer(Int64(media.byteCount)),
            ])
            while try statement.step() {}
        }
    }

    /// Every reference (`provenOnly` nil), or only the proven or unproven ones.
    func blobReferences(provenOnly: Bool? = nil) throws -> [BlobHash: (media: MediaReference, documents: Set<DocumentID>)] {
        var result: [BlobHash: (media: MediaReference, documents: Set<DocumentID>)] = [:]
        let filter = provenOnly.map { " WHERE proven = \($0 ? 1 : 0)" } ?? ""
        let rows = try connection.query("SELECT doc, hash, type, size FROM blob_refs" + filter) { row in
            (DocumentID(blob: row.bytes(0)), BlobHash(row.bytes(1)), MediaType(rawValue: UInt8(clamping: row.int64(2))), row.int64(3))
        }
        for (document, hash, type, size) in rows {
            guard let document, let hash, let type, size > 0 else { continue }
            result[hash, default: (MediaReference(hash: hash, type: type, byteCount: UInt64(size)), [])].documents.insert(document)
        }
        return result
    }

    func blobReferences(of document: DocumentID) throws -> [MediaReference] {
        try connection.query("SELECT hash, type, size FROM blob_refs WHERE doc = ? ORDER BY hash", [document.blob]) { row in
            (BlobHash(row.bytes(0)), MediaType(rawValue: UInt8(clamping: row.int64(1))), row.int64(2))
        }.compactMap { hash, type, size in
            guard let hash, let type, size > 0 else { return nil }
            return MediaReference(hash: hash, type: type, byteCount: UInt64(size))
        }
    }

    func documents(referencing hash: BlobHash, provenOnly: Bool = false) throws -> Set<DocumentID> {
        let filter = provenOnly ? " AND proven = 1" : ""
        return Set(
            try connection.query("SELECT doc FROM blob_refs WHERE hash = ?" + filter, [.blob(hash.bytes)]) { DocumentID(blob: $0.bytes(0)) }
                .compactMap { $0 })
    }

    func provenBlobs(of document: DocumentID) throws -> Set<BlobHash> {
        Set(
            try connection.query("SELECT hash FROM blob_refs WHERE doc = ? AND proven = 1", [document.blob]) { BlobHash($0.bytes(0)) }.compactMap {
                $0
            })
    }
}
