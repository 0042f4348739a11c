import Foundation
import StoryClient
import StoryTestSupport
import Synchronization
import Testing

/// Found as a new user would: two people set the same caption offline, and
/// after the merge one caption had vanished with no trace. Two real daemons
/// on 127.0.0.1, driven through the CLI and the control API.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct ConflictDaemonTests {
    @Test func twoCaptionsWrittenOfflineAreBothKeptListedFoundAndOneComesBack() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let two = TwoDaemonTests()
        let (aID, bID) = try await two.pair(a, b)
        func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", daemon.socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let project = try await ok(a, "projects", "create", "Harbour")
        _ = try await ok(a, "scenes", "add", project, "--title", "Dock")
        _ = try await ok(a, "shots", "add", project, "Dock", "--caption", "Boat arrives")
        _ = try await ok(a, "shots", "add", project, "Dock", "--caption", "Crowd")
        _ = try await ok(a, "share", project, bID)
        try await eventually("b has the project") { try two.projectBody(project, on: b) == two.projectBody(project, on: a) }
        // A caption changed by someone who had seen the old one is no conflict.
        _ = try await ok(b, "shots", "set", project, "1-2", "--caption", "Crowd cheers")
        try await eventually("a has b's caption") { try await ok(a, "shots", "list", project).contains("Crowd cheers") }
        #expect(try await ok(a, "conflicts", project).hasPrefix("no overwritten values"))

        // The event stream of a, open before the merge.
        let seen = Mutex<[String]>([])
        let client = a.client
        let watcher = Task {
            _ = try? await offThePool {
                try client.stream("/v1/events?project=\(project)") { line in
                    seen.withLock { lines in
                        lines.append(line)
                        return !line.contains("conflict.opened")
                    }
                }
            }
        }
        try await eventually("the stream is open") { !seen.withLock { $0.isEmpty } }

        // Apart, both set the caption of 1-1.
        _ = try await ok(a, "peers", "pause", "b")
        try await eventually("they are apart") { try two.connected(a) == 0 && two.connected(b) == 0 }
        _ = try await ok(a, "shots", "set", project, "1-1", "--caption", "Ana: the boat at dawn")
        _ = try await ok(b, "shots", "set", project, "1-1", "--caption", "Ben: the boat at night")
        _ = try await ok(a, "scenes", "set", project, "1", "--title", "Quay at sunrise")
        _ = try await ok(b, "scenes", "set", project, "1", "--title", "Quay at sunset")
        _ = try await ok(a, "peers", "resume", "b")
        try await eventually("they merge") { try two.projectBody(project, on: a) == two.projectBody(project, on: b) }
        try await eventually("a reports the conflict") { seen.withLock { $0.contains { $0.contains("conflict.opened") } } }
        _ = await watcher.result

        // Both machines list both values, the same way.
        let listed = try await ok(a, "conflicts", project, "--json")
        // The same but for `local`, which says whose machine wrote it.
        func sameEverywhere(_ text: String) -> String { text.replacingOccurrences(of: #""local":true"#, with: #""local":false"#) }
        #expect(sameEverywhere(listed) == sameEverywhere(try await ok(b, "conflicts", project, "--json")))
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])
        let conflicts = try #require(answer["conflicts"] as? [[String: Any]])
        #expect(conflicts.map { $0["field"] as? String } == ["1.title", "1-1.caption"])
        let conflict = try #require(conflicts.last)
        #expect(conflict["field"] as? String == "1-1.caption" && conflict["kind"] as? String == "shot" && conflict["key"] as? String == "caption")
        let kept = try #require(conflict["kept"] as? [String: Any])
        let overwritten = try #require((conflict["overwritten"] as? [[String: Any]])?.first)
        let values = Set([kept["value"] as? String, overwritten["value"] as? String].compactMap { $0 })
        #expect(values == ["Ana: the boat at dawn", "Ben: the boat at night"])
        #expect(Set([kept["author"] as? String, overwritten["author"] as? String].compactMap { $0 }) == [aID, bID])
        #expect(overwritten["index"] as? Int == 1 && kept["index"] == nil && overwritten["at"] is String)
        let keptText = try #require(kept["value"] as? String)
        let lostText = try #require(overwritten["value"] as? String)
        // The later writer wins, as people mean it: Ben wrote after Ana (by the
        // wall clock, which both daemons here share), whatever the counters.
        #expect(keptText == "Ben: the boat at night" && lostText == "Ana: the boat at dawn")
        #expect(try await ok(a, "scenes", "list", project).contains("Quay at sunset"))
        // status counts them, on both machines.
        for daemon in [a, b] {
            let status = try await ok(daemon, "status")
            #expect(status.contains("conflicts:        2 fields in 1 project"), "\(status)")
            let json = try #require(try daemon.client.get("/v1/status").json as? [String: Any])
            #expect(json["conflicts"] as? Int == 2 && json["conflictedProjects"] as? Int == 1)
        }

        let word = lostText.hasPrefix("Ana") ? "dawn" : "night"
        // In words: field, value number, text, who.
        let table = try await ok(a, "conflicts", project)
        #expect(table.contains("1-1.caption") && table.contains("kept") && table.contains("\"\(lostText)\"") && table.contains("you"), "\(table)")
        // projects show marks the field, in text and JSON.
        #expect(try await ok(a, "projects", "show", project).contains("shot 1-1  \(keptText)"))
        #expect(try await ok(a, "projects", "show", project).contains("* caption overwritten"))
        let shown = try #require(try a.client.get("/v1/projects/\(project)").json as? [String: Any])
        let shots = (shown["scenes"] as? [[String: Any]])?.first?["shots"] as? [[String: Any]]
        #expect(shots?.first?["conflicts"] as? [String] == ["caption"] && shots?.last?["conflicts"] == nil)
        // search finds the overwritten caption, marked as such.
        let hits = try #require(try a.client.get("/v1/search?q=\(word)").json as? [[String: Any]])
        #expect(hits.count == 1 && hits.first?["overwritten"] as? Bool == true && hits.first?["reference"] as? String == "1-1.caption")
        #expect(try await ok(a, "search", word).contains("(overwritten: 1-1.caption)"))

        // The answers are those docs/openapi.json describes.
        let openAPI = try Data(contentsOf: repositoryRoot.appendingPathComponent("docs/openapi.json"))
        let validator = SchemaValidator(document: try #require(try JSONSerialization.jsonObject(with: openAPI) as? [String: Any]))
        for (path, target) in [
            ("/v1/projects/{project}/conflicts", "/v1/projects/\(project)/conflicts"), ("/v1/projects/{project}", "/v1/projects/\(project)"),
            ("/v1/search", "/v1/search?q=\(word)"), ("/v1/status", "/v1/status"),
        ] {
            let schema = try #require(validator.responseSchema(path: path, method: "get", status: 200))
            let problems = validator.problems(of: try #require(try a.client.get(target).json), against: schema, at: target)
            #expect(problems.isEmpty, "\(problems)")
        }

        // Bad input: clear errors, nothing changed.
        for (arguments, words) in [
            (["1-9.caption", "--value", "1"], "names no scene, shot or layer"),
            (["1-1.colour", "--value", "1"], "no field 'colour'"),
            (["1-1.caption", "--value", "2"], "has 1 overwritten value: --value takes 1, not 2"),
            (["1-2.caption", "--value", "1"], "1-2.caption has no overwritten values"),
        ] {
            let result = try await storyteller(["conflicts", "keep", project] + arguments + ["--socket", a.socket])
            #expect(result.status != 0 && result.errors.contains(words), "\(arguments): \(result.errors)")
        }
        let codes = try [
            a.client.request("POST", "/v1/projects/\(project)/conflicts/keep", body: Data(#"{"field":"9.title","value":1}"#.utf8)),
            a.client.request("POST", "/v1/projects/\(project)/conflicts/keep", body: Data(#"{"field":"1-1.caption","value":0}"#.utf8)),
            a.client.request("POST", "/v1/projects/\(project)/conflicts/keep", body: Data(#"{"field":"title","value":1}"#.utf8)),
        ].map { "\($0.status) \($0.errorCode ?? "")" }
        #expect(codes == ["404 not_found", "400 bad_request", "409 conflict"])
        #expect(try await ok(a, "conflicts", project, "--json") == listed)

        // keep brings the other caption back, as an edit: settled on both machines; undo takes it back.
        let keptJSON = try await ok(a, "conflicts", "keep", project, "1.title", "--value", "1", "--json")
        let keepSchema = try #require(validator.responseSchema(path: "/v1/projects/{project}/conflicts/keep", method: "post", status: 200))
        let keepAnswer = try JSONSerialization.jsonObject(with: Data(keptJSON.utf8))
        #expect(validator.problems(of: keepAnswer, against: keepSchema, at: "keep").isEmpty)
        #expect((keepAnswer as? [String: Any])?["open"] as? Int == 0)
        let kept1 = try await ok(a, "conflicts", "keep", project, "1-1.caption", "--value", "1")
        #expect(kept1.contains("1-1.caption is now \"\(lostText)\""), "\(kept1)")
        #expect(try await ok(a, "conflicts", project).hasPrefix("no overwritten values"))
        #expect(try await ok(a, "status").contains("conflicts:        none"))
        try await eventually("b has the kept caption, settled") {
            let listed = try await ok(b, "shots", "list", project).contains(lostText)
            let conflicts = try await ok(b, "conflicts", project)
            return listed && conflicts.hasPrefix("no overwritten values")
        }
        #expect(try await ok(a, "undo", project).hasPrefix("undid:"))
        #expect(try await ok(a, "shots", "list", project).contains(keptText))
    }
}
