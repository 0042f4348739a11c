import Foundation
import StoryAPI

/// The Unix socket's file: its directory made private, a stale file of a
/// dead daemon replaced, a live one left alone, and the mode set once bound.
enum ControlSocket {
    /// Makes the socket's directory (0700, or 0750 and the socket group's)
    /// and refuses a path another daemon still answers on.
    /// - Throws: `APIError` (`conflict` when another daemon serves it).
    static func prepare(path: String, access: SocketAccess) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: access == .owner ? 0o700 : 0o750])
            if case .group(_, let gid) = access, chown(directory, uid_t.max, gid) != 0 {
                throw APIError(.internal, "cannot give \(directory) to the socket group (errno \(errno))")
            }
        }
        // A socket file another daemon still answers on is not ours to replace.
        if isAnswering(path) {
            throw APIError(.conflict, "another daemon is serving the control socket \(path); give this one its own --socket")
        }
    }

    /// Restricts the bound socket to the owner (0600), or the owner and a group (0660).
    /// - Throws: `APIError` when the mode or owner cannot be set.
    static func restrict(path: String, access: SocketAccess) throws {
        var restricted = chmod(path, access == .owner ? 0o600 : 0o660) == 0
        if case .group(_, let gid) = access { restricted = restricted && chown(path, uid_t.max, gid) == 0 }
        guard restricted else { throw APIError(.internal, "cannot set the owner and mode of \(path) (errno \(errno))") }
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
