import ArgumentParser
import Foundation
import StoryClient

/// `storyteller-bench media`: images moving between two real daemons (TLS on
/// loopback), in one run, beside this machine's floors:
///
/// 1. a large image uploaded on a, in a project shared with b: the upload's
///    rate, and from its answer until b's media list says complete;
/// 2. the floors: SHA-256 (OpenSSL EVP), writing to the disk (with fsync),
///    TLS 1.3 on loopback between two openssl processes and through the
///    daemons' own TLS engine (two threads, no NIO);
/// 3. stroke edit-to-visible latency on b for strokes drawn on a every
///    20 ms, idle and while such images move;
/// 4. b killed (SIGKILL) halfway through another image and started again:
///    bytes a sent for it ÷ its size, and b's copy identical;
/// 5. one image added to many shots of several projects: stored once on
///    each daemon, sent once;
/// 6. both daemons' resident memory while a 1 GiB image moves.
///
/// Sizes are MiB (2^20 bytes); rates are MB/s (10^6 bytes per second).
struct MediaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media", abstract: "Measure images moving between two real daemons (TLS on loopback) beside this machine's floors.")

    @Option(help: "The storytellerd binary (build it in release mode too).")
    var daemon: String

    @Option(help: "MiB of the image timed from a to b (and of those moving under the strokes, and of the one resumed).")
    var megabytes = 200

    @Option(help: "MiB of the image added to many shots.")
    var sharedMegabytes = 20

    @Option(help: "Projects the shared image is added to.")
    var sharedProjects = 5

    @Option(help: "Shots (over all those projects) the shared image is added to.")
    var sharedShots = 50

    @Option(help: "MiB of the image moved while both daemons' memory is sampled (0: skip).")
    var largeMegabytes = 1024

    @Option(help: "Stroke samples to take idle, and at least as many while images move.")
    var strokes = 150

    @Option(help: "Milliseconds from one stroke to the next.")
    var strokeInterval = 20.0

    @Option(help: "Images moved at most while strokes are timed.")
    var strokeTransfers = 8

    @Option(help: "MiB sent through openssl s_server/s_client, and through the daemons' TLS engine, for the TLS floors (0: skip).")
    var tlsMegabytes = 1024

    @Option(help: "Give up on any wait after this many seconds.")
    var timeout = 600.0

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(help: "The daemons' log level (their logs are in the temporary directory).")
    var logLevel = "warning"

    @Flag(help: "Keep the temporary directory (the daemons' databases, blobs and logs).")
    var keep = false

    @Option(
        help:
            "Write every stroke timed while images moved to this CSV file (image, ms after its upload's answer, ms before it was complete on b, edit ms, visible ms)."
    )
    var samples: String?

    static let mebibyte = 1 << 20

    func validate() throws {
        guard megabytes >= 1, sharedMegabytes >= 1, largeMegabytes >= 0, sharedProjects >= 1, sharedShots >= sharedProjects else {
            throw ValidationError("sizes must be at least 1 MiB (--large-megabytes 0 skips), and every project needs a shot")
        }
        guard strokes >= 1, strokeInterval > 0, strokeTransfers >= 1 else {
            throw ValidationError("--strokes, --stroke-interval and --stroke-transfers must be positive")
        }
    }

    func run() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ValidationError("cannot make a temporary directory") }
        let root = String(cString: made)
        defer { if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) } }
        let size = megabytes * Self.mebibyte
        var result: [String: Any] = [
            "megabytes": megabytes, "shared_megabytes": sharedMegabytes, "shared_projects": sharedProjects, "shared_shots": sharedShots,
            "large_megabytes": largeMegabytes, "stroke_interval_ms": strokeInterval, "nproc": ProcessInfo.processInfo.activeProcessorCount,
        ]

        // 2. Floors, measured first, on a quiet machine.
        result["floor_sha256_mb_s"] = Floors.sha256()
        let disk = try Floors.diskWrite(in: root, bytes: size)
        result["floor_disk_write_mb_s"] = disk.buffered
        result["floor_disk_write_fsync_mb_s"] = disk.durable
        if largeMegabytes > 0 {
            // At the large image's size too: past the kernel's dirty-page limits, writes go at the disk's own pace.
            let large = try Floors.diskWrite(in: root, bytes: largeMegabytes * Self.mebibyte)
            result["floor_disk_write_large_mb_s"] = large.buffered
            result["floor_disk_write_large_fsync_mb_s"] = large.durable
        }
        if tlsMegabytes > 0 {
            result["floor_tls_loopback_mb_s"] = Floors.tlsLoopback(in: root, bytes: tlsMegabytes * Self.mebibyte) ?? NSNull()
            result["floor_tls_engine_loopback_mb_s"] = try Floors.tlsEngineLoopback(bytes: tlsMegabytes * Self.mebibyte)
        }
        log("floors: \(result.filter { $0.key.hasPrefix("floor") })")

        // The daemons take blobs as large as the largest here.
        let largest = max(size, sharedMegabytes * Self.mebibyte, largeMegabytes * Self.mebibyte)
        if largest > 1 << 30 { setenv("STORYTELLER_BLOB_MAX_BYTES", "\(largest)", 1) }
        let arguments = ["--log-level", logLevel, "--no-discovery"]
        let a = try LocalDaemon(binary: daemon, directory: root + "/a", name: "a", extraArguments: arguments)
        defer { a.stop() }
        let bHolder = DaemonHolder(try LocalDaemon(binary: daemon, directory: root + "/b", name: "b", extraArguments: arguments))
        defer { bHolder.daemon.stop() }
        var b: LocalDaemon { bHolder.daemon }
        _ = try a.call("POST", "/v1/peers", ["id": b.peerID, "address": "127.0.0.1:\(b.port)", "name": "b"])
        _ = try b.call("POST", "/v1/peers", ["id": a.peerID, "address": "127.0.0.1:\(a.port)", "name": "a"])
        guard LocalDaemon.poll(every: 0.02, for: 30, until: { (try a.call("GET", "/v1/status")["peersConnected"] as? Int) == 1 }) else {
            throw ValidationError("the daemons did not connect in 30 s")
        }

        // A project for the images (one shot: each image is a new layer) and one for strokes.
        let (media, mediaShots) = try board(on: a, "Media", shots: 1)
        let mediaShot = mediaShots[0]
        let strokeProject = try a.call("POST", "/v1/projects", ["name": "Strokes"])["id"] as? String ?? ""
        let created = try a.call(
            "POST", "/v1/projects/\(strokeProject)/edits",
            ["ops": [["op": "scene.add"], ["op": "shot.add", "scene": "$0"], ["op": "layer.add", "shot": "$1", "name": "ink"]]])
        let layer = (created["created"] as? [Any])?[2] as? String ?? ""
        try share([media, strokeProject], from: a, with: b)
        // Strokes are counted as b receives changes of their project: b must
        // hold every change of it first (what the share sent may still be arriving).
        guard
            LocalDaemon.poll(
                every: 0.02, for: 60, until: { try changes(of: strokeProject, on: b) == changes(of: strokeProject, on: a) })
        else { throw ValidationError("b did not catch up with the stroke project in 60 s") }
        Thread.sleep(forTimeInterval: 0.2)

        // 3a. Strokes with nothing else moving.
        let probe = StrokeProbe(a: a.client, b: b.client, project: strokeProject, layer: layer)
        guard probe.waitUntilOpen() else { throw ValidationError("b's event stream did not open") }
        probe.startEditing(interval: strokeInterval / 1000)
        while probe.count < strokes { usleep(50_000) }
        let idle = try probe.stopEditing()
        try record(idle, as: "strokes_idle", in: &result)
        log("idle strokes: p50 \(result["strokes_idle_visible_ms_p50"]!) ms, p99 \(result["strokes_idle_visible_ms_p99"]!) ms")

        // 1. The image, alone: its upload, then until b holds it complete.
        let first = root + "/first.png"
        let firstHash = try LargePNG.write(to: first, byteCount: size, seed: 1)
        let sentBefore = try bytesSent(a)
        let cpuBefore = (cpuSeconds(a.process.processIdentifier), cpuSeconds(b.process.processIdentifier))
        let upload = try self.upload(first, to: a, project: media, shot: mediaShot, expecting: firstHash)
        let transfer = try waitUntilComplete(firstHash, in: media, on: { b }, every: 0.01)
        let cpuAfter = (cpuSeconds(a.process.processIdentifier), cpuSeconds(b.process.processIdentifier))
        unlink(first)
        result["upload_s"] = rounded(upload.seconds, 3)
        result["upload_mb_s"] = megabytesPerSecond(size, upload.seconds)
        result["transfer_s"] = rounded(Double(transfer.complete - upload.answered) / 1e9, 3)
        result["transfer_mb_s"] = megabytesPerSecond(size, Double(transfer.complete - upload.answered) / 1e9)
        result["transfer_first_bytes_s"] = transfer.firstBytes.map { rounded(Double($0 - upload.answered) / 1e9, 3) } ?? NSNull()
        // The last time b's media list showed the blob partial, and how much it held then
        // (after that: the last chunks, then b hashing the whole file, fsync and rename).
        result["transfer_last_partial_s"] = transfer.lastPartial.map { rounded(Double($0.time - upload.answered) / 1e9, 3) } ?? NSNull()
        result["transfer_last_partial_fraction"] = transfer.lastPartial.map { rounded($0.fraction, 3) } ?? NSNull()
        result["upload_and_transfer_cpu_s_a"] = rounded(cpuAfter.0 - cpuBefore.0, 2)
        result["upload_and_transfer_cpu_s_b"] = rounded(cpuAfter.1 - cpuBefore.1, 2)
        Thread.sleep(forTimeInterval: 0.3)
        result["transfer_sent_ratio"] = rounded(Double(try bytesSent(a) - sentBefore) / Double(size), 4)
        log("transfer: \(result["transfer_mb_s"]!) MB/s (upload \(result["upload_mb_s"]!) MB/s)")

        // 3b. Strokes while images of the same size move (each timed from its upload's answer to complete on b).
        let startIndex = probe.count
        probe.startEditing(interval: strokeInterval / 1000)
        var windows: [(UInt64, UInt64)] = []
        var rates: [Double] = []
        var during: [StrokeProbe.Sample] = []
        for round in 1...strokeTransfers {
            let path = root + "/moving-\(round).png"
            let hash = try LargePNG.write(to: path, byteCount: size, seed: 10 + UInt64(round))
            let moving = try self.upload(path, to: a, project: media, shot: mediaShot, expecting: hash)
            let done = try waitUntilComplete(hash, in: media, on: { b }, every: 0.01)
            unlink(path)
            windows.append((moving.answered, done.complete))
            rates.append(megabytesPerSecond(size, Double(done.complete - moving.answered) / 1e9))
            let sentTimes = probe.sentTimes(from: startIndex)
            if sentTimes.filter({ time in windows.contains { time >= $0.0 && time <= $0.1 } }).count >= strokes { break }
        }
        let moving = try probe.stopEditing()[startIndex...]
        during = moving.filter { sample in windows.contains { sample.sent >= $0.0 && sample.sent <= $0.1 } }
        if let samples {
            var csv = "image,after_answer_ms,before_complete_ms,edit_ms,visible_ms\n"
            for sample in during {
                guard let (index, window) = windows.enumerated().first(where: { sample.sent >= $0.element.0 && sample.sent <= $0.element.1 }),
                    let visible = sample.visible
                else { continue }
                let fields = [
                    Double(sample.sent - window.0), Double(window.1 - sample.sent), Double(sample.answered - sample.sent),
                    Double(Int64(bitPattern: visible &- sample.sent)),
                ].map { String(rounded($0 / 1e6, 2)) }
                csv += "\(index + 1)," + fields.joined(separator: ",") + "\n"
            }
            try csv.write(toFile: samples, atomically: true, encoding: .utf8)
        }
        try record(during, as: "strokes_during_transfer", in: &result)
        result["strokes_during_transfer_images"] = windows.count
        result["strokes_during_transfer_image_mb_s"] = rates
        log(
            "strokes during transfers: p50 \(result["strokes_during_transfer_visible_ms_p50"]!) ms, p99 \(result["strokes_during_transfer_visible_ms_p99"]!) ms, images at \(rates) MB/s"
        )

        // 4. b killed halfway through an image, started again on the same data.
        let resumed = root + "/resumed.png"
        let resumedHash = try LargePNG.write(to: resumed, byteCount: size, seed: 100)
        Thread.sleep(forTimeInterval: 0.3)
        let resumeSentBefore = try bytesSent(a)
        _ = try self.upload(resumed, to: a, project: media, shot: mediaShot, expecting: resumedHash)
        var heldAtKill: UInt64 = 0
        guard
            LocalDaemon.poll(
                every: 0.002, for: timeout,
                until: {
                    let entry = try mediaEntry(resumedHash, in: media, on: b)
                    heldAtKill = entry.held
                    return entry.state == "complete" || entry.held >= UInt64(size / 2)
                })
        else { throw ValidationError("b did not get half of the image in \(timeout) s") }
        kill(b.process.processIdentifier, SIGKILL)
        b.process.waitUntilExit()
        let restarted = uptimeNanoseconds()
        bHolder.daemon = try LocalDaemon(binary: daemon, directory: root + "/b", name: "b", extraArguments: arguments)
        let resumedDone = try waitUntilComplete(resumedHash, in: media, on: { b }, every: 0.01)
        Thread.sleep(forTimeInterval: 0.5)
        result["resume_killed_at_fraction"] = rounded(Double(heldAtKill) / Double(size), 3)
        result["resume_restart_to_complete_s"] = rounded(Double(resumedDone.complete - restarted) / 1e9, 3)
        result["resume_sent_ratio"] = rounded(Double(try bytesSent(a) - resumeSentBefore) / Double(size), 4)
        let copy = SHA256Hasher()
        let got = try b.client.download("/v1/projects/\(media)/media/\(resumedHash)") { piece in copy.update(piece) }
        guard got.status == 200 else { throw ValidationError("b did not serve the resumed image: \(got.errorMessage ?? "\(got.status)")") }
        result["resume_identical"] = copy.hex() == resumedHash
        unlink(resumed)
        log("resume: sent \(result["resume_sent_ratio"]!) × the image, identical: \(result["resume_identical"]!)")

        // 5. One image in many shots of several projects, all shared with b.
        let shared = root + "/shared.png"
        let sharedSize = sharedMegabytes * Self.mebibyte
        let sharedHash = try LargePNG.write(to: shared, byteCount: sharedSize, seed: 200)
        var targets: [(project: String, shot: String)] = []
        var sharedBoards: [String] = []
        for index in 0..<sharedProjects {
            let shots = sharedShots / sharedProjects + (index < sharedShots % sharedProjects ? 1 : 0)
            let (project, ids) = try board(on: a, "Shared \(index + 1)", shots: shots)
            sharedBoards.append(project)
            targets += ids.map { (project, $0) }
        }
        try share(sharedBoards, from: a, with: b)
        Thread.sleep(forTimeInterval: 0.3)
        let (storedOnA, storedOnB) = (try stored(on: a), try stored(on: b))
        let dedupSentBefore = try bytesSent(a)
        let dedupStart = uptimeNanoseconds()
        for (project, shot) in targets { _ = try self.upload(shared, to: a, project: project, shot: shot, expecting: sharedHash) }
        let uploadsDone = uptimeNanoseconds()
        var complete = 0
        guard
            LocalDaemon.poll(
                every: 0.05, for: timeout,
                until: {
                    complete = try sharedBoards.filter { try mediaEntry(sharedHash, in: $0, on: b).state == "complete" }.count
                    return complete == sharedBoards.count
                })
        else { throw ValidationError("b did not hold the shared image in all \(sharedBoards.count) projects in \(timeout) s (\(complete))") }
        let dedupDone = uptimeNanoseconds()
        Thread.sleep(forTimeInterval: 1)
        result["shared_uploads_s"] = rounded(Double(uploadsDone - dedupStart) / 1e9, 3)
        result["shared_complete_on_b_s"] = rounded(Double(dedupDone - dedupStart) / 1e9, 3)
        result["shared_stored_on_a"] = try stored(on: a) - storedOnA
        result["shared_stored_on_b"] = try stored(on: b) - storedOnB
        result["shared_sent_ratio"] = rounded(Double(try bytesSent(a) - dedupSentBefore) / Double(sharedSize), 4)
        unlink(shared)
        log("shared: stored \(result["shared_stored_on_a"]!) on a, \(result["shared_stored_on_b"]!) on b, sent \(result["shared_sent_ratio"]!) ×")

        // 6. Memory while a large image moves.
        if largeMegabytes > 0 {
            let large = root + "/large.png"
            let largeSize = largeMegabytes * Self.mebibyte
            let largeHash = try LargePNG.write(to: large, byteCount: largeSize, seed: 300)
            Thread.sleep(forTimeInterval: 1)
            let pids = [a.process.processIdentifier, b.process.processIdentifier]
            var baseline: [Int32: Double] = [:]
            for _ in 0..<5 {
                for pid in pids { baseline[pid] = max(baseline[pid] ?? 0, residentMiB(of: pid) ?? 0) }
                usleep(100_000)
            }
            let whileUploading = ResidentSampler(pids)
            let largeUpload = try self.upload(large, to: a, project: media, shot: mediaShot, expecting: largeHash)
            let uploadPeak = whileUploading.stop()
            let whileMoving = ResidentSampler(pids)
            let largeDone = try waitUntilComplete(largeHash, in: media, on: { b }, every: 0.05)
            let movingPeak = whileMoving.stop()
            unlink(large)
            for (name, pid) in zip(["a", "b"], pids) {
                result["large_rss_baseline_mib_\(name)"] = rounded(baseline[pid] ?? 0, 1)
                result["large_rss_growth_upload_mib_\(name)"] = rounded((uploadPeak[pid] ?? 0) - (baseline[pid] ?? 0), 1)
                result["large_rss_growth_transfer_mib_\(name)"] = rounded((movingPeak[pid] ?? 0) - (baseline[pid] ?? 0), 1)
                result["large_rss_growth_mib_\(name)"] = rounded(max(uploadPeak[pid] ?? 0, movingPeak[pid] ?? 0) - (baseline[pid] ?? 0), 1)
            }
            result["large_upload_mb_s"] = megabytesPerSecond(largeSize, largeUpload.seconds)
            result["large_transfer_mb_s"] = megabytesPerSecond(largeSize, Double(largeDone.complete - largeUpload.answered) / 1e9)
            result["large_transfer_first_bytes_s"] = largeDone.firstBytes.map { rounded(Double($0 - largeUpload.answered) / 1e9, 3) } ?? NSNull()
            result["large_transfer_last_partial_s"] =
                largeDone.lastPartial.map { rounded(Double($0.time - largeUpload.answered) / 1e9, 3) } ?? NSNull()
            result["large_transfer_last_partial_fraction"] = largeDone.lastPartial.map { rounded($0.fraction, 3) } ?? NSNull()
            result["large_transfer_s"] = rounded(Double(largeDone.complete - largeUpload.answered) / 1e9, 3)
            log(
                "large: growth a \(result["large_rss_growth_mib_a"]!) MiB, b \(result["large_rss_growth_mib_b"]!) MiB, \(result["large_transfer_mb_s"]!) MB/s"
            )
        }

        if json {
            print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    // MARK: - Steps

    /// Progress on standard error (the result alone goes to standard output).
    private func log(_ text: String) {
        FileHandle.standardError.write(Data("media: \(text)\n".utf8))
    }

    /// A new project on `daemon` with one scene of `shots` shots; its id and the shots' ids.
    private func board(on daemon: LocalDaemon, _ name: String, shots: Int) throws -> (String, [String]) {
        let project = try daemon.call("POST", "/v1/projects", ["name": name])["id"] as? String ?? ""
        let ops: [[String: Any]] = [["op": "scene.add"]] + Array(repeating: ["op": "shot.add", "scene": "$0"], count: shots)
        let created = try daemon.call("POST", "/v1/projects/\(project)/edits", ["ops": ops])["created"] as? [Any] ?? []
        let ids = created.dropFirst().compactMap { $0 as? String }
        guard ids.count == shots else { throw ValidationError("project \(name): \(ids.count) shots made, not \(shots)") }
        return (project, ids)
    }

    /// Shares projects with b (read-write) and waits until b has them all.
    private func share(_ projects: [String], from a: LocalDaemon, with b: LocalDaemon) throws {
        for project in projects { _ = try a.call("PUT", "/v1/projects/\(project)/shares/\(b.peerID)", ["mode": "read-write"]) }
        guard
            LocalDaemon.poll(
                every: 0.02, for: 60, until: { try projects.allSatisfy { try b.client.get("/v1/projects/\($0)").status == 200 } })
        else { throw ValidationError("b did not receive the shared projects in 60 s") }
    }

    /// Uploads an image as a new layer of a shot; the seconds it took and
    /// when it was answered (uptime ns). The answer must name the file's hash.
    private func upload(
        _ path: String, to daemon: LocalDaemon, project: String, shot: String, expecting hash: String
    ) throws -> (seconds: Double, answered: UInt64) {
        let start = uptimeNanoseconds()
        let response = try daemon.client.upload("POST", "/v1/projects/\(project)/shots/\(shot)/images?name=plate", file: path, timeoutSeconds: 0)
        let answered = uptimeNanoseconds()
        guard response.status == 201 else { throw ValidationError("upload refused: \(response.errorMessage ?? "status \(response.status)")") }
        let blob = ((response.json as? [String: Any])?["image"] as? [String: Any])?["blob"] as? String
        guard blob == hash else { throw ValidationError("the upload was stored as \(blob ?? "nothing"), not \(hash)") }
        return (Double(answered - start) / 1e9, answered)
    }

    /// A blob as a project's media list on `daemon` shows it.
    private func mediaEntry(_ hash: String, in project: String, on daemon: LocalDaemon) throws -> (state: String, held: UInt64, bytes: UInt64) {
        let response = try daemon.client.get("/v1/projects/\(project)/media")
        guard response.status == 200, let entries = response.json as? [[String: Any]] else {
            throw ValidationError("media list: status \(response.status)")
        }
        guard let entry = entries.first(where: { $0["blob"] as? String == hash }) else { return ("unreferenced", 0, .max) }
        return (
            entry["state"] as? String ?? "", (entry["heldBytes"] as? NSNumber)?.uint64Value ?? 0, (entry["bytes"] as? NSNumber)?.uint64Value ?? .max
        )
    }

    /// Polls b's media list until the blob is complete there: when some of
    /// it was first seen, when (and how much of it) it was last seen partial,
    /// and when complete (uptime ns).
    private func waitUntilComplete(
        _ hash: String, in project: String, on daemon: () -> LocalDaemon, every interval: Double
    ) throws -> (firstBytes: UInt64?, lastPartial: (time: UInt64, fraction: Double)?, complete: UInt64) {
        var firstBytes: UInt64?
        var lastPartial: (time: UInt64, fraction: Double)?
        let deadline = uptimeNanoseconds() + UInt64(timeout * 1e9)
        while uptimeNanoseconds() < deadline {
            if let entry = try? mediaEntry(hash, in: project, on: daemon()) {
                let now = uptimeNanoseconds()
                if entry.held > 0 && firstBytes == nil { firstBytes = now }
                if entry.state == "complete" { return (firstBytes, lastPartial, now) }
                if entry.state == "partial" { lastPartial = (now, Double(entry.held) / Double(entry.bytes)) }
            }
            usleep(useconds_t(interval * 1e6))
        }
        throw ValidationError("blob \(hash) was not complete on b within \(timeout) s")
    }

    /// Bytes the daemon sent to peers since it started (every connection, below TLS).
    private func bytesSent(_ daemon: LocalDaemon) throws -> Int {
        guard let sent = try daemon.call("GET", "/v1/status")["bytesSent"] as? Int else { throw ValidationError("status has no bytesSent") }
        return sent
    }

    /// Complete blobs the daemon stores.
    private func stored(on daemon: LocalDaemon) throws -> Int {
        guard let count = try daemon.call("GET", "/v1/media/transfers")["stored"] as? Int else {
            throw ValidationError("media/transfers has no 'stored'")
        }
        return count
    }

    /// CPU seconds (user + system) a process used so far.
    private func cpuSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Changes of a project a daemon holds (its status' count).
    private func changes(of project: String, on daemon: LocalDaemon) throws -> Int {
        let sync = try daemon.call("GET", "/v1/status")["sync"] as? [[String: Any]] ?? []
        guard let count = sync.first(where: { $0["id"] as? String == project })?["changes"] as? Int else {
            throw ValidationError("no project \(project) on \(daemon.directory)")
        }
        return count
    }

    /// Latency figures of strokes, under `prefix`.
    private func record(_ samples: [StrokeProbe.Sample], as prefix: String, in result: inout [String: Any]) throws {
        let visible = samples.compactMap { sample in sample.visible.map { Double(Int64(bitPattern: $0 &- sample.sent)) / 1e6 } }
        guard visible.count == samples.count, !samples.isEmpty else {
            throw ValidationError("\(samples.count - visible.count) of \(samples.count) strokes never reached b (\(prefix))")
        }
        guard visible.allSatisfy({ $0 >= 0 }) else {
            throw ValidationError("b received changes of the stroke project that were not strokes (\(prefix)): the count is off")
        }
        let answered = samples.map { Double($0.answered - $0.sent) / 1e6 }
        result[prefix + "_samples"] = samples.count
        result[prefix + "_visible_ms_p50"] = rounded(Measure.percentile(visible, 0.5), 2)
        result[prefix + "_visible_ms_p99"] = rounded(Measure.percentile(visible, 0.99), 2)
        result[prefix + "_visible_ms_max"] = rounded(visible.max() ?? 0, 2)
        result[prefix + "_edit_ms_p50"] = rounded(Measure.percentile(answered, 0.5), 2)
        result[prefix + "_edit_ms_p99"] = rounded(Measure.percentile(answered, 0.99), 2)
    }
}

/// The daemon b, which is killed and started again mid-run.
private final class DaemonHolder {
    var daemon: LocalDaemon
    init(_ daemon: LocalDaemon) { self.daemon = daemon }
}
