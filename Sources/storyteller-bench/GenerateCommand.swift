import ArgumentParser
import Foundation

/// `storyteller-bench generate`: writes a storyteller-trace/1 file, the same
/// model and operation mix as the reference generator the Loro and Yrs
/// comparison uses (`gen_trace.py`), so the project needs nothing outside
/// itself to make its benchmark traces.
///
/// A crew of K replicas (replica 0 the director, the others artists) edits
/// one project, partly offline, with pairwise syncs. Most operations are pen
/// strokes; there are erases, layer operations, shot reorders and cross-scene
/// moves, renames and notes, and rare deletes. The generator keeps what each
/// replica can see (`TraceView`) and replays remote operations into it on
/// every sync, so operations name only items their replica can see. The same
/// arguments give the same file (a seeded generator, no wall clock, no hash
/// order); it is not byte-identical to the reference (another random
/// generator), and docs/performance.md compares the two.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write a storyboard editing trace (storyteller-trace/1).")

    enum Preset: String, ExpressibleByArgument, CaseIterable {
        case small, medium, large, conflict
    }

    @Option(help: "small (~5 k ops), medium (~60 k), large (~400 k) or conflict (concurrent moves and deletes).")
    var preset: Preset = .small

    @Option(help: "Seed of the random generator.")
    var seed: UInt64 = 1

    @Option(help: "Replicas (1 director and artists).")
    var replicas = 3

    @Option(help: "Scenes at the start (default: the preset's).")
    var scenes: Int?

    @Option(help: "Shots per scene at the start (default: the preset's).")
    var shotsPerScene: Int?

    @Option(help: "stroke.add operations to generate (default: the preset's).")
    var strokes: Int?

    @Option(help: "The trace's name (default: the preset).")
    var name: String?

    @Option(help: "The file to write.")
    var out: String

    func validate() throws {
        guard replicas >= 1 else { throw ValidationError("--replicas must be at least 1") }
        for (option, value) in [("--scenes", scenes), ("--shots-per-scene", shotsPerScene), ("--strokes", strokes)] {
            if let value, value < 0 { throw ValidationError("\(option) must not be negative") }
        }
    }

    func run() throws {
        var settings = TraceGenerator.Settings(preset: preset)
        settings.replicas = replicas
        if let scenes { settings.scenes = scenes }
        if let shotsPerScene { settings.shotsPerScene = shotsPerScene }
        if let strokes { settings.strokes = strokes }
        var generator = TraceGenerator(settings: settings, seed: seed)
        generator.run()
        let header =
            "{\"trace\":\"storyteller-trace/1\",\"name\":\(TraceLine.quoted(name ?? preset.rawValue)),"
            + "\"replicas\":\(replicas),\"seed\":\(seed),\"ops\":\(generator.operationCount)}\n"
        guard FileManager.default.createFile(atPath: out, contents: nil),
            let handle = FileHandle(forWritingAtPath: out)
        else { throw ValidationError("cannot write \(out)") }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(header.utf8))
        try handle.write(contentsOf: generator.body)
        let size = Double(header.utf8.count + generator.body.count) / 1e6
        var report = "\(out): \(generator.operationCount) ops, \(String(format: "%.1f", size)) MB, \(replicas) replicas, seed \(seed)\n"
        for (op, count) in generator.mix.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            let share = 100 * Double(count) / Double(max(generator.operationCount, 1))
            report += "  \(op.padding(toLength: 13, withPad: " ", startingAt: 0)) \(String(format: "%8d  %5.1f%%", count, share))\n"
        }
        let adds = max(generator.mix["stroke.add", default: 0], 1)
        report +=
            "  points: \(generator.points) total, \(String(format: "%.1f", Double(generator.points) / Double(adds))) per stroke; "
            + "erases = \(String(format: "%.1f", 100 * Double(generator.mix["stroke.erase", default: 0]) / Double(adds)))% of strokes; "
            + "cross-scene shot moves: \(generator.crossMoves)\n"
        FileHandle.standardError.write(Data(report.utf8))
    }
}

/// xoshiro256** seeded through SplitMix64, with the distributions the model
/// draws from (the names follow Python's `random`, which the reference uses).
struct TraceRandom {
    private var state: (UInt64, UInt64, UInt64, UInt64)
    private var spareGaussian: Double?

    init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    private mutating func next() -> UInt64 {
        let result = ((state.1 &* 5) << 7 | (state.1 &* 5) >> 57) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = state.3 << 45 | state.3 >> 19
        return result
    }

