import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// The Unix socket's file: its directory made private, a stale file of a
/// dead daemon replaced, a live one left alone, and the mode set once bound.
enum ControlSocket {
    /// Why the control socket cannot be served, in words a person can act on.
    struct Failure: Error, CustomStringConvertible {
        let description: String

        /// The socket at `path` could not be bound or served (`error` from NIO
        /// or Hummingbird: its errno in words, never a function signature).
        init(path: String, error: any Error) {
            if let failure = error as? Failure {
                self = failure
            } else if let code = (error as? IOError)?.errnoCode {
                description =
                    "cannot serve the control socket \(path): \(String(cString: strerror(code)).lowercased()); "
                    + "give --socket a path in a directory this user may write"
            } else if error is UnixDomainSocketPathWrongType {
                description = "\(path) exists and is not a socket; move it away, or give --socket another path"
            } else {
                description = "cannot serve the control socket \(path): \(error)"
            }
        }

        init(description: String) {
            self.description = description
        }
    }

    /// Makes the socket's directory (0700, or 0750 and the socket group's)
    /// and refuses a path another daemon still answers on, a directory this
    /// user may not write, and a file in the way that is not a socket.
    /// - Throws: `Failure` saying what is wrong and what to do.
    static func prepare(path: String, access: SocketAccess) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        // Where systemd is not PID 1 (a container, WSL), XDG_RUNTIME_DIR may name a
        // directory nobody made: make it as a login session would (0700), or say what to do.
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), directory.hasPrefix(runtime + "/"),
            !FileManager.default.fileExists(atPath: runtime)
        {
            if let problem = Directories.make(runtime, mode: 0o700) {
                throw Failure(
                    description: "XDG_RUNTIME_DIR is \(runtime), which does not exist and cannot be made (\(problem)): no login session "
                        + "made it (systemd is not running here, as in a container or WSL). Unset XDG_RUNTIME_DIR (the socket then goes "
                        + "in the state directory), or give --socket a path (docs/operations.md, \"Without systemd\")")
            }
        }
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            if let problem = Directories.make(directory, mode: access == .owner ? 0o700 : 0o750) {
                throw Failure(
                    description: "cannot create the control socket's directory \(directory): \(problem); "
                        + "give --socket a path in a directory this user may write")
            }
            if case .group(_, let gid) = access, chown(directory, uid_t.max, gid) != 0 {
                throw Failure(description: "cannot give \(directory) to the socket group: \(String(cString: strerror(errno)).lowercased())")
            }
        } else if !isDirectory.boolValue {
            throw Failure(description: "the control socket's directory \(directory) is a file, not a directory; give --socket another path")
        } else if Glibc.access(directory, W_OK | X_OK) != 0 {
            throw Failure(
                description: "cannot create the control socket in \(directory): \(String(cString: strerror(errno)).lowercased()); "
                    + "give this user write access to it, or give --socket another path")
        }
        // A socket file another daemon still answers on is not ours to replace.
        if isAnswering(path) {
            throw Failure(description: "another daemon is serving the control socket \(path); give this one its own --socket")
        }
        var info = stat()
        if lstat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFSOCK {
            throw Failure(description: "\(path) exists and is not a socket; move it away, or give --socket another path")
        }
    }

    /// Restricts the bound socket to the owner (0600), or the owner and a group (0660).
    /// - Throws: `Failure` when the mode or owner cannot be set.
    static func restrict(path: String, access: SocketAccess) throws(Failure) {
        var restricted = chmod(path, access == .owner ? 0o600 : 0o660) == 0
        if case .group(_, let gid) = access { restricted = restricted && chown(path, uid_t.max, gid) == 0 }
        guard restricted else {
            throw Failure(
                description: "cannot set the owner and mode of the control socket \(path): \(String(cString: strerror(errno)).lowercased())")
        }
    }

    /// Whether something accepts connections on a Unix socket at `path` (a
    /// stale socket file of a daemon that died refuses them).
    static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
    }
}
