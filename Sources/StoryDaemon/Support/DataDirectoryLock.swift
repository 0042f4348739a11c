import Foundation

/// The daemon's state directory, held exclusively: one daemon per data
/// directory, or two would write one database under one identity and replica
/// id, and an edit acknowledged by one could be lost to the other.
///
/// The lock is an `flock` on `DATA_DIR/lock`, taken before the database or the
/// control socket is touched and held until the process ends (the kernel
/// releases it however the process ends, so a crash leaves no stale lock).
///
/// A daemon that stops lets go of the lock explicitly (`LOCK_UN`) before it
/// closes the descriptor: the lock belongs to the open file description, and
/// a child process spawned just then (an `ffmpeg`, a test's CLI) shares that
/// description from its fork until its exec closes it, so closing alone left
/// the lock held for that moment and a daemon started again in the same
/// process (an embedding app, the tests) was refused.
final class DataDirectoryLock: Sendable {
    /// Why the directory cannot be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    /// The open lock file (a forked child shares its description until its exec).
    let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        // Let go for every holder of the description, then close ours.
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Creates the directory (0700) or makes an existing one private to its
    /// owner, then takes the lock.
    /// - Throws: `Failure` saying which daemon holds it, or what is wrong with the directory.
    static func acquire(_ directory: String) throws(Failure) -> DataDirectoryLock {
        try prepare(directory)
        let path = directory + "/lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Failure(
                description: "cannot write in the state directory \(directory) (\(path): \(String(cString: strerror(errno)))); "
                    + "give this user write access to it, or give --data-dir another directory")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            close(descriptor)
            if code == EWOULDBLOCK {
                throw Failure(
                    description: "another storytellerd\(holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "") is already using \(directory); "
                        + "stop it first, or give this one its own --data-dir")
            }
            throw Failure(description: "cannot lock \(path): \(String(cString: strerror(code)))")
        }
        // Who holds it, for the message a second start prints.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return DataDirectoryLock(path: path, descriptor: descriptor)
    }

    /// The directory exists, is a directory owned by this user, and only its
    /// owner may enter it (0700).
    private static func prepare(_ directory: String) throws(Failure) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if !manager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            if let problem = Directories.make(directory, mode: 0o700) {
                throw Failure(
                    description: "cannot create the state directory \(directory): \(problem); "
                        + "give --data-dir (or data-dir in the config file) a directory this user may create or write")
            }
            return
        }
        guard isDirectory.boolValue else {
            throw Failure(
                description: "the state directory \(directory) is a file, not a directory; move the file away, "
                    + "or give --data-dir (or data-dir in the config file) another path")
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw Failure(description: "cannot read \(directory): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == getuid() else {
            throw Failure(
                description: "the state directory \(directory) belongs to another user (uid \(info.st_uid)); the daemon keeps its keys there, "
                    + "so run storytellerd as that user, or give this one its own --data-dir")
        }
        if info.st_mode & 0o077 != 0, chmod(directory, 0o700) != 0 {
            throw Failure(
                description:
                    "\(directory) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))) and cannot be made 0700: \(String(cString: strerror(errno)))"
            )
        }
    }
}
