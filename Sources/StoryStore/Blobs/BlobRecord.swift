package import StoryCore

/// What the blob store holds of one blob.
package struct BlobRecord: Hashable, Sendable {
    /// Whether all of the bytes are here.
    package enum State: Hashable, Sendable {
        /// Every byte, checked against the hash.
        case complete
        /// Being received from peers: `heldChunks` of `totalChunks` are here.
        case partial(heldChunks: Int, totalChunks: Int)
    }

    /// The SHA-256 of the bytes (the blob's name).
    package var hash: BlobHash
    /// The blob's length.
    package var byteCount: UInt64
    package var type: MediaType
    package var state: State
    /// The length of every chunk but the last (which may be shorter).
    package var chunkSize: Int
    /// Why the bytes are kept aside (nil: they are not): a blob received from
    /// a peer or a package whose bytes probe as no picture or sound at all.
    /// Such a blob is not served, and renders and exports leave it out.
    package var problem: String?

    package init(hash: BlobHash, byteCount: UInt64, type: MediaType, state: State, chunkSize: Int, problem: String? = nil) {
        self.problem = problem
        self.hash = hash
        self.byteCount = byteCount
        self.type = type
        self.state = state
        self.chunkSize = chunkSize
    }

    /// How many chunks the blob has: ceil(byteCount / chunkSize) (0 for no bytes).
    package var chunkCount: Int { Self.chunkCount(byteCount: byteCount, chunkSize: chunkSize) }

    /// Whether all of the bytes are here.
    package var isComplete: Bool { state == .complete }

    /// How many chunks a blob of `byteCount` bytes has in chunks of `chunkSize`.
    package static func chunkCount(byteCount: UInt64, chunkSize: Int) -> Int {
        Int((byteCount + UInt64(chunkSize) - 1) / UInt64(chunkSize))
    }
}
