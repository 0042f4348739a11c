import Foundation
import StoryClient

/// Where the daemon keeps its state, from flags and the XDG environment.
struct DaemonPaths {
    static let defaultPeerPort = 7460

    let dataDirectory: String
    var identityDirectory: String { dataDirectory + "/identity" }
    var databasePath: String { dataDirectory + "/storyteller.sqlite" }
    /// The socket given, else `control.sock` beside a data directory given
    /// (a daemon of its own: two such never share a socket), else the default
    /// `$XDG_RUNTIME_DIR/storyteller/control.sock` or one in the default state directory.
    let socketPath: String

    /// The defaults are the ones the CLI assumes (`ControlClient`), so both find the same socket.
    init(dataDirectory: String?, socket: String?, environment: [String: String]) {
        let directory = dataDirectory ?? ControlClient.defaultDataDirectory(environment: environment)
        self.dataDirectory = directory
        if let socket {
            socketPath = socket
        } else if dataDirectory != nil {
            socketPath = directory + "/control.sock"
        } else {
            socketPath = ControlClient.defaultSocketPath(dataDirectory: directory, environment: environment)
        }
    }
}

/// `HOST:PORT`, with `[v6]:PORT` for IPv6 literals.
struct ListenAddress: Equatable {
    struct Invalid: Error {}

    let host: String
    let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
        else { throw Invalid() }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Invalid() }
        self.host = host
        self.port = port
    }
}

/// `sd_notify(3)` without libsystemd: one datagram to `$NOTIFY_SOCKET`.
enum SystemdNotifier {
    static func notify(_ message: String) {
        guard var path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count + (abstract ? 1 : 0) < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let offset = abstract ? 1 : 0  // abstract names start with a NUL byte
            for (index, byte) in bytes.enumerated() { raw[offset + index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 1 : 1))
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text, strlen(text), 0, $0, length)
                }
            }
        }
    }
}
