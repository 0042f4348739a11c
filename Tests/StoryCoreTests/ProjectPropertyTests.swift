import StoryTestSupport
import Testing

@testable import StoryCore

/// Seeded random scenarios: 2–7 replicas doing random mixes of every edit,
/// random partitions, random and duplicated delivery of changes, snapshot
/// merges, then a full sync. Replay one with `STORYTELLER_SEED=<seed>`; run
/// more with `STORYTELLER_PROPERTY_SCENARIOS=<count>`.
@Suite struct ProjectPropertyTests {
    static let chunks = 8
    static let scenarios = TestSeeds.scenarioCount(default: 2000)

    @Test(arguments: 0..<chunks)
    func randomScenariosConvergeAndLoseNoStroke(chunk: Int) async throws {
        // Seconds of CPU: on a thread of its own, not the pool in-process daemons answer on (`onOwnThread`).
        try await onOwnThread {
            let seeds = TestSeeds.seeds(count: Self.scenarios)
            var totals = (strokes: 0, shots: 0, erased: 0, changes: 0, scenarios: 0)
            for (index, seed) in seeds.enumerated() where index % Self.chunks == chunk || seeds.count == 1 {
                if seeds.count == 1 && chunk != 0 { return }
                do {
                    var scenario = try ProjectScenario(seed: seed &* 7919)
                    try scenario.run()
                    try scenario.check()
                    let view = scenario.docs[0].view
                    totals.strokes += view.counts.strokes
                    totals.shots += view.counts.shots
                    totals.erased += scenario.erased.count
                    totals.changes += Int(scenario.docs[0].versionVector.totalChanges)
                    totals.scenarios += 1
                } catch {
                    Issue.record("project scenario failed: replay with STORYTELLER_SEED=\(seed): \(error)")
                    return
                }
            }
            if ProcessInfoShim.verbose { print("chunk \(chunk): \(totals)") }
            // The scenarios really edit: a property that holds for empty documents proves nothing.
            if totals.scenarios >= 20 {
                #expect(totals.strokes > totals.scenarios && totals.shots > totals.scenarios)
                #expect(totals.erased > 0 && totals.changes > 10 * totals.scenarios)
            }
        }
    }
}

/// One random project scenario.
struct ProjectScenario {
    var random: SeededGenerator
    var docs: [ProjectDocument]
    /// Partition group of each replica; replicas only exchange within a group.
    var groups: [Int]
    /// Stroke keys put into layers, and keys ever erased, from the changes made.
    var added: Set<LayerKey> = []
    var erased: Set<LayerKey> = []
    var snapshotsBeforeFinalSync: [[UInt8]] = []

    struct LayerKey: Hashable {
        var layer: OpID
        var key: OpID
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(seed: UInt64) throws {
        random = SeededGenerator(seed: seed)
        let count = Int.random(in: 2...7, using: &random)
        // Half the scenarios start from nothing, half from a shared small board.
        if random.chance(0.5) {
            docs = (0..<count).map { ProjectDocument(id: Board.documentID, replica: ReplicaID(UInt64($0) + 1)) }
        } else {
            let board = try Board(replica: 100, scenes: 2, shots: 2, layers: 1)
            docs = try (0..<count).map { try board.replica(UInt64($0) + 1) }
        }
        groups = Array(repeating: 0, count: count)
    }

    mutating func run() throws {
        let steps = random.int(40...120)
        for _ in 0..<steps {
            let r = random.int(0...(docs.count - 1))
            switch random.int(0...99) {
            case 0..<62: try edit(r)
            case 62..<70: try undoOrRedo(r)
            case 70..<80: try syncPair(r)
            case 80..<88: try deliverSome(to: r)
            case 88..<92: try mergeSnapshot(into: r)
            case 92..<94: try compactAndResync(r)
            case 94..<98: try conflict(r)
            default: partition()
            }
        }
        snapshotsBeforeFinalSync = docs.map { $0.snapshot() }
        groups = Array(repeating: 0, count: docs.count)
        try WireSync.syncAll(&docs)
    }

    // MARK: - Edits

    mutating func record(_ change: EncodedChange?) throws {
        guard let change else { return }
        let decoded = try change.decoded()
        for (index, op) in decoded.operations.enumerated() {
            switch op {
            case .addStroke(let layer, _, _): added.insert(LayerKey(layer: layer, key: decoded.opID(at: index)))
            case .putStroke(let layer, let key, _): added.insert(LayerKey(layer: layer, key: key))
            case .eraseStroke(let layer, let key): erased.insert(LayerKey(layer: layer, key: key))
            default: break
            }
        }
    }

