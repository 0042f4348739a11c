import ArgumentParser
import Foundation
import StoryClient

/// `storyteller-bench library`: a studio's library reaching a new machine.
/// Daemon a holds N projects of S strokes filed in one folder; daemon b is
/// new. Times sharing the folder (`storyteller share Show b`: the command), b holding every project
/// with every change and a hearing b acknowledge them all, the answers of
/// `status`, `tree`, `projects list` and `projects show` on b with the
/// whole library, and b's memory after a restart and a full sync.
struct LibraryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library", abstract: "Measure a library of many projects reaching a new peer (two real daemons over TLS).")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "Projects in the shared folder.")
    var projects = 1_000

    @Option(help: "Strokes per project (one scene, one shot, one layer).")
    var strokes = 50

    @Option(help: "Give up on the catch-up after this many seconds.")
    var timeout = 600.0

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(help: "The daemons' log level (their logs are in the temporary directory).")
    var logLevel = "warning"

    @Flag(help: "Keep the temporary directory (the daemons' databases and logs).")
    var keep = false

    func run() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("cannot make a temporary directory") }
        let root = String(cString: made)
        defer { if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) } }
        let arguments = ["--log-level", logLevel]
        var result: [String: Any] = ["projects": projects, "strokes": strokes]

        let a = try LocalDaemon(binary: daemon, directory: root + "/a", name: "a", extraArguments: arguments)
        defer { a.stop() }
        // The library: a folder of N projects, each one scene, shot and layer with S strokes.
        let setupStart = DispatchTime.now()
        _ = try a.call("POST", "/v1/library/folders", ["name": "Show"])
        let points: [Double] = (0..<60).flatMap { index -> [Double] in
            [0.2 + 0.01 * Double(index), 0.5 + 0.3 * sin(Double(index) / 7), 0.5]
        }
        var ids: [String] = []
        for index in 0..<projects {
            let id = try a.call("POST", "/v1/projects", ["name": "Project \(index + 1)", "folder": "Show"])["id"] as? String ?? ""
            var ops: [[String: Any]] = [["op": "scene.add"], ["op": "shot.add", "scene": "$0"], ["op": "layer.add", "shot": "$1", "name": "ink"]]
            for _ in 0..<strokes { ops.append(["op": "stroke.add", "layer": "$2", "points": points]) }
            _ = try a.call("POST", "/v1/projects/\(id)/edits", ["ops": ops])
            ids.append(id)
        }
        result["setup_s"] = seconds(since: setupStart)
        let aStatus = try a.call("GET", "/v1/status")
        let totalChanges = (aStatus["sync"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "project" }
            .reduce(0) { $0 + ($1["changes"] as? Int ?? 0) }
        result["changes"] = totalChanges

        let b = try LocalDaemon(binary: daemon, directory: root + "/b", name: "b", extraArguments: arguments)
        defer { b.stop() }
        _ = try a.call("POST", "/v1/peers", ["id": b.peerID, "address": "127.0.0.1:\(b.port)", "name": "b"])
        _ = try b.call("POST", "/v1/peers", ["id": a.peerID, "address": "127.0.0.1:\(a.port)", "name": "a"])
        guard LocalDaemon.poll(every: 0.02, for: 30, until: { (try a.call("GET", "/v1/status")["peersConnected"] as? Int) == 1 }) else {
            throw ValidationError("the daemons did not connect in 30 s")
        }

        // Share: the command's own time, then until b holds everything and a knows it.
        let shareStart = DispatchTime.now()
        // The folder is shared (the folder becomes a shared folder and takes its projects with it).
        let share = try a.client.request(
            "PUT", "/v1/library/nodes/Show/shares/\(b.peerID)", body: Data(#"{"mode":"read-write"}"#.utf8), timeoutSeconds: 0)
        guard share.status == 200 else { throw ValidationError("share refused: \(share.errorMessage ?? "\(share.status)")") }
        result["share_command_s"] = seconds(since: shareStart)
        var heldAt: Double?
        let caughtUp = LocalDaemon.poll(every: 0.05, for: timeout) {
            if heldAt == nil, try Self.changes(on: b) >= totalChanges { heldAt = seconds(since: shareStart) }
            guard heldAt != nil else { return false }
            let sync = try a.call("GET", "/v1/status")["sync"] as? [[String: Any]] ?? []
            let shared = sync.filter { $0["kind"] as? String == "project" }
            return shared.count >= projects
                && shared.allSatisfy { document in
                    (document["peers"] as? [[String: Any]] ?? []).contains { $0["peer"] as? String == b.peerID && $0["behind"] as? Int == 0 }
                }
        }
        guard caughtUp else { throw ValidationError("b did not catch up in \(timeout) s (held: \(heldAt.map { "\($0) s" } ?? "not all"))") }
        result["catch_up_held_s"] = heldAt
        result["catch_up_acknowledged_s"] = seconds(since: shareStart)

        // Answers on b with the whole library.
        result["status_ms"] = try Self.median(b, "GET", "/v1/status")
        result["tree_ms"] = try Self.median(b, "GET", "/v1/library")
        result["projects_list_ms"] = try Self.median(b, "GET", "/v1/projects")
        result["projects_show_ms"] = try Self.median(b, "GET", "/v1/projects/\(ids[ids.count / 2])")

        // b's stop with every project it took due for a snapshot (they are written at shutdown).
        let stopped = b.stop()
        guard stopped.status == 0 else { throw ValidationError("b exited with status \(stopped.status) when stopped") }
        result["stop_after_catch_up_s"] = (stopped.seconds * 1000).rounded() / 1000
        // b's memory after a restart and a full sync (status answered, every project read once).
        let again = try LocalDaemon(binary: daemon, directory: root + "/b", name: "b", extraArguments: arguments)
        defer { again.stop() }
        guard LocalDaemon.poll(every: 0.05, for: 60, until: { (try again.call("GET", "/v1/status")["peersConnected"] as? Int) == 1 }) else {
            throw ValidationError("b did not reconnect in 60 s")
        }
        _ = LocalDaemon.poll(every: 0.1, for: 30) { try Self.changes(on: again) >= totalChanges }
        for id in ids { _ = try again.raw("GET", "/v1/projects/\(id)") }
        result["rss_after_restart_mib"] = Self.residentMiB(of: again.process.processIdentifier)

        if json {
            print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    /// Project changes a daemon holds (its status' sum).
    private static func changes(on daemon: LocalDaemon) throws -> Int {
        (try daemon.call("GET", "/v1/status")["sync"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "project" }
            .reduce(0) { $0 + ($1["changes"] as? Int ?? 0) }
    }

    /// The median of 9 requests, in milliseconds.
    private static func median(_ daemon: LocalDaemon, _ method: String, _ target: String) throws -> Double {
        var times: [Double] = []
        for _ in 0..<9 {
            let start = DispatchTime.now()
            _ = try daemon.raw(method, target)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
        }
        return (Measure.percentile(times, 0.5) * 1000).rounded() / 1000
    }

    /// VmRSS of a process, MiB.
    private static func residentMiB(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return (kib / 1024 * 10).rounded() / 10
    }
}

func seconds(since start: DispatchTime) -> Double {
    (Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 * 1000).rounded() / 1000
}
