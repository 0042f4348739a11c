import Foundation
import StoryClient
import StoryCore
import StoryDaemon
import StoryIdentity
import StoryTestSupport
import Testing

/// Flags over environment over config file over defaults, and strict errors,
/// checked on the built daemon.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct ConfigurationTests {
    @Test func flagsOverrideTheEnvironmentWhichOverridesTheFile() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/storytellerd.toml"
        try """
        # a comment
        data-dir = "\(home.path)/from-file"   # trailing comment
        name = "from # file"
        listen = "127.0.0.1:1"
        log-level = "debug"
        maintenance-interval = 5
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            arguments: ["--config", file, "--listen", "127.0.0.1:0"],
            environment: ["STORYTELLER_LOG_LEVEL": "info", "STORYTELLER_NAME": "from-env"])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(daemon.output.contains("storytellerd from-env"), "the environment beats the file")
        #expect(daemon.output.contains("state:      \(home.path)/from-file"), "the file beats the default")
        #expect(daemon.output.contains("peers on:   127.0.0.1:0"), "the flag beats the file")
        #expect(!daemon.errors.contains("settings:"), "STORYTELLER_LOG_LEVEL beat the file's debug")
        #expect(try await daemon.terminate() == 0)

        // Without the environment, the file's debug level shows the resolved settings.
        let fromFile = try DaemonProcess(arguments: ["--config", file, "--listen", "127.0.0.1:0"], environment: [:])
        defer { fromFile.kill() }
        try await fromFile.waitForLog("ready")
        #expect(fromFile.errors.contains("debug storytellerd: settings: listen=127.0.0.1:0"))
        #expect(fromFile.output.contains("storytellerd from # file"), "a # inside a string is not a comment")
        #expect(try await fromFile.terminate() == 0)
    }

    @Test func anUnknownKeyOrBadValueIsAStartupErrorNamingIt() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let cases: [(file: String, environment: [String: String], mentions: [String])] = [
            ("listen = \"127.0.0.1:0\"\ncolour = \"red\"\n", [:], [":2:", "'colour'", "not a known key (known: "]),
            // A near miss names the key meant.
            ("lisen = \"127.0.0.1:0\"\n", [:], [":1:", "'lisen'", "not a known key (did you mean 'listen'?; known: "]),
            ("[[peers]]\nid = \"x\"\n", [:], [":1:", "'peers'", "did you mean '[[peer]]'?"]),
            ("listen = \"127.0.0.1:99999\"\n", [:], [":1:", "'listen'", "99999"]),
            // Syntax errors are TOMLKit's, with the line.
            ("name = \"a\"\nname = \"b\"\n", [:], [":2:", "not valid TOML", "redefine", "'name'"]),
            ("maintenance-interval = soon\n", [:], [":1:", "not valid TOML"]),
            ("name = \"unterminated\n", [:], [":1:", "not valid TOML", "string"]),
            ("just words\n", [:], [":1:", "not valid TOML", "expected '='"]),
            // Values of the wrong kind, and bad values, with the key's line.
            ("name = \"a\"\nmaintenance-interval = \"soon\"\n", [:], [":2:", "'maintenance-interval'", "soon"]),
            ("name = \"a\"\n\nmaintenance-interval = 2.5\n", [:], [":3:", "'maintenance-interval'", "must be a string, an integer or true/false"]),
            ("listen = [\"127.0.0.1:1\", \"127.0.0.1:2\"]\n", [:], [":1:", "'listen'", "must be a string"]),
            ("name = \"a\"\n[daemon]\nname = \"b\"\n", [:], [":2:", "'daemon'", "not a known key"]),
            ("", ["STORYTELLER_LOG_LEVEL": "loud"], ["STORYTELLER_LOG_LEVEL", "loud"]),
        ]
        for (index, item) in cases.enumerated() {
            let file = home.path + "/bad-\(index).toml"
            try item.file.write(toFile: file, atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(
                arguments: ["--config", file, "--data-dir", home.path + "/state"], environment: item.environment)
            defer { daemon.kill() }
            #expect(try await daemon.waitForExit() == 78, "case \(index)")
            for text in item.mentions {
                #expect(daemon.errors.contains(text), "case \(index): '\(text)' in \(daemon.errors)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: home.path + "/state"), "a bad config creates nothing")
        let missing = try DaemonProcess(arguments: ["--config", home.path + "/nope.toml"], environment: [:])
        defer { missing.kill() }
        #expect(try await missing.waitForExit() == 78)
        #expect(missing.errors.contains("nope.toml"))
    }

    /// The example file names every key the daemon knows, and its values (the
    /// defaults) are accepted when uncommented.
    @Test func theExampleDocumentsEveryKeyWithAValidDefault() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        // The daemon lists its keys when it meets an unknown one.
        let probeFile = home.path + "/probe.toml"
        try "no-such-key = 1\n".write(toFile: probeFile, atomically: true, encoding: .utf8)
        let probe = try DaemonProcess(arguments: ["--config", probeFile], environment: [:])
        defer { probe.kill() }
        #expect(try await probe.waitForExit() == 78)
        let listed = try #require(probe.errors.split(separator: "known: ").last?.split(separator: ")").first)
        let names = listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let keys = names.filter { !$0.hasPrefix("[[") }
        #expect(keys.count >= 5)
        #expect(names.contains("[[peer]]"))

        let example = try String(contentsOf: repositoryRoot.appendingPathComponent("Config/storytellerd.example.toml"), encoding: .utf8)
        // Top-level keys come before the first table; the [[peer]] example is uncommented whole.
        let parts = example.components(separatedBy: "\n# [[peer]]\n")
        try #require(parts.count == 2, "the example ends with a commented [[peer]] table")
        var uncommented: [String] = []
        for line in parts[0].split(separator: "\n") where line.hasPrefix("# ") && line.contains(" = ") {
            let body = String(line.dropFirst(2))
            let key = body.split(separator: " ").first.map(String.init) ?? ""
            guard keys.contains(key) else { continue }
            switch key {
            case "data-dir": uncommented.append("data-dir = \"\(home.path)/state\"")
            case "socket": uncommented.append("socket = \"\(home.path)/control.sock\"")
            case "listen": uncommented.append("listen = \"127.0.0.1:0\"")  // the default port may be taken here
            default: uncommented.append(body)
            }
        }
        let documented = Set(uncommented.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(documented == Set(keys), "every key is in the example")
        // Then a commented [[share]] table.
        let tables = parts[1].components(separatedBy: "\n# [[share]]\n")
        try #require(tables.count == 2, "the example ends with a commented [[share]] table")
        func uncommentedTable(_ text: String) -> [String] {
            text.split(separator: "\n").prefix { $0.hasPrefix("# ") && $0.contains(" = ") }.map { String($0.dropFirst(2)) }
        }
        func tableKeys(_ table: [String]) -> Set<String> { Set(table.compactMap { $0.split(separator: " ").first.map(String.init) }) }
        let table = uncommentedTable(tables[0])
        #expect(tableKeys(table) == Set(DeclaredPeer.keys), "every key of a [[peer]] table is in the example")
        let shareTable = uncommentedTable(tables[1])
        #expect(tableKeys(shareTable) == Set(DeclaredShare.keys), "every key of a [[share]] table is in the example")
        let file = home.path + "/example.toml"
        try (uncommented + ["[[peer]]"] + table + ["[[share]]"] + shareTable).joined(separator: "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", file], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(daemon.errors.contains("cannot share 'Films' with edit-suite"), "the example's share is read (and waits for its folder)")
        let peers = try ControlClient(path: home.path + "/control.sock").get("/v1/peers").json as? [[String: Any]]
        #expect(peers?.first?["name"] as? String == "edit-suite", "the example's peer is configured")
        #expect(try await daemon.terminate() == 0)
    }
}

/// The package root (this file is Tests/StorytellerdTests/ConfigurationTests.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `storytellerd --print-config`: the effective settings, each with where it
/// came from, as TOML the daemon reads back.
@Suite(.daemons, .timeLimit(.minutes(15))) struct PrintConfigTests {
    @Test func theEffectiveSettingsAreShownWithTheirSourcesAndReadBack() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/storytellerd.toml"
        try "name = \"from-file\"\nmaintenance-interval = 60\n".write(toFile: file, atomically: true, encoding: .utf8)
        let printed = try DaemonProcess(
            arguments: ["--config", file, "--listen", "127.0.0.1:0", "--data-dir", home.path + "/state", "--print-config"],
            environment: ["STORYTELLER_LOG_LEVEL": "debug"])
        defer { printed.kill() }
        #expect(try await printed.waitForExit() == 0)
        let output = printed.output
        #expect(output.contains("name = \"from-file\"  # \(file):1"))
        #expect(output.contains("maintenance-interval = 60  # \(file):2"))
        #expect(output.contains("log-level = \"debug\"  # environment STORYTELLER_LOG_LEVEL"))
        #expect(output.contains("listen = \"127.0.0.1:0\"  # --listen"))
        #expect(output.contains("accept-shares = true  # default"))
        #expect(!FileManager.default.fileExists(atPath: home.path + "/state"), "printing the settings opens nothing")

        // What it prints is a config file the daemon reads as it is.
        let again = home.path + "/printed.toml"
        try output.write(toFile: again, atomically: true, encoding: .utf8)
        let reread = try DaemonProcess(arguments: ["--config", again, "--print-config"], environment: [:])
        defer { reread.kill() }
        #expect(try await reread.waitForExit() == 0, "\(reread.errors)")
        #expect(reread.output.contains("name = \"from-file\"  # \(again):5"))
        #expect(reread.output.contains("data-dir = \"\(home.path)/state\"  # \(again):1"))
    }
}
