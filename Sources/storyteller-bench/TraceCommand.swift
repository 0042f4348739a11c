import ArgumentParser
import Foundation
import StoryCore
import StoryIdentity

/// `storyteller-bench trace FILE`: replays a trace into one StoryCore document
/// per replica, syncing by version vector with encoded changes decoded on the
/// other side (as on the wire), and measures what `../shared/bench/peers.py`
/// measures for Loro and Yrs.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Replay a storyteller-trace/1 file and print the measurements.")

    @Argument(help: "The trace (from ../shared/bench/gen_trace.py).")
    var file: String

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Option(help: "Loads and merges to time (the median is reported).")
    var repeats = 5

    @Flag(help: "After the replay, free parts of the replicas one by one and print the live heap each held.")
    var memoryBreakdown = false

    @Option(
        help: ArgumentHelp(
            "After the replay, free every replica but this one (1…) and exit without freeing it, so that a heap profiler (heaptrack) reports what it holds as left at exit, by where it was allocated.",
            valueName: "replica"))
    var exitHoldingReplica: Int?

    func run() throws {
        var replay = try TraceReplay(path: file)
        try replay.run()
        if let replica = exitHoldingReplica {
            try replay.freeAllReplicas(but: replica - 1)
            Foundation.exit(0)
        }
        if memoryBreakdown {
            for (part, value) in replay.memoryBreakdown() {
                print(part.hasSuffix("(count)") ? "\(part): \(Int(value))" : "\(part): \(rounded(value, 1)) MB")
            }
            return
        }
        let result = try replay.measureAfterwards(repeats: repeats)
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
        if result["converged"] as? Bool != true || result["load_ok"] as? Bool != true || result["merge_ok"] as? Bool != true {
            throw ExitCode(1)
        }
    }
}

/// The replay of one trace.
struct TraceReplay {
    let header: TraceHeader
    private var reader: TraceReader
    private var docs: [ProjectDocument]
    private var documentID = DocumentID(high: 0x5354_4F52_5954_454C, low: 0x4C45_5242_454E_4348)
    private var traceIDs = TraceIDs()
    private var clock: Int64 = 1_700_000_000_000

    private var applySeconds = 0.0
    private var syncSeconds = 0.0
    private var syncBytes = 0
    private var syncs = 0
    private var opSeconds: [String: Double] = [:]
    private var opCount: [String: Int] = [:]
    private var skipped: [String: Int] = [:]
    private var replaySeconds = 0.0
    private var finalSyncSeconds = 0.0
    /// Files holding each replica's snapshot from before the final sync (kept on
    /// disk so they do not count in the replicas' memory).
    private var preFinalSnapshots: [String] = []

    /// A replay of the trace at `path`. Open documents (no signatures, no
    /// access control: the CRDT alone, as Loro and Yrs are measured) unless
    /// `members` is given: then every trace replica signs as its own
    /// identity, replica 0's founds the document and makes the others and
    /// `members` editors, and every change is checked as a daemon checks it.
    init(path: String, members: [PeerID]? = nil) throws {
        reader = try TraceReader(path: path)
        header = reader.header
        guard let members else {
            let replicas = (0..<header.replicas).map { ReplicaID(UInt64($0) + 1) }
            let document = documentID
            docs = replicas.map { ProjectDocument(id: document, replica: $0) }
            return
        }
        let authors = try (0..<header.replicas).map { index in
            LocalAuthor.fresh(identity: try Identity.generate(commonName: "trace replica \(index)").signingIdentity)
        }
        var founder = try ProjectDocument.found(by: authors[0], at: clock).document
        for peer in authors.dropFirst().map(\.identity.peer) + members { try founder.setAccess(.editor, for: peer, at: clock) }
        guard case .changes(let founding) = founder.changes(since: VersionVector()) else { throw ValidationError("no founding changes") }
        let batch = ChangeBatch.encode(founding)
        documentID = founder.id
        docs = [founder]
        for author in authors.dropFirst() {
            var doc = ProjectDocument(id: founder.id, author: author)
            try doc.apply(batch: batch[...])
            docs.append(doc)
        }
    }

