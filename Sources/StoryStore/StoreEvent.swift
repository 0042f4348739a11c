package import StoryCore

/// Something that happened in the store (see `Store.events()`).
package enum StoreEvent: Sendable, Hashable {
    /// Where changes came from.
    package enum Origin: Sendable, Hashable {
        case local
        /// From this peer (by peer id).
        case peer(PeerID)
        /// A merged snapshot.
        case snapshot
    }

    case documentChanged(DocumentID, origin: Origin, changes: Int)
    case documentCreated(DocumentID, kind: DocumentKind)
    case peerPending(PeerID, address: String)
    case peersChanged
    /// A document's access list changed (shared, unshared, founded): who it
    /// syncs with may have changed.
    case accessChanged(DocumentID)
    /// A project went into the trash here or came out of it (deleted or
    /// restored for everyone, by an edit here or a peer's change; hidden or
    /// shown here), or was purged: listings and the library follow.
    case trashChanged(DocumentID)
    /// A project now references blobs it did not before (an image or a
    /// sound was added here or arrived from a peer): the blob exchange
    /// fetches what this daemon lacks.
    case blobsReferenced(DocumentID)
    /// A text field of a project kept a value that overwrote another written
    /// concurrently (a new conflict, `ProjectDocument.fieldConflicts`).
    case fieldsOverwritten(DocumentID)
}
