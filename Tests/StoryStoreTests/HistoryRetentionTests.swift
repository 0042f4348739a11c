import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryStore

/// History retention: compaction keeps every change made within the
/// window, a checkpoint where the kept changes start, and one per named
/// version, so the past stays viewable for the window and named versions
/// for good.
@Suite struct HistoryRetentionTests {
    static let day: Int64 = 86_400_000

    func store(_ directory: TemporaryDirectory, clock: ManualWallClock, retention: Int64) throws -> Store {
        var options = StoreOptions()
        options.clock = clock.clock
        options.historyRetention = retention
        return try Store(path: directory.file("store.db"), identity: TestIdentities.signing(), options: options)
    }

    @Test func changesWithinTheWindowStayAndTheRestGoIntoACheckpoint() async throws {
        let directory = try TemporaryDirectory()
        let start: Int64 = 1_800_000_000_000
        let clock = ManualWallClock(milliseconds: start)
        let store = try store(directory, clock: clock, retention: 7 * Self.day)
        let (id, layer) = try await makeProject(in: store)
        // Ten days ago: five strokes, one version after each.
        var old: [(VersionVector, ProjectView)] = []
        for index in 0..<5 {
            _ = try await store.editProject(id, at: start + Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
            let project = try await store.project(id)
            old.append((project.versionVector, project.view))
        }
        let reviewed = old[1].0
        _ = try await store.editProject(id, at: start + 10) { try $0.nameVersion("first review", as: reviewed) }
        let windowStart = try await store.project(id)
        // Ten days later: three more.
        clock.advance(by: 10 * Self.day)
        var recent: [(VersionVector, ProjectView)] = []
        for index in 5..<8 {
            _ = try await store.editProject(id, at: clock.milliseconds + Int64(index)) {
                try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index))
            }
            let project = try await store.project(id)
            recent.append((project.versionVector, project.view))
        }
        try await store.writeSnapshot(of: id, at: clock.milliseconds)

        // The three recent changes are kept, the older ones are gone…
        let (logged, compacted) = try await store.history(of: id, limit: 100)
        #expect(compacted && logged.count == 3, "\(logged.count) changes kept")
        // …but every version since the window's start still shows as it was,
        let history = try await store.projectHistory(id)
        for (vector, view) in recent { #expect(try history.document(at: vector).view == view) }
        #expect(
            try history.document(at: windowStart.versionVector).view == windowStart.view, "where the kept changes start: a checkpoint")
        // the named version is kept for good,
        #expect(try history.document(at: old[1].0).view == old[1].1)
        // and versions before the window that nobody named are compacted away.
        #expect(throws: HistoryError.self) { try history.document(at: old[2].0) }
        #expect(throws: HistoryError.self) { try history.document(at: old[4].0) }

        // Reopened: the same.
        let reopened = try Store(path: directory.file("store.db"), identity: TestIdentities.signing())
        let again = try await reopened.projectHistory(id)
        #expect(try again.document(at: old[1].0).view == old[1].1 && again.document(at: recent[0].0).view == recent[0].1)
    }

    @Test func aLaterCompactionReplacesTheBaseButKeepsNamedVersions() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 1_800_000_000_000)
        let store = try store(directory, clock: clock, retention: 2 * Self.day)
        let (id, layer) = try await makeProject(in: store)
        var named: [(String, VersionVector, ProjectView)] = []
        // Five days, a stroke a day, each day's state named; compacting every day.
        for day in 0..<5 {
            _ = try await store.editProject(id, at: clock.milliseconds) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(day)) }
            let project = try await store.project(id)
            let name = "day \(day)"
            let vector = project.versionVector
            _ = try await store.editProject(id, at: clock.milliseconds + 1) { try $0.nameVersion(name, as: vector) }
            named.append((name, project.versionVector, project.view))
            try await store.writeSnapshot(of: id, at: clock.milliseconds + 2)
            clock.advance(by: Self.day)
        }
        let history = try await store.projectHistory(id)
        for (name, vector, view) in named { #expect(try history.document(at: vector).view == view, "\(name)") }
        // One base and five named checkpoints at most: the older bases were replaced.
        let checkpoints = try await store.checkpointCount(of: id)
        #expect(checkpoints <= 6, "\(checkpoints) checkpoints")
    }

    @Test func withoutRetentionEverythingAcknowledgedIsCompactedAsBefore() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 1_800_000_000_000)
        let store = try store(directory, clock: clock, retention: 0)
        let (id, layer) = try await makeProject(in: store)
        for index in 0..<3 {
            _ = try await store.editProject(id, at: clock.milliseconds) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(index)) }
        }
        try await store.writeSnapshot(of: id, at: clock.milliseconds)
        let (logged, compacted) = try await store.history(of: id, limit: 100)
        #expect(compacted && logged.isEmpty)
        #expect(try await store.checkpointCount(of: id) == 0)
    }
}
