import Foundation

/// A minimal HTTP/1.1 client over a Unix socket, one request per connection
/// (`Connection: close`), for testing the control API without other tools.
struct ControlSocketClient {
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: Data

        /// The body as a JSON object or array.
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        var errorCode: String? { ((json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    let path: String

    func request(_ method: String, _ target: String, body: Data? = nil, extraHeaders: [String] = []) throws -> Response {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect \(path): errno \(errno)") }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: storyteller\r\nConnection: close\r\n"
        for header in extraHeaders { head += header + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        var bytes = Array((head + "\r\n").utf8)
        if let body { bytes += body }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may answer (413) and close before reading everything
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return try Self.parse(received)
    }

    func get(_ target: String) throws -> Response { try request("GET", target) }

    func post(_ target: String, json: String) throws -> Response { try request("POST", target, body: Data(json.utf8)) }

    private static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no HTTP response (\(bytes.count) bytes)")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(bytes[(end + 4)...]))
    }
}
