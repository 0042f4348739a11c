import StoryDaemon
import Testing

/// Paths in settings are expanded as a shell would: `data-dir = "~/boards"`
/// is in the home directory, not a directory named `~`.
@Suite struct SettingsPathTests {
    static let environment = ["HOME": "/home/ana", "XDG_DATA_HOME": "/srv/data", "SHOW": "night-train"]

    @Test(arguments: [
        ("~/boards", "/home/ana/boards"),
        ("~", "/home/ana"),
        ("$XDG_DATA_HOME/storyteller", "/srv/data/storyteller"),
        ("${XDG_DATA_HOME}/shows/$SHOW", "/srv/data/shows/night-train"),
        ("/var/lib/storyteller", "/var/lib/storyteller"),
        ("/tmp/a~b/$", "/tmp/a~b/$"),
    ])
    func tildeAndVariablesAreExpanded(text: String, expected: String) throws {
        var settings = DaemonSettings()
        settings.pathEnvironment = Self.environment
        try settings.set("data-dir", to: text, source: "test")
        #expect(settings.dataDirectory == expected)
    }

    @Test func aSocketPathIsExpandedToo() throws {
        var settings = DaemonSettings()
        settings.pathEnvironment = Self.environment
        try settings.set("socket", to: "~/run/control.sock", source: "test")
        #expect(settings.socket == "/home/ana/run/control.sock")
    }

    @Test func anUnsetVariableOrHomeIsAnErrorNamingIt() {
        var settings = DaemonSettings()
        settings.pathEnvironment = [:]
        #expect(throws: ConfigError.self) { try settings.set("data-dir", to: "~/boards", source: "test") }
        do {
            try settings.set("data-dir", to: "$NOWHERE/x", source: "file.toml:3")
            Issue.record("an unset variable was accepted")
        } catch {
            #expect(error.description == "file.toml:3: 'data-dir' uses $NOWHERE, which is not set")
        }
        #expect(throws: ConfigError.self) { try settings.set("data-dir", to: "${HOME", source: "test") }
    }
}
