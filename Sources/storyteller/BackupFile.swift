import ArgumentParser
import Foundation
import StoryClient

/// The file `storyteller backup` writes: made by this user, mode 0600, as a
/// hidden partial file beside the destination that becomes the destination
/// only once complete and on disk (link, or rename, then nothing half-written
/// ever carries the name). An interrupt (Ctrl-C, SIGTERM) removes the partial file.
final class BackupFile {
    /// Why the file cannot be written, in words to act on.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    /// What the file is, in messages ("backup", "package").
    private let what: String
    private let partial: String
    private let descriptor: Int32
    private var written = 0

    /// Checks the destination and opens the partial file.
    /// - Throws: `Problem` when the destination exists, is a directory, or its
    ///   directory does not exist or is not writable by this user.
    init(path: String, what: String = "backup") throws {
        self.path = path
        self.what = what
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw Problem(description: "\(path) is a directory; give the name of the file to write in it (\(path)/storyteller.sqlite)")
            }
            throw Problem(description: "\(path) already exists; a \(what) never replaces a file, give a new name")
        }
        let directory = (path as NSString).deletingLastPathComponent
        partial = directory + "/." + (path as NSString).lastPathComponent + ".partial-\(getpid())"
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Problem(description: Self.cannotWrite(path, in: directory, errno)) }
        self.descriptor = descriptor
        // Exactly 0600 whatever the umask (which can only take bits away).
        fchmod(descriptor, 0o600)
        BackupFile.removeOnInterrupt(partial)
    }

    deinit { close(descriptor) }

    /// Appends bytes.
    /// - Throws: `Problem` (a full disk says so).
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let code = errno
                discard()
                let directory = (path as NSString).deletingLastPathComponent
                if code == ENOSPC || code == EDQUOT {
                    throw Problem(
                        description: "the disk holding \(directory) is full (\(written + offset) bytes written); nothing was left at \(path)")
                }
                throw Problem(description: "cannot write \(path): \(String(cString: strerror(code))); nothing was left there")
            }
            offset += count
        }
        written += bytes.count
    }

    /// Puts the complete file on disk under its name; its size.
    /// - Throws: `Problem` if it cannot be flushed or named (nothing is left then).
    func finish() throws -> Int {
        guard fsync(descriptor) == 0 else {
            let code = errno
            discard()
            throw Problem(description: "cannot write \(path): \(String(cString: strerror(code))); nothing was left there")
        }
        // link refuses an existing name (made meanwhile by someone else); rename
        // where the file system has no hard links.
        if link(partial, path) == 0 {
            unlink(partial)
        } else if errno == EEXIST {
            discard()
            throw Problem(description: "\(path) appeared while the \(what) was written; the \(what) was not kept, give a new name")
        } else if rename(partial, path) != 0 {
            let code = errno
            discard()
            throw Problem(description: "cannot name the \(what) \(path): \(String(cString: strerror(code)))")
        }
        BackupFile.removeOnInterrupt(nil)
        return written
    }

    /// Removes the partial file (a failed or refused backup leaves nothing).
    func discard() {
        unlink(partial)
        BackupFile.removeOnInterrupt(nil)
    }

    /// Why a file cannot be made in `directory`.
    static func cannotWrite(_ path: String, in directory: String, _ code: Int32) -> String {
        switch code {
        case ENOENT, ENOTDIR: return "cannot write \(path): the directory \(directory) does not exist"
        case EACCES, EPERM: return "cannot write \(path): you may not write in \(directory) (permission denied); choose a directory of yours"
        case EROFS: return "cannot write \(path): \(directory) is on a read-only file system"
        case ENOSPC, EDQUOT: return "cannot write \(path): the disk holding \(directory) is full"
        default: return "cannot write \(path): \(String(cString: strerror(code)))"
        }
    }

    // MARK: - Interrupts

    /// The partial file to remove if the process is interrupted (a C string:
    /// a signal handler may only call async-signal-safe functions like `unlink`).
    nonisolated(unsafe) private static var interruptedPartial: UnsafeMutablePointer<CChar>?

    private static func removeOnInterrupt(_ path: String?) {
        let old = interruptedPartial
        interruptedPartial = path.map { strdup($0) }
        free(old)
        guard path != nil else { return }
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { received in
                if let partial = BackupFile.interruptedPartial { unlink(partial) }
                _exit(128 + received)
            }
        }
    }
}

/// `storyteller backup`'s progress on a terminal (standard error): while
/// the daemon makes its copy, then bytes received of the total.
final class BackupProgress {
    private let path: String
    private var lastShown = Date.distantPast
    private var isShowing = false

    init(path: String) { self.path = path }

    func waiting(_ text: String = "the daemon is making a consistent copy of the database…") {
        draw(text)
    }

    func show(_ bytes: Int, of total: Int?) {
        let now = Date()
        guard bytes == total || now.timeIntervalSince(lastShown) >= 0.1 else { return }
        lastShown = now
        let done = Self.size(bytes)
        guard let total, total > 0 else { return draw("receiving \(done) → \(path)") }
        draw("receiving \(done) of \(Self.size(total)) (\(bytes * 100 / total) %) → \(path)")
    }

    /// Leaves the line (the result is printed next).
    func end() {
        if isShowing { FileHandle.standardError.write(Data("\n".utf8)) }
        isShowing = false
    }

    private func draw(_ text: String) {
        // \r and erase-to-end: the line is redrawn in place.
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        isShowing = true
    }

    static func size(_ bytes: Int) -> String {
        if bytes < 1 << 20 { return "\(bytes / 1024) KiB" }
        return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }
}

extension BackupFile {
    /// Downloads `target` into this file with a progress bar on a TTY (after
    /// `waiting`, the text shown until the first byte) and finishes it: the
    /// bytes written. Anything that fails discards the file and is said in
    /// the user's words.
    /// - Throws: `ExitCode(69)` when the daemon cannot be reached, `ExitCode(1)` otherwise.
    func download(_ target: String, with options: ClientOptions, waiting: String? = nil) throws -> Int {
        let progress = isatty(STDERR_FILENO) == 1 ? BackupProgress(path: path) : nil
        if let waiting { progress?.waiting(waiting) } else { progress?.waiting() }
        let response: ControlClientResponse
        do {
            response = try options.client.download(
                target, into: { try self.write($0) }, progress: { bytes, total in progress?.show(bytes, of: total) })
        } catch let failure as ControlClientFailure {
            progress?.end()
            discard()
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(69)
        } catch {
            progress?.end()
            discard()
            printError("\(error)")
            throw ExitCode(1)
        }
        progress?.end()
        guard response.status == 200 else {
            discard()
            printError(UserWords.say(response))
            throw ExitCode(1)
        }
        do {
            return try finish()
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
