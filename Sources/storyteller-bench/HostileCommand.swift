import ArgumentParser
import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StorySync
import StoryTLS

/// `storyteller-bench hostile`: a real `storytellerd` under a hostile editor
/// (a paired peer it shared a project with), measured by its resident memory
/// (`/proc/PID/status`):
/// 1. held back: the peer sends changes whose dependency never comes,
///    reconnecting each time it is cut off, until `--held-back-mb` were sent;
/// 2. maximal strokes: it draws `--strokes` strokes of 100,000 points each
///    (the most the API allows), all the same point (the smallest encoding, so
///    the largest answer per byte received); then the project is asked for
///    whole (`GET /v1/projects/{id}`, every point as JSON).
struct HostileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile", abstract: "Measure a daemon's memory under a hostile peer's held-back changes and maximal strokes.")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "Megabytes of held-back changes to send in all.")
    var heldBackMb = 1024

    @Option(help: "Strokes of 100,000 points to draw.")
    var strokes = 60

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("cannot make a temporary directory") }
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let target = try LocalDaemon(binary: daemon, directory: root + "/daemon", name: "target")
        defer { target.stop() }
        let pid = target.process.processIdentifier

        // The project, shared with the hostile identity as an editor.
        let hostile = try Identity.generate(commonName: "hostile")
        _ = try target.call("POST", "/v1/peers", ["id": hostile.peerID.description])
        let projectText = try target.call("POST", "/v1/projects", ["name": "Target"])["id"] as? String ?? ""
        let created = try target.call(
            "POST", "/v1/projects/\(projectText)/edits",
            ["ops": [["op": "scene.add"], ["op": "shot.add", "scene": "$0"], ["op": "layer.add", "shot": "$1"]]])
        guard let project = DocumentID(projectText), let layerText = (created["created"] as? [Any])?[2] as? String,
            let layer = OpID(layerText)
        else { throw ValidationError("cannot set up the project") }
        _ = try target.call("PUT", "/v1/projects/\(projectText)/shares/\(hostile.peerID)", ["mode": "read-write"])

        // The hostile peer's copy: what the daemon sends it, in two replicas of its identity.
        let signing = try hostile.signingIdentity
        let founding = try await ProtocolClient.session(to: target.port, as: hostile) { connection in
            try await connection.expect("an advertise") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await connection.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            try await connection.expect("the changes") { if case .changes(project, _) = $0 { true } else { false } }
            try await Task.sleep(for: .milliseconds(300))
            return try connection.changes(of: project)
        }
        var first = ProjectDocument(id: project, author: LocalAuthor(identity: signing, nonce: 1)!)
        var second = ProjectDocument(id: project, author: LocalAuthor(identity: signing, nonce: 2)!)
        try first.apply(founding)
        try second.apply(founding)
        usleep(500_000)
        let baseline = Self.memory(pid, "VmRSS")
        var result: [String: Any] = ["baseline_rss_mb": rounded(baseline, 1)]

        // 1. Held back: the second replica's changes depend on a change of the first that is never sent.
        let stroke = (0..<2_000).map { Point(x: Double($0 % 97) / 97, y: Double($0 % 89) / 89, pressure: 0.5) }
        _ = try first.edit(at: 1) { try $0.addStroke(to: layer, brush: Brush(), points: stroke) }
        try second.apply(first.changes(since: second.versionVector).list.map { ($0, try $0.decoded()) })
        let base = second.versionVector
        var random = SystemRandomNumberGenerator()
        for index in 0..<1_200 {
            let points = (0..<20_000).map { _ in Point(x: .random(in: 0...1, using: &random), y: .random(in: 0...1, using: &random), pressure: 0.5) }
            _ = try second.edit(at: Int64(2 + index)) { try $0.addStroke(to: layer, brush: Brush(), points: points) }
        }
        let waiting = second.changes(since: base).list
        let waitingBytes = waiting.reduce(0) { $0 + $1.bytes.count }
        var sent = 0, refusals = 0, connections = 0
        let budget = heldBackMb << 20
        Self.resetPeak(pid)
        let heldStart = ContinuousClock.now
        while sent < budget {
            connections += 1
            let (bytes, refused) = try await ProtocolClient.session(to: target.port, as: hostile) { connection -> (Int, Bool) in
                var bytes = 0
                for start in stride(from: 0, to: waiting.count, by: 16) {
                    let batch = Array(waiting[start..<min(start + 16, waiting.count)])
                    guard !connection.isClosed else { break }
                    do {
                        try await connection.send(.changes(document: project, batch: ChangeBatch.encode(batch)[...]))
                    } catch {
                        break
                    }
                    bytes += batch.reduce(0) { $0 + $1.bytes.count }
                }
                let refused = (try? await connection.expect("a refusal", timeout: .seconds(10)) {
                    if case .error(SyncError.Code.heldBackLimit.rawValue, _) = $0 { true } else { false }
                }) != nil
                return (bytes, refused)
            }
            sent += bytes
            if refused { refusals += 1 }
        }
        result["held_back_sent_mb"] = rounded(Double(sent) / 1_048_576, 1)
        result["held_back_chain_mb"] = rounded(Double(waitingBytes) / 1_048_576, 1)
        result["held_back_connections"] = connections
        result["held_back_refusals"] = refusals
        result["held_back_s"] = rounded((ContinuousClock.now - heldStart).seconds, 1)
        result["held_back_peak_rss_mb"] = rounded(Self.memory(pid, "VmHWM"), 1)
        result["held_back_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - baseline, 1)
        guard try target.client.get("/v1/status").status == 200 else { throw ValidationError("the daemon stopped answering") }

        // 2. Maximal strokes, each the same point 100,000 times: the smallest bytes on the wire.
        let flat = PointsBlob(encoding: Array(repeating: Point(x: 0.5, y: 0.5, pressure: 1), count: Change.maximumStrokePoints))
        var drawn: [EncodedChange] = []
        let before = first.versionVector
        for index in 0..<strokes {
            drawn.append(try first.edit(at: Int64(10_000 + index)) { try $0.addStroke(to: layer, brush: Brush(), encodedPoints: flat) }.change!)
        }
        let everything = first.changes(since: VersionVector()).list.filter { $0.replica == first.replica }
        let firstReplica = first.replica
        _ = before
        try await ProtocolClient.session(to: target.port, as: hostile) { connection in
            for batch in ChangeBatch.split(everything, targetBytes: 512 << 10) {
                try await connection.send(.changes(document: project, batch: ChangeBatch.encode(batch)[...]))
            }
            try await connection.expect("the acknowledgement", timeout: .seconds(60)) {
                if case .ack(project, let version) = $0 { version[firstReplica] >= UInt64(everything.count) } else { false }
            }
        }
        result["strokes"] = strokes
        result["strokes_wire_mb"] = rounded(Double(drawn.reduce(0) { $0 + $1.bytes.count }) / 1_048_576, 2)
        usleep(500_000)
        let afterStrokes = Self.memory(pid, "VmRSS")
        result["strokes_rss_mb"] = rounded(afterStrokes, 1)
        Self.resetPeak(pid)
        let showStart = ContinuousClock.now
        let shown = try target.client.get("/v1/projects/\(projectText)")
        guard shown.status == 200 else { throw ValidationError("projects show failed: \(shown.status)") }
        result["show_s"] = rounded((ContinuousClock.now - showStart).seconds, 2)
        result["show_json_mb"] = rounded(Double(shown.body.count) / 1_048_576, 1)
        result["show_peak_rss_mb"] = rounded(Self.memory(pid, "VmHWM"), 1)
        result["show_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - afterStrokes, 1)
        result["strokes_and_show_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - baseline, 1)
        guard (try JSONSerialization.jsonObject(with: shown.body) as? [String: Any])?["id"] as? String == projectText else {
            throw ValidationError("the project's JSON does not parse")
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    /// A field of `/proc/PID/status`, in megabytes.
    static func memory(_ pid: Int32, _ field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
        }
        return 0
    }

    /// Starts a new peak (VmHWM) from the current resident size.
    static func resetPeak(_ pid: Int32) {
        // Written in place (`createFile` writes a temporary file and renames it, which /proc refuses).
        guard let file = FileHandle(forWritingAtPath: "/proc/\(pid)/clear_refs") else { return }
        defer { try? file.close() }
        try? file.write(contentsOf: Data("5".utf8))
    }
}

extension ChangesSince {
    var list: [EncodedChange] {
        if case .changes(let changes) = self { return changes }
        return []
    }
}
