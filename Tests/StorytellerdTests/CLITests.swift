import Foundation
import StoryAPI
import StoryClient
import StoryCore
import StoryIdentity
import StoryStore
import StoryTestSupport
import Testing

/// Runs the built `storyteller` CLI; its exit status, stdout and stderr.
/// It waits off the cooperative pool (see `offThePool`): a CLI call can
/// take a while (an export, a daemon under load), and every other test's
/// tasks need that pool meanwhile.
func storyteller(
    _ arguments: [String], environment: [String: String] = [:], in directory: String? = nil
) async throws -> (status: Int32, output: String, errors: String) {
    try await offThePool { try storytellerBlocking(arguments, environment: environment, in: directory) }
}

/// `storyteller` on the calling thread: only for code already off the pool.
/// Both pipes are read at once, and a CLI still running after 5 minutes is
/// killed and recorded as a failure.
func storytellerBlocking(
    _ arguments: [String], environment: [String: String] = [:], in directory: String? = nil
) throws -> (status: Int32, output: String, errors: String) {
    let result = try ChildProcess.runBlocking(
        productsDirectory.appendingPathComponent("storyteller"), arguments, environment: TestEnvironment.make(environment), in: directory)
    if result.timedOut { Issue.record("storyteller \(arguments.joined(separator: " ")) ran past its deadline and was killed") }
    return (result.status, result.outputText, result.errorText)
}

