import StoryTestSupport
import Testing

@testable import StoryCore

/// The past rebuilt from a base and the change log (`ProjectHistory`).
@Suite struct ProjectHistoryTests {
    static let chunks = 4
    static let scenarios = TestSeeds.scenarioCount(default: 240)

    /// Random edit histories on 2–7 replicas with random, partial, shuffled
    /// and duplicated delivery: every (vector, view) any replica had during
    /// the run is rebuilt exactly from the base and the final change log.
    @Test(arguments: 0..<chunks)
    func stateAtAVersionIsWhatAReplicaSawAtIt(chunk: Int) async throws {
        // Seconds of CPU: on a thread of its own, not the pool in-process daemons answer on (`onOwnThread`).
        try await onOwnThread {
            let seeds = TestSeeds.seeds(count: Self.scenarios)
            var checked = 0
            for (index, seed) in seeds.enumerated() where index % Self.chunks == chunk || seeds.count == 1 {
                if seeds.count == 1 && chunk != 0 { return }
                do {
                    checked += try Self.runScenario(seed: seed &* 104_729)
                } catch {
                    Issue.record("history scenario failed: replay with STORYTELLER_SEED=\(seed): \(error)")
                    return
                }
            }
            // The scenarios really pass through many versions.
            if seeds.count > 1 { #expect(checked > 10 * (seeds.count / Self.chunks)) }
        }
    }

    /// One random step of a history at replica `r`: an edit, an undo or
    /// redo, a sync, a partial delivery, a conflicting edit or a partition.
    static func randomStep(_ scenario: inout ProjectScenario, at r: Int) throws {
        switch scenario.random.int(0...99) {
        case 0..<55: try scenario.edit(r)
        case 55..<63: try scenario.undoOrRedo(r)
        case 63..<76: try scenario.syncPair(r)
        case 76..<90: try scenario.deliverSome(to: r)
        case 90..<96: try scenario.conflict(r)
        default: scenario.partition()
        }
    }

    /// Runs one scenario; returns how many versions it checked.
    static func runScenario(seed: UInt64) throws -> Int {
        var scenario = try ProjectScenario(seed: seed)
        let base = scenario.docs[0]
        var seen: [VersionVector: ProjectView] = [:]
        func record(_ docs: [ProjectDocument]) throws {
            for doc in docs {
                if let earlier = seen[doc.versionVector], earlier != doc.view {
                    throw ProjectScenario.Failure(description: "two replicas at \(doc.versionVector) show different boards")
                }
                seen[doc.versionVector] = doc.view
            }
        }
        try record(scenario.docs)
        for _ in 0..<scenario.random.int(30...90) {
            let r = scenario.random.int(0...(scenario.docs.count - 1))
            try randomStep(&scenario, at: r)
            try record(scenario.docs)
        }
        try WireSync.syncAll(&scenario.docs)
        try record(scenario.docs)
        let final = scenario.docs[0]
        guard case .changes(let logged) = final.changes(since: base.versionVector) else {
            throw ProjectScenario.Failure(description: "the final log does not reach back to the base")
        }
        // The log in some other order, as a store might list it.
        var shuffled = try logged.map { ($0, try $0.decoded()) }
        shuffled.shuffle(using: &scenario.random)
        let history = ProjectHistory(bases: [base], changes: shuffled, current: final.versionVector, createdAt: final.createdAt)
        for (vector, view) in seen {
            let rebuilt = try history.document(at: vector)
            guard rebuilt.versionVector == vector else {
                throw ProjectScenario.Failure(description: "rebuilt \(vector) as \(rebuilt.versionVector)")
            }
            guard rebuilt.view == view else { throw ProjectScenario.Failure(description: "the board at \(vector) differs") }
        }
        // Every entry of the people's history names a version that rebuilds.
        for version in history.versions() {
            guard try history.document(at: version.vector).versionVector == version.vector else {
                throw ProjectScenario.Failure(description: "version \(version.id) is not causally closed")
            }
        }
        // A time always names a causally closed version.
        for _ in 0..<5 {
            let time = Int64(scenario.random.int(0...1_000_000))
            guard let vector = try? history.vector(at: time) else { continue }
            guard try history.document(at: vector).versionVector == vector else {
                throw ProjectScenario.Failure(description: "the version at \(time) is not causally closed")
            }
        }
        return seen.count
    }

    /// Checkpoints without points (`snapshot(includingPoints: false)`), taken
    /// of random replicas at random moments of random histories, load with
    /// the final document's points to exactly the board they were taken of,
    /// and the changes made after them apply on top up to the final board.
    @Test func aCheckpointWithoutPointsLoadsWithThoseOfALaterDocument() throws {
        let seeds = TestSeeds.seeds(count: Self.scenarios / 4)
        var checked = 0
        for seed in seeds {
            var scenario = try ProjectScenario(seed: seed &* 7919)
            let base = scenario.docs[0]
            var checkpoints: [(bytes: [UInt8], vector: VersionVector, view: ProjectView)] = []
            for _ in 0..<scenario.random.int(30...90) {
                let r = scenario.random.int(0...(scenario.docs.count - 1))
                try Self.randomStep(&scenario, at: r)
                if scenario.random.int(0...9) == 0 {
                    let doc = scenario.docs[r]
                    checkpoints.append((doc.snapshot(includingPoints: false), doc.versionVector, doc.view))
                }
            }
            try WireSync.syncAll(&scenario.docs)
            let final = scenario.docs[0]
            guard case .changes(let logged) = final.changes(since: base.versionVector) else {
                Issue.record("seed \(seed): the final log does not reach back to the base")
                return
            }
            let decoded = try logged.map { ($0, try $0.decoded()) }
            for checkpoint in checkpoints {
                let loaded = try ProjectDocument(snapshot: checkpoint.bytes, replica: ReplicaID(77), pointsFrom: final)
                #expect(loaded.versionVector == checkpoint.vector && loaded.view == checkpoint.view, "seed \(seed)")
                let history = ProjectHistory(bases: [loaded], changes: decoded, current: final.versionVector, createdAt: final.createdAt)
                #expect(try history.document(at: final.versionVector).view == final.view, "seed \(seed): later changes on a checkpoint")
                checked += 1
            }
        }
        if seeds.count > 1 { #expect(checked > seeds.count) }
    }

    @Test func aCheckpointWithoutPointsIsSmallAndDoesNotLoadAlone() throws {
        var board = try Board(replica: 1, scenes: 1, shots: 1)
        let layer = board.layers[board.shots[0][0]]![0]
        for index in 0..<20 {
            try board.doc.edit(at: 2000 + Int64(index)) { try $0.addStroke(to: layer, brush: pen, points: line(y: 0.1 + Double(index) / 40)) }
        }
        let full = board.doc.snapshot()
        let thin = board.doc.snapshot(includingPoints: false)
        #expect(thin.count * 3 < full.count, "\(thin.count) of \(full.count) bytes")
        // Alone it names strokes whose points it lacks: refused, not half-loaded.
        #expect(throws: DocumentError.self) { try ProjectDocument(snapshot: thin, replica: ReplicaID(9)) }
        // With a document that lacks them too (another project): refused as well.
        let stranger = try Board(replica: 2, scenes: 1, shots: 1).doc
        #expect(throws: DocumentError.self) { try ProjectDocument(snapshot: thin, replica: ReplicaID(9), pointsFrom: stranger) }
        #expect(try ProjectDocument(snapshot: thin, replica: ReplicaID(9), pointsFrom: board.doc).view == board.doc.view)
        let info = try ProjectDocument.snapshotVersion(thin)
        #expect(info.version == board.doc.versionVector && info.updatedAt == 2019)
    }

    @Test func aVersionBeforeTheOldestBaseIsCompactedWithTheOldestOneNamed() throws {
        var board = try Board(replica: 1, scenes: 1, shots: 1)
        let start = board.doc.versionVector
        let layer = board.layers[board.shots[0][0]]![0]
        try board.doc.edit(at: 2000) { try $0.addStroke(to: layer, brush: pen, points: line()) }
        let snapshotDoc = try ProjectDocument(snapshot: board.doc.snapshot(), replica: ReplicaID(9))
        try board.doc.edit(at: 3000) { try $0.addStroke(to: layer, brush: pen, points: line(y: 0.7)) }
        guard case .changes(let all) = board.doc.changes(since: VersionVector()) else {
            Issue.record("log")
            return
        }
        let decoded = try all.map { ($0, try $0.decoded()) }
        // Only the changes after the snapshot are left, as after compaction.
        let tail = decoded.filter { $0.1.seq > snapshotDoc.versionVector[$0.1.replica] }
        let history = ProjectHistory(bases: [snapshotDoc], changes: tail, current: board.doc.versionVector, createdAt: 1000)

        let error = #expect(throws: HistoryError.self) { try history.document(at: start) }
        #expect(error?.code == .compacted)
        #expect(error?.oldestAvailable == snapshotDoc.versionVector)
        #expect(try history.document(at: snapshotDoc.versionVector).view == snapshotDoc.view)
        #expect(try history.document(at: board.doc.versionVector).view == board.doc.view)
        #expect(throws: HistoryError.self) { try history.vector(at: 1500) }

        // With the whole log and the empty project as a base, it rebuilds.
        let full = ProjectHistory(
            bases: [ProjectDocument(id: Board.documentID, replica: ReplicaID(9)), snapshotDoc], changes: decoded,
            current: board.doc.versionVector, createdAt: 1000)
        #expect(try full.document(at: start).view.shots.flatMap(\.layers).flatMap(\.strokes).isEmpty)
    }

    @Test func aVersionWithChangesNeverSeenIsUnknown() throws {
        let board = try Board(replica: 1, scenes: 1, shots: 1)
        guard case .changes(let all) = board.doc.changes(since: VersionVector()) else {
            Issue.record("log")
            return
        }
        let history = ProjectHistory(
            bases: [ProjectDocument(id: Board.documentID, replica: ReplicaID(9))], changes: try all.map { ($0, try $0.decoded()) },
            current: board.doc.versionVector, createdAt: 1000)
        let error = #expect(throws: HistoryError.self) { try history.document(at: VersionVector([ReplicaID(77): 3])) }
        #expect(error?.code == .unknownVersion)
    }

    /// A time takes every change made at or before it, except one whose
    /// author had seen a later one (a clock behind the others').
    @Test func aTimeNamesTheChangesMadeByThenCausallyClosed() throws {
        var a = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        var b = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try a.edit(at: 1000) { try $0.set(.title, to: .string("one")) }
        try WireSync.exchange(&a, &b)
        try b.edit(at: 2000) { try $0.set(.title, to: .string("two")) }
        try a.edit(at: 3000) { try $0.set(.description, to: .string("three")) }
        try WireSync.exchange(&a, &b)
        // B's clock is behind: it writes at "1500" after seeing A's change at 3000.
        try b.edit(at: 1500) { try $0.set(.title, to: .string("skewed")) }
        try WireSync.exchange(&a, &b)
        let history = ProjectHistory(
            bases: [ProjectDocument(id: Board.documentID, replica: ReplicaID(9))], changes: try allPairs(a), current: a.versionVector,
            createdAt: a.createdAt)

        #expect(try history.vector(at: 1000) == VersionVector([ReplicaID(1): 1]))
        #expect(try history.vector(at: 2500) == VersionVector([ReplicaID(1): 1, ReplicaID(2): 1]))
        #expect(try history.vector(at: 3000) == VersionVector([ReplicaID(1): 2, ReplicaID(2): 2]))
        #expect(try history.document(at: history.vector(at: 2500)).view.title == "two")
        let error = #expect(throws: HistoryError.self) { try history.vector(at: 999) }
        #expect(error?.code == .beforeProject)

        // Causal order puts A's two changes first (equal counters: the lower
        // replica), so each author's changes are one burst.
        let versions = history.versions()
        #expect(versions.map(\.replica) == [ReplicaID(1), ReplicaID(2)])
        #expect(versions.last?.vector == a.versionVector)
        #expect(Set(versions.map(\.id)).count == versions.count)
        #expect(versions.allSatisfy { $0.id.count == 8 })
    }

    @Test func oneAuthorsBurstIsOneVersion() throws {
        var a = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        for minute in [0, 1, 3, 20, 21] {
            try a.edit(at: Int64(minute) * 60_000) { try $0.set(.title, to: .string("t\(minute)")) }
        }
        let history = ProjectHistory(
            bases: [ProjectDocument(id: Board.documentID, replica: ReplicaID(9))], changes: try allPairs(a), current: a.versionVector,
            createdAt: a.createdAt)
        let versions = history.versions()
        #expect(versions.map(\.changes.count) == [3, 2])
        #expect(versions.map(\.vector) == [VersionVector([ReplicaID(1): 3]), VersionVector([ReplicaID(1): 5])])
        #expect(try history.document(at: versions[0].vector).view.title == "t3")
    }

    private func allPairs(_ doc: ProjectDocument) throws -> [(EncodedChange, Change)] {
        guard case .changes(let all) = doc.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        return try all.map { ($0, try $0.decoded()) }
    }
}
