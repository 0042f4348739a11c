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
        // Five named checkpoints, the base, and the bases it replaced as daily
        // checkpoints (one per day at most).
        let checkpoints = try await store.checkpointCount(of: id)
        #expect(checkpoints <= 5 + 5, "\(checkpoints) checkpoints")
    }

    /// Sixty days of work, a stroke a day, compacted daily with a 5-day
    /// window: the last 5 days are kept change by change, the 5 days before
    /// as daily checkpoints, the weeks before that as weekly ones, each
    /// showing the board as it was at the end of its day; and the
    /// checkpoints leave their points out (the project keeps them).
    @Test func olderThanTheWindowDailyThenWeeklyCheckpointsStay() async throws {
        let directory = try TemporaryDirectory()
        // A Monday, 09:00 UTC (2027-01-04).
        let monday: Int64 = 1_799_053_200_000
        let clock = ManualWallClock(milliseconds: monday)
        let store = try store(directory, clock: clock, retention: 5 * Self.day)
        let (id, layer) = try await makeProject(in: store)
        var days: [(time: Int64, view: ProjectView)] = []
        for day in 0..<60 {
            _ = try await store.editProject(id, at: clock.milliseconds) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(day)) }
            days.append((clock.milliseconds, try await store.project(id).view))
            try await store.writeSnapshot(of: id, at: clock.milliseconds)
            clock.advance(by: Self.day)
        }
        let history = try await store.projectHistory(id)
        let byTime = Dictionary(uniqueKeysWithValues: days.map { ($0.time, $0.view) })
        // Each checkpoint is the board at the end of one day of the work.
        var checkpointDays: [Int] = []
        for base in history.bases where base.versionVector != history.current {
            let time = try #require(base.updatedAt)
            let index = try #require(days.firstIndex { $0.time == time }, "a checkpoint at \(time), not the end of a day's work")
            #expect(try base.document().view == byTime[time], "day \(index)")
            checkpointDays.append(index)
        }
        // The last compaction ran on day 59: the window keeps the changes of
        // days 54…59 (from midnight 5 days before), the base shows day 53,
        // daily checkpoints days 49…52 before it, weekly ones the weeks before.
        let daily = checkpointDays.filter { $0 >= 49 }
        #expect(daily.sorted() == Array(49...53), "daily checkpoints at days \(daily.sorted())")
        // Days 0…48 are weeks starting on Mondays (days 0, 7, …, 42): the newest of each is its Sunday.
        let weekly = checkpointDays.filter { $0 < 49 }.sorted()
        #expect(weekly == [6, 13, 20, 27, 34, 41, 48], "weekly checkpoints at days \(weekly)")
        // A time inside the daily span shows that day; inside a week, the week's checkpoint at or before it.
        let dayFiftyTwo = days[52].time + 3_600_000
        #expect(try history.document(at: history.vector(at: dayFiftyTwo)).view == days[52].view)
        let dayTwentyOne = days[21].time + 3_600_000  // a Monday: the newest checkpoint at or before it is Sunday's (day 20)
        #expect(try history.document(at: history.vector(at: dayTwentyOne)).view == days[20].view)
        #expect(throws: HistoryError.self) { try history.vector(at: days[3].time) }
        // The checkpoints are small: the board's points are stored once, in the snapshot.
        let checkpointBytes = try await store.checkpointSizes(of: id)
        let snapshotBytes = try await store.snapshot(of: id).count
        #expect(checkpointBytes.allSatisfy { $0 * 2 < snapshotBytes }, "checkpoints of \(checkpointBytes) bytes, snapshot \(snapshotBytes)")
    }

    @Test func checkpointThinningKeepsTheNewestOfEachDayThenOfEachWeek() {
        let day = Self.day
        let monday: Int64 = 1_799_020_800_000  // 2027-01-04T00:00Z
        let cutoff = monday + 21 * day  // the window starts on a Monday three weeks later
        func at(_ days: Int64, _ hours: Int64 = 12) -> Int64 { monday + days * day + hours * 3_600_000 }
        let checkpoints: [(rowid: Int64, updatedAt: Int64?)] = [
            (1, at(20, 9)), (2, at(20, 18)),  // the day before the cutoff: the newer stays
            (3, at(19)),  // inside the 2 daily days
            (4, at(17)),  // before the daily days, in week 2: alone, stays
            (5, at(8)), (6, at(10)), (7, at(13)),  // week 1 (days 7…13): day 13 stays
            (8, at(1)),  // week 0 (days 0…6): alone, stays
            (9, at(-30)),  // weeks before the weekly span: dropped
            (10, nil),  // the empty project: dropped
        ]
        let dropped = Store.checkpointsToDrop(checkpoints, before: cutoff, days: 2, weeks: 3)
        #expect(dropped == [1, 5, 6, 9, 10])
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
