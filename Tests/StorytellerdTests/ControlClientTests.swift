import Foundation
import StoryClient
import Synchronization
import Testing

/// What the CLI's client says when a daemon is there but does not answer as
/// it should: a wait that runs out and a connection closed without an answer
/// are different failures, each said in words.
@Suite struct ControlClientTests {
    /// A Unix socket that accepts connections and then does what `serve` does with them.
    private final class SilentServer: Sendable {
        let path: String
        private let fd: Int32
        private let accepted = Mutex<[Int32]>([])

        init() throws {
            (path, fd) = try listeningUnixSocket(named: "cc")
        }

        /// Accepts one connection on a thread; closes it at once when `closeAtOnce`, else holds it.
        func acceptOne(closeAtOnce: Bool) {
            let listening = fd
            Thread {
                let connection = accept(listening, nil, nil)
                if closeAtOnce { close(connection) } else { self.hold(connection) }
            }.start()
        }

        private func hold(_ connection: Int32) { accepted.withLock { $0.append(connection) } }

        func stop() {
            for connection in accepted.withLock({ $0 }) { close(connection) }
            close(fd)
            unlink(path)
        }
    }

    @Test func aDaemonThatDoesNotAnswerInTimeIsSaidToBeBusyNotSilent() throws {
        let server = try SilentServer()
        defer { server.stop() }
        server.acceptOne(closeAtOnce: false)
        let started = ContinuousClock.now
        let error = #expect(throws: ControlClient.Failure.self) {
            try ControlClient(path: server.path).request("GET", "/v1/status", timeoutSeconds: 1)
        }
        #expect(error?.description.contains("did not answer GET /v1/status within 1 s") == true, "\(String(describing: error))")
        #expect(error?.isUnreachable == false, "it is there: a busy daemon is not an unreachable one")
        #expect(ContinuousClock.now - started < .seconds(10), "the timeout bounds the wait")
    }

    @Test func aConnectionClosedWithoutAnAnswerIsSaidSo() throws {
        let server = try SilentServer()
        defer { server.stop() }
        server.acceptOne(closeAtOnce: true)
        let error = #expect(throws: ControlClient.Failure.self) {
            try ControlClient(path: server.path).request("GET", "/v1/status", timeoutSeconds: 5)
        }
        #expect(error?.description.contains("no HTTP response from the daemon") == true, "\(String(describing: error))")
    }
}
