import ArgumentParser
import Foundation
import Logging
import StoryAPI
import StoryDaemon
import StoryStore

/// The Storyteller daemon's command line: parses flags, resolves settings,
/// and runs a `Daemon` (Sources/StoryDaemon) until SIGTERM or SIGINT.
///
/// Runs with embedded defaults (state under `$XDG_DATA_HOME/storyteller`,
/// peers on TCP 7460); SIGTERM or SIGINT ends it gracefully: stop accepting,
/// Goodbye to every peer, close the database.
@main
struct Storytellerd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storytellerd",
        abstract: "Keeps film storyboards in sync between the machines of a crew.",
        discussion: """
            Settings, highest first: flags, STORYTELLER_* environment variables, \
            the config file, embedded defaults.

            Exit codes: 0 after a graceful shutdown (SIGTERM, SIGINT), 64 for bad \
            flags, 78 for a bad config file or environment variable, 1 when the \
            state directory, the database or the peer listener cannot be opened \
            or a service fails.

            Examples:
              storytellerd       # state in ~/.local/share/storyteller, peers on TCP 7460
              storytellerd --config /etc/storyteller/storytellerd.toml --print-config
              storytellerd --data-dir /srv/storyboards --listen 0.0.0.0:7461 --name cutting-room
            """,
        version: "storytellerd \(API.version)")

    @Option(
        help: """
            Config file (TOML); every key is described, commented out, in /etc/storyteller/storytellerd.toml as \
            packaged (Config/storytellerd.example.toml in the source). Also STORYTELLER_CONFIG. A file that cannot \
            be read is an error.
            """)
    var config: String?

    @Option(name: .customLong("data-dir"), help: "State directory (default $XDG_DATA_HOME/storyteller or ~/.local/share/storyteller).")
    var dataDirectory: String?

    @Option(
        help:
            "Control socket (default: control.sock in --data-dir when given, else $XDG_RUNTIME_DIR/storyteller/control.sock, else in the state directory)."
    )
    var socket: String?

    @Option(name: .customLong("socket-group"), help: "Group whose members may also use the control socket (mode 0660). Default: none, mode 0600.")
    var socketGroup: String?

    @Option(help: "Address peers connect to, HOST:PORT (default 0.0.0.0:\(DaemonPaths.defaultPeerPort)).")
    var listen: String?

    @Option(help: "Name told to peers (default: the host name).")
    var name: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(
        name: .customLong("log-format"), help: "text or json (one object per line); text under journald has no timestamps of its own (default text).")
    var logFormat: String?

    @Option(name: .customLong("metrics-listen"), help: "Serve Prometheus metrics on this loopback HOST:PORT, e.g. 127.0.0.1:9464 (default: off).")
    var metricsListen: String?

    @Option(name: .customLong("maintenance-interval"), help: "Seconds between snapshot and compaction passes (default 30).")
    var maintenanceInterval: String?

    @Flag(name: .customLong("no-discovery"), help: "Do not announce this daemon on the LAN nor listen for others (local discovery).")
    var noDiscovery = false

    @Option(name: .customLong("discovery-port"), help: "UDP port of local discovery (default \(DaemonSettings().discoveryPort)).")
    var discoveryPort: String?

    @Flag(name: .customLong("print-config"), help: "Print the effective settings (as TOML, each with where it came from) and exit.")
    var printConfig = false

    @Flag(
        name: .customLong("stop-with-stdin"),
        help:
            "Stop (as SIGTERM does) when standard input closes: for a supervisor or a test harness that starts the daemon as its child and wants it gone when it goes, however it ends."
    )
    var stopWithStdin = false

    /// The flags as config keys, for the last layer of `resolve`.
    private var flags: [(String, String?)] {
        [
            ("data-dir", dataDirectory), ("socket", socket), ("socket-group", socketGroup), ("listen", listen), ("name", name),
            ("log-level", logLevel),
            ("log-format", logFormat), ("metrics-listen", metricsListen), ("maintenance-interval", maintenanceInterval),
            ("discovery", noDiscovery ? "false" : nil), ("discovery-port", discoveryPort),
        ]
    }

    /// The flag that sets a config key (`--no-discovery` sets `discovery`).
    private static func flag(of key: String) -> String { key == "discovery" ? "--no-discovery" : "--\(key)" }

    func validate() throws {
        var settings = DaemonSettings()
        for case (let key, let value?) in flags {
            do { try settings.set(key, to: value, source: Self.flag(of: key)) } catch { throw ValidationError(error.description) }
        }
    }

    /// Reads standard input on a thread of its own until it ends (what is
    /// read is ignored), then stops the daemon gracefully. The parent's end
    /// of the pipe closes when the parent exits, whichever way: killed, or
    /// crashed, the kernel closes it.
    private static func stop(_ daemon: Daemon, whenStandardInputCloses logger: Logger) {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count == 0 || (count < 0 && errno != EINTR) { break }
            }
            logger.notice("standard input closed (--stop-with-stdin): stopping")
            Task { await daemon.shutdown() }
        }.start()
    }

    /// Defaults, then the config file, then the environment, then the flags.
    private func resolve(environment: [String: String]) throws(ConfigError) -> (DaemonSettings, unknownVariables: [String]) {
        var settings = DaemonSettings()
        if let file = config ?? environment["STORYTELLER_CONFIG"] { try settings.apply(file: file) }
        let unknown = try settings.apply(environment: environment)
        for case (let key, let value?) in flags { try settings.set(key, to: value, source: Self.flag(of: key)) }
        return (settings, unknown)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        AllocatorTuning.apply(environment: environment)
        let settings: DaemonSettings
        let unknownVariables: [String]
        do {
            (settings, unknownVariables) = try resolve(environment: environment)
        } catch {
            FileHandle.standardError.write(Data("storytellerd: configuration error: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        if printConfig {
            let paths = DaemonPaths(dataDirectory: settings.dataDirectory, socket: settings.socket, environment: environment)
            print(settings.effectiveConfiguration(paths: paths, name: settings.name ?? ProcessInfo.processInfo.hostName), terminator: "")
            return
        }
        let (level, format) = (settings.logLevel, settings.logFormat)
        // Under systemd, stderr may be the journal's stream: it stamps entries and reads `<N>` priorities.
        let journal = JournalStream.isConnected(STDERR_FILENO, environment: environment)
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, format: format, journal: journal, level: level) }
        let logger = Logger(label: "storytellerd")
        for variable in unknownVariables {
            logger.warning(
                "ignoring \(variable): not a storytellerd setting (known: \(DaemonSettings.keys.map(DaemonSettings.environmentName(of:)).joined(separator: ", ")))"
            )
        }
        let address = settings.listen
        logger.debug(
            "settings: listen=\(address.host):\(address.port) data-dir=\(settings.dataDirectory ?? "(default)") name=\(settings.name ?? "(host name)") maintenance-interval=\(settings.maintenanceInterval)s"
        )
        do {
            let daemon = Daemon(settings: settings, environment: environment, logger: logger)
            if stopWithStdin { Self.stop(daemon, whenStandardInputCloses: logger) }
            try await daemon.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
    }
}
