import CMalloc
import Foundation

/// One open file of the blob store: owns its descriptor and closes it in
/// `deinit`. Reads and writes are positional (`pread`/`pwrite`), so chunks
/// land where they belong in whatever order they come. Errors name the file.
final class BlobFile {
    let path: String
    private(set) var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Opens an existing file for reading.
    /// - Throws: `BlobError(.notFound)` if there is none, `.io` otherwise.
    static func openForReading(_ path: String) throws(BlobError) -> BlobFile {
        try open(path, flags: O_RDONLY)
    }

    /// Opens a file for reading and writing, creating it (mode 0600) when absent.
    static func openForWriting(_ path: String, exclusive: Bool = false) throws(BlobError) -> BlobFile {
        try open(path, flags: O_RDWR | O_CREAT | (exclusive ? O_EXCL : 0))
    }

    private static func open(_ path: String, flags: Int32) throws(BlobError) -> BlobFile {
        var descriptor: Int32
        repeat {
            descriptor = Foundation.open(path, flags | O_CLOEXEC, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            throw FileSystem.error(code, code == ENOENT ? "no such file" : "cannot open the file", path: path, missing: .notFound)
        }
        return BlobFile(path: path, descriptor: descriptor)
    }

    /// Closes the descriptor (again is nothing).
    func close() {
        guard descriptor >= 0 else { return }
        _ = Foundation.close(descriptor)
        descriptor = -1
    }

    /// The file's length in bytes.
    func size() throws(BlobError) -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileSystem.error(errno, "cannot read the file's size", path: path) }
        return UInt64(info.st_size)
    }

    /// Sets the length: longer is zeros (sparse), shorter drops the end.
    func truncate(to length: UInt64) throws(BlobError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw FileSystem.error(errno, "cannot set the file's length to \(length) bytes", path: path)
        }
    }

    /// Flushes the file's bytes to the disk.
    func sync() throws(BlobError) {
        guard fsync(descriptor) == 0 else { throw FileSystem.error(errno, "cannot flush the file to disk", path: path) }
    }

    /// Asks the kernel to start writing a range to the disk now, without
    /// waiting for it (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`). Not
    /// a flush: `sync()` is still what makes bytes durable. A large blob
    /// written this way never piles up hundreds of MiB of dirty pages, so the
    /// final `fsync` has little left to do and does not hold up the disk (and
    /// the store's own commits, which wait on it) for a second or more.
    /// A file system that cannot do it is simply not asked.
    func startWriteback(offset: UInt64, count: Int) {
        _ = sync_file_range(descriptor, Int(offset), count, UInt32(ST_SYNC_FILE_RANGE_WRITE))
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(BlobError) {
        var done = 0
        while done < bytes.count {
            let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw FileSystem.error(errno, "cannot write to the file", path: path) }
            done += count
        }
    }

    /// Writes all of a collection's bytes at `offset` (without a copy when contiguous).
    func write(contentsOf bytes: some Collection<UInt8>, at offset: UInt64) throws(BlobError) {
        let result: Result<Void, BlobError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(BlobError) in try write(UnsafeRawBufferPointer(buffer), at: offset) }
        }
        if let result {
            try result.get()
        } else {
            try Array(bytes).withUnsafeBytes { raw in Result { () throws(BlobError) in try write(raw, at: offset) } }.get()
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(BlobError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw FileSystem.error(errno, "cannot read the file", path: path) }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Exactly `count` bytes at `offset`.
    /// - Throws: `BlobError(.corrupt)` when the file ends before them.
    func read(count: Int, at offset: UInt64) throws(BlobError) -> [UInt8] {
        var failure: BlobError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(BlobError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        guard bytes.count == count else {
            throw BlobError(.corrupt, "the file ends after \(offset + UInt64(bytes.count)) bytes, before byte \(offset + UInt64(count))", path: path)
        }
        return bytes
    }

    /// Feeds `length` bytes from `offset` to `body` in pieces of at most
    /// `piece` bytes, through one buffer (memory stays bounded whatever the length).
    /// - Throws: `BlobError(.corrupt)` when the file ends early.
    func forEachPiece(
        from offset: UInt64 = 0, length: UInt64, piece: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) throws(BlobError) -> Void
    ) throws(BlobError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(piece, 1), alignment: 16)
        defer { buffer.deallocate() }
        var position = offset
        let end = offset + length
        while position < end {
            let want = Int(min(UInt64(piece), end - position))
            let got = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: position)
            guard got == want else {
                throw BlobError(.corrupt, "the file ends after \(position + UInt64(got)) bytes, before byte \(end)", path: path)
            }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            position += UInt64(got)
        }
    }
}
