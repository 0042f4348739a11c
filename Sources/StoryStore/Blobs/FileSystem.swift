import Foundation

/// The file system calls the blob store makes besides reading and writing,
/// with errors that name the path.
enum FileSystem {
    /// An error for a failed call: a full disk says so.
    static func error(_ code: Int32, _ what: String, path: String, missing: BlobError.Kind = .io) -> BlobError {
        if code == ENOSPC || code == EDQUOT { return BlobError(.io, "\(what): the disk is full", path: path) }
        return BlobError(code == ENOENT ? missing : .io, "\(what): \(String(cString: strerror(code)))", path: path)
    }

    /// Makes a directory (mode 0700) if it does not exist; an existing one
    /// readable by others is made private to its owner. Whether it was made.
    @discardableResult
    static func makeDirectory(_ path: String) throws(BlobError) -> Bool {
        if mkdir(path, 0o700) == 0 { return true }
        let code = errno
        var info = stat()
        guard code == EEXIST, stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw error(code == EEXIST ? ENOTDIR : code, "cannot make the directory", path: path)
        }
        if info.st_mode & 0o077 != 0 && chmod(path, info.st_mode & 0o700) != 0 {
            throw error(errno, "cannot make the directory private to its owner", path: path)
        }
        return false
    }

    /// Whether a file exists, and its length.
    static func size(_ path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return UInt64(info.st_size)
    }

    /// Renames within a file system (atomic: the destination is the old file
    /// or the new one, never half of either).
    static func rename(_ source: String, to destination: String) throws(BlobError) {
        guard Foundation.rename(source, destination) == 0 else {
            throw error(errno, "cannot move the file to \(destination)", path: source)
        }
    }

    /// Removes a file; one already gone is no error.
    static func remove(_ path: String) throws(BlobError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw error(errno, "cannot delete the file", path: path) }
    }

    /// Flushes a directory's entries (a rename or a new file in it) to the disk.
    static func syncDirectory(_ path: String) throws(BlobError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error(errno, "cannot open the directory", path: path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error(errno, "cannot flush the directory to disk", path: path) }
    }

    /// The names in a directory (none if it cannot be read).
    static func names(in path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }
}
