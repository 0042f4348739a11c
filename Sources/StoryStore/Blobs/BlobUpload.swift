import Foundation
package import StoryCore

/// A blob being received from a local client: its bytes go to a temporary
/// file in the store's `tmp/` as they come, hashed on the way, never whole in
/// memory. `finish()` it, look at `temporaryPath` if need be, then hand it
/// to `BlobStore.commit(_:type:)` — or `discard()` it.
///
/// Used by one task at a time (hence `@unchecked Sendable`: it may move
/// between tasks, never be shared by two at once). An upload neither
/// committed nor discarded is discarded when it is released.
package final class BlobUpload: @unchecked Sendable {
    private enum State {
        case writing
        case finished(hash: BlobHash, byteCount: UInt64)
        case committed
        case discarded
    }

    /// Where the bytes are until they are committed (or discarded).
    package let temporaryPath: String
    private let maximumBytes: UInt64
    private var file: BlobFile?
    private let hasher = SHA256Stream()
    /// Each chunk's SHA-256 as the bytes pass (the manifest peers ask for
    /// first: ready at once, not computed by reading the file again then).
    private let chunkHasher = SHA256Stream()
    private let chunkSize: Int
    private var chunkFill = 0
    /// The hashes of the chunks written so far (the last one once finished).
    private(set) var manifest: [BlobHash] = []
    private var state = State.writing
    /// Bytes written so far.
    package private(set) var byteCount: UInt64 = 0
    /// The bytes before this offset have been handed to the disk (`startWriteback`).
    private var writtenBack: UInt64 = 0
    /// How much is written before the kernel is asked to start writing it out.
    private static let writebackStep: UInt64 = 8 << 20

    /// Opens a new temporary file in `directory` (mode 0600).
    init(directory: String, maximumBytes: UInt64, chunkSize: Int) throws(BlobError) {
        self.chunkSize = chunkSize
        var random = SystemRandomNumberGenerator()
        let name = (0..<2).map { _ in String(random.next() as UInt64, radix: 16) }.joined(separator: "-")
        temporaryPath = directory + "/upload-" + name
        self.maximumBytes = maximumBytes
        file = try BlobFile.openForWriting(temporaryPath, exclusive: true)
    }

    deinit {
        discard()
    }

    /// Appends bytes.
    /// - Throws: `BlobError(.tooLarge)` as soon as the total passes the
    ///   store's limit (the upload is discarded then); `.io` if the disk
    ///   fails; `.invalid` once the upload is finished or discarded.
    package func write(_ bytes: some Collection<UInt8>) throws(BlobError) {
        guard case .writing = state, let file else {
            throw BlobError(.invalid, "the upload was already \(stateWord); nothing more can be written to it", path: temporaryPath)
        }
        let count = UInt64(bytes.count)
        guard count <= maximumBytes - byteCount else {
            discard()
            throw BlobError(
                .tooLarge,
                "the file is larger than \(ByteCountText.text(maximumBytes)), the limit (blob-max-bytes); nothing was kept")
        }
        do {
            try file.write(contentsOf: bytes, at: byteCount)
        } catch {
            discard()
            throw error
        }
        hasher.update(contentsOf: bytes)
        let fed: Void? = bytes.withContiguousStorageIfAvailable { feedChunks(UnsafeRawBufferPointer($0)) }
        if fed == nil { Array(bytes).withUnsafeBytes { feedChunks($0) } }
        byteCount += count
        if byteCount - writtenBack >= Self.writebackStep {
            file.startWriteback(offset: writtenBack, count: Int(byteCount - writtenBack))
            writtenBack = byteCount
        }
    }

    /// Feeds the chunk hashes, closing a chunk at each chunk boundary.
    private func feedChunks(_ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let take = min(chunkSize - chunkFill, buffer.count - offset)
            chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + take)]))
            chunkFill += take
            offset += take
            if chunkFill == chunkSize {
                manifest.append(chunkHasher.finalize())
                chunkFill = 0
            }
        }
    }

    /// Puts the bytes on disk; the blob's hash and length. Again is the same answer.
    /// - Throws: `BlobError(.io)` if the file cannot be flushed (the upload is
    ///   discarded then), `.invalid` once discarded or committed.
    @discardableResult
    package func finish() throws(BlobError) -> (hash: BlobHash, byteCount: UInt64) {
        switch state {
        case .finished(let hash, let byteCount): return (hash, byteCount)
        case .committed, .discarded:
            throw BlobError(.invalid, "the upload was already \(stateWord)", path: temporaryPath)
        case .writing: break
        }
        do {
            try file?.sync()
        } catch {
            discard()
            throw error
        }
        file?.close()
        file = nil
        if chunkFill > 0 {
            manifest.append(chunkHasher.finalize())
            chunkFill = 0
        }
        let hash = hasher.finalize()
        state = .finished(hash: hash, byteCount: byteCount)
        return (hash, byteCount)
    }

    /// Deletes the temporary file. Again, or after a commit, does nothing.
    package func discard() {
        switch state {
        case .committed, .discarded: return
        case .writing, .finished: break
        }
        file?.close()
        file = nil
        try? FileSystem.remove(temporaryPath)
        state = .discarded
    }

    /// The store took the file (renamed it, or deleted it as a duplicate).
    func markCommitted() {
        state = .committed
    }

    private var stateWord: String {
        switch state {
        case .writing: "open"
        case .finished: "finished"
        case .committed: "committed"
        case .discarded: "discarded"
        }
    }
}