    mutating func run() throws {
        let start = ContinuousClock.now
        while let op = try reader.next() {
            if op.op == "sync" {
                try sync(op.a ?? op.r, op.b ?? op.r)
                syncs += 1
                continue
            }
            // Decoding the trace's strings into values is the trace's business,
            // not the edit's: the points, the brush, and which operation it is
            // (peers.py too picks an operation's handler before its clock).
            guard let kind = TraceOpKind(rawValue: op.op) else { throw ValidationError("unknown trace operation \(op.op)") }
            let brush = kind == .strokeAdd ? Self.brush(of: op) : nil
            let points = op.points.map { flat in
                stride(from: 0, to: flat.count - 2, by: 3).map { Point(x: flat[$0], y: flat[$0 + 1], pressure: flat[$0 + 2]) }
            }
            clock += 1
            // Timed as peers.py times Loro and Yrs: finding the target and the
            // edit; the benchmark's own trace-id maps are kept after the clock.
            let opStart = ContinuousClock.now
            let outcome = try Self.apply(kind, op, points: points, brush: brush, to: &docs[op.r], ids: traceIDs, at: clock)
            let elapsed = (ContinuousClock.now - opStart).seconds
            applySeconds += elapsed
            opSeconds[op.op, default: 0] += elapsed
            opCount[op.op, default: 0] += 1
            switch outcome {
            case .skipped: skipped[op.op, default: 0] += 1
            case .applied(let created?):
                traceIDs.record(op.id, created)
                if kind == .strokeAdd, let traceID = op.id, let layerID = op.layer { traceIDs.setLayer(layerID, ofStroke: traceID) }
            case .applied(nil): break
            }
        }
        replaySeconds = (ContinuousClock.now - start).seconds
        let directory = FileManager.default.temporaryDirectory.path
        preFinalSnapshots = try docs.enumerated().map { index, doc in
            let path = "\(directory)/storyteller-bench-\(getpid())-\(index).snapshot"
            try Data(doc.snapshot()).write(to: URL(fileURLWithPath: path))
            return path
        }
        finalSyncSeconds = try Measure.seconds {
            for b in 1..<max(docs.count, 1) { try sync(0, b) }
            for b in 1..<max(docs.count - 1, 1) { try sync(0, b) }
        }
    }

    /// Exchanges everything both ways, as two daemons would: version vectors,
    /// then the encoded changes each lacks, decoded and applied on the other side.
    private mutating func sync(_ a: Int, _ b: Int) throws {
        guard a != b else { return }
        let seconds = try Measure.seconds {
            let vectorA = docs[a].versionVector.encoded()
            let vectorB = docs[b].versionVector.encoded()
            syncBytes += vectorA.count + vectorB.count
            for (source, target, vector) in [(a, b, vectorB), (b, a, vectorA)] {
                let theirs = try VersionVector(decoding: vector[...])
                guard case .changes(let changes) = docs[source].changes(since: theirs) else {
                    throw ValidationError("replica \(source) compacted changes replica \(target) lacks")
                }
                guard !changes.isEmpty else { continue }
                let batch = ChangeBatch.encode(changes)
                syncBytes += batch.count
                try docs[target].apply(batch: batch[...])
            }
        }
        syncSeconds += seconds
    }

    private static func clampIndex(_ index: Int?, _ count: Int) -> Int { min(max(index ?? count, 0), count) }

    /// What one trace operation did at its replica.
    private enum Outcome {
        /// Skipped: its target is not visible there.
        case skipped
        /// Applied; `created` is the object or stroke it made, if any.
        case applied(created: OpID?)
    }

    /// A stroke's brush; nil if the trace names a tool or colour this build does not know.
    private static func brush(of op: TraceOp) -> Brush? {
        guard let tool = op.tool.flatMap(Brush.Tool.init(name:)), let color = op.color.flatMap(Color.init(hex:)) else { return nil }
        return Brush(tool: tool, color: color, width: Float(op.width ?? 0.003))
    }