@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct CLITests {
    static let otherPeer = "YBB5GOE-GQ5FJ33-5EEN22A-XE43GRK-VDMGR2H-3HRCQFX-DSTMRI6-ZPZJYQP"

    @Test func everyCommandAgainstARealDaemon() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let daemon = started.daemon
        let socket = started.socket
        let client = started.client
        func run(_ arguments: String...) async throws -> (status: Int32, output: String, errors: String) {
            try await storyteller(arguments + ["--socket", socket])
        }

        let id = try await run("id")
        #expect(id.status == 0)
        let peerID = id.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(daemon.output.contains("peer id:    \(peerID)"))
        let idJSON = try #require(try await JSONSerialization.jsonObject(with: Data(try run("id", "--json").output.utf8)) as? [String: Any])
        #expect(idJSON["peerID"] as? String == peerID)

        let status = try await run("status")
        #expect(status.status == 0 && status.output.contains("peers connected:  0"))

        let created = try await run("projects", "create", "Night Train")
        #expect(created.status == 0)
        let project = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!project.isEmpty)
        let createdJSON = try await #require(
            try JSONSerialization.jsonObject(with: Data(try run("projects", "create", "Second", "--json").output.utf8)) as? [String: Any])
        #expect(createdJSON["id"] is String, "creating prints the new object with its id")
        let list = try await run("projects", "list")
        #expect(list.output.hasPrefix("NAME"), "a table with a header, names first (no colour when not a TTY)")
        #expect(!list.output.contains("\u{1B}["))
        #expect(list.output.contains(String(project.prefix(7))) && list.output.contains("Night Train"), "name and short id")
        #expect(!list.output.contains(project), "short ids in text, not the whole id")
        let shown = try await #require(
            try JSONSerialization.jsonObject(with: Data(try run("projects", "show", project, "--json").output.utf8)) as? [String: Any])
        #expect(shown["title"] as? String == "Night Train")
        #expect(try await run("projects", "show", project).output.contains("Night Train"))

        #expect(try await run("peers", "add", Self.otherPeer, "--address", "127.0.0.1:9", "--name", "b").status == 0)
        let peers = try await run("peers", "list")
        #expect(peers.output.hasPrefix("PEER") && peers.output.contains(String(Self.otherPeer.prefix(7))) && peers.output.contains("127.0.0.1:9"))
        #expect(peers.output.contains("offline, never connected"), "\(peers.output)")
        // It moved: `peers set --address` replaces where it is dialed; a bad address changes nothing.
        let moved = try await run("peers", "set", "b", "--address", "127.0.0.1:19", "--address", "localhost:20")
        #expect(moved.status == 0 && moved.output == "b: dialed at 127.0.0.1:19, localhost:20\n", "\(moved)")
        let listed = try await run("peers", "list").output
        #expect(listed.contains("127.0.0.1:19") && !listed.contains("127.0.0.1:9 "))
        let badAddress = try await run("peers", "set", "b", "--address", "127.0.0.1")
        #expect(badAddress.status == 64 && badAddress.errors.contains("--address"), "\(badAddress)")
        let response = try client.request("PATCH", "/v1/peers/\(Self.otherPeer)", body: Data(#"{"addresses": ["127.0.0.1:99999"]}"#.utf8))
        #expect(response.status == 400, "\(String(decoding: response.body, as: UTF8.self))")
        let emptied = try client.request("PATCH", "/v1/peers/\(Self.otherPeer)", body: Data(#"{"addresses": []}"#.utf8))
        #expect(emptied.status == 400)
        let kept = try #require(try JSONSerialization.jsonObject(with: client.request("GET", "/v1/peers").body) as? [[String: Any]])
        #expect(kept.first?["addresses"] as? [String] == ["127.0.0.1:19", "localhost:20"], "\(kept)")
        #expect(try await run("peers", "pending").status == 0)
        #expect(try await run("share", project, Self.otherPeer, "--read-only").output.contains("read-only"))
        #expect(try await run("unshare", project, Self.otherPeer).status == 0)
        #expect(try await run("peers", "remove", Self.otherPeer).status == 0)
        #expect(!(try await run("peers", "list").output.contains(String(Self.otherPeer.prefix(7)))))
        #expect(try await run("projects", "delete", project).status == 0)
        #expect(!(try await run("projects", "list").output.contains(String(project.prefix(7)))))
        #expect(try await run("projects", "list", "--deleted").output.contains(String(project.prefix(7))))
        #expect(try await run("projects", "restore", project).status == 0)

        // A malformed peer id is refused before asking the daemon (exit 64); the daemon's refusals exit 1.
        let badPeer = try await run("peers", "add", "NOT-A-PEER")
        #expect(badPeer.status == 64)
        #expect(badPeer.errors.contains("not a peer id") && badPeer.errors.contains("storyteller id"), "\(badPeer.errors)")
        // A name with control characters (a line break, a terminal escape) is refused by the API, saying why.
        for bad in ["laptop\ninfo storytellerd: all good", "\u{1B}]0;pwned\u{7}"] {
            let refused = try await run("peers", "add", Self.otherPeer, "--name", bad)
            #expect(refused.status == 1 && refused.errors.contains("control characters"), "\(refused.errors)")
        }
        let noProject = try await run("projects", "show", "00000000000000000000000000000001")
        #expect(noProject.status == 1 && noProject.errors.contains("no project"))
        // Bad arguments: exit 64 from the argument parser.
        #expect(try await run("share", project).status == 64)
        #expect(try await daemon.terminate() == 0)

        // No daemon: a clear message and exit 69.
        let down = try await run("status")
        #expect(down.status == 69)
        #expect(down.errors.contains("is storytellerd running?"))
    }

    @Test func theDefaultSocketIsTheDaemons() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let environment = ["HOME": home.path, "XDG_RUNTIME_DIR": home.path + "/run"]
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(daemon.output.contains("control:    \(home.path)/run/storyteller/control.sock"))
        let id = try await storyteller(["id"], environment: environment)
        #expect(id.status == 0, "\(id.errors)")
        #expect(daemon.output.contains(id.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await daemon.terminate() == 0)
    }

    @Test func drawingThroughTheCLIWithUndoAndRedo() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let daemon = started.daemon
        let socket = started.socket
        func run(_ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func state(_ project: String) async throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try await run("projects", "show", project, "--json").utf8)) as? [String: Any])
        }
        func strokes(_ body: [String: Any]) -> [[String: Any]] {
            let scenes = body["scenes"] as? [[String: Any]] ?? []
            let shots = scenes.flatMap { $0["shots"] as? [[String: Any]] ?? [] }
            let layers = shots.flatMap { $0["layers"] as? [[String: Any]] ?? [] }
            return layers.flatMap { $0["strokes"] as? [[String: Any]] ?? [] }
        }

        let project = try await run("projects", "create", "Storm")
        let scene = try await run("scenes", "add", project, "--title", "Harbour")
        let second = try await run("scenes", "add", project, "--title", "Lighthouse")
        let shot = try await run("shots", "add", project, scene)
        let layer = try await run("layers", "add", project, shot, "--name", "ink")
        let pointsFile = started.home.path + "/points.json"
        try "[0.25, 0.5, 1.0, 0.75, 0.5, 0.5]".write(toFile: pointsFile, atomically: true, encoding: .utf8)
        let first = try await run(
            "strokes", "add", project, layer, "--points", "[0.1, 0.2, 0.5, 0.3, 0.4, 0.6]", "--tool", "marker", "--color", "#ff0000", "--width",
            "0.01",
            "--cap", "square", "--join", "bevel")
        let fromFile = try await run("strokes", "add", project, layer, "--file", pointsFile)
        var body = try await state(project)
        var drawn = strokes(body)
        #expect(Set(drawn.compactMap { $0["id"] as? String }) == [first, fromFile])
        let marker = try #require(drawn.first { $0["id"] as? String == first })
        let points = try #require(marker["points"] as? [Double])
        #expect(points.count == 6, "points are a flat [x, y, pressure, …] array")
        #expect(abs(points[0] - 0.1) < 0.001 && abs(points[4] - 0.4) < 0.001)
        #expect((marker["brush"] as? [String: Any])?["tool"] as? String == "marker")
        #expect(
            (marker["brush"] as? [String: Any])?["cap"] as? String == "square" && (marker["brush"] as? [String: Any])?["join"] as? String == "bevel")
        // A replace changes the brush's ends and corners too (same stroke key).
        _ = try await run("strokes", "replace", project, layer, first, "--cap", "butt", "--join", "miter")
        let restyled = try await #require(strokes(try state(project)).first { $0["id"] as? String == first })
        #expect(
            (restyled["brush"] as? [String: Any])?["cap"] as? String == "butt" && (restyled["brush"] as? [String: Any])?["join"] as? String == "miter"
        )
        #expect((restyled["brush"] as? [String: Any])?["tool"] as? String == "marker", "the rest of the brush stays")
        _ = try await run("undo", project)
        let badCap = try await storyteller(["strokes", "add", project, layer, "--points", "[0.5, 0.5, 1]", "--cap", "pointy", "--socket", socket])
        #expect(badCap.status == 64 && badCap.errors.contains("cap"), "\(badCap.errors)")

        // Undo removes the last stroke; redo brings it back.
        #expect(try await run("undo", project) == "undid: drew 1 stroke on layer ink in 1-1", "undo says what it took back")
        #expect(strokes(try await state(project)).count == 1)
        #expect(try await run("redo", project) == "redid: drew 1 stroke on layer ink in 1-1")
        #expect(strokes(try await state(project)).count == 2)
        // An edit in another session is not undone by the default session's undo.
        _ = try await run("strokes", "erase", project, layer, first, "--session", "tablet")
        #expect(strokes(try await state(project)).count == 1)
        #expect(try await run("undo", project, "--session", "tablet") == "undid: erased 1 stroke on layer ink in 1-1")
        #expect(strokes(try await state(project)).count == 2, "the erase was undone")

        // Cross-scene move and duplicate.
        _ = try await run("shots", "move", project, shot, "--to", "0", "--scene", second)
        let copy = try await run("shots", "duplicate", project, shot)
        body = try await state(project)
        let scenes = body["scenes"] as? [[String: Any]] ?? []
        #expect((scenes.first?["shots"] as? [Any])?.isEmpty == true, "the shot left the first scene")
        let moved = (scenes.last?["shots"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(Set(moved) == [shot, copy])
        drawn = strokes(body)
        #expect(drawn.count == 4, "the duplicate shows the same strokes")

        // Shot fields.
        _ = try await run(
            "shots", "set", project, shot, "--background", "#336699", "--caption", "Wide", "--notes", "dusk", "--duration", "2.5", "--aspect-ratio",
            "2.39")
        let shotState = try await #require(
            ((try state(project)["scenes"] as? [[String: Any]] ?? []).flatMap { $0["shots"] as? [[String: Any]] ?? [] }).first {
                $0["id"] as? String == shot
            })
        #expect(shotState["caption"] as? String == "Wide" && shotState["notes"] as? String == "dusk")
        #expect(shotState["duration"] as? Double == 2.5 && shotState["aspectRatio"] as? Double == 2.39)
        #expect((shotState["background"] as? String)?.lowercased().hasPrefix("#336699") == true)
        let noFields = try await storyteller(["shots", "set", project, shot, "--socket", socket])
        #expect(noFields.status == 64 && noFields.errors.contains("give at least one"))

        // Layers: set, move, group, ungroup; project rename.
        let top = try await run("layers", "add", project, shot, "--name", "top")
        _ = try await run("layers", "set", project, top, "--visible", "false", "--opacity", "0.25", "--transform", "[2, 0, 0, 2, 0.1, 0]")
        _ = try await run("layers", "move", project, top, "--to", "0")
        let group = try await run("layers", "group", project, top, layer)
        func layers() async throws -> [[String: Any]] {
            let shots = (try await state(project)["scenes"] as? [[String: Any]] ?? []).flatMap { $0["shots"] as? [[String: Any]] ?? [] }
            return shots.first { $0["id"] as? String == shot }?["layers"] as? [[String: Any]] ?? []
        }
        var stack = try await layers()
        #expect(stack.map { $0["id"] as? String } == [top, layer], "moved to the bottom")
        #expect(stack[0]["visible"] as? Bool == false && stack[0]["opacity"] as? Double == 0.25)
        #expect(stack[0]["transform"] as? [Double] == [2, 0, 0, 2, 0.1, 0])
        #expect(stack.allSatisfy { $0["group"] as? String == group })
        _ = try await run("layers", "ungroup", project, top, layer)
        stack = try await layers()
        #expect(stack.allSatisfy { $0["group"] == nil })
        _ = try await run("projects", "rename", project, "Storm at Sea")
        #expect(try await run("projects", "list").contains("Storm at Sea"))
        #expect(try await state(project)["title"] as? String == "Storm at Sea")
        _ = try await run("projects", "describe", project, "A boat, a storm, a lighthouse.")
        #expect(try await state(project)["description"] as? String == "A boat, a storm, a lighthouse.")
        _ = try await run("projects", "set", project, "--onion-before", "#1e90ff", "--onion-after", "#ff8c00", "--aspect-ratio", "2.39")
        var fields = try await state(project)
        #expect(fields["onionBefore"] as? String == "#1E90FFFF" && fields["onionAfter"] as? String == "#FF8C00FF")
        #expect(fields["aspectRatio"] as? Double == 2.39)
        _ = try await run("projects", "set", project, "--onion-before", "default")
        fields = try await state(project)
        #expect(fields["onionBefore"] == nil && fields["onionAfter"] as? String == "#FF8C00FF", "default takes the colour away")
        let badColour = try await storyteller(["projects", "set", project, "--onion-after", "orange", "--socket", socket])
        #expect(badColour.status == 64 && badColour.errors.contains("--onion-after takes a colour"), "\(badColour.errors)")

        // Points the daemon would refuse are a usage error (64), said in the CLI's words.
        let bad = try await storyteller(["strokes", "add", project, layer, "--points", "[0.1, 0.2]", "--socket", socket])
        #expect(bad.status == 64 && bad.errors.contains("the points must be") && bad.errors.contains("multiple of 3"), "\(bad.errors)")
        let badID = try await storyteller(["strokes", "erase", project, layer, "not-an-id", "--socket", socket])
        #expect(badID.status == 64 && badID.errors.contains("no stroke 'not-an-id'"), "a name that is nothing here: \(badID.errors)")
        #expect(!badID.errors.contains("ops["))
        #expect(try await daemon.terminate() == 0)
    }

    @Test(.requires("pdfinfo")) func renderAndSearch() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let daemon = started.daemon
        let socket = started.socket
        let client = ControlClient(path: socket)
        let project = try #require((try client.post("/v1/projects", json: #"{"name":"Night Train"}"#).json as? [String: Any])?["id"] as? String)
        // Scene with two shots; shot 2 has a visible layer (2 strokes, 50 % opacity) and a hidden one.
        let edit = try client.post(
            "/v1/projects/\(project)/edits",
            json: #"""
                {"ops":[
                {"op":"scene.add","title":"Departure"},
                {"op":"shot.add","scene":"$0"},
                {"op":"layer.add","shot":"$1","name":"first"},
                {"op":"stroke.add","layer":"$2","points":[0.1,0.1,1,0.9,0.9,1]},
                {"op":"shot.add","scene":"$0"},
                {"op":"set","object":"$4","field":"background","value":"#102030"},
                {"op":"set","object":"$4","field":"caption","value":"The conductor whistles"},
                {"op":"layer.add","shot":"$4","name":"ink"},
                {"op":"set","object":"$7","field":"opacity","value":0.5},
                {"op":"stroke.add","layer":"$7","points":[0.5,0.5,1,0.6,0.6,1],"brush":{"color":"#ff0000","width":0.01}},
                {"op":"stroke.add","layer":"$7","points":[0.2,0.2,1,0.3,0.3,1]},
                {"op":"layer.add","shot":"$4","name":"sketch <rough>"},
                {"op":"stroke.add","layer":"$11","points":[0.4,0.4,1,0.45,0.45,1]},
                {"op":"set","object":"$11","field":"visible","value":false}
                ]}
                """#)
        let created = try #require((edit.json as? [String: Any])?["created"] as? [Any])
        let shot = try #require(created[4] as? String)

        // PNG: pixels where the layers put them (a render of its own is tested in StoryRenderTests).
        let png = started.home.path + "/shot.png"
        let rendered = try await storyteller(["render", project, shot, "--out", png, "--socket", socket])
        #expect(rendered.status == 0, "\(rendered.errors)")
        #expect(rendered.output.contains("wrote \(png) (PNG, "), "\(rendered.output)")
        let image = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: png))))
        #expect(image.width == 1600 && image.height == 900)
        let background = RasterImage.Pixel(red: 0x10, green: 0x20, blue: 0x30)
        #expect(image.pixel(atFraction: 0.05, 0.9).isClose(to: background, tolerance: 2), "the shot's background colour")
        #expect(image.pixel(atFraction: 0.55, 0.55).isClose(to: .init(red: 136, green: 16, blue: 24), tolerance: 6), "red on the ink layer at 50 %")
        #expect(image.pixel(atFraction: 0.425, 0.425).isClose(to: background, tolerance: 2), "the hidden layer is skipped")
        #expect(image.pixel(atFraction: 0.8, 0.8).isClose(to: background, tolerance: 2), "no onion skin asked for")
        // Onion skin: the previous shot's diagonal, tinted red.
        let onion = try await storyteller(["render", project, shot, "--out", png, "--onion", "1", "--socket", socket])
        #expect(onion.status == 0, "\(onion.errors)")
        let onionImage = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: png))))
        #expect(onionImage.pixel(atFraction: 0.8, 0.8).isReddish, "the previous shot, red: \(onionImage.pixel(atFraction: 0.8, 0.8))")

        // SVG and PDF, a width of 800, and --json.
        let svg = started.home.path + "/shot.SVG"
        let vector = try await storyteller(["render", project, shot, "--out", svg, "--width", "800", "--json", "--socket", socket])
        #expect(vector.status == 0, "\(vector.errors)")
        let said = try #require(try JSONSerialization.jsonObject(with: Data(vector.output.utf8)) as? [String: Any])
        #expect(said["format"] as? String == "svg" && said["out"] as? String == svg && (said["bytes"] as? Int ?? 0) > 0)
        let svgText = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(svgText.hasPrefix("<?xml") && svgText.contains(#"width="800" height="450""#), "\(svgText.prefix(300))")
        let pdf = started.home.path + "/shot.pdf"
        #expect(try await storyteller(["render", project, shot, "--out", pdf, "--socket", socket]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: pdf)).starts(with: Data("%PDF-".utf8)))
        let info = try await ExternalProgram.run("pdfinfo", [pdf]).output
        #expect(info.contains(/Pages:\s+1\n/) && info.contains(/Page size:\s+1200 x 675 pts/), "\(info)")

        // The API says what it sends, and refuses what it cannot draw.
        let target = "/v1/projects/\(project)/shots/\(shot)/render"
        for (query, type) in [("", "image/svg+xml"), ("?format=png&width=64", "image/png"), ("?format=PDF", "application/pdf")] {
            let response = try client.get(target + query)
            #expect(response.status == 200 && response.headers["content-type"] == type, "\(query): \(response.status) \(response.headers)")
        }
        for (query, words) in [
            ("?format=gif", "format must be png, svg or pdf"), ("?width=15", "width must be a whole number from 16 to 8192"),
            ("?width=wide", "not 'wide'"), ("?onion=11", "onion must be a whole number from 0 to 10"),
        ] {
            let response = try client.get(target + query)
            #expect(response.status == 400 && (response.errorMessage ?? "").contains(words), "\(query): \(response.errorMessage ?? "")")
        }
        // The CLI refuses a file it cannot write in a format it knows before asking the daemon.
        let badExtension = try await storyteller(["render", project, shot, "--out", started.home.path + "/shot.jpg", "--socket", socket])
        #expect(badExtension.status == 64 && badExtension.errors.contains(".png, .svg or .pdf"), "\(badExtension.errors)")
        let noDirectory = try await storyteller(["render", project, shot, "--out", started.home.path + "/missing/shot.png", "--socket", socket])
        #expect(noDirectory.status == 64 && noDirectory.errors.contains("does not exist: \(started.home.path)/missing"), "\(noDirectory.errors)")
        let tooWide = try await storyteller(["render", project, shot, "--out", png, "--width", "9000", "--socket", socket])
        #expect(tooWide.status == 64 && tooWide.errors.contains("--width must be 16 to 8192"), "\(tooWide.errors)")
        let out = png
        let missing = try await storyteller(["render", project, "77@00000000000000aa", "--out", out, "--socket", socket])
        #expect(missing.status == 1 && missing.errors.contains("no visible shot"))

        let found = try await storyteller(["search", "CONDUCTOR", "--json", "--socket", socket])
        let hits = try #require(try JSONSerialization.jsonObject(with: Data(found.output.utf8)) as? [[String: Any]])
        #expect(hits.count == 1)
        #expect(hits.first?["object"] as? String == shot && hits.first?["field"] as? String == "caption")
        #expect(try await storyteller(["search", "conductor", "--socket", socket]).output.contains("The conductor whistles"))
        #expect(try await daemon.terminate() == 0)
    }

    @Test func backupWhileRunningAndMetrics() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let socket = home.path + "/control.sock"
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path + "/state", "--socket", socket, "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        let project = try await storyteller(["projects", "create", "Kept", "--socket", socket]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let file = home.path + "/backup.sqlite"
        let backup = try await storyteller(["backup", file, "--socket", socket])
        #expect(backup.status == 0, "\(backup.errors)")
        #expect(backup.output.contains("wrote \(file)"))
        let again = try await storyteller(["backup", file, "--socket", socket])
        #expect(again.status == 1 && again.errors.contains("already exists"))

        let metrics = try ControlClient(path: socket).get("/v1/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("# TYPE storyteller_documents gauge"))
        #expect(text.contains("storyteller_documents{kind=\"project\"} 1"))
        #expect(text.contains("storyteller_peers_connected 0"))
        #expect(text.contains("storyteller_build_info{version=\"\(API.version)\"} 1"))
        #expect(text.contains("# TYPE storyteller_edit_apply_seconds histogram"))
        #expect(try await daemon.terminate() == 0)

        // The copy is a healthy store holding the project.
        let copy = try Store(path: file, identity: TestIdentities.signing())
        #expect(try await copy.integrityProblems().isEmpty)
        let id = try #require(DocumentID(project))
        #expect(try await copy.document(id).name == "Kept")
    }
}

/// Both binaries say their version; `storyteller version` says the daemon's too.
@Suite(.daemons, .timeLimit(.minutes(15))) struct VersionTests {
    @Test func bothBinariesAndTheDaemonSayTheirVersion() async throws {
        let cli = try await storyteller(["--version"])
        #expect(cli.status == 0 && cli.output == "storyteller \(API.version)\n")
        let daemonBinary = Process()
        daemonBinary.executableURL = productsDirectory.appendingPathComponent("storytellerd")
        daemonBinary.arguments = ["--version"]
        let pipe = Pipe()
        daemonBinary.standardOutput = pipe
        try daemonBinary.run()
        daemonBinary.waitUntilExit()
        #expect(daemonBinary.terminationStatus == 0)
        #expect(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "storytellerd \(API.version)\n")

        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let answer = try #require(try started.client.get("/v1/version").json as? [String: Any])
        #expect(answer["version"] as? String == API.version && answer["api"] as? String == "v1")
        let both = try #require(try await started.json("version") as? [String: Any])
        #expect(both["cli"] as? String == API.version && both["daemon"] as? String == API.version)
        let text = try await started.cli("version")
        #expect(text.status == 0 && text.output.contains("storytellerd  \(API.version)") && text.errors.isEmpty)
        let none = try await storyteller(["version", "--socket", started.home.path + "/nothing.sock"])
        #expect(none.status == 0 && none.output.contains("not running"), "the CLI's version without a daemon")
    }
}

/// Options as people type them: global options before the subcommand,
/// negative numbers as option values.
@Suite(.daemons, .timeLimit(.minutes(15))) struct CLIArgumentTests {
    @Test func globalOptionsWorkBeforeOrAfterTheSubcommand() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let socket = started.socket
        for arguments in [
            ["--socket", socket, "--json", "version"], ["--json", "version", "--socket", socket], ["--socket=\(socket)", "--json", "version"],
        ] {
            let result = try await storyteller(arguments)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            #expect(result.output.contains("\"daemon\":\"\(API.version)\""), "\(arguments): \(result.output)")
        }
        let nested = try await storyteller(["peers", "--socket", socket, "list"])
        #expect(nested.status == 0, "between subcommands: \(nested.errors)")
    }

    @Test func negativeNumbersAreValuesAndOutOfRangeOnesSayTheRange() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let project = try await started.cli("projects", "create", "Numbers").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let scene = try await started.cli("scenes", "add", project).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let shot = try await started.cli("shots", "add", project, scene).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let negative = try await started.cli("shots", "set", project, shot, "--duration", "-3")
        #expect(negative.status == 1 && negative.errors.contains("--duration must be 0 to 86400 seconds"), "\(negative.errors)")
        #expect(!negative.errors.contains("ops["), "no request paths in the CLI's words: \(negative.errors)")
        let flat = try await started.cli("shots", "set", project, shot, "--aspect-ratio", "0")
        #expect(flat.status == 1 && flat.errors.contains("above 0"), "\(flat.errors)")
        let layer = try await started.cli("layers", "add", project, shot).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let stroke = try await started.cli("strokes", "add", project, layer, "--points", "[0.5,0.5,1]").output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let moved = try await started.cli("strokes", "replace", project, layer, stroke, "--translate", "-0.1,0.05")
        #expect(moved.status == 0, "a negative DX is a value: \(moved.errors)")
        let outside = try await started.cli("strokes", "add", project, layer, "--points", "[0.5,0.5,1, 1.5,0.5,1]")
        #expect(outside.status == 64 && outside.errors.contains("point 2 at x 1.5, y 0.5: x and y must be within 0 to 1"), "\(outside.errors)")
    }

    @Test func aMistypedCommandGetsDidYouMeanAndExit64() async throws {
        let top = try await storyteller(["projets", "list"])
        #expect(top.status == 64 && top.errors.contains("unknown command 'projets' for 'storyteller' (did you mean 'projects'?)"), "\(top.errors)")
        let nested = try await storyteller(["strokes", "ad", "x"])
        #expect(
            nested.status == 64 && nested.errors.contains("(did you mean 'add'?)") && nested.errors.contains("commands: list, add, erase, replace"))
        let underDefault = try await storyteller(["peers", "lst"])
        #expect(underDefault.status == 64 && underDefault.errors.contains("did you mean 'list'?"))
        // A word under a command with a default subcommand may be its argument: no suggestion then.
        let argument = try await storyteller(["shots", "Night Train", "--socket", "/nonexistent/socket"])
        #expect(argument.status == 69 && !argument.errors.contains("unknown command"), "\(argument.errors)")
        #expect(try await storyteller(["help", "shots"]).status == 0)
    }
}

/// The man pages are generated from the argument parser: every argument and
/// option of both programs says what it is, and every command shows an example.
@Suite(.daemons, .timeLimit(.minutes(15))) struct HelpTextTests {
    /// Commands, and arguments without help, in `--experimental-dump-help` of a product.
    private func audit(_ product: String) throws -> (commands: [String], withoutExample: [String], withoutHelp: [String]) {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent(product)
        process.arguments = ["--experimental-dump-help"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var commands: [String] = []
        var withoutExample: [String] = []
        var withoutHelp: [String] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            let name = path + [command["commandName"] as? String ?? "?"]
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            commands.append(name.joined(separator: " "))
            let discussion = command["discussion"] as? String ?? ""
            if subcommands.isEmpty && name.last != "help" && !discussion.contains("Example") && !discussion.contains("storyteller ") {
                withoutExample.append(name.joined(separator: " "))
            }
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
                guard name.last != "help", (argument["abstract"] as? String ?? "").isEmpty else { continue }
                let names = (argument["names"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
                withoutHelp.append("\(name.joined(separator: " ")) \(argument["valueName"] as? String ?? names.first ?? "?")")
            }
            for subcommand in subcommands { walk(subcommand, name) }
        }
        walk(try #require(root["command"] as? [String: Any]), [])
        return (commands, withoutExample, withoutHelp)
    }

    @Test func everyArgumentHasHelpAndEveryCommandAnExample() throws {
        let cli = try audit("storyteller")
        #expect(cli.commands.count > 50, "\(cli.commands.count) commands")
        #expect(cli.withoutHelp.isEmpty, "arguments without help: \(cli.withoutHelp)")
        #expect(cli.withoutExample.isEmpty, "commands without an example: \(cli.withoutExample)")
        let daemon = try audit("storytellerd")
        #expect(daemon.withoutHelp.isEmpty, "storytellerd options without help: \(daemon.withoutHelp)")
    }
}
