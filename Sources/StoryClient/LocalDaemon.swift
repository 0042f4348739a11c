package import Foundation

/// A `storytellerd` started as a child process on 127.0.0.1 (peer port 0, so
/// the system picks a free one) with its state and socket in `directory`;
/// ready once its control socket answers. For `storyteller demo` and the
/// end-to-end benchmark.
package final class LocalDaemon {
    package struct StartFailure: Error, CustomStringConvertible {
        package let description: String
    }

    package let process = Process()
    package let client: ControlClient
    package let peerID: String
    package let port: Int
    package let directory: String

    /// Starts the daemon and waits (at most `timeout` seconds) until it serves; its
    /// output goes to `directory/daemon.log`.
    package init(binary: String, directory: String, name: String, extraArguments: [String] = [], timeout: Double = 30) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            [
                "--data-dir", directory, "--socket", directory + "/control.sock", "--listen", "127.0.0.1:0", "--name", name,
                "--log-level", "warning",
            ] + extraArguments
        // Appended to: a daemon started again in the same directory keeps the earlier log.
        if !FileManager.default.fileExists(atPath: directory + "/daemon.log") {
            _ = FileManager.default.createFile(atPath: directory + "/daemon.log", contents: nil)
        }
        let log = FileHandle(forWritingAtPath: directory + "/daemon.log")
        _ = try? log?.seekToEnd()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        client = ControlClient(path: directory + "/control.sock")
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && process.isRunning {
            if let response = try? client.get("/v1/status"), response.status == 200,
                let status = try? JSONDecoder().decode(Listening.self, from: response.body), let port = status.listenPort
            {
                self.port = port
                self.peerID = status.peerID
                return
            }
            usleep(20_000)
        }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        throw StartFailure(description: "storytellerd \(name) did not start; see \(directory)/daemon.log")
    }

    /// Checks `condition` every `interval` seconds for at most `seconds`
    /// (a throwing check counts as not yet); whether it came true.
    package static func poll(every interval: Double, for seconds: Double, until condition: () throws -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? condition()) == true { return true }
            usleep(useconds_t(interval * 1_000_000))
        }
        return false
    }

    /// SIGTERM, then waits for the graceful exit (SIGKILL after `timeout`
    /// seconds). Returns the seconds it took and the exit status.
    @discardableResult
    package func stop(timeout: Double = 20) -> (seconds: Double, status: Int32) {
        let start = Date()
        guard process.isRunning else { return (0, process.terminationStatus) }
        process.terminate()
        while process.isRunning && Date().timeIntervalSince(start) < timeout { usleep(5_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (Date().timeIntervalSince(start), process.terminationStatus)
    }

    /// What `/v1/status` says of where the daemon listens.
    private struct Listening: Decodable {
        let peerID: String
        let listenPort: Int?
    }

    /// Sends a request with an encoded body (the API's request types); the
    /// answer decoded as `answer`, or an error with the daemon's message.
    @discardableResult
    package func call<Answer: Decodable>(
        _ answer: Answer.Type, _ method: String, _ target: String, body: (any Encodable)? = nil
    ) throws -> Answer {
        let data = try raw(method, target, body: try body.map { try JSONEncoder().encode($0) })
        return try JSONDecoder().decode(answer, from: data)
    }

    /// Sends a request; the answer's body if it succeeded.
    package func raw(_ method: String, _ target: String, body: Data? = nil) throws -> Data {
        let response = try client.request(method, target, body: body)
        guard (200..<300).contains(response.status) else {
            throw StartFailure(description: "\(method) \(target): \(response.errorMessage ?? "status \(response.status)")")
        }
        return response.body
    }
}