    private static func apply(
        _ kind: TraceOpKind, _ op: TraceOp, points: [Point]?, brush: Brush?, to doc: inout ProjectDocument, ids traceIDs: TraceIDs,
        at time: Int64
    ) throws -> Outcome {
        func visible(_ traceID: String?, _ doc: ProjectDocument, kind: ObjectKind) -> OpID? {
            traceIDs.visible(traceID, doc, kind: kind)
        }
        switch kind {
        case .projectSet:
            guard let key = op.key.flatMap(FieldKey.init(name:)) else { return .skipped }
            try doc.edit(at: time) { try $0.set(key, to: fieldValue(op.value)) }
        case .sceneInsert:
            let index = clampIndex(op.index, doc.scenes.count)
            return .applied(
                created: try doc.edit(at: time) { editor in
                    let id = try editor.insertScene(at: index)
                    if let title = op.title { try editor.set(.title, to: .string(title), on: id) }
                    return id
                }.value)
        case .sceneMove:
            guard let scene = visible(op.id, doc, kind: .scene) else { return .skipped }
            let index = clampIndex(op.index, doc.scenes.count - 1)
            try doc.edit(at: time) { try $0.move(scene, to: index) }
        case .sceneDelete:
            guard let scene = visible(op.id, doc, kind: .scene) else { return .skipped }
            try doc.edit(at: time) { try $0.delete(scene) }
        case .sceneSet, .shotSet, .layerSet:
            let objectKind: ObjectKind = kind == .sceneSet ? .scene : kind == .shotSet ? .shot : .layer
            guard let object = visible(op.id, doc, kind: objectKind), let name = op.key else { return .skipped }
            let key = name == "background" ? FieldKey.background : FieldKey(name: name)
            guard let key else { return .skipped }
            try doc.edit(at: time) { try $0.set(key, to: fieldValue(op.value), on: object) }
        case .shotInsert:
            guard let scene = visible(op.scene, doc, kind: .scene) else { return .skipped }
            let index = clampIndex(op.index, doc.shots(in: scene).count)
            return .applied(created: try doc.edit(at: time) { try $0.insertShot(in: scene, at: index) }.value)
        case .shotMove:
            guard let shot = visible(op.id, doc, kind: .shot), let target = visible(op.scene, doc, kind: .scene) else {
                return .skipped
            }
            let current = doc.container(of: shot)!
            let count = doc.shots(in: target).count - (target == current ? 1 : 0)
            let index = clampIndex(op.index, count)
            try doc.edit(at: time) { try $0.move(shot, to: index, in: target) }
        case .shotDelete:
            guard let shot = visible(op.id, doc, kind: .shot) else { return .skipped }
            try doc.edit(at: time) { try $0.delete(shot) }
        case .layerInsert:
            guard let shot = visible(op.shot, doc, kind: .shot) else { return .skipped }
            let index = clampIndex(op.index, doc.layers(in: shot).count)
            return .applied(
                created: try doc.edit(at: time) { editor in
                    let id = try editor.insertLayer(in: shot, at: index)
                    if let name = op.name { try editor.set(.name, to: .string(name), on: id) }
                    return id
                }.value)
        case .layerMove:
            guard let layer = visible(op.id, doc, kind: .layer) else { return .skipped }
            let index = clampIndex(op.index, doc.layers(in: doc.container(of: layer)!).count - 1)
            try doc.edit(at: time) { try $0.move(layer, to: index) }
        case .layerDelete:
            guard let layer = visible(op.id, doc, kind: .layer) else { return .skipped }
            try doc.edit(at: time) { try $0.delete(layer) }
        case .strokeAdd:
            guard let layer = visible(op.layer, doc, kind: .layer), let points, !points.isEmpty, let brush else { return .skipped }
            return .applied(created: try doc.edit(at: time) { try $0.addStroke(to: layer, brush: brush, points: points) }.value)
        case .strokeErase:
            guard let traceID = op.id, let layer = visible(traceIDs.layer(ofStroke: traceID), doc, kind: .layer),
                let stroke = traceIDs.id(traceID), doc.stroke(stroke, in: layer) != nil
            else { return .skipped }
            try doc.edit(at: time) { try $0.eraseStroke(stroke, in: layer) }
        }
        return .applied(created: nil)
    }

    private static func fieldValue(_ value: TraceValue?) -> FieldValue {
        switch value {
        case .string(let text): Color(hex: text).map(FieldValue.color) ?? .string(text)
        case .number(let number): .number(number)
        case .bool(let bool): .bool(bool)
        case nil: .null
        }
    }

    /// The id of the replayed document.
    var document: DocumentID { documentID }

    /// Every change of the trace, in causal order (after the final sync),
    /// each with its author's signature (as each arrived live, so they can be
    /// stored one by one; a relay keeps only the signatures it checked).
    func allChanges() throws -> [EncodedChange] {
        guard case .changes(let changes) = docs[0].changes(since: VersionVector()) else {
            throw ValidationError("replica 0 has compacted its log")
        }
        var signatures: [ReplicaID: [UInt64: [UInt8]]] = [:]
        for doc in docs {
            guard case .changes(let own) = doc.changes(since: VersionVector()) else {
                throw ValidationError("a replica has compacted its log")
            }
            for change in own where change.replica == doc.replica { signatures[change.replica, default: [:]][change.seq] = change.signature }
        }
        return changes.map { $0.withSignature(signatures[$0.replica]?[$0.seq] ?? $0.signature) }
    }

