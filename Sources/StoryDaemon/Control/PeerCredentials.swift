import Foundation
import NIOCore
import NIOPosix

/// `struct ucred` from <sys/socket.h> (Glibc hides it behind _GNU_SOURCE):
/// three 32-bit fields, the layout `getsockopt(SO_PEERCRED)` fills.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0

    /// The process at the other end of a Unix socket connection.
    static func of(_ channel: any Channel) async -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        return try? await future.get()
    }
}

extension SocketAccess {
    /// The daemon's own user, or (with a socket group) a member of that group.
    func admits(_ credentials: PeerCredentials) -> Bool {
        if credentials.uid == getuid() { return true }
        guard case .group(_, let gid) = self else { return false }
        if credentials.gid == gid { return true }
        // Supplementary groups are not in SO_PEERCRED: the caller's process lists
        // them in /proc; without /proc (hidepid), the user database does.
        if let status = try? String(contentsOfFile: "/proc/\(credentials.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") })
        {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).contains { gid_t($0) == gid }
        }
        // getpwuid_r: connections are served concurrently, and getpwuid's static buffer is shared.
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard getpwuid_r(credentials.uid, &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil else {
                return false
            }
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(entry.pw_name, entry.pw_gid, &groups, &count) >= 0 else { return false }
            return groups.prefix(Int(count)).contains(gid)
        }
    }
}
