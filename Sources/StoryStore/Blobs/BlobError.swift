import Foundation

/// A failure of the blob store, in words a user can act on, naming the file
/// concerned when there is one.
package struct BlobError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case tooLarge, hashMismatch, chunkMismatch, notFound, io, corrupt, invalid, newerSchema
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The blob is over `BlobStoreOptions.maximumBlobBytes`.
        package static let tooLarge = Kind(.tooLarge)
        /// The assembled bytes do not have the hash they were announced with,
        /// though every chunk matched its manifest: the manifest was false, the
        /// partial blob was reset, fetch it from another peer.
        package static let hashMismatch = Kind(.hashMismatch)
        /// A chunk's bytes are not the length or the hash its manifest says;
        /// nothing of it was kept.
        package static let chunkMismatch = Kind(.chunkMismatch)
        /// No such blob, or the chunk asked for is not held.
        package static let notFound = Kind(.notFound)
        /// The disk or file system failed (full disk, permissions, I/O error),
        /// or the blob database did.
        package static let io = Kind(.io)
        /// A stored file or row is not what the database says it is.
        package static let corrupt = Kind(.corrupt)
        /// A request the store cannot act on as asked: a manifest of the wrong
        /// length, a chunk index out of range, completing a blob whose chunks
        /// are not all here, using an upload that was discarded.
        package static let invalid = Kind(.invalid)
        /// The blob database was written by a newer Storyteller; it is left untouched.
        package static let newerSchema = Kind(.newerSchema)

        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let kind: Kind
    /// A human explanation ("the file is 2.1 GB, over the limit of 1 GiB (blob-max-bytes)").
    package let message: String
    /// The file or directory concerned, when there is one.
    package let path: String?

    /// Creates an error.
    package init(_ kind: Kind, _ message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

    /// The error for a failure of the blob database.
    init(_ error: StoreError) {
        let kind: Kind =
            switch error.code {
            case .corrupt, .notADatabase, .invalidData: .corrupt
            case .newerSchema: .newerSchema
            default: .io
            }
        self.init(kind, error.message, path: error.path)
    }

    package var description: String {
        guard let path else { return "\(kind): \(message)" }
        return "\(path): \(kind): \(message)"
    }
}

extension BlobError: LocalizedError {
    /// The failure as one sentence for a person, naming where images and
    /// sounds are kept and what to do (no kind names; `description` keeps
    /// the technical form for logs).
    package var errorDescription: String? {
        let place = path.map { " \($0)" } ?? ""
        switch kind {
        case .io:
            return "cannot use the images and sounds store\(place) (\(message)); check that it is a directory this user may write"
        case .corrupt:
            return "the images and sounds store\(place) is damaged (\(message)); move it away and put a backup of blobs/ in its place"
        case .newerSchema:
            return "the images and sounds store\(place) was written by a newer version of Storyteller; install that version (or a later one)"
        default:
            return "images and sounds\(place): \(message)"
        }
    }
}