    /// Frees the benchmark's own maps and every replica but `kept` (0-based).
    mutating func freeAllReplicas(but kept: Int) throws {
        guard docs.indices.contains(kept) else { throw ValidationError("the trace has \(docs.count) replicas") }
        traceIDs = TraceIDs()
        for index in docs.indices where index != kept { docs[index] = ProjectDocument(id: documentID, replica: docs[index].replica) }
    }

    /// The converged document of replica 0.
    var converged: ProjectDocument { docs[0] }

    /// Live heap held by parts of the replicas, by freeing them one at a time.
    mutating func memoryBreakdown() -> [(String, Double)] {
        var result: [(String, Double)] = [("all", Measure.heapInUseMB)]
        var before = Measure.heapInUseMB
        func step(_ name: String) {
            let now = Measure.heapInUseMB
            result.append((name, before - now))
            before = now
        }
        let held = Self.held(by: docs[0])
        before = Measure.heapInUseMB
        traceIDs = TraceIDs()
        step("benchmark's trace id maps")
        // Its size only, taken first: a snapshot held while a state is freed would be counted against it.
        let snapshotBytes = docs[0].snapshot().count
        before = Measure.heapInUseMB
        for index in docs.indices.reversed() {
            docs[index].keepsChangeLog = false
            step("replica \(index + 1)'s change log")
            docs[index] = ProjectDocument(id: documentID, replica: docs[index].replica)
            step("replica \(index + 1)'s state (without log)")
        }
        result.append(("replica 1's snapshot size", Double(snapshotBytes) / 1_048_576))
        result.append(contentsOf: held)
        result.append(("left", Measure.heapInUseMB))
        return result
    }

    /// What a replica holds, counted: its changes and their bytes, the
    /// points inside them, its strokes (erased ones included) and objects.
    static func held(by doc: ProjectDocument) -> [(String, Double)] {
        guard case .changes(let changes) = doc.changes(since: VersionVector()) else { return [] }
        var points = 0
        var pointBytes = 0
        for change in changes {
            guard let decoded = try? Change(decoding: change.bytes) else { continue }
            for case .addStroke(_, _, let blob) in decoded.operations {
                points += blob.count
                pointBytes += blob.bytes.count
            }
        }
        let statistics = doc.statistics
        return [
            ("replica 1's changes (count)", Double(changes.count)),
            ("replica 1's change bytes", Double(changes.reduce(0) { $0 + $1.bytes.count }) / 1_048_576),
            ("of which points", Double(pointBytes) / 1_048_576), ("points (count)", Double(points)),
            ("strokes, erased ones included (count)", Double(statistics.strokeEntries)),
            ("objects (count)", Double(statistics.objects)),
        ]
    }