    mutating func edit(_ r: Int) throws {
        let view = docs[r].view
        let scenes = view.scenes.map(\.id)
        let shots = view.shots.map(\.id)
        let layers = view.shots.flatMap(\.layers).map(\.id)
        let time = Int64(random.int(0...1_000_000))
        var random = self.random
        defer { self.random = random }
        let session = "session-\(r)"
        let change = try docs[r].edit(session: session, at: time) { editor in
            for _ in 0..<random.int(1...3) {
                switch random.int(0...22) {
                case 0, 1:
                    let scene = try editor.insertScene(at: random.int(0...editor.scenes.count))
                    try editor.set(.title, to: .string("Scene \(random.int(1...99))"), on: scene)
                case 2, 3:
                    guard let scene = random.pick(editor.scenes) else { continue }
                    let shot = try editor.insertShot(in: scene, at: random.int(0...editor.shots(in: scene).count))
                    try editor.insertLayer(in: shot, at: 0)
                case 4:
                    guard let shot = random.pick(shots), editor.isVisible(shot) else { continue }
                    try editor.insertLayer(in: shot, at: random.int(0...editor.layers(in: shot).count))
                case 5, 6, 7, 8:
                    guard let layer = random.pick(layers), editor.kind(of: layer) == .layer else { continue }
                    let points = randomPoints(random.int(1...20), using: &random)
                    try editor.addStroke(to: layer, brush: Brush(tool: .pencil, width: 0.002), points: points)
                case 9:
                    guard let layer = random.pick(layers),
                        let stroke = random.pick(view.shots.flatMap(\.layers).first { $0.id == layer }?.strokes ?? []),
                        editor.stroke(stroke.id, in: layer) != nil
                    else { continue }
                    try editor.eraseStroke(stroke.id, in: layer)
                case 10:
                    guard let layer = view.shots.flatMap(\.layers).filter({ !$0.strokes.isEmpty }).randomElement(using: &random) else { continue }
                    let keys = layer.strokes.map(\.id).filter { editor.stroke($0, in: layer.id) != nil }
                    if random.chance(0.5) {
                        try editor.transformStrokes(keys, in: layer.id, by: .translation(x: 0.01, y: -0.01))
                    } else {
                        try editor.restyleStrokes(keys, in: layer.id) { $0.color = Color(rgba: UInt32.random(in: 0...UInt32.max, using: &random)) }
                    }
                case 11:
                    guard let layer = random.pick(layers) else { continue }
                    if let key = editor.erasedKey(in: layer, using: &random) { try editor.restoreStroke(key, in: layer) }
                case 12:
                    guard let scene = random.pick(editor.scenes) else { continue }
                    try editor.move(scene, to: random.int(0...(editor.scenes.count - 1)))
                case 13, 14:
                    guard let shot = random.pick(shots), editor.isVisible(shot), let target = random.pick(editor.scenes) else { continue }
                    let here = editor.container(of: shot)
                    let count = editor.shots(in: target).count - (here == target ? 1 : 0)
                    try editor.move(shot, to: random.int(0...max(count, 0)), in: target)
                case 15:
                    guard let layer = random.pick(layers), editor.isVisible(layer), let shot = editor.container(of: layer) else { continue }
                    try editor.move(layer, to: random.int(0...(editor.layers(in: shot).count - 1)))
                case 16:
                    guard let target = random.pick(scenes + shots + layers) else { continue }
                    try editor.delete(target)
                case 17:
                    guard let target = random.pick(scenes + shots + layers + editor.hiddenObjects()) else { continue }
                    try editor.restore(target)
                case 18:
                    guard let shot = random.pick(shots), editor.isVisible(shot) else { continue }
                    switch random.int(0...6) {
                    case 0: try editor.set(.caption, to: .string("caption \(random.int(0...9))"), on: shot)
                    case 1: try editor.set(.duration, to: .number(Double(random.int(1...80)) / 10), on: shot)
                    case 2: try editor.set(.background, to: .color(Color(rgba: UInt32.random(in: 0...UInt32.max, using: &random))), on: shot)
                    case 3: try editor.set(.dialogue, to: .string("line \(random.int(0...9))"), on: shot)
                    case 4:
                        // A shot's sound: set (replacing), or cleared.
                        let sound = MediaReference(
                            hash: Self.blobHash(random.int(0...3)), type: .wav, byteCount: 1000, duration: Double(random.int(1...9)),
                            offset: Double(random.int(0...2)))
                        try editor.set(.sound, to: random.chance(0.7) ? .media(sound) : .null, on: shot)
                    case 5:
                        // An image layer, as `images add` makes one.
                        let layer = try editor.insertLayer(in: shot, at: 0)
                        let image = MediaReference(
                            hash: Self.blobHash(random.int(0...3)), type: .png, byteCount: 2000, pixelWidth: 64, pixelHeight: 36)
                        try editor.set(.image, to: .media(image), on: layer)
                        try editor.set(.fit, to: .string(random.pick(FieldKey.fitModes)!), on: layer)
                    default: try editor.set(.notes, to: .null, on: shot)
                    }
                case 19:
                    guard let shot = random.pick(shots), editor.isVisible(shot) else { continue }
                    try editor.duplicateShot(shot)
                case 20:
                    guard let layer = random.pick(layers), editor.isVisible(layer), let shot = editor.container(of: layer) else { continue }
                    if random.chance(0.5) { try editor.groupLayers(editor.layers(in: shot)) } else { try editor.ungroupLayers([layer]) }
                case 21:
                    // The project itself to the trash and back: a flag that hides nothing inside.
                    if random.chance(0.5) { try editor.deleteProject() } else { try editor.restoreProject() }
                default:
                    try editor.set(.title, to: .string("Board \(random.int(0...9))"))
                    if let layer = random.pick(layers) { try editor.set(.opacity, to: .number(Double(random.int(0...10)) / 10), on: layer) }
                }
            }
        }.change
        try record(change)
    }