    /// Uniform in [0, 1).
    mutating func random() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * random() }

    /// Uniform in 0..<count (count ≥ 1).
    mutating func below(_ count: Int) -> Int { Int(next() % UInt64(count)) }

    /// Uniform in low...high.
    mutating func integer(_ low: Int, _ high: Int) -> Int { low + below(high - low + 1) }

    /// Normal (Box–Muller, both values used).
    mutating func gauss(_ mean: Double, _ deviation: Double) -> Double {
        if let spare = spareGaussian {
            spareGaussian = nil
            return mean + deviation * spare
        }
        let u = 1 - random()
        let v = random()
        let radius = (-2 * Foundation.log(u)).squareRoot()
        spareGaussian = radius * sin(2 * .pi * v)
        return mean + deviation * radius * cos(2 * .pi * v)
    }

    mutating func logNormal(_ mean: Double, _ deviation: Double) -> Double { exp(gauss(mean, deviation)) }

    mutating func exponential(rate: Double) -> Double { -Foundation.log(1 - random()) / rate }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// An index drawn with the given weights.
    mutating func weighted(_ weights: [Double]) -> Int {
        var target = random() * weights.reduce(0, +)
        for (index, weight) in weights.enumerated() {
            if target < weight { return index }
            target -= weight
        }
        return weights.count - 1
    }
}

/// What one replica can see, as far as the generator needs it: an item is
/// visible when its creation is known, no delete of it is known and its
/// parent is visible. A shot's scene is a last-writer-wins register stamped
/// with the global operation number. Positions are approximate (the real
/// ones depend on CRDT tie-breaks; the runner clamps).
struct TraceView {
    /// Operations known per origin replica (always a prefix of its log).
    var known: [Int]
    var scenes: [String] = []
    var sceneAlive: Set<String> = []
    var shots: [String: [String]] = [:]
    /// Live shot → (scene, stamp).
    var parent: [String: (scene: String, stamp: Int)] = [:]
    var layers: [String: [String]] = [:]
    var layerShot: [String: String] = [:]
    /// Live layer → its strokes (an ordered set: a list and each one's place).
    var strokes: [String: OrderedStrokes] = [:]

    struct OrderedStrokes {
        var items: [String] = []
        var places: [String: Int] = [:]

        mutating func insert(_ id: String) {
            guard places[id] == nil else { return }
            places[id] = items.count
            items.append(id)
        }

        mutating func remove(_ id: String) {
            guard let place = places.removeValue(forKey: id) else { return }
            let last = items.removeLast()
            if place < items.count {
                items[place] = last
                places[last] = place
            }
        }

        func contains(_ id: String) -> Bool { places[id] != nil }
    }

    init(replicas: Int) { known = Array(repeating: 0, count: replicas) }

    mutating func apply(_ stamp: Int, _ event: TraceEvent) {
        func insert(_ id: String, into list: inout [String], at index: Int) {
            list.insert(id, at: min(max(index, 0), list.count))
        }
        func move(_ id: String, in list: inout [String], to index: Int) {
            guard let at = list.firstIndex(of: id) else { return }
            list.remove(at: at)
            insert(id, into: &list, at: index)
        }
        switch event.op {
        case "stroke.add":
            strokes[event.layer!]?.insert(event.id!)
        case "stroke.erase":
            strokes[event.layer!]?.remove(event.id!)
        case "scene.insert":
            insert(event.id!, into: &scenes, at: event.index!)
            sceneAlive.insert(event.id!)
            if shots[event.id!] == nil { shots[event.id!] = [] }
        case "scene.move":
            if sceneAlive.contains(event.id!) { move(event.id!, in: &scenes, to: event.index!) }
        case "scene.delete":
            if sceneAlive.remove(event.id!) != nil { scenes.removeAll { $0 == event.id! } }
        case "shot.insert":
            insert(event.id!, into: &shots[event.scene!, default: []], at: event.index!)
            parent[event.id!] = (event.scene!, stamp)
            if layers[event.id!] == nil { layers[event.id!] = [] }
        case "shot.move":
            guard let current = parent[event.id!] else { return }
            if !event.cross {
                if current.scene == event.scene! { move(event.id!, in: &shots[current.scene, default: []], to: event.index!) }
            } else if stamp > current.stamp {  // last writer wins
                shots[current.scene]?.removeAll { $0 == event.id! }
                insert(event.id!, into: &shots[event.scene!, default: []], at: event.index!)
                parent[event.id!] = (event.scene!, stamp)
            }
        case "shot.delete":
            if let current = parent.removeValue(forKey: event.id!) { shots[current.scene]?.removeAll { $0 == event.id! } }
        case "layer.insert":
            insert(event.id!, into: &layers[event.shot!, default: []], at: event.index!)
            layerShot[event.id!] = event.shot!
            strokes[event.id!] = OrderedStrokes()
        case "layer.move":
            if let shot = layerShot[event.id!] { move(event.id!, in: &layers[shot, default: []], to: event.index!) }
        case "layer.delete":
            if let shot = layerShot.removeValue(forKey: event.id!) {
                layers[shot]?.removeAll { $0 == event.id! }
                strokes[event.id!] = nil
            }
        default:
            break  // project.set and *.set do not change what is visible
        }
    }

