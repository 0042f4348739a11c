import ArgumentParser
import Foundation
import StoryClient

/// `storyteller-bench export`: boards leaving the system. One daemon holds a
/// project of S scenes × N shots, each shot one layer of K strokes of P
/// points, with caption, dialogue and duration set; every output is asked
/// for through the control API as the CLI does, and timed from the request
/// to the last byte, while the daemon's resident memory is sampled.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Measure exports of a large project: PNG per shot, PDF sheets, animatic (ffmpeg), package.")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "Scenes in the project.")
    var scenes = 3

    @Option(help: "Shots in the project (spread over the scenes).")
    var shots = 120

    @Option(help: "Strokes per shot.")
    var strokes = 50

    @Option(help: "Points per stroke.")
    var points = 80

    @Option(help: "The width of each PNG, in pixels.")
    var width = 1920

    @Option(help: "Give up on any one export after this many seconds.")
    var timeout = 600

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(help: "The daemon's log level (its log is in the temporary directory).")
    var logLevel = "warning"

    @Option(help: "Only these exports, comma-separated (png, pdf, animatic, package; default: all).")
    var only = "png,pdf,animatic,package"

    @Flag(help: "Keep the temporary directory (the daemon's database, its log and the exports).")
    var keep = false

    func run() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("cannot make a temporary directory") }
        let root = String(cString: made)
        defer { if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) } }
        let phases = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let known: Set = ["png", "pdf", "animatic", "package"]
        guard phases.isSubset(of: known), !phases.isEmpty else {
            throw ValidationError("--only takes some of \(known.sorted().joined(separator: ", ")), not '\(only)'")
        }
        var result: [String: Any] = ["scenes": scenes, "shots": shots, "strokes_per_shot": strokes, "points_per_stroke": points]

        let a = try LocalDaemon(binary: daemon, directory: root + "/a", name: "a", extraArguments: ["--log-level", logLevel])
        defer { a.stop() }
        let setupStart = DispatchTime.now()
        let project = try Self.makeProject(on: a, scenes: scenes, shots: shots, strokes: strokes, points: points)
        result["setup_s"] = seconds(since: setupStart)
        let shotIDs = try Self.shotIDs(of: project, on: a)
        guard shotIDs.count == shots else { throw ValidationError("the project has \(shotIDs.count) shots, not \(shots)") }
        let pid = a.process.processIdentifier
        result["rss_before_mib"] = residentMiB(of: pid).map { rounded($0, 1) }

        if phases.contains("png") {
            // One PNG per shot, as `storyteller export images` asks for them.
            let images = ResidentSampler([pid])
            var pngBytes = 0
            let pngStart = DispatchTime.now()
            for shot in shotIDs {
                let answer = try a.client.request(
                    "GET", "/v1/projects/\(project)/shots/\(shot)/render?format=png&width=\(width)", timeoutSeconds: timeout)
                guard answer.status == 200, answer.body.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                    throw ValidationError("shot \(shot): \(answer.errorMessage ?? "status \(answer.status)")")
                }
                pngBytes += answer.body.count
            }
            result["png_per_shot_s"] = seconds(since: pngStart)
            result["png_bytes"] = pngBytes
            result["png_rss_peak_mib"] = images.stop()[pid].map { rounded($0, 1) }
        }

        if phases.contains("pdf") {
            // The print sheet at 6 a page (A4 landscape: export pdf's defaults), to the last byte.
            let sheets = ResidentSampler([pid])
            let pdfStart = DispatchTime.now()
            let pdf = try a.client.request("GET", "/v1/projects/\(project)/exports/pdf?per-page=6", timeoutSeconds: timeout)
            result["pdf_s"] = seconds(since: pdfStart)
            guard pdf.status == 200, pdf.body.starts(with: Array("%PDF".utf8)) else {
                throw ValidationError("pdf: \(pdf.errorMessage ?? "status \(pdf.status)")")
            }
            result["pdf_bytes"] = pdf.body.count
            result["pdf_pages"] = pdf.headers["storyteller-page-count"].flatMap { Int($0) }
            result["pdf_rss_peak_mib"] = sheets.stop()[pid].map { rounded($0, 1) }
        }

        if phases.contains("animatic") {
            // The animatic at 1080p with captions, as a job: posted, followed, downloaded.
            let encoding = ResidentSampler([pid])
            let animaticStart = DispatchTime.now()
            let job = try a.call(
                "POST", "/v1/projects/\(project)/exports", ["kind": "animatic", "width": 1920, "height": 1080, "fps": 24, "captions": true])
            guard let jobID = job["id"] as? String else { throw ValidationError("the animatic job has no id: \(job)") }
            var state = ""
            let finished = LocalDaemon.poll(every: 0.1, for: Double(timeout)) {
                let followed = try a.call("GET", "/v1/exports/\(jobID)")
                state = followed["state"] as? String ?? ""
                if state == "failed" { throw ValidationError("the animatic failed: \(followed["error"] ?? "")") }
                return state == "done"
            }
            guard finished else { throw ValidationError("the animatic was not done in \(timeout) s (\(state))") }
            let video = try a.client.request("GET", "/v1/exports/\(jobID)/file", timeoutSeconds: timeout)
            result["animatic_s"] = seconds(since: animaticStart)
            guard video.status == 200 else { throw ValidationError("animatic file: \(video.errorMessage ?? "status \(video.status)")") }
            result["animatic_bytes"] = video.body.count
            result["animatic_rss_peak_mib"] = encoding.stop()[pid].map { rounded($0, 1) }
            let videoPath = root + "/animatic.mp4"
            try video.body.write(to: URL(fileURLWithPath: videoPath))
            _ = try? a.raw("DELETE", "/v1/exports/\(jobID)")
        }

        if phases.contains("package") {
            // The project package (snapshot, change log, thumbnails, print sheet), then imported on a new daemon.
            let packing = ResidentSampler([pid])
            let packageStart = DispatchTime.now()
            let package = try a.client.request("GET", "/v1/projects/\(project)/exports/package", timeoutSeconds: timeout)
            result["package_export_s"] = seconds(since: packageStart)
            result["package_rss_peak_mib"] = packing.stop()[pid].map { rounded($0, 1) }
            guard package.status == 200, package.body.starts(with: [0x50, 0x4B]) else {
                throw ValidationError("package: \(package.errorMessage ?? "status \(package.status)")")
            }
            result["package_bytes"] = package.body.count
            let packagePath = root + "/board.storyboard"
            try package.body.write(to: URL(fileURLWithPath: packagePath))
            let b = try LocalDaemon(binary: daemon, directory: root + "/b", name: "b", extraArguments: ["--log-level", logLevel])
            defer { b.stop() }
            let importStart = DispatchTime.now()
            let imported = try b.client.upload("POST", "/v1/imports", file: packagePath, timeoutSeconds: timeout)
            result["package_import_s"] = seconds(since: importStart)
            guard imported.status == 201 else { throw ValidationError("import: \(imported.errorMessage ?? "status \(imported.status)")") }
            result["rss_after_mib"] = residentMiB(of: pid).map { rounded($0, 1) }
        }

        if json {
            print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    /// The project: `scenes` scenes sharing `shots` shots, each with a caption,
    /// a line of dialogue, a duration and one layer of `strokes` strokes
    /// (wavy lines across the panel, `points` points each). Its id.
    static func makeProject(on daemon: LocalDaemon, scenes: Int, shots: Int, strokes: Int, points: Int) throws -> String {
        let id = try daemon.call("POST", "/v1/projects", ["name": "Export bench"])["id"] as? String ?? ""
        guard !id.isEmpty else { throw ValidationError("the daemon made no project") }
        var generator = SystemRandomNumberGenerator()
        for scene in 0..<scenes {
            let inScene = shots / scenes + (scene < shots % scenes ? 1 : 0)
            _ = try daemon.call("POST", "/v1/projects/\(id)/edits", ["ops": [["op": "scene.add", "title": "Scene \(scene + 1)"]]])
            let sceneID = try Self.sceneIDs(of: id, on: daemon)[scene]
            for shot in 0..<inScene {
                var ops: [[String: Any]] = [
                    ["op": "shot.add", "scene": sceneID],
                    [
                        "op": "set", "object": "$0", "field": "caption",
                        "value": "Scene \(scene + 1), shot \(shot + 1): the train pulls out of the station as the rain starts.",
                    ],
                    ["op": "set", "object": "$0", "field": "dialogue", "value": "MARA: You said you'd wait. You said that every time."],
                    ["op": "set", "object": "$0", "field": "duration", "value": 1.5 + Double(shot % 4) * 0.5],
                    ["op": "layer.add", "shot": "$0", "name": "ink"],
                ]
                for _ in 0..<strokes {
                    var x = Double.random(in: 0.05...0.6, using: &generator)
                    var y = Double.random(in: 0.1...0.9, using: &generator)
                    var line: [Double] = []
                    for index in 0..<points {
                        x += 0.4 / Double(points)
                        y = min(0.98, max(0.02, y + Double.random(in: -0.01...0.01, using: &generator)))
                        line += [x, y, 0.3 + 0.6 * sin(Double(index) / Double(points) * .pi)]
                    }
                    ops.append(["op": "stroke.add", "layer": "$4", "points": line])
                }
                _ = try daemon.call("POST", "/v1/projects/\(id)/edits", ["ops": ops])
            }
        }
        return id
    }

    /// The scenes' ids, in order.
    static func sceneIDs(of project: String, on daemon: LocalDaemon) throws -> [String] {
        let shown = try daemon.call("GET", "/v1/projects/\(project)?points=false")
        return (shown["scenes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// Every shot's id, in reading order.
    static func shotIDs(of project: String, on daemon: LocalDaemon) throws -> [String] {
        let shown = try daemon.call("GET", "/v1/projects/\(project)?points=false")
        return (shown["scenes"] as? [[String: Any]] ?? []).flatMap { scene in
            (scene["shots"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
    }
}
