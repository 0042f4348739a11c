import Foundation
import StoryCore
import StoryTestSupport
import Testing

/// People's words everywhere (issue 36, item 14): names where people read,
/// ids only under `--json`; `history` names the peer it made an editor;
/// `diff` says a duration changed; `projects show` shows notes; `use` is
/// remembered per daemon; `images add --below`; a mistyped peer id says
/// where the mistake is; a peer waiting to be accepted says so on its side.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct PeoplesWordsTests {
    @discardableResult
    private func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
        let result = try await storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func wordsPeopleReadNameThingsAndSayWhatIsWrong() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let config = ["XDG_CONFIG_HOME": files.path + "/config"]

        // Folders by name; history names the peer.
        #expect(try await ok(a, "folders", "create", "Films") == "created folder Films")
        #expect(try await ok(a, "folders", "create", "Shorts", "--in", "Films") == "created folder Shorts in Films")
        let project = try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        try await ok(a, "peers", "add", CLITests.otherPeer, "--address", "127.0.0.1:9", "--name", "bob")
        try await ok(a, "share", "Night Train", "bob")
        let history = try await ok(a, "history", "Night Train", "--changes")
        #expect(history.contains("made bob an editor") && !history.contains(String(CLITests.otherPeer.prefix(7))), "\(history)")

        // Notes in `projects show`; a duration in `diff`.
        try await ok(a, "scenes", "add", project, "--title", "Platform")
        try await ok(a, "shots", "add", project, "1")
        try await ok(a, "versions", "tag", project, "before the edit")
        let version = "before the edit"
        try await ok(a, "shots", "set", project, "1-1", "--duration", "2.5", "--notes", "Check the lens with Ana")
        let shown = try await ok(a, "projects", "show", project)
        #expect(shown.contains("notes: Check the lens with Ana"), "\(shown)")
        let diff = try await ok(a, "diff", project, version)
        #expect(diff.contains("shot 1-1 duration: the default → 2.5 s"), "\(diff)")

        // An image under the drawing.
        try await ok(a, "layers", "add", project, "1-1", "--name", "ink")
        let plate = files.path + "/plate.png"
        _ = FileManager.default.createFile(atPath: plate, contents: Data(TestMedia.png(width: 16, height: 9, seed: 3)))
        try await ok(a, "images", "add", project, "1-1", plate, "--name", "Plate", "--below", "ink")
        let layers = try await ok(a, "layers", "list", project, "1-1")
        let order = layers.split(separator: "\n").dropFirst().map {
            $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
        }
        #expect(order == ["Plate", "ink"], "bottom first: \(layers)")

        // `use` per daemon: another daemon has its own choice.
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let useA = try await storyteller(["use", "Night Train", "--socket", a.socket], environment: config)
        #expect(useA.status == 0, "\(useA.errors)")
        let onB = try await storyteller(["use", "--socket", b.socket], environment: config)
        #expect(onB.output.contains("no current project"), "b has no choice of its own: \(onB.output)")
        let onA = try await storyteller(["use", "--socket", a.socket], environment: config)
        #expect(onA.output.contains("Night Train"), "\(onA.output)")

        // A mistyped peer id: where the mistake is.
        var typo = Array(CLITests.otherPeer)
        typo[17] = typo[17] == "A" ? "B" : "A"
        let mistyped = try await storyteller(["peers", "add", String(typo), "--socket", a.socket])
        #expect(mistyped.status == 64 && mistyped.errors.contains("groups 3 and 4") && mistyped.errors.contains("mistyped"), "\(mistyped.errors)")
        var one = Array(CLITests.otherPeer)
        one[2] = "1"
        let digit = try await storyteller(["peers", "add", String(one), "--socket", a.socket])
        #expect(digit.status == 64 && digit.errors.contains("character 3, '1' (I?)"), "\(digit.errors)")

        // A peer that does not know this daemon yet: `peers` here says it waits to be accepted there.
        try await ok(b, "peers", "add", try a.peerID(), "--address", "127.0.0.1:\(try a.port())", "--name", "a")
        try await eventually("b says it waits for a to accept it") {
            try await ok(b, "peers").contains("waiting to be accepted there")
        }
    }
}
