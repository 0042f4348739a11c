import Dispatch
import Foundation
import StoryClient
import StoryTestSupport
import Synchronization
import Testing

/// One daemon per data directory, its state private to its user, and a
/// control socket that answers bad and bursty clients well (issue 10).
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct SingleInstanceTests {
    @Test func aSecondDaemonOnTheSameDataDirectoryStopsAndLeavesTheFirstAlone() async throws {
        let first = try await StartedDaemon.start(name: "first")
        defer { first.stop() }
        let project = try await first.cli("projects", "create", "Kept").output.trimmingCharacters(in: .whitespacesAndNewlines)
        // Same directory (so the same socket beside it): refused before the socket is touched.
        let second = try DaemonProcess(arguments: ["--data-dir", first.home.path, "--listen", "127.0.0.1:0"], environment: [:])
        defer { second.kill() }
        #expect(try await second.waitForExit() == 1)
        #expect(second.errors.contains("another storytellerd (pid \(first.daemon.pid)) is already using \(first.home.path)"), "\(second.errors)")
        #expect(FileManager.default.fileExists(atPath: first.socket), "the running daemon's socket is still there")
        #expect(try first.client.get("/v1/projects/\(project)").status == 200, "the first daemon still answers")
        // Another directory but the first daemon's socket: refused, the socket left alone.
        let other = try TemporaryDirectory()
        defer { other.remove() }
        let third = try DaemonProcess(
            arguments: ["--data-dir", other.path, "--socket", first.socket, "--listen", "127.0.0.1:0"], environment: [:])
        defer { third.kill() }
        #expect(try await third.waitForExit() == 1)
        #expect(third.errors.contains("another daemon is serving the control socket"), "\(third.errors)")
        #expect(try first.client.get("/v1/status").status == 200)
        #expect(try await first.daemon.terminate() == 0)
        // Once it stopped (even by SIGKILL, the lock goes with the process), the directory is free again.
        let again = try await StartedDaemon.start(in: first.home, name: "again")
        defer { again.stop() }
        again.daemon.kill()
        _ = try await again.daemon.waitForExit()
        let fourth = try await StartedDaemon.start(in: first.home, name: "fourth")
        defer { fourth.stop() }
        #expect(try fourth.client.get("/v1/projects/\(project)").status == 200)
    }

    @Test func theStateIsPrivateToTheDaemonsUser() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.path)
        let started = try await StartedDaemon.start(in: home)
        defer { started.stop() }
        #expect(try await started.cli("projects", "create", "Private").status == 0)
        func mode(_ path: String) throws -> Int { try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1 }
        #expect(try mode(home.path) == 0o700, "an existing data directory is made private")
        for file in ["storyteller.sqlite", "storyteller.sqlite-wal", "storyteller.sqlite-shm", "lock", "identity/key.pem"]
        where FileManager.default.fileExists(atPath: home.path + "/" + file) {
            #expect(try mode(home.path + "/" + file) & 0o077 == 0, "\(file) is readable by others")
        }
        #expect(try mode(home.path + "/storyteller.sqlite") == 0o600)
    }

    @Test func malformedHTTPIsAnsweredInTheAPIsErrorShape() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        for garbage in ["GARBAGE\r\n\r\n", "GET /v1/status HTTP/9.9\r\nHost: x\r\n\r\n", "\u{1}\u{2}\u{3}\r\n\r\n"] {
            let answer = try rawExchange(started.socket, Array(garbage.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(garbage.debugDescription) → \(answer)")
            let body = answer.components(separatedBy: "\r\n\r\n").dropFirst().joined()
            let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            #expect((json?["error"] as? [String: Any])?["code"] as? String == "bad_request", "\(answer)")
        }
        #expect(started.daemon.errors.contains("malformed HTTP on the control socket"), "refusals are logged")
        #expect(try started.client.get("/v1/status").status == 200, "still serving")
    }

    @Test func aBurstOfClientsIsServed() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let socket = started.socket
        let statuses = Mutex([Int](repeating: 0, count: 400))
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            let status = (try? ControlClient(path: socket).get("/v1/status").status) ?? -1
            statuses.withLock { $0[index] = status }
        }
        let failed = statuses.withLock { $0.filter { $0 != 200 } }
        #expect(failed.isEmpty, "refused: \(failed.count) of 400")
    }

    @Test func namesWithControlCharactersAreRefusedAndNothingIsCut() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        for name in ["Night\u{0}Train", "two\nlines", "bell\u{7}"] {
            let data = try JSONSerialization.data(withJSONObject: ["name": name])
            let answer = try started.client.post("/v1/projects", json: String(decoding: data, as: UTF8.self))
            #expect(answer.status == 400, "\(name.debugDescription)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("control characters"))
        }
        #expect(try await started.cli("projects").output.contains("Night") == false, "nothing was created")
        // A name that is fine, with non-ASCII letters, comes back whole.
        let created = try #require(try await started.json("projects", "create", "Nuit d’été — 夜") as? [String: Any])
        #expect(created["name"] as? String == "Nuit d’été — 夜")
    }

    /// Writes `bytes` to the socket and reads until the daemon closes it.
    private func rawExchange(_ path: String, _ bytes: [UInt8]) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TimedOut(description: "no socket") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw TimedOut(description: "cannot connect to \(path)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
