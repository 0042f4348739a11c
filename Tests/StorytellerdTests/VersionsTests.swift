import Foundation
import StoryClient
import StoryDaemon
import StoryStore
import StoryTestSupport
import Testing

/// Versions: the history as people read it, and the past shown through
/// `?at=` (`projects show`, `render`, exports), read-only.
@Suite(.daemons, .timeLimit(.minutes(15))) struct VersionsTests {
    static let start: Int64 = 1_700_000_000_000
    static let minute: Int64 = 60_000

    /// Makes a project named `name` on `daemon`; its id.
    static func createProject(_ name: String, on daemon: InProcessDaemon) async throws -> String {
        let created = try await daemon.post("/v1/projects", json: #"{"name": "\#(name)"}"#)
        return try #require((created.json as? [String: Any])?["id"] as? String)
    }

    /// The scenes of a project answer, as comparable JSON text.
    static func scenes(_ response: ControlClient.Response) throws -> String {
        let body = try #require(response.json as? [String: Any])
        let scenes = try #require(body["scenes"], "\(body)")
        return String(decoding: try JSONSerialization.data(withJSONObject: scenes, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A stroke put is how a restore, an undone erase, a restyle and a
    /// duplicated shot's copies are all written: history and undo call each
    /// by what it did, not "changed" for all of them.
    @Test func historySaysWhetherAStrokeWasRestoredCopiedOrChanged() async throws {
        let clock = ManualWallClock(milliseconds: Self.start)
        let home = try TemporaryDirectory()
        let started = try await InProcessDaemon.start(in: home, clock: clock.clock)
        let project = try await Self.createProject("Pier", on: started)
        let added = try await started.post(
            "/v1/projects/\(project)/edits",
            json:
                #"{"ops":[{"op":"scene.add"},{"op":"shot.add","scene":"$0"},{"op":"layer.add","shot":"$1"},{"op":"stroke.add","layer":"$2","points":[0.1,0.1,0.5,0.4,0.4,0.5]},{"op":"stroke.add","layer":"$2","points":[0.2,0.2,0.5,0.3,0.6,0.5]}]}"#
        )
        let ids = try #require((added.json as? [String: Any])?["created"] as? [String])
        let (shot, layer, stroke) = (ids[1], ids[2], ids[3])
        func edit(_ ops: String) async throws {
            clock.advance(by: 10 * Self.minute)
            let answer = try await started.post("/v1/projects/\(project)/edits", json: #"{"ops":["# + ops + "]}")
            #expect(answer.status == 200, "\(ops): \(String(decoding: answer.body, as: UTF8.self))")
        }
        func latest() async throws -> String? {
            let answer = try #require(try await started.get("/v1/projects/\(project)/versions").json as? [String: Any])
            return (answer["versions"] as? [[String: Any]])?.first?["summary"] as? String
        }

        try await edit(#"{"op":"stroke.erase","layer":"\#(layer)","stroke":"\#(stroke)"}"#)
        #expect(try await latest() == "erased 1 stroke")
        clock.advance(by: 10 * Self.minute)
        let undone = try #require(try await started.post("/v1/projects/\(project)/undo", json: "{}").json as? [String: Any])
        #expect(undone["summary"] as? String == "erased 1 stroke on a layer in 1-1", "undo names what it took back: \(undone)")
        #expect(try await latest() == "restored 1 stroke", "the undone erase brought the stroke back")
        try await edit(##"{"op":"stroke.replace","layer":"\##(layer)","stroke":"\##(stroke)","brush":{"color":"#ff0000"}}"##)
        #expect(try await latest() == "changed 1 stroke", "a restyle of a shown stroke")
        try await edit(#"{"op":"shot.duplicate","shot":"\#(shot)"}"#)
        #expect(try await latest() == "added 1 shot, added 1 layer, copied 2 strokes")
        clock.advance(by: 10 * Self.minute)
        let undoneCopy = try #require(try await started.post("/v1/projects/\(project)/undo", json: "{}").json as? [String: Any])
        #expect((undoneCopy["summary"] as? String)?.contains("copied 2 strokes") == true, "\(undoneCopy)")

        // The changes listed one by one say the same, newest first.
        let history = try #require(try await started.get("/v1/projects/\(project)/history").json as? [String: Any])
        let summaries = (history["changes"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
        #expect(
            summaries.prefix(5).map { $0 } == [
                "erased 2 strokes, deleted 1 layer, deleted 1 shot", "added 1 shot, added 1 layer, copied 2 strokes", "changed 1 stroke",
                "restored 1 stroke", "erased 1 stroke",
            ], "\(summaries)")
        try await started.stop()
    }

    /// A version groups a burst of changes: a caption set on a shot added a
    /// minute before is said, not taken as part of adding the shot.
    @Test func aFieldSetInALaterChangeOfAVersionIsSaid() async throws {
        let clock = ManualWallClock(milliseconds: Self.start)
        let home = try TemporaryDirectory()
        let started = try await InProcessDaemon.start(in: home, clock: clock.clock)
        let project = try await Self.createProject("Quay", on: started)
        clock.advance(by: Self.minute)
        let added = try await started.post(
            "/v1/projects/\(project)/edits",
            json: #"{"ops":[{"op":"scene.add"},{"op":"shot.add","scene":"$0"},{"op":"set","object":"$1","field":"caption","value":"Wide"}]}"#)
        // "created" has an id for each op that made something (null for the set).
        let shot = try #require(
            ((added.json as? [String: Any])?["created"] as? [Any])?[1] as? String, "\(String(decoding: added.body, as: UTF8.self))")
        clock.advance(by: Self.minute)
        let set = try await started.post(
            "/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"set","object":"\#(shot)","field":"caption","value":"Rope thrown"}]}"#)
        #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
        let answer = try #require(try await started.get("/v1/projects/\(project)/versions").json as? [String: Any])
        let versions = answer["versions"] as? [[String: Any]] ?? []
        #expect(versions.count == 1, "one burst: \(versions)")
        let summary = versions.first?["summary"] as? String ?? ""
        #expect(summary == "added 1 scene, added 1 shot, set title, caption, founded it", "\(summary)")
        // The caption set with the shot, in the change that added it, is part of adding it.
        let history = try #require(try await started.get("/v1/projects/\(project)/history").json as? [String: Any])
        let changes = (history["changes"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
        #expect(changes.prefix(2) == ["set caption", "added 1 scene, added 1 shot"], "\(changes)")
        try await started.stop()
    }

    @Test func thePastIsShownAsItWasAndTheHistoryIsGroupedIntoVersions() async throws {
        let clock = ManualWallClock(milliseconds: Self.start)
        let home = try TemporaryDirectory()
        var started = try await InProcessDaemon.start(in: home, clock: clock.clock)
        let project = try await Self.createProject("Harbour", on: started)

        clock.advance(by: 10 * Self.minute)
        let added = try await started.post(
            "/v1/projects/\(project)/edits",
            json: #"{"ops":[{"op":"scene.add","title":"Dawn"},{"op":"shot.add","scene":"$0"},{"op":"layer.add","shot":"$1"}]}"#)
        let ids = try #require((added.json as? [String: Any])?["created"] as? [String])
        let (scene, shot, layer) = (ids[0], ids[1], ids[2])
        let early = try Self.scenes(try await started.get("/v1/projects/\(project)"))

        clock.advance(by: 20 * Self.minute)
        #expect(
            try await started.post(
                "/v1/projects/\(project)/edits",
                json:
                    #"{"ops":[{"op":"stroke.add","layer":"\#(layer)","points":[0.1,0.1,0.5,0.4,0.4,0.5]},{"op":"set","object":"\#(scene)","field":"title","value":"Dusk"}]}"#
            ).status == 200)
        clock.advance(by: 1000)
        #expect(
            try await started.post(
                "/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"stroke.add","layer":"\#(layer)","points":[0.2,0.2,0.5,0.3,0.6,0.5]}]}"#
            ).status == 200)
        let drawn = try Self.scenes(try await started.get("/v1/projects/\(project)"))

        clock.advance(by: 30 * Self.minute)
        #expect(try await started.post("/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"delete","object":"\#(shot)"}]}"#).status == 200)
        let now = try Self.scenes(try await started.get("/v1/projects/\(project)"))

        // Four bursts: created, built, drawn (two changes a second apart), deleted.
        let answer = try #require(try await started.get("/v1/projects/\(project)/versions").json as? [String: Any])
        let versions = try #require(answer["versions"] as? [[String: Any]])
        #expect(versions.count == 4, "\(versions)")
        #expect(answer["compacted"] as? Bool == false)
        let versionIDs = versions.compactMap { $0["id"] as? String }
        #expect(versionIDs.count == 4 && Set(versionIDs).count == 4 && versionIDs.allSatisfy { $0.count == 8 })
        #expect(versions[1]["summary"] as? String == "drew 2 strokes, set title", "\(versions[1])")
        #expect((versions[1]["changes"] as? [[String: Any]])?.count == 2)
        #expect(versions.allSatisfy { $0["local"] as? Bool == true })
        #expect(versions[0]["time"] as? Int64 == Self.start + 60 * Self.minute + 1000)

        // By id, by a unique prefix, by a time (UTC, and with an offset), and now.
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=\(versionIDs[2])")) == early)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=\(versionIDs[1].prefix(6))")) == drawn)
        let shown = try await started.get("/v1/projects/\(project)?at=\(versionIDs[1])")
        #expect((shown.json as? [String: Any])?["version"] as? String == versionIDs[1])
        #expect((try await started.get("/v1/projects/\(project)").json as? [String: Any])?["version"] == nil)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=2023-11-14T22:35Z")) == early)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=2023-11-14T23:35%2B01:00")) == early)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=2023-11-14T23:05Z")) == drawn)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=now")) == now)

        // A shot deleted since is drawn as it was; the present is untouched.
        let render = try await started.get("/v1/projects/\(project)/shots/\(shot)/render?format=png&width=64&at=\(versionIDs[1])")
        #expect(render.status == 200 && render.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(try await started.get("/v1/projects/\(project)/shots/\(shot)/render?format=png&width=64").status == 404)
        let sheet = try await started.get("/v1/projects/\(project)/exports/contact-sheet?width=400&at=\(versionIDs[1])")
        #expect(sheet.status == 200)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)")) == now)

        // Filters: a shot (by id), a time.
        let ofShot = try #require(try await started.get("/v1/projects/\(project)/versions?shot=\(shot)").json as? [String: Any])
        #expect((ofShot["versions"] as? [[String: Any]])?.count == 3, "built, drawn and deleted (a deleted shot has its history)")
        let recent = try #require(try await started.get("/v1/projects/\(project)/versions?since=2023-11-14T22:40Z").json as? [String: Any])
        #expect((recent["versions"] as? [[String: Any]])?.count == 2)

        // A diff between two versions, and to now.
        let diff = try #require(
            try await started.get("/v1/projects/\(project)/diff?from=\(versionIDs[2])&to=\(versionIDs[1])").json as? [String: Any])
        #expect((diff["strokes"] as? [[String: Any]])?.first?["added"] as? Int == 2, "\(diff)")
        #expect((diff["items"] as? [[String: Any]])?.first?["change"] as? String == "renamed")
        #expect(diff["from"] as? String == versionIDs[2] && diff["to"] as? String == versionIDs[1])
        let toNow = try #require(try await started.get("/v1/projects/\(project)/diff?from=\(versionIDs[1])").json as? [String: Any])
        #expect((toNow["items"] as? [[String: Any]])?.map { $0["change"] as? String } == ["removed"])
        #expect(try await started.get("/v1/projects/\(project)/diff").status == 400)
        #expect(try await started.get("/v1/projects/\(project)/diff?from=nonsense").errorCode == "unknown_version")

        // Bad input: typed errors in words, nothing changed.
        let before = try await started.get("/v1/projects/\(project)?at=2023-11-14T22:00Z")
        #expect(before.status == 404 && before.errorCode == "unknown_version")
        #expect(String(decoding: before.body, as: UTF8.self).contains("did not exist yet"))
        let unknown = try await started.get("/v1/projects/\(project)?at=review-3")
        #expect(unknown.status == 404 && unknown.errorCode == "unknown_version")
        #expect(String(decoding: unknown.body, as: UTF8.self).contains("storyteller history"))
        #expect(try await started.get("/v1/projects/\(project)/versions?since=soon").status == 400)
        #expect(try await started.get("/v1/projects/\(project)/versions?limit=0").status == 400)

        // 31 days later (past the 30-day history retention), the shutdown's
        // snapshot compacted the log (no peers to wait for): the past before
        // it is gone, and says so.
        clock.advance(by: 31 * 24 * 60 * Self.minute)
        try await started.stop(keepingHome: true)
        started = try await InProcessDaemon.start(in: home, clock: clock.clock)
        defer { home.remove() }
        let compacted = try await started.get("/v1/projects/\(project)?at=\(versionIDs[2])")
        #expect(compacted.status == 410 && compacted.errorCode == "history_compacted", "\(String(decoding: compacted.body, as: UTF8.self))")
        #expect(String(decoding: compacted.body, as: UTF8.self).contains("the oldest version it can show is"))
        let longAgo = try await started.get("/v1/projects/\(project)?at=2023-11-14T22:35Z")
        #expect(longAgo.status == 410 && String(decoding: longAgo.body, as: UTF8.self).contains("history before 2023-11-14T23:13:21.000Z"))
        let after = try #require(try await started.get("/v1/projects/\(project)/versions").json as? [String: Any])
        #expect(after["compacted"] as? Bool == true)
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=now")) == now)
        try await started.stop()
    }

    /// With a 1-day window, a scene added on each of four days: after the
    /// window moved on, the changes are gone but each day's board is kept
    /// as a checkpoint, listed with the versions and shown by its id or a time.
    @Test func daysOlderThanTheWindowStayAsCheckpoints() async throws {
        let clock = ManualWallClock(milliseconds: Self.start)
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let day = 24 * 60 * Self.minute
        let configure: (inout DaemonSettings) throws -> Void = { try $0.set("history-retention", to: "1d", source: "test") }
        var started = try await InProcessDaemon.start(in: home, clock: clock.clock, configure: configure)
        let project = try await Self.createProject("Harbour", on: started)
        var boards: [(time: Int64, scenes: String)] = []
        for index in 0..<4 {
            #expect(
                try await started.post("/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"scene.add","title":"Day \#(index)"}]}"#).status == 200)
            boards.append((clock.milliseconds, try Self.scenes(try await started.get("/v1/projects/\(project)"))))
            // The shutdown's snapshot compacts what is older than the window.
            try await started.stop(keepingHome: true)
            clock.advance(by: day)
            started = try await InProcessDaemon.start(in: home, clock: clock.clock, configure: configure)
        }
        let answer = try #require(try await started.get("/v1/projects/\(project)/versions").json as? [String: Any])
        #expect(answer["compacted"] as? Bool == true)
        let checkpoints = try #require(answer["checkpoints"] as? [[String: Any]], "\(answer)")
        // The last compaction (day 3's shutdown) kept what was made since
        // midnight of day 2: days 0 and 1 are checkpoints, newest first.
        let times = checkpoints.compactMap { $0["time"] as? Int64 }
        #expect(times == [boards[1].time, boards[0].time], "\(checkpoints)")
        for (checkpoint, board) in zip(checkpoints, [boards[1], boards[0]]) {
            let id = try #require(checkpoint["id"] as? String)
            #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=\(id)")) == board.scenes)
        }
        // A time between two days shows the earlier day's board.
        let between = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(boards[0].time + 3 * 60 * Self.minute) / 1000))
        #expect(try Self.scenes(try await started.get("/v1/projects/\(project)?at=\(between)")) == boards[0].scenes)
        // The CLI lists them after the versions.
        let socket = started.socket
        let listed = try await storyteller(["history", project, "--socket", socket])
        #expect(listed.status == 0 && listed.output.contains("Kept from before"), "\(listed.output)\(listed.errors)")
        #expect(checkpoints.allSatisfy { listed.output.contains($0["id"] as? String ?? "?") })
        try await started.stop()
    }

    @Test(.requires("ffprobe")) func theCLIShowsAndRendersThePastAndListsVersions() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        func made(_ arguments: String...) async throws -> String { try await Self.run(daemon, arguments) }
        let project = try await made("projects", "create", "Film")
        let scene = try await made("scenes", "add", project, "--title", "One")
        let shot = try await made("shots", "add", project, scene)
        let layer = try await made("layers", "add", project, shot, "--name", "ink")
        _ = try await made("strokes", "add", project, layer, "--points", "[0.1,0.1,0.5, 0.2,0.2,0.5]")
        // A moment between the drawing and the deletion, in this machine's local time.
        try await Task.sleep(for: .milliseconds(30))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        let moment = formatter.string(from: Date())
        try await Task.sleep(for: .milliseconds(30))
        _ = try await made("shots", "delete", project, "1-1")

        let then = try await daemon.cli("projects", "show", project, "--at", moment)
        #expect(then.status == 0 && then.output.contains("shot 1-1") && then.output.contains("as it was at version"), "\(then)")
        #expect(try await made("projects", "show", project).contains("shot 1-1") == false)
        // The deleted shot, by the label it had then.
        let file = daemon.home.path + "/then.png"
        let render = try await daemon.cli("render", project, "1-1", "--out", file, "--at", moment)
        #expect(render.status == 0, "\(render.errors)")
        #expect(FileManager.default.contents(atPath: file)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
        // The animatic and the EDL of the board as it was: one shot of the default 2 s (now there is none).
        let video = daemon.home.path + "/then.mp4"
        let animatic = try await daemon.cli("export", "animatic", project, "--out", video, "--size", "320x180", "--at", moment)
        #expect(animatic.status == 0, "\(animatic.errors)")
        let probed = try await ExternalProgram.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", video])
        let seconds = Double(probed.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(abs(seconds - 2) < 0.1, "\(probed.output)")
        let edl = daemon.home.path + "/then.edl"
        let cut = try await daemon.cli("export", "edl", project, "--scene", "1", "--out", edl, "--at", moment)
        #expect(cut.status == 0, "\(cut.errors)")
        #expect(cut.output.contains("(1 shots") && cut.output.contains("1 still(s)"), "the shot as it was, and its still: \(cut.output)")
        let empty = try await daemon.cli("export", "animatic", project, "--out", daemon.home.path + "/now.mp4", "--size", "320x180")
        #expect(empty.status != 0 && empty.errors.contains("nothing to export"), "now the scene has no shots: \(empty.errors)")

        // One person's edits a moment apart are one version; --changes lists each.
        let history = try await daemon.cli("history", project)
        #expect(history.status == 0 && history.output.hasPrefix("VERSION") && history.output.contains("  you  "), "\(history.output)")
        #expect(history.output.split(separator: "\n").count == 2, "a header and one version: \(history.output)")
        let versions = try #require((try await daemon.json("history", project) as? [String: Any])?["versions"] as? [[String: Any]])
        let id = try #require(versions.first?["id"] as? String)
        #expect((versions.first?["changes"] as? [Any])?.count == 7, "founding, title, scene, shot, layer, stroke, deletion")
        #expect(try await made("projects", "show", project, "--at", id).contains("as it was at version \(id)"))
        #expect(try await made("history", project, "--changes", "--since", "2001-01-01").split(separator: "\n").count == 8)

        let diff = try await made("diff", project, moment)
        #expect(diff.contains("to now") && diff.contains("shot 1-1: removed"), "\(diff)")
        #expect(try await made("diff", project, moment, moment).hasSuffix("no differences"))

        // Restore the deleted shot (named as it was), as a new edit that undo takes back.
        let restored = try await made("restore", project, "--to", moment, "--shot", "1-1")
        #expect(restored.hasPrefix("restored shot 1-1 as it was at version") && restored.contains("restored 1 shot"), "\(restored)")
        #expect(try await made("projects", "show", project).contains("shot 1-1"))
        #expect(try await made("restore", project, "--to", moment).contains("is already as it was"))
        _ = try await made("undo", project)
        #expect(try await made("projects", "show", project).contains("shot 1-1") == false)
        let later = try await made("shots", "add", project, scene)
        let missing = try await daemon.cli("restore", project, "--to", moment, "--shot", later)
        #expect(missing.status == 1 && missing.errors.contains("was not on the board at that version"), "\(missing.errors)")
        // A label is looked up as it was then, and the error says so.
        let unlabelled = try await daemon.cli("restore", project, "--to", moment, "--shot", "1-5")
        #expect(unlabelled.status == 64 && unlabelled.errors.contains("no shot '1-5' at version "), "\(unlabelled.errors)")
        let both = try await daemon.cli("restore", project, "--to", moment, "--shot", "1-1", "--scene", "1")
        #expect(both.status == 64)

        // Bad input, in words.
        let before = try await daemon.cli("projects", "show", project, "--at", "2001-01-01T00:00")
        #expect(before.status == 1 && before.errors.contains("did not exist yet"), "\(before.errors)")
        let unknown = try await daemon.cli("projects", "show", project, "--at", "review-3")
        #expect(unknown.status == 1 && unknown.errors.contains("storyteller history"), "\(unknown.errors)")
        let since = try await daemon.cli("history", project, "--since", "soon")
        #expect(since.status == 64 && since.errors.contains("--since must be a time"), "\(since.errors)")
    }

    /// Runs the CLI against `daemon`, expecting success; its output, trimmed.
    static func run(_ daemon: StartedDaemon, _ arguments: [String]) async throws -> String {
        let result = try await storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func namedVersionsAreKeptInTheProjectAndWorkWhereAVersionDoes() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        func made(_ arguments: String...) async throws -> String { try await Self.run(daemon, arguments) }
        let project = try await made("projects", "create", "Film")
        _ = try await made("scenes", "add", project, "--title", "Harbour")
        #expect(try await made("versions", "tag", project, "client review 2").hasPrefix("named version "))
        _ = try await made("scenes", "add", project, "--title", "Lighthouse")

        let listed = try await made("versions", "list", project)
        #expect(listed.hasPrefix("NAME") && listed.contains("client review 2") && listed.contains("you"), "\(listed)")
        let then = try await made("projects", "show", project, "--at", "client review 2")
        #expect(then.contains("Harbour") && !then.contains("Lighthouse"), "\(then)")
        #expect(try await made("projects", "show", project, "--at", "CLIENT REVIEW 2").contains("Harbour"), "names match in any case")
        let entries = try #require(try await daemon.json("versions", "list", project) as? [[String: Any]])
        let version = try #require(entries.first?["version"] as? String)
        let me = try daemon.peerID()
        #expect(entries.count == 1 && version.count == 8 && entries.first?["author"] as? String == me)

        // --at names the version to name: an id, a name, a time.
        #expect(try await made("versions", "tag", project, "start", "--at", version).contains(version))
        #expect(try await made("versions", "tag", project, "first light", "--at", "client review 2").contains(version))
        // Naming again moves the name.
        let moved = try await made("versions", "tag", project, "start")
        #expect(!moved.contains(version))
        #expect((try await daemon.json("versions", "list", project) as? [[String: Any]])?.count == 3)
        #expect(try await made("history", project, "--changes").contains("named a version \"start\""))

        // Bad input in words; nothing changed.
        let blank = try await daemon.cli("versions", "tag", project, "   ")
        #expect(blank.status == 1 && blank.errors.contains("1 to 100 characters"), "\(blank.errors)")
        let unknownAt = try await daemon.cli("versions", "tag", project, "x", "--at", "review-9")
        #expect(unknownAt.status == 1 && unknownAt.errors.contains("no version 'review-9'"), "\(unknownAt.errors)")
        let unknown = try await daemon.cli("versions", "untag", project, "final")
        #expect(unknown.status == 1 && unknown.errors.contains("no version of this project is named 'final'"), "\(unknown.errors)")
        #expect((try await daemon.json("versions", "list", project) as? [[String: Any]])?.count == 3)

        #expect(try await made("versions", "untag", project, "client review 2").contains("took the name \"client review 2\" away"))
        let gone = try await daemon.cli("projects", "show", project, "--at", "client review 2")
        #expect(gone.status == 1 && gone.errors.contains("no version 'client review 2'"), "\(gone.errors)")
        let api = try daemon.client.request("POST", "/v1/projects/\(project)/versions/names", body: Data(#"{"name":""}"#.utf8))
        #expect(api.status == 400 && api.errorCode == "bad_request")
        #expect(try daemon.client.get("/v1/projects/\(project)/versions/names").status == 200)
    }

    @Test func namedVersionsReachPeersAndAReaderCannotName() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await TwoDaemonTests().pair(a, b)
        let project = try await Self.run(a, ["projects", "create", "Harbour"])
        _ = try await Self.run(a, ["scenes", "add", project, "--title", "Dawn"])
        _ = try await Self.run(a, ["share", project, bID, "--read-only"])
        _ = try await Self.run(a, ["versions", "tag", project, "review"])
        _ = try await Self.run(a, ["scenes", "add", project, "--title", "Dusk"])
        try await eventually("the name reaches b") {
            await (try? b.json("versions", "list", project) as? [[String: Any]])??.first?["name"] as? String == "review"
        }
        let then = try await Self.run(b, ["projects", "show", project, "--at", "review"])
        #expect(then.contains("Dawn") && !then.contains("Dusk"), "\(then)")
        let refused = try await b.cli("versions", "tag", project, "mine")
        #expect(refused.status == 1 && refused.errors.contains("read-only"), "\(refused.errors)")
    }
}