    /// One of a few made-up blob hashes (media values only reference blobs).
    static func blobHash(_ index: Int) -> BlobHash {
        BlobHash(Array(repeating: UInt8(index + 1), count: 32))!
    }

    /// The adversarial cases on purpose: two replicas move one shot to
    /// different scenes, or one moves it into a scene the other deletes, or
    /// one draws on it while the other moves it.
    mutating func conflict(_ r: Int) throws {
        let other = random.int(0...(docs.count - 1))
        guard other != r else { return }
        let shots = docs[r].view.shots.map(\.id).filter { docs[other].isVisible($0) }
        let scenes = docs[r].scenes.filter { docs[other].isVisible($0) }
        guard let shot = random.pick(shots), scenes.count >= 2 else { return }
        let (a, b) = (scenes[0], scenes[1])
        let time = Int64(random.int(0...1000))
        try record(try docs[r].edit(at: time) { try $0.move(shot, to: 0, in: a) }.change)
        switch random.int(0...2) {
        case 0:
            try record(try docs[other].edit(at: time) { try $0.move(shot, to: 0, in: b) }.change)
        case 1:
            try record(try docs[other].edit(at: time) { try $0.delete(a) }.change)
        default:
            guard let layer = docs[other].layers(in: shot).first else { return }
            var random = self.random
            try record(
                try docs[other].edit(at: time) { editor in
                    try editor.addStroke(to: layer, brush: Brush(), points: randomPoints(5, using: &random))
                }.change)
            self.random = random
        }
    }

    mutating func undoOrRedo(_ r: Int) throws {
        let time = Int64(random.int(0...1_000_000))
        let older = random.chance(0.3)
        let change =
            random.chance(0.7)
            ? try docs[r].undo(session: "session-\(r)", older: older, at: time).change
            : try docs[r].redo(session: "session-\(r)", older: older, at: time).change
        try record(change)
    }

    // MARK: - Delivery

    func sameGroup(_ a: Int, _ b: Int) -> Bool { groups[a] == groups[b] }

    mutating func syncPair(_ r: Int) throws {
        let other = random.int(0...(docs.count - 1))
        guard other != r, sameGroup(r, other) else { return }
        try WireSync.exchange(&docs, r, other)
    }

    /// Delivers a random subset of another replica's changes, shuffled and with
    /// duplicates, as a network with reordering and retries would.
    mutating func deliverSome(to r: Int) throws {
        let source = random.int(0...(docs.count - 1))
        guard source != r, sameGroup(r, source), case .changes(let all) = docs[source].changes(since: VersionVector()) else {
            return
        }
        var chosen = all.filter { _ in random.chance(0.6) }
        chosen += chosen.filter { _ in random.chance(0.3) }
        chosen.shuffle(using: &random)
        guard !chosen.isEmpty else { return }
        try docs[r].apply(batch: ChangeBatch.encode(chosen)[...])
    }

