import COpenSSL
import Foundation
import NIOCore
import StoryClient
import StoryCore
import StoryIdentity
import StoryMedia
import StoryTLS

// Pieces of `storyteller-bench media`: large PNG files written as they are
// made, the machine's floors (SHA-256, disk, TLS on loopback), a sampler of
// the daemons' resident memory and the stroke latency probe.

/// Nanoseconds since boot (monotonic).
func uptimeNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// MB/s (10^6 bytes per second) for `bytes` moved in `seconds`.
func megabytesPerSecond(_ bytes: Int, _ seconds: Double) -> Double {
    seconds > 0 ? rounded(Double(bytes) / seconds / 1e6, 1) : 0
}

// MARK: - SHA-256

/// SHA-256 fed piece by piece (OpenSSL EVP, as the daemon hashes).
final class SHA256Hasher {
    private let context: OpaquePointer

    init() {
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// Lowercase hex of the digest of everything fed.
    func hex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}

// MARK: - Large PNG files

/// Writes real PNG files of an exact length without holding them in memory:
/// a square RGB picture of random pixels (seeded) stored in uncompressed
/// deflate blocks, and a private ancillary chunk (`stPd`) making up the
/// length. Every chunk's CRC, the zlib stream's Adler-32 and the rows'
/// filter bytes are right: any decoder (and the daemon's `MediaProbe`)
/// takes it. Made like `TestMedia.png`, but streamed to disk.
enum LargePNG {
    /// Writes the file and returns its SHA-256 (hex).
    static func write(to path: String, byteCount: Int, seed: UInt64) throws -> String {
        // Signature, IHDR (13 bytes of data), the IDAT, stPd and IEND chunks' framing.
        let fixed = 8 + 25 + 12 + 12 + 12
        func zlibLength(_ raw: Int) -> Int { 2 + 5 * max(1, (raw + 65_534) / 65_535) + raw + 4 }
        var side = Int((Double(byteCount) / 3).squareRoot())
        while side > 1 && fixed + zlibLength((3 * side + 1) * side) > byteCount { side -= 1 }
        let rowLength = 3 * side + 1
        let raw = rowLength * side
        let idatLength = zlibLength(raw)
        let padLength = byteCount - fixed - idatLength
        guard padLength >= 0, side <= 65_536 else { throw ValidationError("cannot make a PNG of \(byteCount) bytes") }

        let output = try OutputFile(path: path)
        // Signature and header.
        output.emit([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header: [UInt8] = []
        header += bigEndian(UInt32(side))
        header += bigEndian(UInt32(side))
        header += [8, 2, 0, 0, 0]
        output.chunk("IHDR", header)

        // IDAT: zlib of stored deflate blocks of the rows (filter byte 0, then random RGB).
        output.emit(bigEndian(UInt32(idatLength)))
        var crc = CRC32()
        let idat = Array("IDAT".utf8) + [0x78, 0x01]
        crc.update(idat)
        output.emit(idat)
        var random = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var adlerA: UInt32 = 1
        var adlerB: UInt32 = 0
        let blocksPerPiece = 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blocksPerPiece * (5 + 65_535) + 8, alignment: 8)
        defer { buffer.deallocate() }
        var done = 0
        while done < raw {
            var used = 0
            for _ in 0..<blocksPerPiece where done < raw {
                let count = min(65_535, raw - done)
                let isLast = done + count == raw
                let inverse = ~UInt16(count)
                buffer[used] = isLast ? 1 : 0
                buffer[used + 1] = UInt8(count & 0xFF)
                buffer[used + 2] = UInt8(count >> 8)
                buffer[used + 3] = UInt8(inverse & 0xFF)
                buffer[used + 4] = UInt8(inverse >> 8)
                used += 5
                // Random bytes, eight at a time (xorshift64*), then the filter bytes of rows starting here.
                var position = 0
                while position < count {
                    random ^= random >> 12
                    random ^= random << 25
                    random ^= random >> 27
                    buffer.storeBytes(of: random &* 0x2545_F491_4F6C_DD1D, toByteOffset: used + position, as: UInt64.self)
                    position += 8
                }
                var rowStart = (done + rowLength - 1) / rowLength * rowLength
                while rowStart < done + count {
                    buffer[used + rowStart - done] = 0
                    rowStart += rowLength
                }
                adler(UnsafeRawBufferPointer(rebasing: buffer[used..<(used + count)]), &adlerA, &adlerB)
                used += count
                done += count
            }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<used])
            crc.update(piece)
            output.emit(piece)
        }
        let trailer = bigEndian(adlerB << 16 | adlerA)
        crc.update(trailer)
        output.emit(trailer)
        output.emit(bigEndian(crc.checksum))

        // Padding to the exact length, then the end.
        output.chunk("stPd", [UInt8](repeating: 0, count: padLength))
        output.chunk("IEND", [])
        return try output.finish()
    }

