import Foundation
import Logging
import StoryAPI
import StoryClient
import StoryCore
import StoryStore
import StoryTestSupport
import Synchronization
import Testing

@testable import StoryDaemon

/// `storyteller export html` and `storyteller preview`, end to end: a real
/// daemon, the CLI, and the page as headless Chromium shows it (screenshots
/// sampled for the strokes, the DOM after the page has played a while).
@Suite(.daemons, .timeLimit(.minutes(15))) struct SlideshowTests {
    /// A project of two shots: 1-1 (1 s, a red stroke, a caption that tries
    /// to run a script, dialogue, a sound) and 1-2 (no duration, a green stroke).
    private func board(on started: StartedDaemon, files: TemporaryDirectory) async throws -> String {
        let project = try await started.cli("projects", "create", "Night <Train>").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await started.cli("scenes", "add", project).status == 0)
        let caption = #"Wide <script>document.title="pwned"</script> & "fog""#
        #expect(
            try await started.cli("shots", "add", project, "1", "--caption", caption, "--dialogue", "Anyone there?", "--duration", "1").status == 0)
        #expect(try await started.cli("shots", "add", project, "1", "--caption", "Close on her hand").status == 0)
        for (shot, colour, points) in [("1-1", "#e01010", "[0.1,0.5,0.8,0.9,0.5,0.8]"), ("1-2", "#10b010", "[0.5,0.1,0.8,0.5,0.9,0.8]")] {
            #expect(try await started.cli("layers", "add", project, shot, "--name", "ink").status == 0)
            let drawn = try await started.cli("strokes", "add", project, "\(shot)/ink", "--points", points, "--color", colour, "--width", "0.05")
            #expect(drawn.status == 0, "\(drawn.errors)")
        }
        let sound = files.path + "/whistle.wav"
        try Data(TestMedia.wav(seconds: 0.5, seed: 3)).write(to: URL(fileURLWithPath: sound))
        #expect(try await started.cli("sound", "set", project, "1-1", sound).status == 0)
        return project
    }

    @Test(.requires("chromium")) func theExportedPagePlaysTheBoardsInChromiumWithNothingFromTheNetwork() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let project = try await board(on: started, files: files)

        let page = files.path + "/board.html"
        let exported = try await started.cli("export", "html", project, "--out", page)
        #expect(exported.status == 0, "\(exported.errors)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Self-contained: every picture and sound is inline, and the CSP forbids fetching anything.
        #expect(html.contains(#"content="default-src &#39;none&#39;; script-src &#39;sha256-"#))
        #expect(html.contains("img-src data:; media-src data:; connect-src &#39;none&#39;"))
        let sources = html.matches(of: /\ssrc="([^"]*)"/).map { String($0.output.1) }
        #expect(sources.count == 3 && sources.allSatisfy { $0.hasPrefix("data:image/png;base64,") || $0.hasPrefix("data:audio/wav;base64,") })
        #expect(!html.contains("http://") && !html.contains("https://"))
        // 1-1 runs its 1 s, 1-2 (no duration) the default 2 s; the timeline marks both.
        #expect(html.contains(#"id="shot-1" data-shot="#) && html.matches(of: /data-duration="1"/).count == 2)
        #expect(html.matches(of: /data-duration="2"/).count == 2 && html.contains("0:00 / 0:03"))

        let chromium = try Chromium()
        defer { chromium.remove() }
        // At load: the first board (its red stroke), not the second (green).
        // (The timeline's playhead is red too, but a few dozen pixels, not a stroke's thousands.)
        let first = try await chromium.screenshot("file://" + page)
        #expect(first.count(where: \.isReddish) > 500 && first.count(where: \.isGreenish) == 0)
        // `#2` opens the second shot.
        let second = try await chromium.screenshot("file://" + page + "#2")
        #expect(second.count(where: \.isGreenish) > 500 && second.count(where: \.isReddish) < 100)
        // Played for 1.5 s of (virtual) time: the first shot lasts 1 s, so the second is showing.
        let played = try await chromium.dom("file://" + page, virtualMilliseconds: 1_500)
        #expect(played.contains(#"<figure class="slide current" id="shot-2""#), "\(played.prefix(3_000))")
        // The caption is text on the page, and its script never ran.
        #expect(played.contains(#"Wide &lt;script&gt;document.title="pwned"&lt;/script&gt; &amp; "fog""#))
        #expect(played.contains("<title>Night &lt;Train&gt; · storyboard</title>") && !played.contains("<title>pwned"))

        // The directory form: the same page with its panels and sound as files beside it.
        let directory = files.path + "/board"
        let written = try await started.cli("export", "html", project, "--out", directory)
        #expect(written.status == 0, "\(written.errors)")
        for file in ["index.html", "panels/1-1.png", "panels/1-2.png", "sounds/1-1.wav"] {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + file), "\(file)")
        }
        let fromFiles = try await chromium.screenshot("file://" + directory + "/index.html")
        #expect(fromFiles.count(where: \.isReddish) > 500)
    }

    @Test(.requires("chromium")) func thePreviewNeedsItsTokenUpdatesLiveAndClosesWithTheCLI() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let project = try await board(on: started, files: files)

        let preview = try CLIProcess(["preview", project, "--socket", started.socket])
        defer { preview.kill() }
        let printed = try await preview.waitForOutput(containing: "/\n", timeout: .seconds(10))
        let match = try #require(printed.firstMatch(of: /http:\/\/127\.0\.0\.1:(\d+)\/([A-Za-z0-9_-]{43})\//))
        let port = try #require(Int(match.output.1))
        let token = String(match.output.2)

        // Only on loopback: the one listening socket on that port is 127.0.0.1's.
        var listening: [String] = []
        try await eventually("the preview's socket is listed as listening", timeout: .seconds(30)) {
            listening = try listeningAddresses(port: port, of: started.daemon.pid)
            return !listening.isEmpty
        }
        #expect(!listening.isEmpty && listening.allSatisfy { $0 == "0100007F" }, "\(listening)")
        #expect(try await LoopbackHTTP.get(port: port, "/\(token)/").status == 200)
        #expect(try await LoopbackHTTP.get(port: port, "/").status == 403)
        #expect(try await LoopbackHTTP.get(port: port, "/\(String(token.reversed()))/").status == 403)
        #expect(try await LoopbackHTTP.get(port: port, "/\(token.dropLast())/").status == 403)
        #expect(try await LoopbackHTTP.get(port: port, "/\(token)/", host: "attacker.example").status == 403, "DNS rebinding")

        // The sound can be sought in: a range of it is a 206 with exactly those bytes of the file.
        let page = try await LoopbackHTTP.get(port: port, "/\(token)/").body
        let soundPath = try #require(page.firstMatch(of: /src="(sounds\/[0-9a-f]+)"/)).output.1
        let wholeSound = try await LoopbackHTTP.getBytes(port: port, "/\(token)/\(soundPath)")
        #expect(wholeSound.status == 200 && Self.header("accept-ranges", in: wholeSound.answer) == "bytes")
        let soundBytes = Self.body(of: wholeSound.answer)
        #expect(soundBytes.count > 1_000 && soundBytes.starts(with: Array("RIFF".utf8)))
        let part = try await LoopbackHTTP.getBytes(port: port, "/\(token)/\(soundPath)", range: "bytes=100-299")
        #expect(part.status == 206 && Self.header("content-range", in: part.answer) == "bytes 100-299/\(soundBytes.count)")
        #expect(Self.body(of: part.answer) == Array(soundBytes[100..<300]))
        let past = try await LoopbackHTTP.getBytes(port: port, "/\(token)/\(soundPath)", range: "bytes=\(soundBytes.count)-")
        #expect(past.status == 416 && Self.header("content-range", in: past.answer) == "bytes */\(soundBytes.count)")

        // Chromium shows the first board from the listener (CSP 'self').
        let browser = try Chromium()
        defer { browser.remove() }
        let shown = try await browser.screenshot("http://127.0.0.1:\(port)/\(token)/")
        #expect(shown.count(where: \.isReddish) > 500)

        // A stroke drawn through the CLI is pushed to the page's event stream
        // (how fast is the benchmarks' business, not a test's on a loaded machine).
        let events = try LoopbackHTTP.Stream(port: port, "/\(token)/events")
        defer { events.close() }
        _ = try await events.read(until: "storyteller preview", timeout: .seconds(5))
        let drawn = try await started.cli("strokes", "add", project, "1-2/ink", "--points", "[0.2,0.2,0.5,0.3,0.3,0.5]")
        #expect(drawn.status == 0)
        let received = try await events.read(until: "event: shot", timeout: .seconds(15))
        #expect(received.contains("event: shot"))

        // Ctrl-C: the CLI closes the preview and the port refuses connections.
        #expect(try await preview.interrupt() == 0)
        try await eventually("the preview port refuses connections", timeout: .seconds(3)) { !LoopbackHTTP.accepts(port: port) }
        #expect(try started.client.get("/v1/previews").body == Data("[]".utf8))
    }

    /// The body of a whole HTTP answer (after the blank line; the sound answers are not chunked).
    static func body(of answer: [UInt8]) -> [UInt8] {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, answer.count - 3)).first(where: { Array(answer[$0..<$0 + 4]) == separator }) else { return [] }
        return Array(answer[(end + 4)...])
    }

    /// A header's value in a whole HTTP answer (names compared without case).
    static func header(_ name: String, in answer: [UInt8]) -> String? {
        let head = String(decoding: answer.prefix(4_096), as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    @Test func aPreviewClosesWhenItsCLIIsKilledOrTheDaemonStops() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let project = try await board(on: started, files: files)
        // The CLI killed outright (no DELETE): the daemon sees its held stream close.
        let preview = try CLIProcess(["preview", project, "--socket", started.socket])
        defer { preview.kill() }
        let printed = try await preview.waitForOutput(containing: "/\n", timeout: .seconds(10))
        let port = try #require(printed.firstMatch(of: /127\.0\.0\.1:(\d+)\//).flatMap { Int($0.output.1) })
        #expect(LoopbackHTTP.accepts(port: port))
        // Killed once it holds the preview (before that, the 30 s lease for unheld previews applies).
        try await eventually("the CLI holds the preview", timeout: .seconds(5)) {
            String(decoding: try started.client.get("/v1/previews").body, as: UTF8.self).contains(#""held":true"#)
        }
        preview.kill()
        let killed = ContinuousClock.now
        // Noticed at the next heartbeat line or the one after (half a second
        // apart); a full parallel run on two cores (Chromium, ffmpeg and
        // dozens of daemons at once) has taken over 15 s, so the bound is wide
        // and a failure says which step was slow.
        var listedUntil: Duration?
        do {
            try await eventually("the preview port refuses connections", timeout: .seconds(45)) {
                if listedUntil == nil, !String(decoding: try started.client.get("/v1/previews").body, as: UTF8.self).contains(#""held":true"#) {
                    listedUntil = ContinuousClock.now - killed
                }
                return !LoopbackHTTP.accepts(port: port)
            }
        } catch {
            let open = String(decoding: try started.client.get("/v1/previews").body, as: UTF8.self)
            let listening =
                (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8))?
                .split(separator: "\n").filter { $0.contains(String(format: ":%04X 00000000:0000 0A", port)) } ?? []
            Issue.record(
                """
                held preview listed until \(listedUntil.map { "\($0)" } ?? "the end") after the kill; open previews: \(open); \
                listeners on the port: \(listening); the daemon said: \(started.daemon.output.suffix(2_000)) \(started.daemon.errors.suffix(2_000))
                """)
            throw error
        }
        // A bad preview id is a 404, never a crash.
        #expect(try started.client.request("DELETE", "/v1/previews/..%2F").status == 404)
        #expect(try started.client.get("/v1/previews/nothing/hold").status == 404)

        // A daemon stopping with a preview open stops at once (the held stream
        // ends with the preview), and the CLI says the daemon closed it.
        let second = try CLIProcess(["preview", project, "--socket", started.socket])
        defer { second.kill() }
        _ = try await second.waitForOutput(containing: "/\n", timeout: .seconds(10))
        try await eventually("the CLI holds the preview", timeout: .seconds(5)) {
            String(decoding: try started.client.get("/v1/previews").body, as: UTF8.self).contains(#""held":true"#)
        }
        Foundation.kill(started.daemon.pid, SIGTERM)
        // Well under the 20 s the control server would wait for a held stream (a loaded machine
        // takes a few seconds to stop; the wait does not count a stall of this test process).
        #expect(try await started.daemon.waitForExit(timeout: .seconds(12)) == 0, "not the 20 s the control server would wait for a held stream")
        _ = try await second.waitForOutput(containing: "the daemon closed the preview", timeout: .seconds(5))
    }

    @Test func aPreviewNobodyHoldsClosesAfterItsLease() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.path + "/storyteller.sqlite", identity: TestIdentities.signing())
        let blobs = try BlobStore(directory: directory.path + "/blobs")
        let project = try await store.createDocument(kind: .project, name: "Lease", at: 0)
        let registry = PreviewRegistry(
            source: SlideshowSource(store: store, blobs: blobs, renderer: PanelRenderService()), unheldLease: .seconds(20),
            logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await registry.run() }
            let preview = try await registry.open(project)
            #expect(preview.url == "http://127.0.0.1:\(preview.port)/\(preview.token)/" && !preview.held)
            #expect(LoopbackHTTP.accepts(port: preview.port) && registry.list() == [preview])
            try await eventually("the unheld preview closes", timeout: .seconds(60)) { !LoopbackHTTP.accepts(port: preview.port) }
            #expect(registry.list().isEmpty && registry.close(preview.id) == nil)
            group.cancelAll()
        }
    }

    @Test func userTextIsEscapedAndTheTokenComparedWhole() throws {
        #expect(SlideshowPage.escaped(#"<img src=x onerror="a()"> & 'b'"#) == "&lt;img src=x onerror=&quot;a()&quot;&gt; &amp; &#39;b&#39;")
        let token = PreviewToken()
        #expect(token.description.count == 43 && token.matches(token.description))
        #expect(!token.matches(token.description.dropLast()) && !token.matches(token.description + "A") && !token.matches(""))
        #expect(!API.Slideshow.isFilePath("../x.png") && !API.Slideshow.isFilePath("panels/../../x") && !API.Slideshow.isFilePath("/etc/passwd"))
        #expect(API.Slideshow.isFilePath("panels/1-2.png") && API.Slideshow.isFilePath("sounds/1-1.wav"))
    }
}

