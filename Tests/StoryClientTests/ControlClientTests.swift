import Foundation
import StoryClient
import StoryTestSupport
import Synchronization
import Testing

/// The CLI's hand-written HTTP/1.1 client on a Unix socket, against a
/// server that answers exactly the bytes each test gives (what Hummingbird
/// sends is covered end to end in StorytellerdTests): framing, chunked
/// bodies, errors in the API's shape, and failures in words.
@Suite struct ControlClientTests {
    /// Listens on a Unix socket in `directory`, answers each of `answers`
    /// to one connection in turn (after reading the request head), and
    /// records the requests.
    final class FakeDaemon: Sendable {
        let path: String
        let requests = Mutex<[String]>([])
        private let fd: Int32

        init(in directory: TemporaryDirectory, answers: [[UInt8]]) throws {
            path = directory.file("control.sock")
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, byte) in path.utf8.enumerated() { raw[i] = byte } }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(fd, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
            let listener = fd
            Thread { [self] in
                for answer in answers {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }
                    var head: [UInt8] = []
                    var byte: UInt8 = 0
                    while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), recv(connection, &byte, 1, 0) == 1 { head.append(byte) }
                    self.requests.withLock { $0.append(String(decoding: head, as: UTF8.self)) }
                    _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    close(connection)
                }
            }.start()
        }

        deinit { close(fd) }
    }

    static func answer(_ text: String) -> [UInt8] { Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8) }

    @Test func aChunkedAnswerIsReadWhole() async throws {
        let directory = try TemporaryDirectory()
        let body = #"{"projects":2}"#
        let chunked =
            "HTTP/1.1 200 OK\ncontent-type: application/json\ntransfer-encoding: chunked\n\n"
            + "5\n" + body.prefix(5) + "\n" + String(body.count - 5, radix: 16) + "\n" + body.dropFirst(5) + "\n0\n\n"
        let daemon = try FakeDaemon(in: directory, answers: [Self.answer(chunked)])
        let response = try await offThePool { try ControlClient(path: daemon.path).get("/v1/status") }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(response.headers["content-type"] == "application/json")
        let request = try #require(daemon.requests.withLock { $0.first })
        #expect(request.hasPrefix("GET /v1/status HTTP/1.1\r\n"), "\(request)")
    }

    @Test func anErrorAnswerGivesItsCodeAndMessage() async throws {
        let directory = try TemporaryDirectory()
        let body = #"{"error":{"code":"not_found","message":"no project 7","field":"project","problem":"is unknown"}}"#
        let daemon = try FakeDaemon(
            in: directory, answers: [Self.answer("HTTP/1.1 404 Not Found\ncontent-length: \(body.utf8.count)\n\n") + Array(body.utf8)])
        let response = try await offThePool { try ControlClient(path: daemon.path).get("/v1/projects/7") }
        #expect(response.status == 404)
        #expect(response.errorCode == "not_found")
        #expect(response.errorMessage == "no project 7")
    }

    @Test func nothingListeningIsUnreachableAndSaysWhere() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("nobody.sock")
        do {
            _ = try await offThePool { try ControlClient(path: path).get("/v1/status") }
            Issue.record("a request to a socket nobody listens on succeeded")
        } catch let failure as ControlClient.Failure {
            #expect(failure.isUnreachable)
            #expect(failure.description.contains(path), "\(failure.description)")
        }
    }

    @Test func theSocketIsFoundFromTheEnvironmentAsTheDaemonPlacesIt() {
        #expect(
            ControlClient.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/ana"])
                == "/run/user/1000/storyteller/control.sock")
        #expect(ControlClient.defaultSocketPath(environment: ["HOME": "/home/ana"]) == "/home/ana/.local/share/storyteller/control.sock")
        #expect(ControlClient.defaultSocketPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/ana"]) == "/data/storyteller/control.sock")
        // A relative XDG path is not one (the spec says to ignore it).
        #expect(
            ControlClient.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "run", "HOME": "/home/ana"])
                == "/home/ana/.local/share/storyteller/control.sock")
        #expect(ControlClient.systemSocketPath(environment: [:]) == "/run/storyteller/control.sock")
        #expect(ControlClient.systemSocketPath(environment: ["STORYTELLER_SYSTEM_SOCKET": "/tmp/s.sock"]) == "/tmp/s.sock")
    }

    @Test func locateTakesTheUsersDaemonThenTheSystemOne() throws {
        let directory = try TemporaryDirectory()
        let user = ["XDG_RUNTIME_DIR": directory.path, "HOME": directory.path, "STORYTELLER_SYSTEM_SOCKET": directory.file("system.sock")]
        // Neither exists: the user daemon's, and both are named as searched.
        let none = ControlClient.locate(environment: user)
        #expect(none.path == directory.path + "/storyteller/control.sock")
        #expect(none.searched == [directory.path + "/storyteller/control.sock", directory.file("system.sock")])
        // Only the system daemon's socket exists: that one.
        let system = try FakeDaemon(in: directory, answers: [])
        let environment = user.merging(["STORYTELLER_SYSTEM_SOCKET": system.path]) { $1 }
        #expect(ControlClient.locate(environment: environment).path == system.path)
    }
}
