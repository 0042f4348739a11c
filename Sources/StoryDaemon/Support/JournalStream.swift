import Foundation

/// Whether a file descriptor is connected to journald. systemd sets
/// `JOURNAL_STREAM` to `DEVICE:INODE` of the stream it connected a service's
/// standard output or error to (systemd.exec(5)); a program whose stream has
/// that device and inode writes to the journal and may leave out timestamps
/// and use `<N>` priority prefixes. A redirected stream (a pipe into a file,
/// a child process with its own stderr) has another inode, so the variable
/// alone, inherited, proves nothing.
package enum JournalStream {
    /// Whether `descriptor` (standard error by default) is the stream `JOURNAL_STREAM` names.
    package static func isConnected(_ descriptor: Int32 = STDERR_FILENO, environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"], let (device, inode) = parse(value) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// `DEVICE:INODE` as two decimal numbers.
    static func parse(_ value: String) -> (device: UInt64, inode: UInt64)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        return (device, inode)
    }
}
