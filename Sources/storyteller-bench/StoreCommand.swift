import ArgumentParser
import Foundation
import StoryCore
import StoryIdentity
import StoryStore

/// `storyteller-bench store TRACE`: the SQLite store under a trace's changes.
/// Replays the trace in memory, then stores its changes (batched group
/// commits, then single durable commits), snapshots, compacts and reopens.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Measure the store: appends per second, open time, bytes per point.")

    @Argument(help: "The trace (from ../shared/bench/gen_trace.py).")
    var file: String

    @Option(help: "Changes per batch (group commit).")
    var batch = 1000

    @Option(help: "How many changes to store one commit at a time.")
    var singles = 2000

    @Option(help: "Changes after the snapshot when timing an open (default: the store's snapshot interval).")
    var tail = StoreOptions().snapshotEveryChanges

    @Option(help: "Directory for the databases, kept there (retained.db: the whole history before compaction); default: a temporary one, removed.")
    var directory: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        var replay = try TraceReplay(path: file, members: [])
        // The stores sign as this identity; the trace's changes are signed by the trace's own.
        let identity = try Identity.generate(commonName: "store bench").signingIdentity
        let sender = try Identity.generate(commonName: "store bench peer").peerID
        try replay.run()
        let changes = try replay.allChanges()
        let decoded = try changes.map { ($0, try $0.decoded()) }
        let expected = replay.converged.view
        let id = replay.document
        let points = expected.counts.points

        let folder = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
        var result: [String: Any] = ["trace": replay.header.name, "changes": changes.count, "visible_points": points]

        // 1. Every change, batched: one transaction per batch.
        let batchedPath = folder + "/batched.db"
        try? FileManager.default.removeItem(atPath: batchedPath)
        var store: Store? = try Store(path: batchedPath, identity: identity)
        try await store!.receiveDocument(id, kind: .project, name: nil, from: sender, at: 0)
        let batched = try await Measure.seconds {
            var start = 0
            while start < decoded.count {
                let end = min(start + batch, decoded.count)
                try await store!.apply(Array(decoded[start..<end]), to: id)
                start = end
            }
        }
        result["batched_changes_per_s"] = rounded(Double(decoded.count) / batched, 0)
        result["batched_s"] = rounded(batched, 3)
        guard try await store!.project(id).view == expected else { throw ValidationError("stored document differs") }
        let logBytes = try await store!.fileSize()
        result["log_db_bytes"] = logBytes
        result["log_db_bytes_per_visible_point"] = rounded(Double(logBytes) / Double(points), 3)

        // 2. Open: a snapshot, then `tail` changes after it (the most a document
        // has between the store's snapshots).
        let tailStart = max(decoded.count - tail, 0)
        let openPath = folder + "/open.db"
        try? FileManager.default.removeItem(atPath: openPath)
        do {
            let openStore = try Store(path: openPath, identity: identity)
            try await openStore.receiveDocument(id, kind: .project, name: nil, from: sender, at: 0)
            try await openStore.apply(Array(decoded[..<tailStart]), to: id)
            try await openStore.writeSnapshot(of: id, at: 1)
            try await openStore.apply(Array(decoded[tailStart...]), to: id)
        }
        var opens: [Double] = []
        for _ in 0..<5 {
            let reopened = try Store(path: openPath, identity: identity)
            var loaded: ProjectDocument?
            opens.append(try await Measure.seconds { loaded = try await reopened.project(id) })
            guard loaded?.view == expected else { throw ValidationError("reopened document differs") }
        }
        result["open_snapshot_plus_tail_s"] = rounded(Measure.median(opens), 4)
        result["open_tail_changes"] = decoded.count - tailStart

        // 3a. Snapshot with the whole history kept (history retention, every
        // change within the window): the log, the snapshot, no checkpoint yet.
        store = nil
        do {
            var retaining = StoreOptions()
            let newest = decoded.map(\.0.wallTime).max() ?? 0
            retaining.clock = WallClock { newest + 1 }
            retaining.historyRetention = 30 * 86_400_000
            let retained = try Store(path: batchedPath, identity: identity, options: retaining)
            try await retained.writeSnapshot(of: id, at: 2)
            try await retained.vacuum()
            let (kept, _) = try await retained.history(of: id, limit: 1)
            guard !kept.isEmpty else { throw ValidationError("retention kept no change") }
            result["retained_db_bytes"] = try await retained.fileSize()
            // Opening it: the snapshot takes the points it left in the log from there.
            var opens: [Double] = []
            for _ in 0..<3 {
                let reopened = try Store(path: batchedPath, identity: identity, options: retaining)
                var loaded: ProjectDocument?
                opens.append(try await Measure.seconds { loaded = try await reopened.project(id) })
                guard loaded?.view == expected else { throw ValidationError("the document with its history kept differs when reopened") }
            }
            result["open_retained_s"] = rounded(Measure.median(opens), 4)
        }
        if directory != nil {
            // Kept for a look inside (sqlite3's dbstat) before compaction replaces it.
            try? FileManager.default.removeItem(atPath: folder + "/retained.db")
            try FileManager.default.copyItem(atPath: batchedPath, toPath: folder + "/retained.db")
        }
        store = try Store(path: batchedPath, identity: identity)

        // 3. Snapshot and compaction (no peers: every change is covered).
        try await store!.writeSnapshot(of: id, at: 2)
        try await store!.vacuum()
        let compactedBytes = try await store!.fileSize()
        let snapshotBytes = try await store!.snapshot(of: id).count
        result["compacted_db_bytes"] = compactedBytes
        result["snapshot_bytes"] = snapshotBytes
        // A history retention checkpoint of the whole project: its snapshot without points.
        result["checkpoint_bytes"] = try await store!.project(id).snapshot(includingPoints: false).count
        result["compacted_db_over_snapshot"] = rounded(Double(compactedBytes) / Double(snapshotBytes), 3)
        if let retained = result["retained_db_bytes"] as? Int {
            result["retained_over_compacted"] = rounded(Double(retained) / Double(compactedBytes), 3)
        }
        result["compacted_db_bytes_per_visible_point"] = rounded(Double(compactedBytes) / Double(points), 3)
        store = nil
        var fullOpens: [Double] = []
        for _ in 0..<3 {
            let reopened = try Store(path: batchedPath, identity: identity)
            fullOpens.append(try await Measure.seconds { _ = try await reopened.project(id) })
        }
        result["open_compacted_s"] = rounded(Measure.median(fullOpens), 4)

        // 4. Single durable commits: one change per transaction (each fsync'd).
        let singlePath = folder + "/single.db"
        try? FileManager.default.removeItem(atPath: singlePath)
        let single = try Store(path: singlePath, identity: identity)
        try await single.receiveDocument(id, kind: .project, name: nil, from: sender, at: 0)
        let count = min(singles, decoded.count)
        let singleSeconds = try await Measure.seconds {
            for change in decoded.prefix(count) { try await single.apply([change], to: id) }
        }
        result["single_commits_per_s"] = rounded(Double(count) / singleSeconds, 0)

        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }
}

extension Measure {
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start).seconds
    }
}
