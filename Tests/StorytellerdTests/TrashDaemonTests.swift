import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// The trash between real daemons, through the CLI: a delete and a restore
/// made on either machine reach the other, a reader only hides its own copy,
/// a purge is local and an offer with nothing new does not bring a purged
/// project back; and locked layers refuse strokes.
extension TwoDaemonTests {
    /// The project as `GET /v1/projects?deleted=true` lists it on `daemon`.
    private func listed(_ id: String, on daemon: StartedDaemon) throws -> [String: Any]? {
        (try daemon.client.get("/v1/projects?deleted=true").json as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    private func trashScope(_ id: String, on daemon: StartedDaemon) throws -> String? {
        (try listed(id, on: daemon)?["trash"] as? [String: Any])?["scope"] as? String
    }

    private func sceneTitles(_ id: String, on daemon: StartedDaemon) throws -> [String] {
        let scenes = (try daemon.client.get("/v1/projects/\(id)").json as? [String: Any])?["scenes"] as? [[String: Any]] ?? []
        return scenes.compactMap { $0["title"] as? String }
    }

    /// Whether the project's entry in `daemon`'s own library is in its trash (nil: no entry).
    private func entryInTrash(_ id: String, on daemon: StartedDaemon) throws -> Bool? {
        let nodes = (try daemon.client.get("/v1/library").json as? [String: Any])?["nodes"] as? [[String: Any]] ?? []
        return nodes.first { $0["project"] as? String == id && $0["kind"] as? String == "project" }?["inTrash"] as? Bool
    }

    @Test func aDeleteAndARestoreMadeOnEitherMachineReachTheOtherAndAPurgeIsLocal() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (aID, bID) = try await pair(a, b)
        let project = try await a.cli("projects", "create", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("scenes", "add", project, "--title", "Dock").status == 0)
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try projectBody(project, on: b) == projectBody(project, on: a) }

        let deleted = try await a.cli("projects", "delete", "Harbour")
        #expect(deleted.status == 0 && deleted.output.contains("deleted Harbour for everyone it is shared with"), "\(deleted)")
        #expect(try entryInTrash(project, on: a) == true, "a's library entry went to the trash with it")
        try await eventually("b has it in the trash") { try trashScope(project, on: b) == "everyone" }
        let trash = try #require(try listed(project, on: b)?["trash"] as? [String: Any])
        #expect(trash["by"] as? String == aID && trash["time"] is Int && trash["purgeTime"] is Int)
        #expect(try await !b.cli("projects").output.contains("Harbour"), "not listed among the live projects")
        #expect(try await b.cli("projects", "list", "--deleted").output.contains("for everyone by a"))
        let status = try await b.json("status") as? [String: Any]
        let synced = (status?["sync"] as? [[String: Any]])?.first { $0["id"] as? String == project }
        #expect(synced?["deleted"] as? Bool == true, "it still syncs, marked as in the trash")

        // b (an editor) restores it: back on a, with a's library entry.
        let restored = try await b.cli("projects", "restore", project)
        #expect(restored.status == 0 && restored.output.contains("restored \(project) for everyone"), "\(restored)")
        try await eventually("a has it back") { try listed(project, on: a)?["deleted"] as? Bool == false }
        try await eventually("a's library entry is back") { try entryInTrash(project, on: a) == false }

        // Deleted again, then purged on a once b has the delete.
        #expect(try await a.cli("projects", "delete", project).status == 0)
        try await eventually("b has it in the trash again") { try trashScope(project, on: b) == "everyone" }
        let unconfirmed = try await a.cli("projects", "purge", project)
        #expect(unconfirmed.status == 64 && unconfirmed.errors.contains("--yes"))
        try await eventually("a purges it once b has the delete") { try await a.cli("projects", "purge", project, "--yes").status == 0 }
        #expect(try a.client.get("/v1/projects/\(project)").status == 404)
        #expect(try trashScope(project, on: b) == "everyone", "b keeps its copy")

        // Reconnected: b offers it with nothing new, and a does not take it back.
        #expect(try await a.cli("peers", "pause", "b").status == 0)
        try await eventually("they are apart") { try connected(a) == 0 && connected(b) == 0 }
        #expect(try await a.cli("peers", "resume", "b").status == 0)
        try await a.daemon.waitForLog("purged here with nothing new since; not taken")
        #expect(try a.client.get("/v1/projects/\(project)").status == 404)

        // b restores it: that is new, and a takes it back, alive, at the next connection.
        #expect(try await b.cli("projects", "restore", project).status == 0)
        #expect(try await a.cli("peers", "pause", "b").status == 0)
        try await eventually("they are apart") { try connected(a) == 0 && connected(b) == 0 }
        #expect(try await a.cli("peers", "resume", "b").status == 0)
        try await eventually("a has it again, restored") { try listed(project, on: a)?["deleted"] as? Bool == false }
        try await eventually("with its scene") { try projectBody(project, on: a) == projectBody(project, on: b) }
    }

