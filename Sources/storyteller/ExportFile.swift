import Foundation

/// A file an export writes: a hidden partial file beside the destination,
/// renamed over it only once complete and on disk, so `--out` is either the
/// old file or the whole new one, never half a file. An interrupted export
/// (an error, the daemon stopping) removes the partial file.
final class ExportFile {
    /// Why the file cannot be written, in words to act on.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    private let partial: String
    private let handle: FileHandle
    private(set) var written = 0

    /// Opens the partial file beside `path`.
    /// - Throws: `Problem` when `path` is a directory or its directory cannot be written.
    init(path: String) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw Problem(description: "\(path) is a directory; give the name of the file to write")
        }
        let directory = (path as NSString).deletingLastPathComponent
        partial =
            (directory.isEmpty ? "." : directory) + "/." + (path as NSString).lastPathComponent + ".partial-\(getpid())"
        guard FileManager.default.createFile(atPath: partial, contents: nil),
            let handle = FileHandle(forWritingAtPath: partial)
        else {
            throw Problem(
                description:
                    "cannot write \(path): \(directory.isEmpty ? "the current directory" : directory) is not writable")
        }
        self.handle = handle
    }

    /// Appends bytes.
    /// - Throws: `Problem` (the partial file is removed).
    func write(_ bytes: [UInt8]) throws {
        do {
            try handle.write(contentsOf: bytes)
            written += bytes.count
        } catch {
            discard()
            throw Problem(description: "cannot write \(path): \(error.localizedDescription); nothing was left there")
        }
    }

    /// Puts the complete file on disk under its name (replacing what was there).
    /// - Throws: `Problem` if it cannot be flushed or renamed (nothing is left then).
    func finish() throws {
        do {
            try handle.synchronize()
            try handle.close()
        } catch {
            discard()
            throw Problem(description: "cannot write \(path): \(error.localizedDescription); nothing was left there")
        }
        guard rename(partial, path) == 0 else {
            let code = errno
            unlink(partial)
            throw Problem(description: "cannot name the file \(path): \(String(cString: strerror(code)))")
        }
    }

    /// Removes the partial file.
    func discard() {
        try? handle.close()
        unlink(partial)
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Whether the directory `path` is in exists.
    static func directoryExists(of path: String) -> (exists: Bool, directory: String) {
        let directory = (absolute(path) as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        return (
            FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue,
            directory
        )
    }
}
