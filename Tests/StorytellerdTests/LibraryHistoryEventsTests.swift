import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StoryTestSupport
import Synchronization
import Testing

/// The library (tree, folders), history, stroke replace and the event stream,
/// through the built CLI and daemon.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct LibraryHistoryEventsTests {
    private func nodes(_ daemon: StartedDaemon) async throws -> [[String: Any]] {
        let library = try #require(try await daemon.json("tree") as? [String: Any])
        return try #require(library["nodes"] as? [[String: Any]])
    }

    private func node(named name: String, in nodes: [[String: Any]]) -> [String: Any]? {
        nodes.first { $0["name"] as? String == name }
    }

    @Test func foldersAndProjectsInTheLibrary() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }

        #expect(try await daemon.cli("tree").output.contains("the library is empty"))
        let films = try await daemon.cli("folders", "create", "Films")
        #expect(films.status == 0)
        // People's words: the folder's name, not its id (which --json gives).
        #expect(films.output.trimmingCharacters(in: .whitespacesAndNewlines) == "created folder Films", "\(films.output)")
        let firstTree = try #require(try await daemon.json("tree") as? [String: Any])
        let filmsID = try #require((firstTree["nodes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "Films" }?["id"] as? String)
        let shorts = try #require(try await daemon.json("folders", "create", "Shorts", "--in", "Films") as? [String: Any])
        #expect(shorts["parent"] as? String == filmsID && shorts["kind"] as? String == "folder")
        let project = try await daemon.cli("projects", "create", "Night Train", "--folder", "Films/Shorts").output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("projects", "create", "Loose").status == 0)

        let tree = try await daemon.cli("tree").output
        let lines = tree.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Films/") == true, "\(tree)")
        #expect(lines.contains { $0.hasPrefix("  Shorts/") })
        #expect(lines.contains { $0 == "    Night Train  \(project.prefix(7))" }, "names first, the short id commands take: \(tree)")
        #expect(lines.contains { $0.hasPrefix("Loose  ") })
        var all = try await nodes(daemon)
        let entry = try #require(all.first { $0["project"] as? String == project })
        #expect(entry["parent"] as? String == shorts["id"] as? String && entry["depth"] as? Int == 2)

        // Rename, describe, move out, reorder.
        #expect(try await daemon.cli("folders", "rename", "Films", "Features").status == 0)
        #expect(try await daemon.cli("folders", "describe", "Features", "long ones").status == 0)
        #expect(try await daemon.cli("folders", "move", "Features/Shorts", "--to", "root").status == 0)
        #expect(try await daemon.cli("folders", "reorder", "Shorts", "0").status == 0)
        all = try await nodes(daemon)
        let top = all.filter { $0["depth"] as? Int == 0 }.map { $0["name"] as? String ?? "" }
        #expect(top == ["Shorts", "Features", "Loose"])
        #expect(node(named: "Features", in: all)?["description"] as? String == "long ones")

        // A folder cannot go into its own subfolder; a path naming two nodes is refused.
        #expect(try await daemon.cli("folders", "create", "Inner", "--in", "Features").status == 0)
        let cycle = try await daemon.cli("folders", "move", "Features", "--to", "Features/Inner")
        #expect(cycle.status == 1 && cycle.errors.contains("itself or its own subfolder"), "\(cycle.errors)")
        #expect(try await daemon.cli("folders", "create", "Twin").status == 0)
        #expect(try await daemon.cli("folders", "create", "Twin").status == 0)
        let twin = try await daemon.cli("folders", "rename", "Twin", "One")
        #expect(twin.status == 1 && twin.errors.contains("names 2 folders or projects"))
        let missing = try await daemon.cli("folders", "delete", "Nowhere/At/All")
        #expect(missing.status == 1 && missing.errors.contains("no folder or project"))
        // Names that are also route words still work.
        #expect(try await daemon.cli("folders", "create", "restore").status == 0)
        #expect(try await daemon.cli("folders", "rename", "restore", "Restored").status == 0)
        #expect(node(named: "Restored", in: try await nodes(daemon)) != nil)

        // Delete to the trash and restore into the folder it was in.
        #expect(try await daemon.cli("folders", "delete", "Features").status == 0)
        let trashed = try await daemon.cli("tree", "--trash").output
        #expect(trashed.contains("Trash\n  Features/"), "\(trashed)")
        #expect(node(named: "Features", in: try await nodes(daemon))?["inTrash"] as? Bool == true)
        #expect(node(named: "Inner", in: try await nodes(daemon))?["inTrash"] as? Bool == true, "what it holds goes with it")
        #expect(try await daemon.cli("folders", "restore", "Features").status == 0)
        #expect(node(named: "Inner", in: try await nodes(daemon))?["inTrash"] as? Bool == false)

        // The project's entry follows the project: renamed, deleted, restored.
        #expect(try await daemon.cli("projects", "rename", project, "Day Train").status == 0)
        #expect(try await nodes(daemon).first { $0["project"] as? String == project }?["name"] as? String == "Day Train")
        #expect(try await daemon.cli("projects", "delete", project).status == 0)
        #expect(try await nodes(daemon).first { $0["project"] as? String == project }?["inTrash"] as? Bool == true)
        #expect(try await daemon.cli("projects", "restore", project).status == 0)
        let back = try #require(try await nodes(daemon).first { $0["project"] as? String == project })
        #expect(back["inTrash"] as? Bool == false && back["parent"] as? String == shorts["id"] as? String)

        // The library survives a restart.
        let before = try await nodes(daemon).map { "\($0["id"] ?? "") \($0["name"] ?? "") \($0["parent"] ?? "")" }
        #expect(try await daemon.daemon.terminate() == 0)
        let again = try await StartedDaemon.start(in: daemon.home)
        defer { again.daemon.kill() }
        let after = try await nodes(again)
        #expect(after.map { "\($0["id"] ?? "") \($0["name"] ?? "") \($0["parent"] ?? "")" } == before)
        #expect(node(named: "Features", in: after)?["description"] as? String == "long ones")
    }

    @Test func strokeReplaceAndHistory() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Film").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let scene = try await daemon.cli("scenes", "add", project, "--title", "One").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let shot = try await daemon.cli("shots", "add", project, scene).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let layer = try await daemon.cli("layers", "add", project, shot, "--name", "ink").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let stroke = try await daemon.cli("strokes", "add", project, layer, "--points", "[0.1,0.1,0.5, 0.2,0.2,0.5]")
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        func strokes() async throws -> [[String: Any]] {
            let body = try #require(try await daemon.json("projects", "show", project) as? [String: Any])
            let scenes = try #require(body["scenes"] as? [[String: Any]])
            let shots = try #require(scenes.first?["shots"] as? [[String: Any]])
            let layers = try #require(shots.first?["layers"] as? [[String: Any]])
            return try #require(layers.first?["strokes"] as? [[String: Any]])
        }

        let replaced = try await daemon.cli("strokes", "replace", project, layer, stroke, "--color", "#ff0000", "--translate", "0.1,0")
        #expect(replaced.status == 0, "\(replaced.errors)")
        var shown = try #require(try await strokes().first)
        #expect((shown["brush"] as? [String: Any])?["color"] as? String == "#FF0000FF")
        let points = try #require(shown["points"] as? [Double])
        #expect(abs(points[0] - 0.2) < 0.001 && abs(points[1] - 0.1) < 0.001, "moved right by 0.1: \(points)")
        #expect(try await daemon.cli("strokes", "erase", project, layer, stroke).status == 0)
        #expect(try await strokes().isEmpty)
        #expect(try await daemon.cli("strokes", "replace", project, layer, stroke, "--restore", "--width", "0.01").status == 0)
        shown = try #require(try await strokes().first)
        #expect(shown["id"] as? String == stroke && (shown["brush"] as? [String: Any])?["color"] as? String == "#FF0000FF")
        let nothing = try await daemon.cli("strokes", "replace", project, layer, stroke)
        #expect(nothing.status != 0 && nothing.errors.contains("give what to change"))
        let badTransform = try daemon.client.request(
            "POST", "/v1/projects/\(project)/edits",
            body: Data(#"{"ops":[{"op":"stroke.replace","layer":"\#(layer)","stroke":"\#(stroke)","transform":[1,0,0]}]}"#.utf8))
        #expect(badTransform.status == 400 && badTransform.errorCode == "bad_request")

        // History: newest first, each with its author replica, time and a summary.
        let history = try #require(try await daemon.json("history", project, "--changes") as? [String: Any])
        let changes = try #require(history["changes"] as? [[String: Any]])
        let summaries = changes.compactMap { $0["summary"] as? String }
        #expect(summaries.count == 9, "founding, title, scene, shot, layer, stroke, replace, erase, restore: \(summaries)")
        #expect(summaries.first == "restored 1 stroke", "restore + restyle is one change, which brought the stroke back: \(summaries)")
        #expect(summaries.contains("erased 1 stroke") && summaries.contains("drew 1 stroke") && summaries.contains("added 1 layer"))
        #expect(summaries.last == "founded it")
        #expect(summaries.dropLast().last == "set title")
        #expect(changes.allSatisfy { $0["local"] as? Bool == true && ($0["time"] as? Int ?? 0) > 1_700_000_000_000 })
        #expect(Set(changes.compactMap { $0["replica"] as? String }).count == 1)
        #expect(history["compacted"] as? Bool == false)
        let text = try await daemon.cli("history", project, "--changes", "--limit", "2")
        #expect(text.status == 0 && text.output.hasPrefix("TIME") && text.output.contains("  you  "), "\(text.output)")
        #expect(text.output.split(separator: "\n").count == 3, "a header and two changes")
        #expect(try daemon.client.get("/v1/projects/\(project)/history?limit=0").status == 400)
    }

    @Test func theEventStreamFollowsChangesAndEndsAtShutdown() async throws {
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Film").output.trimmingCharacters(in: .whitespacesAndNewlines)

        /// Runs `storyteller watch ARGUMENTS` while making edits until it exits; its output lines.
        func watch(_ arguments: [String]) async throws -> [Substring] {
            let watch = Process()
            watch.executableURL = productsDirectory.appendingPathComponent("storyteller")
            watch.arguments = ["watch"] + arguments + ["--socket", daemon.socket]
            watch.environment = TestEnvironment.make()
            let out = Pipe()
            watch.standardOutput = out
            try watch.run()
            defer { if watch.isRunning { watch.terminate() } }
            var limit = TestDeadline(.seconds(30))
            while watch.isRunning && !limit.hasPassed() {
                #expect(try await daemon.cli("scenes", "add", project).status == 0)
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(!watch.isRunning, "watch stops after --count events")
            watch.waitUntilExit()
            #expect(watch.terminationStatus == 0)
            return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        }
        let lines = try await watch(["--project", project, "--count", "2", "--json"])
        #expect(lines.count == 2)
        for line in lines {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(event["type"] as? String == "document.changed" && event["document"] as? String == project)
            #expect(event["origin"] as? String == "local" && event["changes"] as? Int == 1)
        }
        let text = try await watch(["--project", project, "--count", "1"])
        #expect(text.count == 1)
        #expect(
            text.first?.range(
                of: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})  you added 1 scene in Film$",
                options: .regularExpression)
                != nil, "an ISO 8601 time and a sentence: \(text)")

        // Server-sent events, and the stream ends cleanly when the daemon stops.
        let client = daemon.client
        let seen = Lines()
        // On a thread of its own: a blocking reader on the cooperative pool
        // (two cores, two threads) can starve the tests that make its events.
        let received = Task { () throws -> ControlClient.Response? in
            try await offThePool {
                try client.stream("/v1/events", accept: "text/event-stream") { line in
                    seen.append(line)
                    return true
                }
            }
        }
        try await eventually("the stream says hello") { seen.all.contains("event: hello") }
        #expect(try await daemon.cli("folders", "create", "Boards").status == 0)
        try await eventually("the library change arrives") { seen.all.contains("event: library.changed") }
        #expect(try await daemon.daemon.terminate() == 0, "SIGTERM with a stream open is a clean exit")
        #expect(try await received.value == nil, "the stream ended without an error status")
        let sse = seen.all
        #expect(sse.first == "event: hello")
        #expect(sse.contains("event: library.changed"), "\(sse)")
        #expect(sse.contains { $0.hasPrefix("data: {") && $0.contains("\"type\":\"library.changed\"") })

        // An unknown project is a 404 before any streaming starts.
        let again = try await StartedDaemon.start(in: daemon.home)
        defer { again.daemon.kill() }
        let refused = try await again.cli("watch", "--project", "00000000000000000000000000000000")
        #expect(refused.status == 1 && refused.errors.contains("no project"))
    }
}

/// Lines collected by a stream reader on another thread.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