    @Test func aReaderOnlyHidesItsOwnCopyAndCannotRestoreADeleteForEveryone() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        let project = try await a.cli("projects", "create", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, bID, "--read-only").status == 0)
        try await eventually("b has the project") { try projectBody(project, on: b) != nil }

        let hidden = try await b.cli("projects", "delete", project)
        #expect(hidden.status == 0, "\(hidden)")
        #expect(hidden.output.contains("on this machine only: this machine may only read it"), "\(hidden)")
        #expect(try trashScope(project, on: b) == "this-machine")
        #expect(try await b.cli("projects", "list", "--deleted").output.contains("here only"))
        // Nothing reached a; and a's edits still reach b's hidden copy.
        #expect(try listed(project, on: a)?["deleted"] as? Bool == false)
        #expect(try await a.cli("scenes", "add", project, "--title", "Storm").status == 0)
        try await eventually("b still receives it") { try sceneTitles(project, on: b) == ["Storm"] }
        #expect(try await b.cli("projects", "restore", project).status == 0)
        #expect(try listed(project, on: b)?["deleted"] as? Bool == false)

        // The owner deletes it for everyone: the reader may not restore it.
        #expect(try await a.cli("projects", "delete", project).status == 0)
        try await eventually("b has it in the trash") { try trashScope(project, on: b) == "everyone" }
        let refused = try await b.cli("projects", "restore", project)
        #expect(refused.status == 1 && refused.errors.contains("only an owner or editor can restore it"), "\(refused)")
        #expect(try trashScope(project, on: b) == "everyone")
    }

    @Test func aStrokeOnALockedLayerIsRefusedWith409AndTheCLISaysHowToUnlockIt() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        func run(_ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", daemon.socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let project = try await run("projects", "create", "Night Train")
        let scene = try await run("scenes", "add", project)
        _ = try await run("shots", "add", project, scene)
        let layer = try await run("layers", "add", project, "1-1", "--name", "ink")
        let stroke = try await run("strokes", "add", project, "1-1/ink", "--points", "[0.1,0.2,0.5,0.3,0.4,0.6]")
        _ = try await run("layers", "set", project, "1-1/ink", "--locked", "true")
        let history = try daemon.client.get("/v1/projects/\(project)/history").json as? [String: Any]

        let refused = try await daemon.cli("strokes", "add", "Night Train", "1-1/ink", "--points", "[0.5,0.5,1]")
        #expect(refused.status == 1)
        #expect(
            refused.errors.contains(
                "layer ink in shot 1-1 is locked; unlock it with storyteller layers set 'Night Train' 1-1/ink --locked false"),
            "\(refused.errors)")
        #expect(try await daemon.cli("strokes", "erase", project, "1-1/ink", "1").status == 1)
        #expect(try await daemon.cli("strokes", "replace", project, "1-1/ink", "1", "--color", "#0000ff").status == 1)
        let answer = try daemon.client.request(
            "POST", "/v1/projects/\(project)/edits",
            body: Data(#"{"ops":[{"op":"stroke.erase","layer":"\#(layer)","stroke":"\#(stroke)"}]}"#.utf8))
        #expect(answer.status == 409 && answer.errorCode == "layer_locked", "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.errorMessage?.hasPrefix("layer ink in shot 1-1 is locked") == true)
        let after = try daemon.client.get("/v1/projects/\(project)/history").json as? [String: Any]
        #expect((after?["changes"] as? [Any])?.count == (history?["changes"] as? [Any])?.count, "nothing was stored")

        // Unlocked in the same request, a stroke goes on.
        let unlockAndDraw = try daemon.client.request(
            "POST", "/v1/projects/\(project)/edits",
            body: Data(
                #"{"ops":[{"op":"set","object":"\#(layer)","field":"locked","value":false},{"op":"stroke.add","layer":"\#(layer)","points":[0.5,0.5,1]}]}"#
                    .utf8))
        #expect(unlockAndDraw.status == 200)
        #expect(try await run("strokes", "list", project, "1-1/ink").split(separator: "\n").count == 3, "a header and two strokes")
    }
}