    private static func adler(_ bytes: UnsafeRawBufferPointer, _ a: inout UInt32, _ b: inout UInt32) {
        var index = 0
        while index < bytes.count {
            let end = min(index + 5_552, bytes.count)
            while index < end {
                a &+= UInt32(bytes[index])
                b &+= a
                index += 1
            }
            a %= 65_521
            b %= 65_521
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// A file written front to back and hashed on the way.
    private final class OutputFile {
        let path: String
        let descriptor: Int32
        let hasher = SHA256Hasher()
        var failure: Int32 = 0

        init(path: String) throws {
            self.path = path
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw ValidationError("cannot create \(path): \(String(cString: strerror(errno)))") }
        }

        func emit(_ bytes: UnsafeRawBufferPointer) {
            hasher.update(bytes)
            var offset = 0
            while offset < bytes.count && failure == 0 {
                let n = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    failure = errno
                    break
                }
                offset += n
            }
        }

        func emit(_ bytes: [UInt8]) { bytes.withUnsafeBytes { emit($0) } }

        func chunk(_ type: String, _ data: [UInt8]) {
            emit(LargePNG.bigEndian(UInt32(data.count)))
            let typed = Array(type.utf8) + data
            var crc = CRC32()
            crc.update(typed)
            emit(typed)
            emit(LargePNG.bigEndian(crc.checksum))
        }

        /// Flushed to disk, like a file that was there before the benchmark:
        /// its pages are not left for the kernel to write back during a transfer.
        func finish() throws -> String {
            if failure == 0, fsync(descriptor) != 0 { failure = errno }
            close(descriptor)
            guard failure == 0 else { throw ValidationError("cannot write \(path): \(String(cString: strerror(failure)))") }
            return hasher.hex()
        }
    }
}

// MARK: - Floors