    /// After the replay: convergence, snapshot, load, merge, tiny syncs, memory.
    mutating func measureAfterwards(repeats: Int) throws -> [String: Any] {
        let rssReplicas = Measure.residentMB
        // Where the resident pages are, when asked (STORYTELLER_BENCH_SMAPS=FILE).
        if let path = ProcessInfo.processInfo.environment["STORYTELLER_BENCH_SMAPS"] {
            try? FileHandle(forReadingAtPath: "/proc/self/smaps")?.readToEnd()?.write(to: URL(fileURLWithPath: path))
        }
        let heapReplicas = Measure.heapInUseMB
        let heapFree = Measure.heapFreeMB
        let peakReplay = Measure.peakMB
        // The replay's parser garbage stays in malloc's free lists; trimming them
        // shows what the replicas themselves hold.
        _ = Measure.trimMalloc()
        let rssTrimmed = Measure.residentMB
        let views = docs.map(\.view)
        let reference = views[0]
        let converged = views.dropFirst().allSatisfy { $0 == reference }
        let counts = reference.counts

        var snapshot: [UInt8] = []
        let snapshotSeconds = Measure.seconds { snapshot = docs[0].snapshot() }

        var loads: [Double] = []
        var loaded: ProjectDocument?
        for _ in 0..<repeats {
            loaded = nil
            loads.append(try Measure.seconds { loaded = try ProjectDocument(snapshot: snapshot, replica: ReplicaID(99)) })
        }
        let loadOK = loaded?.view == reference
        loaded = nil

        let inputs = try preFinalSnapshots.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        for path in preFinalSnapshots { try? FileManager.default.removeItem(atPath: path) }
        var merges: [Double] = []
        var merged: ProjectDocument?
        for _ in 0..<repeats {
            merged = nil
            var doc = ProjectDocument(id: documentID, replica: ReplicaID(98))
            merges.append(try Measure.seconds { for snapshot in inputs { try doc.merge(snapshot: snapshot) } })
            merged = doc
        }
        let mergeOK = merged?.view == reference
        merged = nil

        var tiny: Double?
        var tinyAfter: Double?
        var tinyStroke: Double?
        if docs.count >= 3 {
            tiny = try tinySyncs(1, docs.count - 1, tag: "probe")
            tinyStroke = try tinyStrokeSyncs(1, docs.count - 1)
            _ = docs[1].snapshot()
            _ = docs[docs.count - 1].snapshot()
            tinyAfter = try tinySyncs(1, docs.count - 1, tag: "probe after snapshot")
        }

        let adds = opCount["stroke.add"] ?? 0
        var result: [String: Any] = [
            "lib": "storycore", "trace": header.name, "replicas": header.replicas, "ops": header.ops,
            "applied": opCount.values.reduce(0, +) - skipped.values.reduce(0, +),
            "skipped": skipped.values.reduce(0, +), "skipped_by_op": skipped, "syncs": syncs,
            "apply_s": rounded(applySeconds, 4), "sync_s": rounded(syncSeconds, 4), "sync_bytes": syncBytes,
            "replay_wall_s": rounded(replaySeconds, 3), "final_sync_s": rounded(finalSyncSeconds, 4),
            "op_us": opCount.keys.sorted().reduce(into: [String: Double]()) {
                $0[$1] = rounded(1e6 * opSeconds[$1]! / Double(opCount[$1]!), 2)
            },
            "stroke_add_us": adds > 0 ? rounded(1e6 * opSeconds["stroke.add"]! / Double(adds), 3) : 0,
            "converged": converged, "load_ok": loadOK, "merge_ok": mergeOK,
            "ids_digest": idsDigest(reference),
            "visible": [
                "scenes": counts.scenes, "shots": counts.shots, "layers": counts.layers,
                "strokes": counts.strokes, "points": counts.points,
            ],
            "snapshot_bytes": snapshot.count, "snapshot_s": rounded(snapshotSeconds, 4),
            "snapshot_bytes_per_visible_point": counts.points > 0 ? rounded(Double(snapshot.count) / Double(counts.points), 3) : 0,
            "load_s": rounded(Measure.median(loads), 5), "merge_s": rounded(Measure.median(merges), 4),
            "merge_input_bytes": inputs.reduce(0) { $0 + $1.count },
            "rss_replicas_mb": rounded(rssReplicas, 1), "rss_replicas_trimmed_mb": rounded(rssTrimmed, 1),
            "heap_replicas_mb": rounded(heapReplicas, 1), "heap_free_mb": rounded(heapFree, 1),
            "peak_rss_replay_mb": rounded(peakReplay, 1),
            "peak_rss_mb": rounded(Measure.peakMB, 1),
        ]
        result["tiny_sync_ms"] = tiny.map { rounded($0, 4) }
        result["tiny_sync_after_snapshot_ms"] = tinyAfter.map { rounded($0, 4) }
        result["tiny_stroke_sync_ms"] = tinyStroke.map { rounded($0, 4) }
        return result
    }

    /// Median milliseconds of a one-field edit on a followed by a sync with b.
    private mutating func tinySyncs(_ a: Int, _ b: Int, tag: String, count: Int = 5) throws -> Double {
        var times: [Double] = []
        for index in 0..<count {
            clock += 1
            try docs[a].edit(at: clock) { try $0.set(.description, to: .string("\(tag) \(index)")) }
            times.append(try Measure.seconds { try sync(a, b) } * 1000)
        }
        return Measure.median(times)
    }

