import Foundation
import StoryClient
import StoryDaemon
import StoryTestSupport
import Testing

/// The optional Prometheus listener (`metrics-listen`): loopback TCP only,
/// the control API's registry, per-peer series and round-trip histograms.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct MetricsListenerTests {
    /// A GET over a real TCP connection to 127.0.0.1 (a scraper's view).
    private func get(port: Int, path: String) throws -> (status: Int, headers: [String: String], body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TimedOut(description: "socket failed") }
        defer { close(fd) }
        // As long as the suite's other waits for a daemon's answer: with six tests at a time on
        // two slow cores, an in-process daemon took over 5 s to answer (CI, 2026-11-26).
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TimedOut(description: "cannot connect to 127.0.0.1:\(port)") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// The metric families (`# TYPE` lines) of an exposition.
    private func families(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map(String.init))
    }

    @Test func theListenerServesTheControlAPIsMetricsOverLoopbackTCP() async throws {
        let started = try await InProcessDaemon.start(in: try TemporaryDirectory()) {
            try $0.set("metrics-listen", to: "127.0.0.1:0", source: "test")
        }
        let port = try await boundPort(of: started.daemon)
        // Read second: other tests in this process may add families to the one registry meanwhile, never remove them.
        let control = try await started.get("/v1/metrics")
        // Blocking reads of an in-process daemon run on their own thread: on the
        // cooperative pool (two threads here) they could starve the daemon itself
        // while another test blocks the other thread.
        let scraped = try await offThePool { try get(port: port, path: "/metrics") }
        #expect(scraped.status == 200)
        #expect(scraped.headers["content-type"] == "text/plain; version=0.0.4")
        #expect(scraped.body.contains("storyteller_build_info{version="))
        let controlFamilies = families(String(decoding: control.body, as: UTF8.self))
        #expect(controlFamilies.count > 5 && controlFamilies.isSubset(of: families(scraped.body)), "one registry, one text")
        #expect(try await offThePool { try get(port: port, path: "/v1/status") }.status == 404, "nothing but /metrics")
        try await started.stop()
        await #expect(throws: (any Error).self, "the listener closes with the daemon") {
            try await offThePool { try get(port: port, path: "/metrics") }
        }
    }

    @Test func withoutTheSettingThereIsNoListener() async throws {
        let started = try await InProcessDaemon.start()
        #expect(started.daemon.metricsPort == nil)
        try await started.stop()
    }

    @Test(arguments: ["127.0.0.1:9464", "127.1.2.3:9464", "localhost:9464", "[::1]:9464", "::1:0"])
    func aLoopbackAddressIsAccepted(text: String) throws {
        var settings = DaemonSettings()
        try settings.set("metrics-listen", to: text, source: "test")
        #expect(settings.metricsListen?.isLoopback == true)
    }

    @Test(arguments: ["0.0.0.0:9464", "10.0.0.5:9464", "192.168.1.20:9464", "[::]:9464", "[fd00::1]:9464", "metrics.example.com:9464"])
    func anyOtherAddressIsRefusedSayingWhy(text: String) {
        var settings = DaemonSettings()
        do {
            try settings.set("metrics-listen", to: text, source: "storytellerd.toml:4")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.hasPrefix("storytellerd.toml:4: 'metrics-listen' '\(text)' is not a loopback address"))
            #expect(error.description.contains("no authentication"))
        }
    }

    @Test func anEmptyAddressIsNoListenerAndABadOneIsAnError() throws {
        var settings = DaemonSettings()
        try settings.set("metrics-listen", to: "127.0.0.1:9464", source: "file")
        try settings.set("metrics-listen", to: "", source: "--metrics-listen")
        #expect(settings.metricsListen == nil)
        #expect(throws: ConfigError.self) { try settings.set("metrics-listen", to: "127.0.0.1", source: "test") }
        #expect(throws: ConfigError.self) { try settings.set("metrics-listen", to: "127.0.0.1:70000", source: "test") }
    }

    @Test func aPortInUseStopsTheDaemonSayingWhich() async throws {
        let blocker = try TCPListener()
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:\(blocker.port)"], environment: [:])
        defer { daemon.kill() }
        #expect(try await daemon.waitForExit() == 1)
        #expect(daemon.errors.contains("metrics-listen 127.0.0.1:\(blocker.port): port \(blocker.port) is in use"), "\(daemon.errors)")
    }

    /// Two daemons that sync: each one's metrics have series per peer, its
    /// id's first group as the label, and its name on `storyteller_peer_up`.
    @Test func perPeerSeriesAndRoundTripHistogramsAfterASync() async throws {
        let a = try await StartedDaemon.start(name: "a", ["--metrics-listen", "127.0.0.1:0"])
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (aID, bID) = (try a.peerID(), try b.peerID())
        #expect(try await a.cli("peers", "add", bID, "--address", "127.0.0.1:\(try b.port())", "--name", "bob").status == 0)
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())").status == 0)
        let project = try await a.cli("projects", "create", "Measured").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try b.client.get("/v1/projects/\(project)").status == 200 }
        #expect(try await a.cli("scenes", "add", project, "--title", "Timed").status == 0)

        let line = try #require(a.daemon.errors.split(separator: "\n").first { $0.contains("serving metrics on http://127.0.0.1:") })
        let port = try #require(line.firstMatch(of: /127\.0\.0\.1:(\d+)\/metrics/).flatMap { Int($0.1) })
        let short = String(bID.prefix(7))
        func value(_ series: String, _ text: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        var text = ""
        try await eventually("b acknowledged the scene") {
            text = try get(port: port, path: "/metrics").body
            return (value("storyteller_peer_ack_seconds_count{peer=\"\(short)\"}", text) ?? 0) >= 1
        }
        #expect(value("storyteller_peer_up{peer=\"\(short)\",name=\"bob\"}", text) == 1, "\(text)")
        #expect((value("storyteller_peer_sent_bytes_total{peer=\"\(short)\"}", text) ?? 0) > 0)
        #expect((value("storyteller_peer_received_bytes_total{peer=\"\(short)\"}", text) ?? 0) > 0)
        #expect(text.contains("# TYPE storyteller_peer_ack_seconds histogram"))
        #expect(text.contains("storyteller_peer_ack_seconds_bucket{peer=\"\(short)\",le=\"5.0\"}"))
        #expect(value("storyteller_peer_ping_rtt_seconds_count{peer=\"\(short)\"}", text) != nil, "the ping histogram exists from the start")

        // Once b is gone its series says so (the id stays, so rates can be computed across reconnects).
        b.daemon.kill()
        try await eventually("a sees b disconnected") {
            value("storyteller_peer_up{peer=\"\(short)\",name=\"bob\"}", try get(port: port, path: "/metrics").body) == 0
        }
    }

    /// The bound port of a daemon's metrics listener, once it listens (at most 10 s).
    private func boundPort(of daemon: Daemon) async throws -> Int {
        var port: Int?
        try await eventually("the metrics listener is bound", timeout: .seconds(10)) {
            port = daemon.metricsPort
            return port != nil
        }
        return try #require(port)
    }
}

/// A TCP socket listening on 127.0.0.1 (a port in use), closed on deinit.
final class TCPListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TimedOut(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw TimedOut(description: "cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