/// What this machine can do at best for the steps of a transfer.
enum Floors {
    /// SHA-256 (OpenSSL EVP, in-process) over 256 KiB pieces, the daemon's
    /// chunk: MB/s over about `seconds`.
    static func sha256(seconds: Double = 1.5) -> Double {
        let piece = (0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var digest = [UInt8](repeating: 0, count: 32)
        var hashed = 0
        let start = uptimeNanoseconds()
        var elapsed = 0.0
        piece.withUnsafeBytes { bytes in
            while elapsed < seconds {
                for _ in 0..<16 {
                    var length: UInt32 = 0
                    EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
                    hashed += bytes.count
                }
                elapsed = Double(uptimeNanoseconds() - start) / 1e9
            }
        }
        return megabytesPerSecond(hashed, elapsed)
    }

    /// Writes `bytes` to a new file in `directory` in 1 MiB pieces, then
    /// fsyncs: MB/s to the page cache (write calls only) and to the disk
    /// (until fsync returns).
    static func diskWrite(in directory: String, bytes: Int) throws -> (buffered: Double, durable: Double) {
        let path = directory + "/disk-floor"
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ValidationError("cannot create \(path)") }
        defer { close(fd) }
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x1234_5678_9ABC_DEF1
        piece.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 8) {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                raw.storeBytes(of: state, toByteOffset: offset, as: UInt64.self)
            }
        }
        let start = uptimeNanoseconds()
        var written = 0
        while written < bytes {
            let want = min(piece.count, bytes - written)
            let n = piece.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, want) }
            guard n > 0 else { throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))") }
            written += n
        }
        let buffered = Double(uptimeNanoseconds() - start) / 1e9
        guard fsync(fd) == 0 else { throw ValidationError("cannot fsync \(path)") }
        let durable = Double(uptimeNanoseconds() - start) / 1e9
        return (megabytesPerSecond(bytes, buffered), megabytesPerSecond(bytes, durable))
    }

    /// `openssl s_server` and `openssl s_client` on 127.0.0.1, TLS 1.3 (the
    /// daemons' cipher suite, TLS_AES_256_GCM_SHA384), the client sending
    /// `bytes` zeros: MB/s of the whole (handshake included; two processes,
    /// like two daemons). Nil when openssl is not there or fails.
    static func tlsLoopback(in directory: String, bytes: Int) -> Double? {
        let key = directory + "/tls-floor-key.pem"
        let certificate = directory + "/tls-floor-cert.pem"
        defer {
            unlink(key)
            unlink(certificate)
        }
        let made = run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
                "/CN=storyteller-bench", "-days", "1", "-keyout", key, "-out", certificate,
            ])
        guard made == 0, let port = freeLoopbackPort() else { return nil }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-tls1_3", "-quiet",
        ]
        // Its input stays open (at end of input s_server would close the connection).
        let input = Pipe()
        server.standardInput = input
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        guard (try? server.run()) != nil else { return nil }
        defer {
            // SIGKILL: a child of this process may start with SIGTERM blocked.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
            try? input.fileHandleForWriting.close()
        }
        guard LocalDaemon.poll(every: 0.02, for: 5, until: { isListening(port) }) else { return nil }
        let start = uptimeNanoseconds()
        let status = run(
            "/bin/sh",
            [
                "-c",
                "head -c \(bytes) /dev/zero | openssl s_client -connect 127.0.0.1:\(port) -tls1_3 -nocommands >/dev/null 2>&1",
            ])
        let seconds = Double(uptimeNanoseconds() - start) / 1e9
        guard status == 0 else { return nil }
        return megabytesPerSecond(bytes, seconds)
    }

    /// The daemons' own TLS engine (`StoryTLS.TLSEngine`: OpenSSL through
    /// memory BIOs, TLS 1.3, the same copies) over a TCP connection on
    /// 127.0.0.1, one thread sending 256 KiB of plaintext at a time (a chunk)
    /// and one receiving: MB/s, without NIO, actors, framing or the disk.
    static func tlsEngineLoopback(bytes: Int) throws -> Double {
        let (client, server) = (
            try TLSContext(identity: try Identity.generate(commonName: "a")),
            try TLSContext(identity: try Identity.generate(commonName: "b"))
        )
        let sender = EngineBox(try TLSEngine(context: client, isServer: false))
        let receiver = EngineBox(try TLSEngine(context: server, isServer: true))
        // The handshake in memory, then the data over the socket.
        for _ in 0..<10 where !(sender.engine.isHandshakeComplete && receiver.engine.isHandshakeComplete) {
            _ = try sender.engine.handshake()
            sender.engine.takeCiphertext().withUnsafeBytes { receiver.engine.receive($0) }
            _ = try receiver.engine.handshake()
            receiver.engine.takeCiphertext().withUnsafeBytes { sender.engine.receive($0) }
        }
        guard sender.engine.isHandshakeComplete && receiver.engine.isHandshakeComplete else {
            throw ValidationError("the TLS floor's handshake did not complete")
        }
        guard let (out, into) = connectedLoopbackPair() else { throw ValidationError("cannot connect on 127.0.0.1") }
        defer {
            close(out)
            close(into)
        }
        let chunk = [UInt8](repeating: 0x5A, count: 256 << 10)
        let start = uptimeNanoseconds()
        let sent = DispatchSemaphore(value: 0)
        let sending = Thread {
            var done = 0
            while done < bytes {
                let count = min(chunk.count, bytes - done)
                do { try chunk.withUnsafeBytes { try sender.engine.writePlaintext(UnsafeRawBufferPointer(rebasing: $0[0..<count])) } } catch { break }
                let ciphertext = sender.engine.takeCiphertext()
                var offset = 0
                while offset < ciphertext.count {
                    let n = ciphertext.withUnsafeBytes { send(out, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { break }
                    offset += n
                }
                done += count
            }
            sent.signal()
        }
        sending.start()
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var plaintext = ByteBuffer()
        while received < bytes {
            let n = buffer.withUnsafeMutableBytes { recv(into, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { receiver.engine.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            _ = try receiver.engine.readPlaintext(into: &plaintext)
            received += plaintext.readableBytes
            plaintext.clear()
        }
        let seconds = Double(uptimeNanoseconds() - start) / 1e9
        sent.wait()
        guard received == bytes else { throw ValidationError("the TLS floor received \(received) of \(bytes) bytes") }
        return megabytesPerSecond(bytes, seconds)
    }

    /// A TLS engine handed to one thread at a time.
    private final class EngineBox: @unchecked Sendable {
        let engine: TLSEngine
        init(_ engine: TLSEngine) { self.engine = engine }
    }

    /// Two ends of a TCP connection on 127.0.0.1 (blocking sockets).
    static func connectedLoopbackPair() -> (Int32, Int32)? {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { return nil }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ready else { return nil }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard client >= 0, connected == 0 else { return nil }
        let accepted = accept(listener, nil, nil)
        guard accepted >= 0 else {
            close(client)
            return nil
        }
        return (client, accepted)
    }

    /// Runs a program to its end, its output dropped; its exit status.
    static func run(_ program: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// A TCP port on 127.0.0.1 nothing listens on (the system's choice).
    static func freeLoopbackPort() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

// MARK: - Memory

/// VmRSS of a process in MiB (nil once it is gone).
func residentMiB(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { return nil }
    return kib / 1024
}

/// Samples the resident memory of processes every `interval` on a thread of
/// its own, keeping each one's largest.
final class ResidentSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var largest: [Int32: Double] = [:]
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    init(_ pids: [Int32], every interval: Double = 0.02) {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                for pid in pids {
                    guard let value = residentMiB(of: pid) else { continue }
                    lock.withLock { largest[pid] = max(largest[pid] ?? 0, value) }
                }
                usleep(useconds_t(interval * 1e6))
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling; the largest of each process, MiB.
    func stop() -> [Int32: Double] {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { largest }
    }
}

// MARK: - Stroke latency

/// Strokes drawn on daemon a, one every `interval`, each timed until daemon
/// b's event stream (`GET /v1/events?project=`, NDJSON) says changes came
/// from the peer: stroke n is visible when b has received n changes of the
/// project since the stream opened (a `document.changed` line counts its
/// `changes`: several strokes may arrive in one group).
final class StrokeProbe: @unchecked Sendable {
    struct Sample {
        /// Before the edit request was sent, after its answer, and when b showed it (uptime ns).
        var sent: UInt64
        var answered: UInt64
        var visible: UInt64?
    }

    private let condition = NSCondition()
    /// (uptime ns, changes received so far) per event line.
    private var arrivals: [(time: UInt64, total: Int)] = []
    private var received = 0
    private var streamOpen = false
    private var streamEnded = false
    private var editing = false
    private var sent: [(sent: UInt64, answered: UInt64)] = []
    private var editorDone = DispatchSemaphore(value: 0)
    private var failure: String?

    private let editClient: ControlClient
    private let target: String
    private let body: Data

    init(a: ControlClient, b: ControlClient, project: String, layer: String) {
        editClient = a
        target = "/v1/projects/\(project)/edits"
        let points: [Double] = (0..<80).flatMap { index -> [Double] in
            [0.2 + 0.006 * Double(index), 0.5 + 0.1 * sin(Double(index) / 8), 0.4 + 0.004 * Double(index)]
        }
        body = try! JSONSerialization.data(withJSONObject: ["ops": [["op": "stroke.add", "layer": layer, "points": points]]])
        let reader = Thread { [self] in
            _ = try? b.stream("/v1/events?project=\(project)") { line in
                guard let event = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return true }
                let now = uptimeNanoseconds()
                condition.withLock {
                    if event["type"] as? String == "hello" { streamOpen = true }
                    if event["type"] as? String == "document.changed", event["origin"] as? String == "peer" {
                        received += event["changes"] as? Int ?? 1
                        arrivals.append((now, received))
                    }
                    condition.broadcast()
                }
                return true
            }
            condition.withLock {
                streamEnded = true
                condition.broadcast()
            }
        }
        reader.start()
    }

    /// Waits until b's stream said hello.
    func waitUntilOpen(timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while !streamOpen && !streamEnded { if !condition.wait(until: deadline) { break } }
            return streamOpen
        }
    }

    /// Starts drawing on a thread of its own: a stroke, then the next
    /// `interval` after the last one was sent (or at once if its answer took longer).
    func startEditing(interval: Double) {
        condition.withLock { editing = true }
        editorDone = DispatchSemaphore(value: 0)
        let done = editorDone
        let thread = Thread { [self] in
            var next = uptimeNanoseconds()
            while condition.withLock({ editing }) {
                let now = uptimeNanoseconds()
                if now < next { usleep(useconds_t((next - now) / 1000)) }
                let start = uptimeNanoseconds()
                do {
                    let response = try editClient.request("POST", target, body: body)
                    guard response.status == 200 else {
                        throw ValidationError("a stroke was refused: \(response.errorMessage ?? "\(response.status)")")
                    }
                } catch {
                    condition.withLock {
                        failure = "\(error)"
                        editing = false
                    }
                    break
                }
                let end = uptimeNanoseconds()
                condition.withLock { sent.append((start, end)) }
                next = start + UInt64(interval * 1e9)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops drawing, waits (at most `timeout`) for b to show every stroke,
    /// and returns every stroke drawn so far (since the probe began; slice
    /// from `count` taken before `startEditing`).
    func stopEditing(timeout: Double = 60) throws -> [Sample] {
        condition.withLock { editing = false }
        editorDone.wait()
        if let failure { throw ValidationError(failure) }
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while received < sent.count && !streamEnded { if !condition.wait(until: deadline) { break } }
            var samples: [Sample] = []
            var arrival = 0
            for (index, stroke) in sent.enumerated() {
                while arrival < arrivals.count && arrivals[arrival].total < index + 1 { arrival += 1 }
                samples.append(Sample(sent: stroke.sent, answered: stroke.answered, visible: arrival < arrivals.count ? arrivals[arrival].time : nil))
            }
            return samples
        }
    }

    /// Strokes sent so far.
    var count: Int { condition.withLock { sent.count } }

    /// When each stroke from index `start` on was sent (uptime ns).
    func sentTimes(from start: Int) -> [UInt64] {
        condition.withLock { sent.count > start ? sent[start...].map(\.sent) : [] }
    }
}