    /// Median milliseconds of one 80-point stroke on a followed by a sync with b.
    private mutating func tinyStrokeSyncs(_ a: Int, _ b: Int, count: Int = 5) throws -> Double {
        guard let shot = docs[a].view.shots.first(where: { !$0.layers.isEmpty }), let layer = shot.layers.first else { return 0 }
        let points = (0..<80).map { Point(x: 0.2 + Double($0) * 0.005, y: 0.5 + 0.1 * Double($0 % 7) / 7, pressure: 0.6) }
        var times: [Double] = []
        for _ in 0..<count {
            clock += 1
            try docs[a].edit(at: clock) { try $0.addStroke(to: layer.id, brush: Brush(), points: points) }
            times.append(try Measure.seconds { try sync(a, b) } * 1000)
        }
        return Measure.median(times)
    }

    /// TRACE.md's `ids_digest`: SHA-256 of the sorted SCENE/SHOT[/LAYER[/STROKE]]
    /// lines of trace ids, first 16 hex digits.
    private func idsDigest(_ view: ProjectView) -> String {
        let names = traceIDs.names()
        var lines: [String] = []
        for scene in view.scenes {
            let s = names[scene.id] ?? scene.id.description
            for shot in scene.shots {
                let x = "\(s)/\(names[shot.id] ?? shot.id.description)"
                lines.append(x)
                for layer in shot.layers {
                    let l = "\(x)/\(names[layer.id] ?? layer.id.description)"
                    lines.append(l)
                    for stroke in layer.strokes { lines.append("\(l)/\(names[stroke.id] ?? stroke.id.description)") }
                }
            }
        }
        lines.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        if let path = ProcessInfo.processInfo.environment["STORYTELLER_DUMP_IDS"] {
            _ = FileManager.default.createFile(atPath: path, contents: Data(lines.joined(separator: "\n").utf8))
        }
        return String(Measure.sha256Hex(Array(lines.joined(separator: "\n").utf8)).prefix(16))
    }
}

/// Trace ids and the StoryCore ids they became (ids are global: minted once).
/// Trace ids (`sc0.1`, `sh1.a`, `ly2.3`, `k1.5a1`) are packed into integers so
/// the benchmark's own maps stay small next to the replicas it measures.
struct TraceIDs {
    /// The benchmark's own bookkeeping, not a replica's, yet inside the RSS
    /// it reports: so it is kept small. A trace id is a kind, a replica and
    /// that replica's count of ids of that kind (gen_trace.py), so ids live in
    /// dense columns by kind and replica, indexed by count, grown in steps:
    /// 8 bytes an id (and 8 for a stroke's layer) where dictionaries took
    /// about 100 (5 MB on the medium trace), then OpIDs in columns grown by
    /// doubling 1.7 MB. A count beyond `denseLimit` goes to a dictionary.
    private var columns: [[UInt64]] = []
    /// The replicas of the ids recorded: an id is kept as 8 bytes, its
    /// replica's place here (plus one) above its 48-bit counter (0: none).
    private var replicas: [ReplicaID] = []
    private var layerColumns: [[UInt64]] = []
    private var sparse: [UInt64: OpID] = [:]
    private var sparseLayers: [UInt64: UInt64] = [:]

    private static let prefixes = ["sc", "sh", "ly", "k"]
    private static let denseLimit: UInt64 = 1 << 24

