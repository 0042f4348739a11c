import ArgumentParser
import Foundation
import StoryClient

/// `storyteller-bench daemon`: the product end to end. Two `storytellerd`
/// processes on 127.0.0.1, paired and sharing a project; each edit is a
/// control-API request to the first (HTTP on its Unix socket, a durable
/// commit), and is timed until the second's event stream reports it arrived
/// from the peer (TLS sync, commit there, event). Also times a graceful stop.
struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon", abstract: "Measure control-API edits and edit-to-peer latency through two real daemons.")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "Single stroke edits to time.")
    var edits = 500

    @Option(help: "Scenes appended in one edit batch onto as many existing ones (timed).")
    var appendBatch = 4_000

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("cannot make a temporary directory") }
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try LocalDaemon(binary: daemon, directory: root + "/a", name: "a")
        defer { a.stop() }
        let b = try LocalDaemon(binary: daemon, directory: root + "/b", name: "b")
        defer { b.stop() }

        _ = try a.call("POST", "/v1/peers", ["id": b.peerID, "address": "127.0.0.1:\(b.port)"])
        _ = try b.call("POST", "/v1/peers", ["id": a.peerID, "address": "127.0.0.1:\(a.port)"])
        let project = try a.call("POST", "/v1/projects", ["name": "Latency"])["id"] as? String ?? ""
        let created = try a.call(
            "POST", "/v1/projects/\(project)/edits",
            ["ops": [["op": "scene.add"], ["op": "shot.add", "scene": "$0"], ["op": "layer.add", "shot": "$1"]]])
        let layer = (created["created"] as? [Any])?[2] as? String ?? ""
        _ = try a.call("PUT", "/v1/projects/\(project)/shares/\(b.peerID)", ["mode": "read-write"])
        guard LocalDaemon.poll(every: 0.02, for: 30, until: { try b.call("GET", "/v1/projects/\(project)")["id"] as? String == project }) else {
            throw ValidationError("b did not receive the project in 30 s")
        }

        // b's event stream, read on its own thread: one signal per change that came from a.
        let arrivals = DispatchSemaphore(value: 0)
        let stream = Thread { [client = b.client] in
            _ = try? client.stream("/v1/events?project=\(project)") { line in
                if line.contains(#""origin":"peer""#) { arrivals.signal() }
                return true
            }
        }
        stream.start()
        Thread.sleep(forTimeInterval: 0.5)  // the stream is open
        while arrivals.wait(timeout: .now()) == .success {}  // drop anything from the initial sync

        let points: [Double] = (0..<80).flatMap { index -> [Double] in
            [0.2 + 0.006 * Double(index), 0.5 + 0.1 * sin(Double(index) / 8), 0.4 + 0.004 * Double(index)]
        }
        let body = try JSONSerialization.data(withJSONObject: ["ops": [["op": "stroke.add", "layer": layer, "points": points]]])
        var request: [Double] = []
        var endToEnd: [Double] = []
        for _ in 0..<edits {
            let start = DispatchTime.now()
            let response = try a.client.request("POST", "/v1/projects/\(project)/edits", body: body)
            guard response.status == 200 else { throw ValidationError("edit refused: \(response.errorMessage ?? "")") }
            request.append(Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
            guard arrivals.wait(timeout: .now() + 10) == .success else { throw ValidationError("an edit did not reach b in 10 s") }
            endToEnd.append(Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
        }
        var result: [String: Any] = ["edits": edits]
        result["control_edit_ms_p50"] = rounded(Measure.percentile(request, 0.5), 3)
        result["control_edit_ms_p99"] = rounded(Measure.percentile(request, 0.99), 3)
        result["edit_to_peer_event_ms_p50"] = rounded(Measure.percentile(endToEnd, 0.5), 3)
        result["edit_to_peer_event_ms_p99"] = rounded(Measure.percentile(endToEnd, 0.99), 3)
        result["edit_to_peer_event_ms_max"] = rounded(endToEnd.max() ?? 0, 3)
        // Everything arrived, once: b shows as many strokes as a.
        let (strokesOnA, strokesOnB) = (try a.strokeCount(project), try b.strokeCount(project))
        guard strokesOnA == edits, strokesOnB == edits else {
            throw ValidationError("a has \(strokesOnA) strokes and b \(strokesOnB), expected \(edits) (project \(project), layer \(layer))")
        }
        // One large batch: `appendBatch` scenes appended onto as many in another project.
        let big = try a.call("POST", "/v1/projects", ["name": "Appends"])["id"] as? String ?? ""
        let appends = try JSONSerialization.data(withJSONObject: ["ops": Array(repeating: ["op": "scene.add"], count: appendBatch)])
        _ = try a.client.request("POST", "/v1/projects/\(big)/edits", body: appends, timeoutSeconds: 0)
        let batchStart = DispatchTime.now()
        let batch = try a.client.request("POST", "/v1/projects/\(big)/edits", body: appends, timeoutSeconds: 0)
        guard batch.status == 200 else { throw ValidationError("append batch refused: \(batch.errorMessage ?? "")") }
        result["append_batch_ops"] = appendBatch
        result["append_batch_s"] = rounded(Double(DispatchTime.now().uptimeNanoseconds - batchStart.uptimeNanoseconds) / 1e9, 3)
        for (key, daemon) in [("graceful_stop_s_a", a), ("graceful_stop_s_b", b)] {
            let (seconds, status) = daemon.stop()
            guard status == 0 else { throw ValidationError("storytellerd exited \(status)") }
            result[key] = rounded(seconds, 3)
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }
}
