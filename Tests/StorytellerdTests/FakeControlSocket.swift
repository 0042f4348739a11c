import Foundation
import Synchronization

/// A Unix socket that answers every HTTP request with one canned JSON body:
/// a daemon of another version, say, for what the CLI makes of it. Serves
/// on a thread of its own until `stop()` (in a `defer`).
final class FakeControlSocket: Sendable {
    let path: String
    private let fd: Int32
    private final class State: Sendable {
        let requests = Mutex<[String]>([])
        let stopped = Mutex(false)
    }
    private let state = State()

    /// The request lines received so far ("GET /v1/version HTTP/1.1").
    var requestLines: [String] { state.requests.withLock { $0 } }

    /// - Parameter body: the JSON every request gets, with status 200.
    init(answering body: String) throws {
        (path, fd) = try listeningUnixSocket(named: "fake")
        let answer = Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        let (listening, state) = (fd, state)
        Thread {
            while !state.stopped.withLock({ $0 }) {
                let connection = accept(listening, nil, nil)
                guard connection >= 0 else { break }
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                // The request's head (the CLI sends no body to a GET).
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                    let count = read(connection, &buffer, buffer.count)
                    if count <= 0 { break }
                    received += buffer[0..<count]
                }
                let line = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
                state.requests.withLock { $0.append(line) }
                _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
        }.start()
    }

    /// Stops serving and removes the socket file.
    func stop() {
        state.stopped.withLock { $0 = true }
        shutdown(fd, Int32(SHUT_RDWR))  // wakes the accept
        close(fd)
        unlink(path)
    }
}

/// A Unix stream socket listening at a new path in the temporary directory
/// (`PREFIX-xxxxxxxx.sock`); the caller closes the descriptor and removes the path.
func listeningUnixSocket(named prefix: String) throws -> (path: String, fd: Int32) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8)).sock").path
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(fd, 8) == 0 else {
        close(fd)
        throw TimedOut(description: "cannot listen on \(path)")
    }
    return (path, fd)
}
