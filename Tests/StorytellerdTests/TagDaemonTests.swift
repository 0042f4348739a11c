import Foundation
import StoryClient
import StoryCore
import StoryTestSupport
import Testing

/// Tags end to end: `storyteller tags`, `projects list --tag`, search and
/// exports limited to a tag against a real daemon, and the API's answers to
/// bad tags.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct TagDaemonTests {
    @Test(.requires("pdfinfo")) func tagsFromTheCommandLineFilterProjectsSearchAndExports() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let client = started.client
        let socket = started.socket
        func run(_ arguments: String...) async throws -> (status: Int32, output: String, errors: String) {
            try await storyteller(arguments + ["--socket", socket], environment: ["LANG": "C.UTF-8", "LC_ALL": "", "LC_PAPER": ""])
        }
        _ = try ExportDaemonTests.project(client)
        #expect(try await run("projects", "create", "Second").status == 0)

        var result = try await run("tags", "add", "Night Train", " client review ", "approved")
        #expect(result.status == 0 && result.output == "tagged the project: client review, approved\n", "\(result)")
        result = try await run("tags", "add", "Night Train", "1-2", "night")
        #expect(result.status == 0 && result.output == "tagged shot 1-2: night\n", "\(result)")
        #expect(try await run("tags", "add", "Night Train", "2-1", "NIGHT", "exterior").status == 0)
        let listed = try await run("tags", "list", "Night Train").output
        #expect(listed == "project: approved, client review\nshot 1-2: night\nshot 2-1: exterior, NIGHT\n", "\(listed)")

        // The listing's filter, in any case; projects without the tag are left out.
        let tagged = try await run("projects", "list", "--tag", "APPROVED").output
        #expect(tagged.contains("Night Train") && tagged.contains("TAGS") && !tagged.contains("Second"), "\(tagged)")
        result = try await run("projects", "list", "--tag", "nothing")
        #expect(result.status == 0 && result.output.isEmpty && result.errors == "storyteller: no project carries the tag 'nothing'\n", "\(result)")
        // A tag only shots carry: the empty list says which shots do.
        result = try await run("projects", "list", "--tag", "Exterior")
        #expect(result.status == 0 && result.output.isEmpty, "\(result)")
        #expect(
            result.errors.contains("no project carries the tag 'Exterior', but shots do (Night Train: ") && result.errors.contains("Shot 2-1"),
            "\(result)")
        let shots = try await run("shots", "list", "Night Train").output
        #expect(shots.contains("TAGS") && shots.contains("exterior, NIGHT"), "\(shots)")
        #expect(try await run("projects", "show", "Night Train").output.contains("  tags: approved, client review\n"))

        // Search finds tags, naming the field `tags`.
        let hits = try #require(try client.get("/v1/search?q=night").json as? [[String: Any]])
        let tagHits = hits.filter { $0["field"] as? String == "tags" }.compactMap { $0["label"] as? String }
        #expect(tagHits.contains { $0.hasSuffix("Shot 1-2") } && tagHits.contains { $0.hasSuffix("Shot 2-1") }, "\(hits)")

        // Exports limited to the tag: a page a panel, so pages count the shots (2 of 5).
        let home = started.home.path
        let all = home + "/all.pdf"
        let night = home + "/night.pdf"
        #expect(try await run("export", "pdf", "Night Train", "--per-page", "1", "--out", all).status == 0)
        result = try await run("export", "pdf", "Night Train", "--per-page", "1", "--tag", "Night", "--out", night)
        #expect(result.status == 0, "\(result)")
        #expect(try await ExternalProgram.run("pdfinfo", [all]).output.contains(/Pages:\s+5\n/))
        #expect(try await ExternalProgram.run("pdfinfo", [night]).output.contains(/Pages:\s+2\n/))
        result = try await run("export", "images", "Night Train", "--tag", "night", "--width", "160", "--out", home + "/night")
        #expect(result.status == 0, "\(result)")
        let files = try FileManager.default.contentsOfDirectory(atPath: home + "/night").sorted()
        #expect(files == ["01-02.png", "02-01.png", "contact-sheet.png"], "\(files)")
        result = try await run("export", "edl", "Night Train", "--scene", "1", "--tag", "night", "--out", home + "/night.edl")
        #expect(result.status == 0 && result.output.contains("(1 shots,"), "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home + "/night_media") == ["1-2.png"])
        result = try await run("export", "html", "Night Train", "--tag", "NIGHT", "--out", home + "/slides")
        #expect(result.status == 0, "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home + "/slides/panels").sorted() == ["1-2.png", "2-1.png"])
        result = try await run("export", "pdf", "Night Train", "--tag", "nowhere", "--out", home + "/none.pdf")
        #expect(result.status == 1 && result.errors.contains("no shot to export carries the tag 'nowhere'"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: home + "/none.pdf"))

        // Removing, and undoing the removal.
        #expect(try await run("tags", "remove", "Night Train", "Approved").status == 0)
        #expect(try await run("tags", "list", "Night Train").output.hasPrefix("project: client review\n"))
        #expect(try await run("undo", "Night Train").status == 0)
        #expect(try await run("tags", "list", "Night Train").output.hasPrefix("project: approved, client review\n"))

        // Bad input: clear words, nothing changed.
        result = try await run("tags", "add", "Night Train", "   ")
        #expect(result.status == 64 && result.errors.contains("must not be empty"), "\(result)")
        result = try await run("tags", "add", "Night Train", String(repeating: "x", count: 65))
        #expect(result.status == 64 && result.errors.contains("65 bytes, at most 64"), "\(result)")
        result = try await run("tags", "remove", "Night Train", "1-2", "never")
        #expect(result.status == 1 && result.errors.contains("has no tag \"never\""), "\(result)")
        result = try await run("tags", "add", "No Such Project", "x")
        #expect(result.status != 0 && result.errors.contains("No Such Project"), "\(result)")
        result = try await run("tags", "add", "Night Train")
        #expect(result.status == 64 && result.errors.contains("give the tags"), "\(result)")
        #expect(
            try await run("tags", "list", "Night Train").output == "project: approved, client review\nshot 1-2: night\nshot 2-1: exterior, NIGHT\n")

        // With a current project (`storyteller use`, here its variable) the project may be left
        // out: a first word naming no project is the shot or a tag; one naming a project is it.
        func runInCurrent(_ arguments: String...) async throws -> (status: Int32, output: String, errors: String) {
            try await storyteller(arguments + ["--socket", socket], environment: ["LANG": "C.UTF-8", "STORYTELLER_PROJECT": "Night Train"])
        }
        result = try await runInCurrent("tags", "add", "1-1", "chase")
        #expect(result.status == 0 && result.output == "tagged shot 1-1: chase\n", "\(result)")
        result = try await runInCurrent("tags", "add", "wide")
        #expect(result.status == 0 && result.output == "tagged the project: wide\n", "\(result)")
        result = try await runInCurrent("tags", "add", "Second", "draft")
        #expect(result.status == 0 && result.output == "tagged the project: draft\n", "\(result)")
        #expect(try await run("tags", "list", "Second").output == "project: draft\n")
        result = try await runInCurrent("tags", "remove", "1-1", "CHASE")
        #expect(result.status == 0 && result.output == "untagged shot 1-1: CHASE\n", "\(result)")
        #expect(
            try await run("tags", "list", "Night Train").output
                == "project: approved, client review, wide\nshot 1-2: night\nshot 2-1: exterior, NIGHT\n")
    }

    @Test func theAPIFiltersProjectsByTagAndRefusesBadTagsNamingTheField() async throws {
        let daemon = try await InProcessDaemon.start()
        do {
            try await Self.checkFilterAndRefusals(daemon)
        } catch {
            try await daemon.stop()
            throw error
        }
        try await daemon.stop()
    }

    private static func checkFilterAndRefusals(_ daemon: InProcessDaemon) async throws {
        // The blocking client off the cooperative pool, which the daemon in this process needs.
        let client = daemon.client
        let (project, _) = try await offThePool { try ExportDaemonTests.project(client) }
        let other = try #require((try await daemon.post("/v1/projects", json: #"{"name":"Other"}"#).json as? [String: Any])?["id"] as? String)
        let shown = try #require(try await daemon.get("/v1/projects/\(project)?points=false").json as? [String: Any])
        let scenes = try #require(shown["scenes"] as? [[String: Any]])
        let shot = try #require((scenes[0]["shots"] as? [[String: Any]])?[0]["id"] as? String)
        let layer = try #require(((scenes[0]["shots"] as? [[String: Any]])?[0]["layers"] as? [[String: Any]])?[0]["id"] as? String)

        let edit = try await daemon.post(
            "/v1/projects/\(project)/edits",
            json: #"{"ops":[{"op":"tag.add","tag":"Zeta"},{"op":"tag.add","tag":"alpha"},{"op":"tag.add","object":"\#(shot)","tag":"night"}]}"#)
        #expect(edit.status == 200, "\(String(decoding: edit.body, as: UTF8.self))")
        let after = try #require(try await daemon.get("/v1/projects/\(project)?points=false").json as? [String: Any])
        #expect(after["tags"] as? [String] == ["alpha", "Zeta"], "sorted without case")
        let firstShot = try #require(((after["scenes"] as? [[String: Any]])?[0]["shots"] as? [[String: Any]])?[0])
        #expect(firstShot["tags"] as? [String] == ["night"])

        func ids(_ target: String) async throws -> [String] {
            try #require(try await daemon.get(target).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        }
        #expect(try await ids("/v1/projects?tag=ALPHA") == [project])
        #expect(try await ids("/v1/projects?tag=%20zeta%20") == [project])
        #expect(try await ids("/v1/projects?tag=night").isEmpty, "a shot's tag is not the project's")
        #expect(Set(try await ids("/v1/projects")) == [project, other])
        let listed = try #require(try await daemon.get("/v1/projects").json as? [[String: Any]])
        #expect(listed.first { $0["id"] as? String == project }?["tags"] as? [String] == ["alpha", "Zeta"])
        #expect(try await daemon.get("/v1/projects?tag=").status == 400)
        // Removing takes it out of the index too (the same transaction as the change).
        _ = try await daemon.post("/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"tag.remove","tag":"ALPHA"}]}"#)
        #expect(try await ids("/v1/projects?tag=alpha").isEmpty)

        // Bad tags and objects: refused with the field named, nothing applied.
        let cases: [(String, Int, String)] = [
            (#"{"op":"tag.add","tag":""}"#, 400, "'tag'"),
            (#"{"op":"tag.add","tag":"\#(String(repeating: "y", count: 65))"}"#, 400, "at most 64"),
            (#"{"op":"tag.add","tag":"a\tb"}"#, 400, "control characters"),
            (#"{"op":"tag.add"}"#, 400, "tag"),
            (#"{"op":"tag.add","object":"\#(layer)","tag":"x"}"#, 400, "only the project and shots carry tags"),
            (#"{"op":"tag.add","object":"999999@\#(layer.split(separator: "@")[1])","tag":"x"}"#, 404, "no project or shot"),
            (#"{"op":"tag.remove","object":"\#(shot)","tag":"absent"}"#, 404, "has no tag"),
        ]
        for (op, status, words) in cases {
            let answer = try await daemon.post("/v1/projects/\(project)/edits", json: #"{"ops":[{"op":"tag.add","tag":"partial"},\#(op)]}"#)
            #expect(answer.status == status && (answer.errorMessage ?? "").contains(words), "\(op): \(answer.status) \(answer.errorMessage ?? "")")
        }
        let unchanged = try #require(try await daemon.get("/v1/projects/\(project)?points=false").json as? [String: Any])
        #expect(unchanged["tags"] as? [String] == ["Zeta"], "no request above was half applied")
    }
}
