import ArgumentParser
import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StorySync
import StoryTLS
import StoryWireClient
import ZIPFoundation

/// `storyteller-bench hostile`: a real `storytellerd` under a hostile editor
/// (a paired peer it shared a project with), measured by its resident memory
/// (`/proc/PID/status`):
/// 1. held back: the peer sends changes whose dependency never comes,
///    reconnecting each time it is cut off, until `--held-back-mb` were sent;
/// 2. maximal strokes: it draws `--strokes` strokes of 100,000 points each
///    (the most the API allows), all the same point (the smallest encoding, so
///    the largest answer per byte received); then the project is asked for
///    whole (`GET /v1/projects/{id}`, every point as JSON);
/// 3. a zip bomb: the project's package with its snapshot swapped for
///    `--bomb-mb` of zeros, deflated (about a thousandth of that), imported
///    alone and then twice at once;
/// 4. snapshot parts: as a reader, as a stranger offering a new document
///    whose snapshot names another owner, and as an editor that sends
///    `--parts-mb` of a snapshot and never its last part;
/// 5. an offer flood: `--offers` made-up projects offered by a peer whose
///    shares are taken at once, and as many by one whose shares wait.
struct HostileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile", abstract: "Measure a daemon's memory under a hostile peer's held-back changes and maximal strokes.")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "Megabytes of held-back changes to send in all.")
    var heldBackMb = 1024

    @Option(help: "Strokes of 100,000 points to draw.")
    var strokes = 60

    @Option(help: "Megabytes the zip bomb's snapshot inflates to.")
    var bombMb = 1024

    @Option(help: "Megabytes of snapshot parts the editor sends without the last one.")
    var partsMb = 512

    @Option(help: "Made-up projects each flooding peer offers.")
    var offers = 10_000

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
        var sent = 0
        var refusals = 0
        var connections = 0
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
                let refused =
                    (try? await connection.expect("a refusal", timeout: .seconds(10)) {
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

        // 3. A zip bomb: the project's own package, its snapshot swapped for zeros that deflate a thousandfold.
        let package = root + "/target.storyboard"
        let exported = try target.client.get("/v1/projects/\(projectText)/exports/package")
        guard exported.status == 200, FileManager.default.createFile(atPath: package, contents: exported.body) else {
            throw ValidationError("cannot export the project's package: \(exported.status)")
        }
        let bomb = root + "/bomb.storyboard"
        try Self.makeBomb(from: package, at: bomb, inflatingTo: Int64(bombMb) << 20)
        result["bomb_file_mb"] = rounded(
            Double((try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576, 2)
        result["bomb_inflates_mb"] = bombMb
        usleep(500_000)
        let beforeBomb = Self.memory(pid, "VmRSS")
        Self.resetPeak(pid)
        let alone = try target.client.upload("POST", "/v1/imports", file: bomb, timeoutSeconds: 600)
        result["bomb_status"] = alone.status
        result["bomb_refusal"] = alone.errorMessage ?? ""
        result["bomb_peak_rss_mb"] = rounded(Self.memory(pid, "VmHWM"), 1)
        result["bomb_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - beforeBomb, 1)
        Self.resetPeak(pid)
        let client = target.client
        let twice = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 { group.addTask { try client.upload("POST", "/v1/imports", file: bomb, timeoutSeconds: 600).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        result["bomb_twice_statuses"] = twice.map(String.init).joined(separator: ",")
        result["bomb_twice_peak_rss_mb"] = rounded(Self.memory(pid, "VmHWM"), 1)
        result["bomb_twice_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - beforeBomb, 1)
        guard try target.client.get("/v1/status").status == 200 else { throw ValidationError("the daemon stopped answering") }

        // 4. Snapshot parts, 4 MiB each, of a snapshot said to be `partsMb` MiB (plus one part).
        let part = [UInt8](repeating: 0x5A, count: 4 << 20)
        let partsTotal = UInt64(partsMb + 4) << 20
        let readable = try target.call("POST", "/v1/projects", ["name": "Read only"])["id"] as? String ?? ""
        _ = try target.call("PUT", "/v1/projects/\(readable)/shares/\(hostile.peerID)", ["mode": "read-only"])
        guard let readOnly = DocumentID(readable) else { throw ValidationError("cannot make the read-only project") }
        // What the hostile peer offers is taken at once (the stranger case's document is founded by someone else).
        _ = try target.call("PATCH", "/v1/peers/\(hostile.peerID)", ["autoAccept": true])
        usleep(500_000)
        let beforeParts = Self.memory(pid, "VmRSS")
        var partResults: [String: String] = [:]
        for (name, document, isOffer) in [("reader", readOnly, false), ("stranger", DocumentID(high: .random(in: 1 ... .max), low: 7), true)] {
            Self.resetPeak(pid)
            let stranger = try ProjectDocument.found(
                by: LocalAuthor.fresh(identity: try Identity.generate(commonName: "someone").signingIdentity), at: 1)
            let (sentParts, refusal) = try await ProtocolClient.session(to: target.port, as: hostile) { connection -> (Int, String) in
                var id = document
                if isOffer {
                    id = stranger.document.id
                    try await connection.send(.advertise(.init(document: id, kind: 1, name: "Offered", role: .owner, version: VersionVector())))
                    try await connection.send(.ping(1))
                    try await connection.expect("the offer taken", timeout: .seconds(30)) { if case .pong(1) = $0 { true } else { false } }
                } else {
                    try await connection.expect("an advertise") { if case .advertise(let ad) = $0 { ad.document == id } else { false } }
                    try await connection.send(.advertise(.init(document: id, kind: 1, name: "", role: .owner, version: VersionVector())))
                }
                var parts = 0
                var offset: UInt64 = 0
                while offset + UInt64(part.count) < partsTotal, !connection.isClosed {
                    let bytes = offset == 0 && isOffer ? stranger.document.snapshot()[...] : part[...]
                    do { try await connection.send(.snapshotPart(document: id, kind: 1, total: partsTotal, offset: offset, bytes: bytes)) } catch {
                        break
                    }
                    offset += UInt64(bytes.count)
                    parts += 1
                }
                let error = try? await connection.expect("a refusal", timeout: .seconds(10)) { if case .error = $0 { true } else { false } }
                if case .error(let code, let message)? = error { return (parts, "\(SyncError.Code(rawValue: code)): \(message)") }
                return (parts, "none")
            }
            partResults[name] = refusal
            result["parts_\(name)_sent"] = sentParts
            result["parts_\(name)_refusal"] = refusal
            result["parts_\(name)_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - beforeParts, 1)
        }
        // An editor (the hostile peer is one of the first project) sends all but the last part, then waits.
        Self.resetPeak(pid)
        let (editorParts, heldRSS) = try await ProtocolClient.session(to: target.port, as: hostile) { connection -> (Int, Double) in
            try await connection.expect("an advertise") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await connection.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            var offset: UInt64 = 0
            var parts = 0
            var samples: [String] = []
            while offset + UInt64(part.count) < partsTotal {
                try await connection.send(.snapshotPart(document: project, kind: 1, total: partsTotal, offset: offset, bytes: part[...]))
                offset += UInt64(part.count)
                parts += 1
                if ProcessInfo.processInfo.environment["STORYTELLER_BENCH_SAMPLE"] != nil, parts % 8 == 0 {
                    samples.append("\(parts):\(Int(Self.memory(pid, "VmRSS")))")
                }
            }
            if !samples.isEmpty { FileHandle.standardError.write(Data(("rss by parts sent: " + samples.joined(separator: " ") + "\n").utf8)) }
            // Held open: a ping answered means every part was taken in.
            try await connection.send(.ping(2))
            try await connection.expect("the pong after the parts", timeout: .seconds(120)) { if case .pong(2) = $0 { true } else { false } }
            usleep(500_000)
            return (parts, Self.memory(pid, "VmRSS"))
        }
        result["parts_editor_held_rss_mb"] = rounded(heldRSS, 1)
        result["parts_editor_sent_mb"] = rounded(Double(editorParts) * 4, 0)
        result["parts_editor_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - beforeParts, 1)
        guard try target.client.get("/v1/status").status == 200 else { throw ValidationError("the daemon stopped answering") }

        // 5. An offer flood: made-up projects from a peer whose shares are taken at once, then from one whose wait.
        let projectsBefore = (try target.client.get("/v1/projects").json as? [Any])?.count ?? -1
        usleep(500_000)
        let beforeOffers = Self.memory(pid, "VmRSS")
        Self.resetPeak(pid)
        for (name, autoAccept) in [("taken", true), ("kept", false)] {
            let flooder = try Identity.generate(commonName: "flood \(name)")
            _ = try target.call("POST", "/v1/peers", ["id": flooder.peerID.description, "address": "127.0.0.1:9"])
            _ = try target.call("PATCH", "/v1/peers/\(flooder.peerID)", ["autoAccept": autoAccept])
            let started = ContinuousClock.now
            try await ProtocolClient.session(to: target.port, as: flooder) { connection in
                for index in 0..<offers {
                    let made = DocumentID(high: .random(in: 1 ... .max), low: .random(in: 1 ... .max))
                    try await connection.send(
                        .advertise(.init(document: made, kind: 1, name: "Free money \(index)", role: .owner, version: VersionVector())))
                }
                try await connection.send(.ping(3))
                try await connection.expect("the pong after the offers", timeout: .seconds(300)) { if case .pong(3) = $0 { true } else { false } }
            }
            result["offers_\(name)_s"] = rounded((ContinuousClock.now - started).seconds, 2)
        }
        result["offers_each"] = offers
        result["offers_projects_listed_before"] = projectsBefore
        result["offers_projects_listed_after"] = (try target.client.get("/v1/projects").json as? [Any])?.count ?? -1
        result["offers_pending"] = (try target.client.get("/v1/shares/pending").json as? [Any])?.count ?? -1
        result["offers_peak_rss_mb"] = rounded(Self.memory(pid, "VmHWM"), 1)
        result["offers_rss_increase_mb"] = rounded(Self.memory(pid, "VmHWM") - beforeOffers, 1)
        guard try target.client.get("/v1/status").status == 200 else { throw ValidationError("the daemon stopped answering") }

        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    /// A copy of a package with its snapshot swapped for `size` bytes of
    /// zeros, deflated: a zip bomb of a real package's shape.
    static func makeBomb(from package: String, at path: String, inflatingTo size: Int64) throws {
        let input = try Archive(url: URL(fileURLWithPath: package), accessMode: .read)
        let output = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        let zeros = Data(count: 1 << 20)
        for entry in input {
            if entry.path == "project/snapshot.bin" {
                try output.addEntry(with: entry.path, type: .file, uncompressedSize: size, compressionMethod: .deflate) { (_: Int64, count: Int) in
                    zeros.prefix(count)
                }
                continue
            }
            var data = Data()
            _ = try input.extract(entry) { data.append($0) }
            try output.addEntry(with: entry.path, type: .file, uncompressedSize: Int64(data.count)) { (position: Int64, count: Int) in
                data.subdata(in: Int(position)..<Int(position) + count)
            }
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