    func shotVisible(_ shot: String) -> Bool { parent[shot].map { sceneAlive.contains($0.scene) } ?? false }

    func layerVisible(_ layer: String) -> Bool { layerShot[layer].map(shotVisible) ?? false }

    var visibleShots: [String] { scenes.flatMap { shots[$0] ?? [] } }
}

/// An operation as the replica models see it (no points; the layer of an erase).
struct TraceEvent {
    var op: String
    var id: String?
    var layer: String?
    var scene: String?
    var shot: String?
    var index: Int?
    var cross = false
}

/// One JSON line, fields in the order they are added.
struct TraceLine {
    private(set) var text: String

    init(replica: Int, op: String) { text = "{\"r\":\(replica),\"op\":\(Self.quoted(op))" }

    mutating func add(_ key: String, _ value: String) { text += ",\"\(key)\":\(Self.quoted(value))" }
    mutating func add(_ key: String, _ value: Int) { text += ",\"\(key)\":\(value)" }
    mutating func add(_ key: String, _ value: Double) { text += ",\"\(key)\":\(Self.number(value))" }
    mutating func add(_ key: String, _ value: Bool) { text += ",\"\(key)\":\(value)" }
    mutating func add(_ key: String, points: [Double]) {
        text += ",\"\(key)\":["
        text += points.map(Self.number).joined(separator: ",")
        text += "]"
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : "\(value)"
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// The generator: the reference's model, step for step.
struct TraceGenerator {
    struct Settings {
        var replicas = 3
        var scenes: Int
        var shotsPerScene: Int
        var strokes: Int
        /// Share of turns spent editing (nil: by role, the director mostly edits).
        var editShare: Double?
        var syncProbability = 0.7
        var deleteBoost = 1.0

        init(preset: GenerateCommand.Preset) {
            switch preset {
            case .small: (scenes, shotsPerScene, strokes) = (4, 5, 4_200)
            case .medium: (scenes, shotsPerScene, strokes) = (12, 8, 50_000)
            case .large: (scenes, shotsPerScene, strokes) = (30, 12, 335_000)
            case .conflict:
                (scenes, shotsPerScene, strokes) = (6, 5, 2_000)
                (editShare, syncProbability, deleteBoost) = (0.6, 0.25, 8.0)
            }
        }
    }

    static let places = [
        "KITCHEN", "ROOFTOP", "SUBWAY PLATFORM", "LIGHTHOUSE", "CAFÉ", "FOREST ROAD",
        "OFFICE", "HOSPITAL CORRIDOR", "BEACH", "CAR", "STAIRWELL", "MARKET",
    ]
    static let times = ["DAY", "NIGHT", "DAWN", "DUSK", "CONTINUOUS"]
    static let camera = [
        "Slow push in", "Pan left", "Pan right", "Tilt up", "Hold", "Whip pan", "Dolly out",
        "Handheld follow", "Crane down", "Rack focus",
    ]
    static let subjects = [
        "Mara", "the keeper", "the door", "the letter", "the storm", "Theo", "the crowd", "the lamp", "the train", "the dog",
    ]
    static let details = [
        "keep the horizon low", "silhouette against the window", "match cut to next shot",
        "lens flare — subtle", "beat of silence", "rain on glass", "over-the-shoulder",
        "wide, then punch in", "VFX: add fog later", "sound cue: foghorn",
    ]
    static let lines = [
        "I told you it would come back.", "Don't open it.", "Where were you last night?",
        "We leave at dawn.", "It's not the light — it's the sea.", "Keep walking.",
        "Did you hear that?", "(whispers) Now.", "You kept the key?", "Café at eight?",
    ]
    static let layerNames = ["Rough", "Ink", "Color", "BG", "Characters", "FX", "Notes", "Camera"]
    static let projectTitles = ["The Lighthouse Keeper", "Night Train", "Saltwater", "The Last Letter"]
    static let tools = ["pen", "marker", "pencil"]
    static let toolWeights = [0.55, 0.15, 0.30]
    static let brushes: [String: (colors: [String], widths: (Double, Double))] = [
        "pen": (["#1B1B1BFF", "#2C3E50FF", "#C0392BFF", "#2471A3FF"], (0.0015, 0.004)),
        "marker": (["#7F8C8D66", "#F4D03F80", "#5DADE299", "#A569BD80"], (0.008, 0.03)),
        "pencil": (["#555555CC", "#3A6EA5B3", "#B03A2EB3"], (0.001, 0.0025)),
    ]

    let settings: Settings
    var random: TraceRandom
    var views: [TraceView]
    /// Per origin replica: (stamp, event) in the order made.
    var log: [[(Int, TraceEvent)]]
    var stamp = 0
    var minted: [String: Int] = [:]
    private(set) var mix: [String: Int] = [:]
    private(set) var points = 0
    private(set) var crossMoves = 0
    /// Shot → the artist who mostly draws it.
    var owner: [String: Int] = [:]
    /// Turns each replica stays offline.
    var offline: [Int]
    /// Layer → where its drawing is centred.
    var focus: [String: (Double, Double)] = [:]
    /// The operation lines written so far.
    private(set) var body = Data()

    init(settings: Settings, seed: UInt64) {
        self.settings = settings
        random = TraceRandom(seed: seed)
        views = Array(repeating: TraceView(replicas: settings.replicas), count: settings.replicas)
        log = Array(repeating: [], count: settings.replicas)
        offline = Array(repeating: 0, count: settings.replicas)
    }

    var operationCount: Int { mix.values.reduce(0, +) }

    static func r5(_ value: Double) -> Double { (value * 100_000).rounded() / 100_000 }
    static func clamp(_ value: Double, _ low: Double, _ high: Double) -> Double { min(max(value, low), high) }

    // MARK: - Plumbing

    mutating func mint(_ prefix: String, _ replica: Int) -> String {
        let key = "\(prefix)\(replica)"
        minted[key, default: 0] += 1
        return "\(key).\(String(minted[key]!, radix: 16))"
    }

    /// Writes one line and applies it to the replica's model.
    mutating func emit(_ line: TraceLine, op: String, replica: Int, event: TraceEvent?) {
        body.append(contentsOf: (line.text + "}\n").utf8)
        mix[op, default: 0] += 1
        guard let event else { return }
        stamp += 1
        views[replica].apply(stamp, event)
        views[replica].known[replica] += 1
        log[replica].append((stamp, event))
    }

    mutating func sync(_ a: Int, _ b: Int) {
        var line = TraceLine(replica: a, op: "sync")
        line.add("a", a)
        line.add("b", b)
        emit(line, op: "sync", replica: a, event: nil)
        for (destination, source) in [(a, b), (b, a)] {
            var arriving: [(Int, TraceEvent)] = []
            for origin in 0..<settings.replicas where views[destination].known[origin] < views[source].known[origin] {
                arriving += log[origin][views[destination].known[origin]..<views[source].known[origin]]
            }
            arriving.sort { $0.0 < $1.0 }  // causal order
            for (stamp, event) in arriving { views[destination].apply(stamp, event) }
            for origin in 0..<settings.replicas {
                views[destination].known[origin] = max(views[destination].known[origin], views[source].known[origin])
            }
        }
    }

    mutating func index(in list: [String], appendBias: Double = 0.7) -> Int {
        random.random() < appendBias ? list.count : random.integer(0, list.count)
    }

    // MARK: - Structure

    @discardableResult
    mutating func newShot(_ replica: Int, scene: String, index: Int? = nil) -> String {
        let shot = mint("sh", replica)
        let at = index ?? self.index(in: views[replica].shots[scene] ?? [])
        var line = TraceLine(replica: replica, op: "shot.insert")
        line.add("id", shot)
        line.add("scene", scene)
        line.add("index", at)
        emit(line, op: "shot.insert", replica: replica, event: TraceEvent(op: "shot.insert", id: shot, scene: scene, index: at))
        var duration = TraceLine(replica: replica, op: "shot.set")
        duration.add("id", shot)
        duration.add("key", "duration")
        duration.add("value", (random.uniform(1, 6) * 10).rounded() / 10)
        emit(duration, op: "shot.set", replica: replica, event: TraceEvent(op: "shot.set", id: shot))
        owner[shot] = settings.replicas > 1 ? 1 + random.below(settings.replicas - 1) : 0
        newLayer(replica, shot: shot, name: "Rough")
        return shot
    }

    @discardableResult
    mutating func newLayer(_ replica: Int, shot: String, name: String? = nil) -> String {
        let layer = mint("ly", replica)
        let layerName = name ?? random.pick(Self.layerNames)
        let at = views[replica].layers[shot]?.count ?? 0
        var line = TraceLine(replica: replica, op: "layer.insert")
        line.add("id", layer)
        line.add("shot", shot)
        line.add("index", at)
        line.add("name", layerName)
        emit(line, op: "layer.insert", replica: replica, event: TraceEvent(op: "layer.insert", id: layer, shot: shot, index: at))
        focus[layer] = (random.uniform(0.25, 0.75), random.uniform(0.25, 0.75))
        return layer
    }

    mutating func sceneTitle() -> String {
        "\(random.pick(["INT.", "EXT."])) \(random.pick(Self.places)) - \(random.pick(Self.times))"
    }

    mutating func newScene(_ replica: Int, shots: Int, index: Int? = nil) {
        let scene = mint("sc", replica)
        let title = sceneTitle()
        let at = index ?? self.index(in: views[replica].scenes)
        var line = TraceLine(replica: replica, op: "scene.insert")
        line.add("id", scene)
        line.add("title", title)
        line.add("index", at)
        emit(line, op: "scene.insert", replica: replica, event: TraceEvent(op: "scene.insert", id: scene, index: at))
        for position in 0..<shots { newShot(replica, scene: scene, index: position) }
    }

    mutating func projectSet(_ replica: Int, key: String, value: String) {
        var line = TraceLine(replica: replica, op: "project.set")
        line.add("key", key)
        line.add("value", value)
        emit(line, op: "project.set", replica: replica, event: TraceEvent(op: "project.set"))
    }

    /// The director lays out the board, then everyone syncs with them.
    mutating func setup() {
        projectSet(0, key: "title", value: random.pick(Self.projectTitles))
        projectSet(0, key: "description", value: "Animatic for the pitch — v1")
        for index in 0..<settings.scenes { newScene(0, shots: settings.shotsPerScene, index: index) }
        for other in stride(from: 1, to: settings.replicas, by: 1) { sync(0, other) }
    }

    // MARK: - Single edits (each skips silently when it has no target)

    mutating func shotSet(_ replica: Int, shot: String) {
        var line = TraceLine(replica: replica, op: "shot.set")
        line.add("id", shot)
        switch ["notes", "caption", "duration", "background"][random.weighted([4, 3, 2, 1])] {
        case "notes":
            line.add("key", "notes")
            line.add("value", "\(random.pick(Self.camera)) on \(random.pick(Self.subjects)); \(random.pick(Self.details)).")
        case "caption":
            line.add("key", "caption")
            line.add("value", random.pick(Self.lines))
        case "duration":
            line.add("key", "duration")
            line.add("value", (random.uniform(0.5, 8) * 10).rounded() / 10)
        default:
            line.add("key", "background")
            line.add("value", "#" + String(format: "%06X", random.below(1 << 24)))
        }
        emit(line, op: "shot.set", replica: replica, event: TraceEvent(op: "shot.set", id: shot))
    }

    mutating func layerSet(_ replica: Int, layer: String) {
        var line = TraceLine(replica: replica, op: "layer.set")
        line.add("id", layer)
        switch ["visible", "locked", "opacity", "name"][random.weighted([3, 2, 3, 2])] {
        case "visible":
            line.add("key", "visible")
            line.add("value", random.random() < 0.7)
        case "locked":
            line.add("key", "locked")
            line.add("value", random.random() < 0.3)
        case "opacity":
            line.add("key", "opacity")
            line.add("value", (random.uniform(0.2, 1) * 100).rounded() / 100)
        default:
            line.add("key", "name")
            line.add("value", random.pick(Self.layerNames))
        }
        emit(line, op: "layer.set", replica: replica, event: TraceEvent(op: "layer.set", id: layer))
    }

    /// One structural or metadata edit, mostly by the director.
    mutating func edit(_ replica: Int) {
        let view = views[replica]
        let shots = view.visibleShots
        let boost = settings.deleteBoost
        let kinds = [
            "shot.set", "shot.move", "shot.cross", "shot.insert", "scene.set", "scene.insert",
            "scene.move", "shot.delete", "scene.delete", "project.set", "layer.set",
        ]
        let kind = kinds[random.weighted([30, 14, 7, 9, 10, 2, 4, 1.5 * boost, 0.4 * boost, 1.5, 5])]
        if kind == "project.set" {
            if random.random() < 0.5 {
                projectSet(replica, key: "title", value: random.pick(Self.projectTitles))
            } else {
                projectSet(replica, key: "description", value: "Animatic — v\(random.integer(2, 9))")
            }
            return
        }
        if kind == "scene.insert" {
            newScene(replica, shots: random.integer(1, 3))
            return
        }
        guard !view.scenes.isEmpty else { return }
        switch kind {
        case "scene.set":
            let scene = random.pick(view.scenes)
            var line = TraceLine(replica: replica, op: "scene.set")
            line.add("id", scene)
            if random.random() < 0.6 {
                line.add("key", "title")
                line.add("value", sceneTitle())
            } else {
                let subject = random.pick(Self.subjects)
                line.add("key", "description")
                line.add("value", "\(subject.prefix(1).uppercased() + subject.dropFirst()) — \(random.pick(Self.details)).")
            }
            emit(line, op: "scene.set", replica: replica, event: TraceEvent(op: "scene.set", id: scene))
            return
        case "scene.move" where view.scenes.count > 1:
            let scene = random.pick(view.scenes)
            let at = random.below(view.scenes.count)
            var line = TraceLine(replica: replica, op: "scene.move")
            line.add("id", scene)
            line.add("index", at)
            emit(line, op: "scene.move", replica: replica, event: TraceEvent(op: "scene.move", id: scene, index: at))
            return
        case "scene.delete" where view.scenes.count > 2:
            // Only small scenes are deleted (cutting a scene full of work is rare).
            let scene = view.scenes.min { (view.shots[$0]?.count ?? 0) < (view.shots[$1]?.count ?? 0) }!
            if (view.shots[scene]?.count ?? 0) <= 2 {
                var line = TraceLine(replica: replica, op: "scene.delete")
                line.add("id", scene)
                emit(line, op: "scene.delete", replica: replica, event: TraceEvent(op: "scene.delete", id: scene))
            }
            return
        case "shot.insert":
            newShot(replica, scene: random.pick(view.scenes))
            return
        default:
            break
        }
        guard !shots.isEmpty else { return }
        switch kind {
        case "shot.set":
            shotSet(replica, shot: random.pick(shots))
        case "shot.move":
            let shot = random.pick(shots)
            let scene = view.parent[shot]!.scene
            let at = random.below(view.shots[scene]!.count)
            var line = TraceLine(replica: replica, op: "shot.move")
            line.add("id", shot)
            line.add("scene", scene)
            line.add("index", at)
            emit(line, op: "shot.move", replica: replica, event: TraceEvent(op: "shot.move", id: shot, scene: scene, index: at))
        case "shot.cross" where view.scenes.count > 1:
            let shot = random.pick(shots)
            let from = view.parent[shot]!.scene
            let scene = random.pick(view.scenes.filter { $0 != from })
            let at = index(in: view.shots[scene] ?? [], appendBias: 0.4)
            var line = TraceLine(replica: replica, op: "shot.move")
            line.add("id", shot)
            line.add("scene", scene)
            line.add("index", at)
            emit(line, op: "shot.move", replica: replica, event: TraceEvent(op: "shot.move", id: shot, scene: scene, index: at, cross: true))
            crossMoves += 1
        case "shot.delete" where shots.count > 3:
            let shot = random.pick(shots)
            var line = TraceLine(replica: replica, op: "shot.delete")
            line.add("id", shot)
            emit(line, op: "shot.delete", replica: replica, event: TraceEvent(op: "shot.delete", id: shot))
        case "layer.set":
            let shot = random.pick(shots)
            if let layers = view.layers[shot], !layers.isEmpty { layerSet(replica, layer: random.pick(layers)) }
        default:
            break
        }
    }

    // MARK: - Strokes

    mutating func pointCount() -> Int { Int(Self.clamp(random.logNormal(4.2, 0.62), 20, 300)) }

    /// A momentum random walk: a smoothly turning heading and a smoothly varying speed.
    mutating func walk(_ count: Int, _ fx: Double, _ fy: Double) -> [(Double, Double)] {
        var x = Self.clamp(random.gauss(fx, 0.1), 0.03, 0.97)
        var y = Self.clamp(random.gauss(fy, 0.1), 0.03, 0.97)
        var heading = random.uniform(0, 2 * .pi)
        var turn = random.gauss(0, 0.03)
        var speed = random.uniform(0.002, 0.008)
        var result: [(Double, Double)] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            turn = 0.9 * turn + random.gauss(0, 0.015)
            heading += turn
            speed = Self.clamp(speed * (1 + random.gauss(0, 0.04)), 0.0008, 0.02)
            x += speed * cos(heading)
            y += speed * sin(heading)
            if !(0...1).contains(x) { (heading, x) = (.pi - heading, Self.clamp(x, 0, 1)) }  // bounce off the frame
            if !(0...1).contains(y) { (heading, y) = (-heading, Self.clamp(y, 0, 1)) }
            result.append((x, y))
        }
        return result
    }

    /// A chain of C1-continuous cubic Bézier segments, sampled with a slight tremor.
    mutating func bezier(_ count: Int, _ fx: Double, _ fy: Double) -> [(Double, Double)] {
        let segments = 1 + count / 120
        var p0 = (Self.clamp(random.gauss(fx, 0.1), 0.05, 0.95), Self.clamp(random.gauss(fy, 0.1), 0.05, 0.95))
        var previousC2: (Double, Double)?
        var result: [(Double, Double)] = []
        result.reserveCapacity(count)
        for segment in 0..<segments {
            let angle = random.uniform(0, 2 * .pi)
            let length = random.uniform(0.05, 0.3)
            let p3 = (Self.clamp(p0.0 + length * cos(angle), 0, 1), Self.clamp(p0.1 + length * sin(angle), 0, 1))
            let c1 =
                previousC2.map { (2 * p0.0 - $0.0, 2 * p0.1 - $0.1) }  // mirrored: a smooth joint
                ?? (p0.0 + random.gauss(0, length / 2), p0.1 + random.gauss(0, length / 2))
            let c2 = (p3.0 + random.gauss(0, length / 2), p3.1 + random.gauss(0, length / 2))
            let samples = count / segments + (segment < count % segments ? 1 : 0)
            for i in 0..<samples {
                let t = Double(i + (segment > 0 ? 1 : 0)) / Double(segment > 0 ? samples : max(samples - 1, 1))
                let u = 1 - t
                let (a, b, c, d) = (u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t)
                let x = a * p0.0 + b * c1.0 + c * c2.0 + d * p3.0 + random.gauss(0, 0.0003)
                let y = a * p0.1 + b * c1.1 + c * c2.1 + d * p3.1 + random.gauss(0, 0.0003)
                result.append((Self.clamp(x, 0, 1), Self.clamp(y, 0, 1)))
            }
            (p0, previousC2) = (p3, c2)
        }
        return result
    }

    /// Flat x, y, pressure: a smooth curve with a smoothly varying, tapered pressure.
    mutating func strokePoints(_ fx: Double, _ fy: Double) -> [Double] {
        let count = pointCount()
        let xy = random.random() < 0.55 ? walk(count, fx, fy) : bezier(count, fx, fy)
        let base = random.uniform(0.35, 0.85)
        let amplitude = random.uniform(0.05, 0.2)
        let frequency = random.uniform(0.3, 2.0)
        let phase = random.random()
        var drift = 0.0
        let ramp = min(6, count / 4)
        var result: [Double] = []
        result.reserveCapacity(3 * xy.count)
        for (i, (x, y)) in xy.enumerated() {
            let t = Double(i) / Double(count - 1)
            drift = 0.95 * drift + random.gauss(0, 0.01)
            let taper = ramp > 0 ? min(1, 0.3 + 0.7 * Double(min(i, count - 1 - i)) / Double(ramp)) : 1
            let pressure = Self.clamp((base + amplitude * sin(2 * .pi * (frequency * t + phase)) + drift) * taper, 0, 1)
            result += [Self.r5(x), Self.r5(y), Self.r5(pressure)]
        }
        return result
    }

    mutating func brush() -> (tool: String, color: String, width: Double) {
        let tool = Self.tools[random.weighted(Self.toolWeights)]
        let brush = Self.brushes[tool]!
        return (tool, random.pick(brush.colors), Self.r5(random.uniform(brush.widths.0, brush.widths.1)))
    }

    /// An artist sits on one shot and draws: mostly strokes, some erases and layer operations.
    mutating func drawSession(_ replica: Int) {
        let shots = views[replica].visibleShots
        guard !shots.isEmpty else { return }
        let mine = shots.filter { owner[$0] == replica }
        let shot = random.pick(!mine.isEmpty && random.random() < 0.75 ? mine : shots)
        if (views[replica].layers[shot] ?? []).isEmpty || random.random() < 0.05 { newLayer(replica, shot: shot) }
        var layer = random.random() < 0.6 ? views[replica].layers[shot]!.last! : random.pick(views[replica].layers[shot]!)
        var (tool, color, width) = brush()
        var recent: [String] = []
        for _ in 0..<(8 + Int(random.exponential(rate: 1.0 / 30))) {
            if mix["stroke.add", default: 0] >= settings.strokes { return }
            // E.g. deleted by a remote edit that just arrived.
            guard views[replica].layerVisible(layer) else { return }
            let layers = views[replica].layers[shot] ?? []
            let u = random.random()
            if u < 0.862 {
                let stroke = mint("k", replica)
                let centre = focus[layer] ?? (0.5, 0.5)
                focus[layer] = centre
                let flat = strokePoints(centre.0, centre.1)
                points += flat.count / 3
                var line = TraceLine(replica: replica, op: "stroke.add")
                line.add("id", stroke)
                line.add("layer", layer)
                line.add("tool", tool)
                line.add("color", color)
                line.add("width", width)
                line.add("points", points: flat)
                emit(line, op: "stroke.add", replica: replica, event: TraceEvent(op: "stroke.add", id: stroke, layer: layer))
                recent.append(stroke)
            } else if u < 0.907 {  // an erase: mostly an undo of a recent stroke, else any visible one
                let stroke: String
                let on: String
                if !recent.isEmpty && random.random() < 0.7 {
                    (stroke, on) = (recent.removeLast(), layer)
                } else {
                    on = random.pick(layers)
                    guard let items = views[replica].strokes[on]?.items, !items.isEmpty else { continue }
                    stroke = random.pick(items)
                }
                if views[replica].strokes[on]?.contains(stroke) == true {
                    var line = TraceLine(replica: replica, op: "stroke.erase")
                    line.add("id", stroke)
                    emit(line, op: "stroke.erase", replica: replica, event: TraceEvent(op: "stroke.erase", id: stroke, layer: on))
                }
            } else if u < 0.925 {
                layerSet(replica, layer: random.pick(layers))
            } else if u < 0.933 {
                layer = newLayer(replica, shot: shot)
                recent = []
            } else if u < 0.938 && layers.count > 1 {
                let moved = random.pick(layers)
                let at = random.below(layers.count)
                var line = TraceLine(replica: replica, op: "layer.move")
                line.add("id", moved)
                line.add("index", at)
                emit(line, op: "layer.move", replica: replica, event: TraceEvent(op: "layer.move", id: moved, index: at))
            } else if u < 0.9395 && layers.count > 1 {
                let victim = random.pick(layers.filter { $0 != layer })
                var line = TraceLine(replica: replica, op: "layer.delete")
                line.add("id", victim)
                emit(line, op: "layer.delete", replica: replica, event: TraceEvent(op: "layer.delete", id: victim))
            } else if u < 0.972 {
                shotSet(replica, shot: shot)
            } else if u < 0.985 {  // another layer and brush
                layer = random.pick(layers)
                (tool, color, width) = brush()
                recent = []
            } else if u < 0.99 {
                edit(replica)
            }
        }
    }

    mutating func run() {
        setup()
        let count = settings.replicas
        let weights = [1.0] + Array(repeating: 2.0, count: count - 1)  // artists are busier than the director
        while mix["stroke.add", default: 0] < settings.strokes {
            let replica = random.weighted(weights)
            let share = settings.editShare ?? (replica == 0 && count > 1 ? 0.55 : 0.08)
            if random.random() < share {
                for _ in 0..<(1 + Int(random.exponential(rate: 1.0 / 5))) { edit(replica) }
            } else {
                drawSession(replica)
            }
            // Connectivity: offline now and then; else a sync with a peer that is online.
            if offline[replica] > 0 {
                offline[replica] -= 1
            } else if random.random() < 0.03 {
                offline[replica] = 1 + Int(random.exponential(rate: 1.0 / 12))
            } else if random.random() < settings.syncProbability {
                let peers = (0..<count).filter { $0 != replica && offline[$0] == 0 }
                if !peers.isEmpty { sync(replica, random.pick(peers)) }
            }
        }
    }
}