/// The local addresses of listening TCP sockets on `port`, as /proc lists
/// them (hex), from the daemon's network namespace and the test runner's
/// (other suites move threads between namespaces; either may hold it).
private func listeningAddresses(port: Int, of pid: Int32) throws -> [String] {
    var found: [String] = []
    for file in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6", "/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, fields[3] == "0A" else { continue }  // LISTEN
            let local = fields[1].split(separator: ":")
            if local.count == 2, Int(local[1], radix: 16) == port, !found.contains(String(local[0])) { found.append(String(local[0])) }
        }
    }
    return found
}

extension RasterImage {
    /// How many pixels satisfy `condition` (every 2nd pixel of every 2nd row, enough for strokes 40 px wide).
    func count(where condition: (Pixel) -> Bool) -> Int {
        stride(from: 0, to: width, by: 2).reduce(0) { total, x in
            total
                + stride(from: 0, to: height, by: 2).filter {
                    condition(self.pixel(atFraction: Double(x) / Double(width), Double($0) / Double(height)))
                }.count
        }
    }
}

/// Headless Chromium (Debian's `chromium`), each run with a profile of its
/// own and a time limit, killed if it overstays. `remove()` deletes the
/// profile and the screenshots.
struct Chromium {
    let profile: TemporaryDirectory

