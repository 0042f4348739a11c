import Foundation
import StoryAPI
import StoryTestSupport
import Testing

/// The CLI takes what people say (names, library paths, labels, prefixes)
/// wherever it takes an id, and says which when a word could be several.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct NamesCLITests {
    @Test func namesPrefixesLabelsAndPathsSelectTheSameThings() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let config = try TemporaryDirectory()
        defer { config.remove() }
        func run(_ arguments: String..., environment: [String: String] = [:]) async throws -> (status: Int32, output: String, errors: String) {
            try await storyteller(
                arguments + ["--socket", started.socket], environment: ["XDG_CONFIG_HOME": config.path].merging(environment) { $1 })
        }
        func ok(_ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", started.socket], environment: ["XDG_CONFIG_HOME": config.path])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        #expect(try await run("folders", "create", "Films").status == 0)
        let project = try await ok("projects", "create", "Night Train", "--folder", "Films")
        let other = try await ok("projects", "create", "Night Bus")
        // Scenes by number and title, shots by label, layers by name.
        _ = try await ok("scenes", "add", "Night Train", "--title", "Platform")
        _ = try await ok("scenes", "add", "Films/Night Train", "--title", "Tunnel")
        let first = try await ok("shots", "add", String(project.prefix(8)), "1", "--caption", "Wide", "--duration", "3")
        let second = try await ok("shots", "add", "night train", "Platform", "--caption", "Close")
        let third = try await ok("shots", "add", "Night Train", "tunnel")
        _ = try await ok("layers", "add", "Night Train", "1-2", "--name", "ink")
        _ = try await ok("layers", "add", "Night Train", "2A", "--name", "ink")
        _ = try await ok("strokes", "add", "Night Train", "1-2/ink", "--points", "[0.1,0.1,1, 0.9,0.9,1]")
        _ = try await ok("strokes", "add", "Night Train", "1B/ink", "--points", "[0.2,0.2,1, 0.8,0.8,1]")

        let body = try #require(
            try await JSONSerialization.jsonObject(with: Data(try ok("projects", "show", project, "--json").utf8)) as? [String: Any])
        let scenes = try #require(body["scenes"] as? [[String: Any]])
        let shots = scenes.flatMap { $0["shots"] as? [[String: Any]] ?? [] }
        #expect(shots.map { $0["id"] as? String } == [first, second, third], "shots in the scenes named by number, title and any case")
        #expect(shots.map { $0["label"] as? String } == ["1-1", "1-2", "2-1"])
        #expect(shots.first?["caption"] as? String == "Wide" && shots.first?["duration"] as? Double == 3, "shots add takes the shot fields")
        let inkStrokes = (shots[1]["layers"] as? [[String: Any]])?.first?["strokes"] as? [[String: Any]]
        #expect(inkStrokes?.count == 2, "1-2/ink and 1B/ink are the same layer")

        // An ambiguous layer name lists the candidates and exits 64; the shot narrows it.
        let ambiguous = try await run("strokes", "list", "Night Train", "ink")
        #expect(ambiguous.status == 64)
        #expect(
            ambiguous.errors.contains("'ink' could be any of 2 layers") && ambiguous.errors.contains("in shot 1-2")
                && ambiguous.errors.contains("in shot 2-1"), "\(ambiguous.errors)")
        let listed = try await ok("strokes", "list", "Night Train", "1-2/ink")
        #expect(listed.hasPrefix("#") && listed.split(separator: "\n").count == 3, "a header and two strokes: \(listed)")
        // Strokes by their number in the layer.
        _ = try await ok("strokes", "erase", "Night Train", "1-2/ink", "1")
        #expect(try await ok("strokes", "list", "Night Train", "1-2/ink").split(separator: "\n").count == 2)

        // Listing commands.
        let scenesList = try await ok("scenes", "list", "Night Train")
        #expect(scenesList.contains("Platform") && scenesList.contains("Tunnel") && scenesList.contains("5 s"), "2 shots: 3 s + 2 s: \(scenesList)")
        let shotsList = try await ok("shots", "list", "Night Train", "--scene", "2")
        #expect(shotsList.contains("2-1") && !shotsList.contains("1-1"))
        let layersList = try await ok("layers", "list", "Night Train", "1-2")
        #expect(layersList.contains("ink"))

        // A project name that is close but wrong: did you mean; an id prefix shared by nothing: not found.
        let typo = try await run("projects", "show", "Nigth Train")
        #expect(typo.status == 64 && typo.errors.contains("did you mean 'Night Train'?"), "\(typo.errors)")
        // Two projects with the same name: ambiguous, both listed with their short ids.
        _ = try await ok("projects", "rename", other, "Night Train")
        let twins = try await run("projects", "show", "Night Train")
        #expect(twins.status == 64 && twins.errors.contains("could be any of 2 projects"), "\(twins.errors)")
        #expect(twins.errors.contains(String(project.prefix(7))) && twins.errors.contains(String(other.prefix(7))))
        #expect(try await run("projects", "show", "Films/Night Train").status == 0, "the library path still tells them apart")

        // A current project: `use`, then commands without one; STORYTELLER_PROJECT wins.
        #expect(try await run("shots", "list").errors.contains("which project?"))
        #expect(try await ok("use", "Films/Night Train").contains("using Night Train"))
        #expect(try await ok("shots", "list").contains("1-2"))
        _ = try await ok("versions", "tag", "before the caption")
        _ = try await ok("shots", "set", "1-1", "--caption", "Very wide")
        #expect(try await ok("shots", "list").contains("Very wide"))
        // diff: one word is the version; two that name no project are FROM and TO; a project still may be named.
        #expect(try await ok("diff", "before the caption").contains(#""Wide" → "Very wide""#))
        #expect(try await ok("diff", "before the caption", "before the caption").hasSuffix("no differences"))
        #expect(try await ok("diff", "Films/Night Train", "before the caption").contains("Very wide"))
        #expect(try await run("diff").errors.contains("give the version to compare from"))
        let environment = try await run("shots", "list", environment: ["STORYTELLER_PROJECT": other])
        #expect(environment.status == 0 && !environment.output.contains("1-2"), "the other project has no shots")
        // `shots add` without a SCENE: the project's only scene; with none or several, it says so.
        let several = try await run("shots", "add")
        #expect(several.status == 64 && several.errors.contains("give the SCENE: the project has 2 scenes (1 Platform, 2 Tunnel)"), "\(several)")
        let none = try await run("shots", "add", environment: ["STORYTELLER_PROJECT": other])
        #expect(none.status == 64 && none.errors.contains("the project has no scene yet"), "\(none)")
        let noShot = try await run("layers", "add", environment: ["STORYTELLER_PROJECT": other])
        #expect(noShot.status == 64 && noShot.errors.contains("give the SHOT: the project has no shot yet"), "\(noShot)")
        #expect(try await run("scenes", "add", other, "--title", "Depot").status == 0)
        let onlyScene = try await run("shots", "add", "--caption", "Bus stop", environment: ["STORYTELLER_PROJECT": other])
        #expect(onlyScene.status == 0, "\(onlyScene)")
        let bus = try #require(try await JSONSerialization.jsonObject(with: Data(try ok("projects", "show", other, "--json").utf8)) as? [String: Any])
        let busShots = ((bus["scenes"] as? [[String: Any]])?.first?["shots"] as? [[String: Any]]) ?? []
        #expect(busShots.map { $0["caption"] as? String } == ["Bus stop"], "\(bus)")
        // `layers add` without a SHOT: the project's only shot; with several, it lists them.
        let severalShots = try await run("layers", "add", "--name", "pencil")
        #expect(
            severalShots.status == 64 && severalShots.errors.contains("give the SHOT: the project has 3 shots (1-1, 1-2, 2-1)"), "\(severalShots)")
        let onlyShot = try await run("layers", "add", "--name", "pencil", environment: ["STORYTELLER_PROJECT": other])
        #expect(onlyShot.status == 0, "\(onlyShot)")
        let busLayers = try await run("layers", "list", "1-1", environment: ["STORYTELLER_PROJECT": other])
        #expect(busLayers.status == 0 && busLayers.output.contains("pencil"), "\(busLayers)")
        #expect(try await run("layers", "add", "2-1", "--name", "pencil").status == 0, "one word is the SHOT of the current project")
        #expect(try await ok("layers", "list", "2-1").contains("pencil"))
        #expect(try await ok("use").contains("chosen with `storyteller use`"))
        // A shot label where the project goes (`layers add 1-1 ink`: the name is an option) says so.
        let misplaced = try await run("layers", "add", "1-1", "ink")
        #expect(misplaced.status == 64 && misplaced.errors.contains("no project '1-1'"), "\(misplaced)")
        #expect(misplaced.errors.contains("'1-1' looks like a shot label, not a project"), "\(misplaced)")
        #expect(!(try await run("layers", "add", "Night Train", "nowhere").errors.contains("looks like a shot label")))
        // A scene's title where the project goes says where the title goes.
        let untitled = try await run("scenes", "add", "Platform")
        #expect(untitled.status == 64 && untitled.errors.contains("no project 'Platform'"), "\(untitled)")
        #expect(untitled.errors.contains(#"a new scene's title goes in --title: storyteller scenes add --title "Platform""#), "\(untitled)")
        #expect(!(try await run("scenes", "add", "Platform", "--title", "Dawn").errors.contains("title goes in")))
        _ = try await ok("use", "--clear")
        #expect(try await run("shots", "list").status == 64)

        // Peers by name and prefix.
        let peer = CLITests.otherPeer
        _ = try await ok("peers", "add", peer, "--address", "127.0.0.1:9", "--name", "bob")
        #expect(try await ok("share", "Films/Night Train", "bob", "--read-only").contains("read-only"))
        let shares = try #require(
            try await JSONSerialization.jsonObject(with: Data(try ok("--json", "projects", "show", project).utf8)) as? [String: Any])
        #expect(shares["id"] as? String == project)
        #expect(try await ok("unshare", String(project.prefix(8)), String(peer.prefix(9))).contains("unshared"))
        _ = try await ok("peers", "pause", "bob")
        #expect(try await ok("peers").contains("paused by you"))
        _ = try await ok("peers", "remove", "bob")
        let gone = try await run("peers", "pause", "bob")
        #expect(gone.status == 64 && gone.errors.contains("no peer 'bob'"))
    }
}
