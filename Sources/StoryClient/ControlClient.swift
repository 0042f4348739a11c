package import Foundation

/// A small HTTP/1.1 client for the daemon's control socket: one request per
/// connection (`Connection: close`), blocking, with a receive timeout.
/// The `storyteller` CLI and the end-to-end tests use it.
package struct ControlClient: Sendable {
    package struct Response: Sendable {
        package let status: Int
        package let headers: [String: String]
        package let body: Data

        /// `error.code` of an error answer.
        package var errorCode: String? { errorDetail?.code }
        /// `error.message` of an error answer.
        package var errorMessage: String? { errorDetail?.message }

        /// The API's error shape (`{"error":{"code","message"}}`), read
        /// without StoryAPI (the client is Foundation only).
        private struct ErrorAnswer: Decodable {
            struct Detail: Decodable {
                let code: String
                let message: String
            }

            let error: Detail
        }

        private var errorDetail: ErrorAnswer.Detail? { (try? JSONDecoder().decode(ErrorAnswer.self, from: body))?.error }
    }

    /// The daemon could not be reached, or did not answer HTTP.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package let description: String
        /// True when nothing listens on the socket (the daemon is not running).
        package let isUnreachable: Bool
    }

    package let path: String
    /// The sockets looked at to find a daemon, when none was given (the
    /// user daemon's, then the system daemon's); named when none answers.
    package let searched: [String]

    package init(path: String, searched: [String] = []) {
        self.path = path
        self.searched = searched
    }

    /// The system daemon's control socket (the system unit's
    /// `RuntimeDirectory`), or `STORYTELLER_SYSTEM_SOCKET` when set (tests).
    package static func systemSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["STORYTELLER_SYSTEM_SOCKET"], !path.isEmpty { return path }
        return "/run/storyteller/control.sock"
    }

    /// The client for a daemon when no socket is given: the user daemon's
    /// default socket if it exists, else the system daemon's if that
    /// exists, else the user daemon's (whose absence the error then names,
    /// with the system daemon's).
    package static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> ControlClient {
        let candidates = [defaultSocketPath(environment: environment), systemSocketPath(environment: environment)]
        let found = candidates.first { path in
            var info = stat()
            return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
        }
        return ControlClient(path: found ?? candidates[0], searched: candidates)
    }

    /// The socket the daemon uses with no settings: `$XDG_RUNTIME_DIR/storyteller/control.sock`,
    /// else `control.sock` in `$XDG_DATA_HOME/storyteller` or `~/.local/share/storyteller`.
    package static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        defaultSocketPath(dataDirectory: defaultDataDirectory(environment: environment), environment: environment)
    }

    /// The daemon's state directory with no settings: `$XDG_DATA_HOME/storyteller`,
    /// else `~/.local/share/storyteller`. The daemon resolves its paths with this too.
    package static func defaultDataDirectory(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/storyteller" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/storyteller"
    }

    /// The socket for a daemon whose state is in `dataDirectory` and whose
    /// socket is not set: in `$XDG_RUNTIME_DIR/storyteller`, else in the state directory.
    package static func defaultSocketPath(dataDirectory: String, environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/storyteller/control.sock" }
        return dataDirectory + "/control.sock"
    }

    /// `timeoutSeconds` bounds each wait for the answer (0: no bound, for long work like a backup).
    package func request(
        _ method: String, _ target: String, body: Data? = nil, extraHeaders: [String] = [], timeoutSeconds: Int = 30
    ) throws -> Response {
        let fd = try connectAndSend(method, target, body: body, extraHeaders: extraHeaders, timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        return try Self.parse(Self.readToEnd(fd, timeoutSeconds: timeoutSeconds, what: "\(method) \(target)"))
    }

    /// Everything the daemon sends until it closes the connection; a wait
    /// longer than the receive timeout is an error that says so (not an
    /// empty answer).
    private static func readToEnd(_ fd: Int32, timeoutSeconds: Int, what: String) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw Failure(
                    description: "the daemon did not answer \(what) within \(timeoutSeconds) s (it is running but busy or stuck; "
                        + "its log says more)", isUnreachable: false)
            }
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return received
    }

    package func get(_ target: String) throws -> Response { try request("GET", target) }

    /// Reads a streamed response (the event stream) line by line: `line` gets
    /// each complete line without its newline and returns false to stop. Returns
    /// when the daemon ends the stream or `line` says stop; an error status
    /// comes back as the (whole) response, success as nil.
    package func stream(_ target: String, accept: String = "application/x-ndjson", line: (String) throws -> Bool) throws -> Response? {
        let fd = try connectAndSend("GET", target, body: nil, extraHeaders: ["Accept: \(accept)"], timeoutSeconds: 0)
        defer { close(fd) }
        var pending: [UInt8] = []
        var head: Response?
        var chunked = false
        var decoded: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            pending += buffer[..<n]
            if head == nil {
                guard let end = Self.headerEnd(pending) else { continue }
                let parsed = try Self.parse(Array(pending[..<(end + 4)]))
                head = parsed
                pending.removeFirst(end + 4)
                chunked = parsed.headers["transfer-encoding"]?.lowercased().contains("chunked") ?? false
                guard parsed.status == 200 else {
                    pending += try Self.readToEnd(fd, timeoutSeconds: 0, what: "GET \(target)")
                    let body = chunked ? Self.dechunk(&pending) : pending
                    return Response(status: parsed.status, headers: parsed.headers, body: Data(body))
                }
            }
            decoded += chunked ? Self.dechunk(&pending) : pending
            if !chunked { pending = [] }
            while let newline = decoded.firstIndex(of: 10) {
                let text = String(decoding: decoded[..<newline], as: UTF8.self)
                decoded.removeFirst(newline + 1)
                if try !line(text) { return nil }
            }
        }
        guard head != nil else { throw Failure(description: "no HTTP response from the daemon", isUnreachable: false) }
        return nil
    }

    /// Streams the body of a GET answer to `sink` as it arrives, in pieces
    /// (a backup: the whole never sits in memory); `progress` gets the bytes
    /// so far and the total (Content-Length) after each piece. An error
    /// status comes back as the whole response, success as a response with
    /// an empty body.
    /// - Throws: `Failure` when the daemon cannot be reached, or stops before
    ///   the length it announced; whatever `sink` throws.
    package func download(
        _ target: String, timeoutSeconds: Int = 0, into sink: ([UInt8]) throws -> Void, progress: (_ bytes: Int, _ total: Int?) -> Void = { _, _ in }
    ) throws -> Response {
        let fd = try connectAndSend("GET", target, body: nil, extraHeaders: [], timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        var pending: [UInt8] = []
        var head: Response?
        var total: Int?
        var chunked = false
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            pending += buffer[..<n]
            if head == nil {
                guard let end = Self.headerEnd(pending) else { continue }
                let parsed = try Self.parse(Array(pending[..<(end + 4)]))
                head = parsed
                pending.removeFirst(end + 4)
                chunked = parsed.headers["transfer-encoding"]?.lowercased().contains("chunked") ?? false
                total = chunked ? nil : parsed.headers["content-length"].flatMap { Int($0) }
                guard parsed.status == 200 else {
                    pending += try Self.readToEnd(fd, timeoutSeconds: timeoutSeconds, what: "GET \(target)")
                    return Response(status: parsed.status, headers: parsed.headers, body: Data(chunked ? Self.dechunk(&pending) : pending))
                }
                progress(0, total)
            }
            let piece = chunked ? Self.dechunk(&pending) : pending
            if !chunked { pending = [] }
            if !piece.isEmpty {
                try sink(piece)
                received += piece.count
                progress(received, total)
            }
            if let total, received >= total { break }
        }
        guard let head else { throw Failure(description: "no HTTP response from the daemon", isUnreachable: false) }
        if let total, received != total {
            throw Failure(description: "the daemon stopped sending after \(received) of \(total) bytes", isUnreachable: false)
        }
        return Response(status: head.status, headers: head.headers, body: Data())
    }

    /// Sends a file as the request body, read and sent in 1 MiB pieces (a
    /// large image or sound never sits whole in memory); `progress` gets the
    /// bytes sent so far and the total. The daemon may answer before it has
    /// read everything (a refusal): its answer is returned all the same.
    /// - Throws: `Failure` when the file cannot be read or the daemon reached.
    package func upload(
        _ method: String, _ target: String, file path: String, timeoutSeconds: Int = 0,
        progress: (_ bytes: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> Response {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))", isUnreachable: false)
        }
        defer { try? handle.close() }
        let total: Int
        do {
            total = Int(try handle.seekToEnd())
            try handle.seek(toOffset: 0)
        } catch {
            throw Failure(description: "cannot read \(path): \(error)", isUnreachable: false)
        }
        let fd = try connectAndSend(
            method, target, body: nil,
            extraHeaders: ["Content-Type: application/octet-stream", "Content-Length: \(total)"], timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        var sent = 0
        progress(0, total)
        sending: while sent < total {
            let piece: Data
            do { piece = try handle.read(upToCount: 1 << 20) ?? Data() } catch {
                throw Failure(description: "cannot read \(path): \(error)", isUnreachable: false)
            }
            if piece.isEmpty { break }
            var offset = 0
            while offset < piece.count {
                // The daemon may answer before it has read everything (a refusal,
                // e.g. a file over its limit) and stop reading: then stop sending
                // and read its answer, rather than wait on a full socket forever.
                var ready = pollfd(fd: fd, events: Int16(POLLIN | POLLOUT), revents: 0)
                guard poll(&ready, 1, 60_000) > 0, ready.revents & Int16(POLLIN | POLLHUP | POLLERR) == 0 else { break sending }
                let n = piece[piece.startIndex + offset..<piece.endIndex].withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
                if n <= 0 { break sending }
                offset += n
            }
            sent += piece.count
            progress(sent, total)
        }
        return try Self.parse(Self.readToEnd(fd, timeoutSeconds: timeoutSeconds, what: "\(method) \(target)"))
    }

    /// Takes the complete chunks off the front of `bytes` and returns their data.
    private static func dechunk(_ bytes: inout [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        var offset = 0
        while let lineEnd = (offset..<max(offset, bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }) {
            let sizeText = String(decoding: bytes[offset..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { break }
            let start = lineEnd + 2
            if size == 0 {
                offset = bytes.count
                break
            }
            guard bytes.count >= start + size + 2 else { break }
            data += bytes[start..<(start + size)]
            offset = start + size + 2
        }
        bytes.removeFirst(min(offset, bytes.count))
        return data
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        let separator: [UInt8] = [13, 10, 13, 10]
        return (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator })
    }

    /// Connects to the socket and sends one request; the caller closes the descriptor.
    /// Whose socket it is and how to get access, for a connection refused by
    /// the file's permissions.
    static func permissionDenied(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return "permission denied on \(path): this user may not enter the directory it is in"
        }
        let user = name(ofUser: info.st_uid) ?? "uid \(info.st_uid)"
        let group = name(ofGroup: info.st_gid) ?? "gid \(info.st_gid)"
        let mode = String(info.st_mode & 0o777, radix: 8)
        guard info.st_mode & 0o060 == 0o060 else {
            return
                "permission denied on \(path): it is \(user)'s daemon socket (mode \(mode)); only \(user) may use it. Run storyteller as \(user), or start your own daemon"
        }
        return "permission denied on \(path): it is \(user)'s daemon socket, open to the group \(group) (mode \(mode)); "
            + "to use it, join that group (sudo usermod -aG \(group) $USER) and log in again"
    }

    private static func name(ofUser uid: uid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage -> String? in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard getpwuid_r(uid, &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil else { return nil }
            return String(cString: entry.pw_name)
        }
    }

    private static func name(ofGroup gid: gid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage -> String? in
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            guard getgrgid_r(gid, &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil else { return nil }
            return String(cString: entry.gr_name)
        }
    }

    private func connectAndSend(_ method: String, _ target: String, body: Data?, extraHeaders: [String], timeoutSeconds: Int) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)", isUnreachable: false) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw Failure(description: "socket path too long: \(path)", isUnreachable: false)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            if code == EACCES { throw Failure(description: Self.permissionDenied(path), isUnreachable: false) }
            if searched.count > 1 {
                throw Failure(
                    description: "cannot reach a daemon: nothing answers at \(searched[0]) (a user daemon's socket) nor at "
                        + "\(searched.dropFirst().joined(separator: ", ")) (the system daemon's); \(path): \(String(cString: strerror(code)))",
                    isUnreachable: true)
            }
            throw Failure(description: "cannot reach the daemon at \(path): \(String(cString: strerror(code)))", isUnreachable: true)
        }
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
        return fd
    }

    package func post(_ target: String, json: String) throws -> Response { try request("POST", target, body: Data(json.utf8)) }

    private static func parse(_ bytes: [UInt8]) throws -> Response {
        guard let end = headerEnd(bytes) else {
            throw Failure(description: "no HTTP response from the daemon (\(bytes.count) bytes)", isUnreachable: false)
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines[0])", isUnreachable: false)
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        // A large answer (a whole project) comes in chunks.
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true { body = dechunk(&body) }
        return Response(status: status, headers: headers, body: Data(body))
    }
}