    init() throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "install Debian's chromium (.ci/run does)")
        profile = try TemporaryDirectory()
    }

    func remove() { profile.remove() }

    /// A 1000 × 640 screenshot of `url`, decoded.
    func screenshot(_ url: String) async throws -> RasterImage {
        let file = profile.path + "/shot-\(UUID()).png"
        _ = try await run(["--screenshot=\(file)", "--window-size=1000,640", "--hide-scrollbars", url])
        return try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
    }

    /// The DOM of `url` after it ran for `virtualMilliseconds` of virtual time.
    func dom(_ url: String, virtualMilliseconds: Int) async throws -> String {
        try await run(["--virtual-time-budget=\(virtualMilliseconds)", "--dump-dom", url])
    }

    /// Runs headless Chromium (off the cooperative pool: it takes seconds).
    private func run(_ arguments: [String]) async throws -> String {
        let profile = profile.path
        return try await offThePool { try Self.runBlocking(arguments, profile: profile) }
    }

    private static func runBlocking(_ arguments: [String], profile: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)/profile"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // A watchdog thread, not a dispatch timer (libdispatch sources and
        // fds closed under them have crashed the test runner on Linux).
        let finished = Mutex(false)
        let pid = process.processIdentifier
        Thread {
            for _ in 0..<300 {
                usleep(100_000)
                if finished.withLock({ $0 }) { return }
            }
            kill(pid, SIGKILL)
        }.start()
        defer { finished.withLock { $0 = true } }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TimedOut(description: "chromium \(arguments) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A long-running `storyteller` (such as `preview` or `watch`) with its
/// output collected: standard output, and standard error with it unless
/// `keepingErrors` is false.
final class CLIProcess: Sendable {
    private let process: Process
    private final class Collected: Sendable {
        let text = Mutex("")
    }
    private let collected = Collected()

    init(_ arguments: [String], keepingErrors: Bool = true) throws {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("storyteller")
        process.arguments = arguments
        process.environment = TestEnvironment.make()
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = keepingErrors ? pipe : FileHandle.nullDevice
        self.process = process
        let collected = self.collected
        try process.run()
        // Read on a thread of its own until the end, not through a dispatch
        // read source (see `run` above).
        let reading = pipe.fileHandleForReading
        Thread {
            while true {
                let data = reading.availableData
                if data.isEmpty { return }
                collected.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }.start()
    }

    var output: String { collected.text.withLock { $0 } }

    /// Waits until the output contains `text`; the output so far.
    func waitForOutput(containing text: String, timeout: Duration) async throws -> String {
        var limit = TestDeadline(timeout)
        while true {
            let now = output
            if now.contains(text) { return now }
            guard process.isRunning, !limit.hasPassed() else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TimedOut(description: "storyteller printed no '\(text)': \(output)")
    }

    /// Sends SIGINT (Ctrl-C) and waits (at most 5 s) for the exit status.
    func interrupt() async throws -> Int32 {
        Foundation.kill(process.processIdentifier, SIGINT)
        var limit = TestDeadline(.seconds(5))
        while process.isRunning, !limit.hasPassed() { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            self.kill()
            throw TimedOut(description: "storyteller did not exit on SIGINT")
        }
        return process.terminationStatus
    }

    func kill() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A minimal HTTP/1.1 client over TCP to 127.0.0.1 (the preview listener's only address).
enum LoopbackHTTP {
    static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether something accepts connections on the port.
    static func accepts(port: Int) -> Bool {
        guard let fd = connect(port: port) else { return false }
        close(fd)
        return true
    }

    private static func send(_ fd: Int32, _ path: String, host: String, headers: String = "") {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(headers)Connection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// A GET's status and body (read to the end of the connection).
    static func get(port: Int, _ path: String, host: String? = nil, range: String? = nil) async throws -> (status: Int, body: String) {
        let (status, bytes) = try await getBytes(port: port, path, host: host, range: range)
        return (status, String(decoding: bytes, as: UTF8.self))
    }

    /// A GET's status and whole answer (head and body) as bytes.
    /// It reads off the cooperative pool (see `offThePool`).
    static func getBytes(port: Int, _ path: String, host: String? = nil, range: String? = nil) async throws -> (status: Int, answer: [UInt8]) {
        try await offThePool { try getBytesBlocking(port: port, path, host: host, range: range) }
    }

    private static func getBytesBlocking(port: Int, _ path: String, host: String?, range: String?) throws -> (status: Int, answer: [UInt8]) {
        guard let fd = connect(port: port) else { throw TimedOut(description: "nothing accepts on port \(port)") }
        defer { close(fd) }
        send(fd, path, host: host ?? "127.0.0.1:\(port)", headers: range.map { "Range: \($0)\r\n" } ?? "")
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        let text = String(decoding: bytes.prefix(64), as: UTF8.self)
        guard let line = text.split(separator: "\r\n").first, let status = Int(line.split(separator: " ").dropFirst().first ?? "") else {
            throw TimedOut(description: "no HTTP answer on port \(port)")
        }
        return (status, bytes)
    }

    /// An open GET whose answer is read as it comes (server-sent events).
    final class Stream {
        private let fd: Int32
        private var text = ""

        init(port: Int, _ path: String) throws {
            guard let fd = LoopbackHTTP.connect(port: port) else { throw TimedOut(description: "nothing accepts on port \(port)") }
            self.fd = fd
            LoopbackHTTP.send(fd, path, host: "127.0.0.1:\(port)")
        }

        /// Reads until what arrived contains `marker`; what arrived since the last marker.
        func read(until marker: String, timeout: Duration) async throws -> String {
            var limit = TestDeadline(timeout)
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while !text.contains(marker) {
                guard !limit.hasPassed() else { throw TimedOut(description: "no '\(marker)' in: \(text)") }
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 0) >= 0 else { throw TimedOut(description: "poll failed") }
                guard ready.revents != 0 else {
                    try await Task.sleep(for: .milliseconds(20))
                    continue
                }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw TimedOut(description: "the stream ended before '\(marker)': \(text)") }
                text += String(decoding: buffer[..<n], as: UTF8.self)
            }
            let range = text.range(of: marker)!
            defer { text = String(text[range.upperBound...]) }
            return String(text[..<range.upperBound])
        }

        func close() { Glibc.close(fd) }
    }
}
