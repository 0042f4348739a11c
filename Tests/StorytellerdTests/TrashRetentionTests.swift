import Foundation
import StoryClient
import StoryDaemon
import StoryTestSupport
import Testing

/// `trash-retention`: how long a project deleted for everyone stays in the
/// trash here before maintenance purges it.
@Suite(.daemons, .timeLimit(.minutes(15))) struct TrashRetentionTests {
    @Test(arguments: [
        ("30d", 2_592_000, "30d"), ("12h", 43_200, "12h"), ("90m", 5_400, "90m"), ("45s", 45, "45s"), ("2w", 1_209_600, "2w"),
        ("48h", 172_800, "2d"), (" 7d ", 604_800, "1w"),
    ])
    func aDurationWithAUnitReadsAndPrintsInTheLargestUnit(text: String, seconds: Int64, printed: String) throws {
        let retention = try #require(try TrashRetention(parsing: text))
        #expect(retention.seconds == seconds && retention.milliseconds == seconds * 1_000 && retention.description == printed)
        #expect(try TrashRetention(parsing: retention.description) == retention)
    }

    @Test func zeroMeansNeverAndTheDefaultIsThirtyDays() throws {
        #expect(try TrashRetention(parsing: "0") == nil && TrashRetention(parsing: "0d") == nil)
        #expect(try DaemonSettings().trashRetention == TrashRetention(parsing: "30d"))
        var settings = DaemonSettings()
        try settings.set("trash-retention", to: "0", source: "test")
        #expect(settings.trashRetention == nil)
        let paths = DaemonPaths(dataDirectory: "/tmp/x", socket: nil, environment: [:])
        #expect(settings.effectiveConfiguration(paths: paths, name: "here").contains("trash-retention = \"0\"  # test"))
        #expect(DaemonSettings().effectiveConfiguration(paths: paths, name: "here").contains("trash-retention = \"30d\"  # default"))
    }

    @Test(arguments: [
        ("", "is empty"), ("30", "has no unit"), ("soon", "is not a duration"), ("-1d", "is not a duration"),
        ("1.5d", "is not a duration"), ("5y", "is not a duration"), ("99999999999999w", "longer than 100 years"),
    ])
    func aBadRetentionIsAnErrorThatSaysWhatToWrite(text: String, problem: String) {
        var settings = DaemonSettings()
        do {
            try settings.set("trash-retention", to: text, source: "file.toml:3")
            Issue.record("'\(text)' was taken")
        } catch {
            #expect(error.description.hasPrefix("file.toml:3: 'trash-retention' ") && error.description.contains(problem), "\(error)")
        }
        #expect(settings.trashRetention == .default, "nothing changed")
    }

    /// With a retention of a second, maintenance purges a project deleted
    /// for everyone (no peer waits for the delete) and the library nodes in
    /// the trash; a project still alive is left alone.
    @Test func maintenancePurgesWhatHasBeenInTheTrashLongerThanTheRetention() async throws {
        let daemon = try await StartedDaemon.start(
            environment: ["STORYTELLER_TRASH_RETENTION": "1s", "STORYTELLER_MAINTENANCE_INTERVAL": "1"])
        defer { daemon.stop() }
        func run(_ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", daemon.socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let gone = try await run("projects", "create", "Old cut")
        let kept = try await run("projects", "create", "New cut")
        _ = try await run("folders", "create", "Outtakes")
        _ = try await run("projects", "delete", gone)
        _ = try await run("folders", "delete", "Outtakes")
        try await daemon.daemon.waitForLog("purged project \(gone)")
        let listed = try daemon.client.get("/v1/projects?deleted=true").json as? [[String: Any]] ?? []
        #expect(listed.map { $0["id"] as? String } == [kept])
        try await eventually("the library's trash is emptied") {
            let nodes = (try daemon.client.get("/v1/library").json as? [String: Any])?["nodes"] as? [[String: Any]] ?? []
            return !nodes.contains { $0["inTrash"] as? Bool == true }
        }
        #expect(daemon.daemon.errors.contains("library node(s) in the trash for more than 1s"))
    }
}