    mutating func mergeSnapshot(into r: Int) throws {
        let source = random.int(0...(docs.count - 1))
        guard source != r, sameGroup(r, source) else { return }
        try docs[r].merge(snapshot: docs[source].snapshot())
    }

    /// A replica reloads from its own snapshot and compacts: its log restarts,
    /// so peers behind it get a snapshot instead of changes.
    mutating func compactAndResync(_ r: Int) throws {
        docs[r] = try ProjectDocument(snapshot: docs[r].snapshot(), replica: docs[r].replica)
        let other = random.int(0...(docs.count - 1))
        guard other != r, sameGroup(r, other) else { return }
        if case .snapshotRequired = docs[r].changes(since: docs[other].versionVector) {
            try docs[other].merge(snapshot: docs[r].snapshot())
        }
    }

    mutating func partition() {
        groups = docs.indices.map { _ in random.int(0...1) }
    }

    // MARK: - Checks

    func check() throws {
        let reference = docs[0].view
        for (index, doc) in docs.enumerated() {
            guard doc.view == reference else { throw Failure(description: "replica \(index) differs from replica 0") }
            guard doc.pendingChangeCount == 0 else { throw Failure(description: "replica \(index) holds changes back") }
            guard doc.versionVector == docs[0].versionVector else { throw Failure(description: "version vectors differ") }
        }
        // Nothing shown twice.
        let scenes = reference.scenes.map(\.id)
        let shots = reference.shots.map(\.id)
        let layers = reference.shots.flatMap(\.layers).map(\.id)
        for (name, ids) in [("scene", scenes), ("shot", shots), ("layer", layers)] where Set(ids).count != ids.count {
            throw Failure(description: "a \(name) is shown twice")
        }
        // No stroke lost: every stroke put and never erased is there, and shown
        // wherever its layer is shown.
        let shown = Set(reference.shots.flatMap(\.layers).flatMap { layer in layer.strokes.map { LayerKey(layer: layer.id, key: $0.id) } })
        for stroke in added.subtracting(erased) {
            guard docs[0].stroke(stroke.key, in: stroke.layer) != nil else {
                throw Failure(description: "stroke \(stroke.key) of layer \(stroke.layer) was lost")
            }
            if docs[0].isVisible(stroke.layer) && !shown.contains(stroke) {
                throw Failure(description: "stroke \(stroke.key) of a shown layer is not shown")
            }
        }
        // Merge laws: each final snapshot loads to the same view; merging the
        // replicas' snapshots from before the final sync, in two orders, gives it too.
        for doc in docs.prefix(2) {
            guard try ProjectDocument(snapshot: doc.snapshot(), replica: ReplicaID(1000)).view == reference else {
                throw Failure(description: "a snapshot loads to another view")
            }
        }
        var forward = ProjectDocument(id: Board.documentID, replica: ReplicaID(1001))
        for snapshot in snapshotsBeforeFinalSync { try forward.merge(snapshot: snapshot) }
        var backward = ProjectDocument(id: Board.documentID, replica: ReplicaID(1002))
        for snapshot in snapshotsBeforeFinalSync.reversed() { try backward.merge(snapshot: snapshot) }
        try backward.merge(snapshot: snapshotsBeforeFinalSync[0])  // idempotent
        guard forward.view == reference, backward.view == reference else {
            throw Failure(description: "merging the snapshots does not give the synced view")
        }
        // Re-delivering everything changes nothing.
        var again = docs[0]
        for doc in docs {
            if case .changes(let all) = doc.changes(since: VersionVector()), !all.isEmpty {
                try again.apply(batch: ChangeBatch.encode(all)[...])
            }
        }
        guard again.view == reference else { throw Failure(description: "re-delivery changed the document") }
    }
}

extension ProjectEditor {
    /// Objects that exist but are hidden (deleted or inside something deleted).
    func hiddenObjects() -> [OpID] {
        state.allObjects.keys.filter { $0 != .root && !state.isVisible($0) }.sorted()
    }

    /// A random erased stroke key of a layer, if any.
    func erasedKey(in layer: OpID, using random: inout SeededGenerator) -> OpID? {
        random.pick(state.strokeMap(of: layer).filter { $0.value.isErased }.map(\.key).sorted())
    }
}