    /// Packs `prefix` `replica` `.` `hexcounter` into kind, replica and counter
    /// bits. Reads the UTF-8 bytes: it runs for every operation, inside the
    /// time an operation is charged with.
    static func pack(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { bytes -> UInt64? in
            var index = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "a"), bytes[index] <= UInt8(ascii: "z") { index += 1 }
            let kind: UInt64
            switch (index, index > 0 ? bytes[0] : 0, index > 1 ? bytes[1] : 0) {
            case (2, UInt8(ascii: "s"), UInt8(ascii: "c")): kind = 1
            case (2, UInt8(ascii: "s"), UInt8(ascii: "h")): kind = 2
            case (2, UInt8(ascii: "l"), UInt8(ascii: "y")): kind = 3
            case (1, UInt8(ascii: "k"), _): kind = 4
            default: return nil
            }
            var replica: UInt64 = 0
            let replicaStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ".") {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10, replica < 256 else { return nil }
                replica = replica * 10 + UInt64(digit)
                index += 1
            }
            guard index > replicaStart, index < bytes.count, replica < 256 else { return nil }
            index += 1  // the dot
            var counter: UInt64 = 0
            let counterStart = index
            while index < bytes.count {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                guard counter < 1 << 44 else { return nil }
                counter = counter << 4 | UInt64(digit)
                index += 1
            }
            guard index > counterStart else { return nil }
            return kind << 56 | replica << 48 | counter
        }
    }

    static func unpack(_ key: UInt64) -> String {
        "\(prefixes[Int(key >> 56) - 1])\(key >> 48 & 0xFF).\(String(key & 0xFFFF_FFFF_FFFF, radix: 16))"
    }

    /// The column of a packed key (kind and replica) and its index there; nil past the dense limit.
    private static func slot(_ key: UInt64) -> (column: Int, index: Int)? {
        let counter = key & 0xFFFF_FFFF_FFFF
        guard counter < denseLimit else { return nil }
        return (Int(key >> 48), Int(counter))
    }

    private static func store<Value>(_ value: Value, at slot: (column: Int, index: Int), in columns: inout [[Value]], absent: Value) {
        if columns.count <= slot.column { columns.append(contentsOf: repeatElement([], count: slot.column + 1 - columns.count)) }
        if columns[slot.column].count <= slot.index {
            // Grown in steps of 8,192 ids, not by doubling: this is inside the RSS measured.
            if columns[slot.column].capacity <= slot.index { columns[slot.column].reserveCapacity((slot.index / 8_192 + 1) * 8_192) }
            columns[slot.column].append(contentsOf: repeatElement(absent, count: slot.index + 1 - columns[slot.column].count))
        }
        columns[slot.column][slot.index] = value
    }

    private static func load<Value: Equatable>(_ slot: (column: Int, index: Int), in columns: [[Value]], absent: Value) -> Value? {
        guard slot.column < columns.count, slot.index < columns[slot.column].count else { return nil }
        let value = columns[slot.column][slot.index]
        return value == absent ? nil : value
    }

    mutating func record(_ traceID: String?, _ id: OpID) {
        guard let key = traceID.flatMap(Self.pack) else { return }
        if let slot = Self.slot(key), id.counter < 1 << 48, let place = place(of: id.replica) {
            Self.store(UInt64(place + 1) << 48 | id.counter, at: slot, in: &columns, absent: 0)
        } else {
            sparse[key] = id
        }
    }

    /// The replica's place in `replicas`, added if new (nil once 65,535 are there).
    private mutating func place(of replica: ReplicaID) -> Int? {
        if let place = replicas.firstIndex(of: replica) { return place }
        guard replicas.count < 0xFFFF else { return nil }
        replicas.append(replica)
        return replicas.count - 1
    }

    private func unpackID(_ packed: UInt64) -> OpID {
        OpID(counter: packed & 0xFFFF_FFFF_FFFF, replica: replicas[Int(packed >> 48) - 1])
    }

    func id(_ traceID: String) -> OpID? {
        guard let key = Self.pack(traceID) else { return nil }
        guard let slot = Self.slot(key), let packed = Self.load(slot, in: columns, absent: 0) else { return sparse[key] }
        return unpackID(packed)
    }

    mutating func setLayer(_ layer: String, ofStroke stroke: String) {
        guard let strokeKey = Self.pack(stroke), let layerKey = Self.pack(layer) else { return }
        if let slot = Self.slot(strokeKey) {
            Self.store(layerKey, at: slot, in: &layerColumns, absent: 0)
        } else {
            sparseLayers[strokeKey] = layerKey
        }
    }

    func layer(ofStroke stroke: String) -> String? {
        guard let key = Self.pack(stroke) else { return nil }
        let layer = Self.slot(key).map { Self.load($0, in: layerColumns, absent: 0) } ?? sparseLayers[key]
        return layer.map(Self.unpack)
    }

    /// StoryCore id → trace id, for the digest at the end.
    func names() -> [OpID: String] {
        var names = Dictionary(uniqueKeysWithValues: sparse.map { ($0.value, Self.unpack($0.key)) })
        for (column, ids) in columns.enumerated() {
            for (counter, packed) in ids.enumerated() where packed != 0 {
                names[unpackID(packed)] = Self.unpack(UInt64(column) << 48 | UInt64(counter))
            }
        }
        return names
    }

    func visible(_ traceID: String?, _ doc: ProjectDocument, kind: ObjectKind) -> OpID? {
        guard let traceID, let id = id(traceID), doc.kind(of: id) == kind, doc.isVisible(id) else { return nil }
        return id
    }
}
