import Dispatch
import Foundation
import StoryClient
import Synchronization

/// Where the daemon keeps its state, from flags and the XDG environment.
struct DaemonPaths {
    static let defaultPeerPort = 7460

    let dataDirectory: String
    var identityDirectory: String { dataDirectory + "/identity" }
    var databasePath: String { dataDirectory + "/storyteller.sqlite" }
    /// `$XDG_RUNTIME_DIR/storyteller/control.sock`, else in the state directory.
    let socketPath: String

    /// The defaults are the ones the CLI assumes (`ControlClient`), so both find the same socket.
    init(dataDirectory: String?, socket: String?, environment: [String: String]) {
        let directory = dataDirectory ?? ControlClient.defaultDataDirectory(environment: environment)
        self.dataDirectory = directory
        socketPath = socket ?? ControlClient.defaultSocketPath(dataDirectory: directory, environment: environment)
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

/// Turns SIGTERM/SIGINT (or a fatal failure of a service) into one awaited
/// reason to stop.
final class ShutdownSignal: Sendable {
    enum Reason: Sendable { case signal(Int32), failure(String) }

    private struct State {
        var reason: Reason?
        var waiters: [CheckedContinuation<Reason, Never>] = []
    }
    private let state = Mutex(State())
    /// Written only by `install`, before any signal can arrive; kept to keep the sources alive.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    var reason: Reason? { state.withLock { $0.reason } }

    func install(for signals: [Int32]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in finish(.signal(number)) }
            source.resume()
            sources.append(source)
        }
    }

    func fail(_ message: String) { finish(.failure(message)) }

    func wait() async -> Reason {
        await withCheckedContinuation { continuation in
            let ready: Reason? = state.withLock {
                if let reason = $0.reason { return reason }
                $0.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func finish(_ reason: Reason) {
        let waiters = state.withLock { state -> [CheckedContinuation<Reason, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
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
