package import Foundation
package import Logging
import StoryAPI
package import StoryCore
import StoryStore
import StorySync
import TOMLKit

/// The daemon's settings, resolved from (highest first) flags, the
/// environment (`STORYTELLER_*`), the config file, and the embedded defaults.
/// Every key is documented with its default in `Config/storytellerd.example.toml`.
package struct DaemonSettings: Equatable, Sendable {
    package init() {}

    package var dataDirectory: String?
    package var socket: String?
    package var listen = ListenAddress(host: "0.0.0.0", port: DaemonPaths.defaultPeerPort)
    package var name: String?
    package var logLevel = Logger.Level.info
    /// How log lines are written (text, or one JSON object per line).
    package var logFormat = LogFormat.text
    /// Where the Prometheus listener serves `/metrics` (loopback only); nil: off.
    package var metricsListen: ListenAddress?
    package var maintenanceInterval = 30
    /// Who may use the control socket besides the daemon's own user.
    package var socketAccess = SocketAccess.owner
    /// Take the documents configured peers share with this daemon without asking.
    package var acceptShares = true
    /// Announce this daemon on the LAN and listen for the others' announcements.
    package var discovery = true
    /// The UDP port of local discovery.
    package var discoveryPort = DiscoveryConfiguration.defaultPort
    /// How long a project deleted for everyone stays in the trash here before
    /// maintenance purges it (and library nodes in the trash); nil: never.
    package var trashRetention: TrashRetention? = .default
    /// How long every change of a project is kept (`--at`, diff, replay);
    /// nil: compact everything acknowledged.
    package var historyRetention: TrashRetention? = .default
    /// Bounds on changes held back waiting for changes they depend on.
    var heldBackChanges = 20_000
    var heldBackBytes = 16 << 20
    var heldBackBytesPerPeer = 16 << 20
    var heldBackBytesTotal = 48 << 20
    /// Largest image or sound taken (uploaded or fetched), in bytes.
    package var blobMaximumBytes: UInt64 = 1 << 30
    /// Days a blob no project references is kept before it is deleted.
    package var blobGarbageGraceDays = 7
    /// The media uploads and fetches may be (all by default).
    package var mediaTypes = Set(MediaType.allCases)
    /// Blob chunks sent and received per second over all peers, in kilobits
    /// (Syncthing's maxSendKbps/maxRecvKbps); 0: unlimited.
    package var maximumSendKbps = 0
    package var maximumReceiveKbps = 0
    /// Peers declared in the config file (`[[peer]]` tables), merged into the
    /// store at start.
    package private(set) var peers: [DeclaredPeer] = []
    /// Shares declared in the config file (`[[share]]` tables), each made
    /// once at a start where it can be (see `DeclaredShare`).
    package private(set) var shares: [DeclaredShare] = []

    /// Where each key set so far came from (`FILE:LINE`, `environment NAME`,
    /// `--flag`); keys not in it have their default.
    package private(set) var sources: [String: String] = [:]

    /// The keys, as written in the config file; the environment variable is
    /// `STORYTELLER_` + the key upper-cased with `_` for `-`.
    package static let keys = [
        "data-dir", "socket", "socket-group", "listen", "name", "log-level", "log-format", "metrics-listen",
        "maintenance-interval", "accept-shares", "discovery", "discovery-port", "trash-retention", "history-retention", "held-back-changes",
        "held-back-bytes", "held-back-bytes-per-peer", "held-back-bytes-total", "blob-max-bytes", "blob-gc-grace-days", "media-types",
        "max-send-kbps", "max-recv-kbps",
    ]

    /// The tables of the config file (arrays of tables, `[[peer]]`, `[[share]]`); only the file sets them.
    package static let tables = ["peer", "share"]

    /// Every key and table, for "known: …" in errors.
    static var knownKeys: String { (keys + tables.map { "[[\($0)]]" }).joined(separator: ", ") }

    /// What is wrong with an unknown key, with the nearest known one when it
    /// is a near miss (`lisen` → "did you mean 'listen'?"; `peers` → `[[peer]]`).
    static func unknownKey(_ key: String) -> String {
        let hint = API.suggestions(for: key, among: keys + tables).first.map { nearest in
            "did you mean '\(tables.contains(nearest) ? "[[\(nearest)]]" : nearest)'?; "
        }
        return "is not a known key (\(hint ?? "")known: \(knownKeys))"
    }

    /// The store's options these settings give.
    var storeOptions: StoreOptions {
        var options = StoreOptions()
        options.heldBackPerDocument = HeldBackLimits(changes: heldBackChanges, bytes: heldBackBytes)
        options.heldBackBytesPerPeer = heldBackBytesPerPeer
        options.heldBackBytesTotal = heldBackBytesTotal
        options.historyRetention = historyRetention?.milliseconds ?? 0
        return options
    }

    /// The blob store's options these settings give.
    var blobOptions: BlobStoreOptions {
        var options = BlobStoreOptions()
        options.maximumBlobBytes = blobMaximumBytes
        options.garbageGrace = .seconds(blobGarbageGraceDays * 86_400)
        return options
    }

    /// How blobs move, from these settings.
    var blobExchange: BlobExchangeConfiguration {
        var configuration = BlobExchangeConfiguration()
        configuration.maximumSendRate = maximumSendKbps > 0 ? maximumSendKbps * 1000 / 8 : nil
        configuration.maximumReceiveRate = maximumReceiveKbps > 0 ? maximumReceiveKbps * 1000 / 8 : nil
        configuration.acceptedTypes = mediaTypes
        return configuration
    }

    package static func environmentName(of key: String) -> String {
        "STORYTELLER_" + key.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Where `~` and `$NAME` in paths come from (the process's environment; tests set their own).
    package var pathEnvironment = ProcessInfo.processInfo.environment

    /// Sets one key from its text; `source` names where it came from in errors.
    package mutating func set(_ key: String, to text: String, source: String) throws(ConfigError) {
        try apply(key, text, source: source)
        sources[key] = source
    }

    private mutating func apply(_ key: String, _ text: String, source: String) throws(ConfigError) {
        switch key {
        case "data-dir":
            guard !text.isEmpty else { throw ConfigError(source: source, key: key, problem: "is empty") }
            let path = try Self.expandingPath(text, environment: pathEnvironment, source: source, key: key)
            // Relative to where the daemon starts, made absolute once (it never changes directory).
            dataDirectory = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        case "socket":
            let path = try Self.expandingPath(text, environment: pathEnvironment, source: source, key: key)
            guard path.hasPrefix("/"), path.utf8.count < 104 else {
                throw ConfigError(source: source, key: key, problem: "must be an absolute path shorter than 104 bytes")
            }
            socket = path
        case "socket-group":
            if text.isEmpty {
                socketAccess = .owner
            } else {
                guard let group = getgrnam(text) else {
                    throw ConfigError(source: source, key: key, problem: "'\(text)' is not a group on this machine")
                }
                socketAccess = .group(name: text, id: group.pointee.gr_gid)
            }
        case "listen":
            guard let address = try? ListenAddress(text) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not HOST:PORT with a port in 0...65535")
            }
            listen = address
        case "name":
            guard !text.isEmpty, text.utf8.count <= 64 else {
                throw ConfigError(source: source, key: key, problem: "must be 1 to 64 bytes")
            }
            name = text
        case "log-level":
            guard let level = Logger.Level(rawValue: text) else {
                throw ConfigError(
                    source: source, key: key,
                    problem: "'\(text)' is not one of trace, debug, info, notice, warning, error, critical")
            }
            logLevel = level
        case "log-format":
            guard let format = LogFormat(rawValue: text) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not text or json")
            }
            logFormat = format
        case "metrics-listen":
            metricsListen = try Self.metricsAddress(text, source: source, key: key)
        case "maintenance-interval":
            guard let seconds = Int(text), (1...86_400).contains(seconds) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a number of seconds in 1...86400")
            }
            maintenanceInterval = seconds
        case "blob-max-bytes":
            guard let bytes = UInt64(text), bytes >= 1024, bytes <= MediaReference.maximumByteCount else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a number of bytes from 1024 to 2^40")
            }
            blobMaximumBytes = bytes
        case "blob-gc-grace-days":
            guard let days = Int(text), (0...3650).contains(days) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a number of days in 0...3650")
            }
            blobGarbageGraceDays = days
        case "media-types":
            let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            var types: Set<MediaType> = []
            for name in names {
                guard let type = MediaType.allCases.first(where: { $0.fileExtension == name || ($0 == .jpeg && name == "jpeg") }) else {
                    let known = MediaType.allCases.map(\.fileExtension).joined(separator: ", ")
                    throw ConfigError(source: source, key: key, problem: "'\(name)' is not a media type Storyteller takes (\(known))")
                }
                types.insert(type)
            }
            mediaTypes = types
        case "max-send-kbps", "max-recv-kbps":
            guard let kbps = Int(text), (0...100_000_000).contains(kbps) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not kilobits per second in 0...100000000 (0: unlimited)")
            }
            if key == "max-send-kbps" { maximumSendKbps = kbps } else { maximumReceiveKbps = kbps }
        case "accept-shares":
            guard let flag = ["true": true, "false": false][text] else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not true or false")
            }
            acceptShares = flag
        case "discovery":
            guard let flag = ["true": true, "false": false][text] else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not true or false")
            }
            discovery = flag
        case "discovery-port":
            guard let port = Int(text), (1...65_535).contains(port) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a UDP port in 1...65535")
            }
            discoveryPort = port
        case "trash-retention":
            do {
                trashRetention = try TrashRetention(parsing: text)
            } catch {
                throw ConfigError(source: source, key: key, problem: error.description)
            }
        case "history-retention":
            do {
                historyRetention = try TrashRetention(parsing: text)
            } catch {
                throw ConfigError(source: source, key: key, problem: error.description)
            }
        case "held-back-changes":
            guard let count = Int(text), (1...10_000_000).contains(count) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a number of changes in 1...10000000")
            }
            heldBackChanges = count
        case "held-back-bytes", "held-back-bytes-per-peer", "held-back-bytes-total":
            guard let bytes = Int(text), (1 << 16...1 << 34).contains(bytes) else {
                throw ConfigError(source: source, key: key, problem: "'\(text)' is not a number of bytes from 65536 to 17179869184")
            }
            switch key {
            case "held-back-bytes": heldBackBytes = bytes
            case "held-back-bytes-per-peer": heldBackBytesPerPeer = bytes
            default: heldBackBytesTotal = bytes
            }
        default:
            throw ConfigError(source: source, key: key, problem: Self.unknownKey(key))
        }
    }

    /// The metrics listener's address: empty for none, else a loopback
    /// `HOST:PORT`. Loopback only: `/metrics` has no authentication and names
    /// this daemon's peers (ids and names) and how busy each link is, which
    /// is nobody else's business on the network (docs/operations.md says how
    /// to scrape from another machine).
    static func metricsAddress(_ text: String, source: String, key: String) throws(ConfigError) -> ListenAddress? {
        guard !text.isEmpty else { return nil }
        guard let address = try? ListenAddress(text) else {
            throw ConfigError(source: source, key: key, problem: "'\(text)' is not HOST:PORT with a port in 0...65535 (or \"\" for none)")
        }
        guard address.isLoopback else {
            throw ConfigError(
                source: source, key: key,
                problem: "'\(text)' is not a loopback address: the metrics listener has no authentication and names this "
                    + "daemon's peers, so it listens on 127.0.0.1, [::1] or localhost only (to scrape from another machine, "
                    + "see \"Metrics\" in docs/operations.md)")
        }
        return address
    }

    /// Applies a config file in TOML (parsed by TOMLKit): top-level keys with
    /// string, integer or boolean values. Strict: a syntax error, an unknown
    /// key or a bad value is an error naming the file, the line and the key.
    package mutating func apply(file path: String) throws(ConfigError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(source: path, key: nil, problem: "cannot be read: \(error.localizedDescription)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(source: "\(path):\(error.source.begin.line)", key: nil, problem: "is not valid TOML: \(error.description)")
        } catch {
            throw ConfigError(source: path, key: nil, problem: "is not valid TOML: \(error)")
        }
        // The order of the file, so the first bad line is the one reported.
        let keys = table.keys.sorted { Self.line(of: $0, in: text) < Self.line(of: $1, in: text) }
        // Shares name peers of the file by name: read once every [[peer]] is.
        var declaredShares: (value: any TOMLValueConvertible, source: String)?
        for key in keys {
            let source = "\(path):\(Self.line(of: key, in: text))"
            guard Self.keys.contains(key) || Self.tables.contains(key) else {
                throw ConfigError(source: source, key: key, problem: Self.unknownKey(key))
            }
            guard let value = table[key] else { continue }
            if key == "peer" {
                peers = try DeclaredPeer.peers(from: value, path: path, text: text)
                sources[key] = source
                continue
            }
            if key == "share" {
                declaredShares = (value, source)
                continue
            }
            let valueText: String
            switch value.type {
            case .string: valueText = value.string ?? ""
            case .int: valueText = value.int.map(String.init) ?? ""
            case .bool: valueText = value.bool.map { $0 ? "true" : "false" } ?? ""
            default:
                throw ConfigError(source: source, key: key, problem: "must be a string, an integer or true/false, not a \(value.type)")
            }
            try set(key, to: valueText, source: source)
        }
        if let declaredShares {
            shares = try DeclaredShare.shares(from: declaredShares.value, path: path, text: text, peers: peers)
            sources["share"] = declaredShares.source
        }
    }

    /// The line a top-level key is set on (TOMLKit gives positions only for
    /// syntax errors); keys are unique in valid TOML, so the first match is it.
    static func line(of key: String, in text: String) -> Int {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[\(key)]") || line.hasPrefix("[[\(key)]]") { return index + 1 }  // a table
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where line.hasPrefix(spelling) {
                if line.dropFirst(spelling.count).trimmingCharacters(in: .whitespaces).hasPrefix("=") { return index + 1 }
            }
        }
        return 0
    }

    /// The effective settings as a TOML file (every key, with where its
    /// value came from as a comment): `storytellerd --print-config`.
    package func effectiveConfiguration(paths: DaemonPaths, name: String) -> String {
        let quoted = TableLines.quoted
        var socketGroup = ""
        if case .group(let group, _) = socketAccess { socketGroup = group }
        let values: [(String, String)] = [
            ("data-dir", quoted(paths.dataDirectory)), ("socket", quoted(paths.socketPath)), ("socket-group", quoted(socketGroup)),
            ("listen", quoted("\(listen.host):\(listen.port)")), ("name", quoted(name)), ("log-level", quoted(logLevel.rawValue)),
            ("log-format", quoted(logFormat.rawValue)), ("metrics-listen", quoted(metricsListen.map(\.description) ?? "")),
            ("maintenance-interval", "\(maintenanceInterval)"), ("accept-shares", "\(acceptShares)"),
            ("discovery", "\(discovery)"), ("discovery-port", "\(discoveryPort)"),
            ("trash-retention", quoted(trashRetention?.description ?? "0")),
            ("history-retention", quoted(historyRetention?.description ?? "0")),
            ("held-back-changes", "\(heldBackChanges)"), ("held-back-bytes", "\(heldBackBytes)"),
            ("held-back-bytes-per-peer", "\(heldBackBytesPerPeer)"), ("held-back-bytes-total", "\(heldBackBytesTotal)"),
            ("blob-max-bytes", "\(blobMaximumBytes)"), ("blob-gc-grace-days", "\(blobGarbageGraceDays)"),
            ("media-types", quoted(MediaType.allCases.filter { mediaTypes.contains($0) }.map(\.fileExtension).joined(separator: ","))),
            ("max-send-kbps", "\(maximumSendKbps)"), ("max-recv-kbps", "\(maximumReceiveKbps)"),
        ]
        var text = values.map { key, value in "\(key) = \(value)  # \(sources[key] ?? "default")" }.joined(separator: "\n") + "\n"
        // Tables come after every top-level key, as TOML wants.
        for peer in peers { text += "\n" + peer.toml }
        for share in shares { text += "\n" + share.toml }
        return text
    }

    /// A path with `~` (at its start: the home directory) and `$NAME` or
    /// `${NAME}` (environment variables) expanded, as a shell would.
    /// - Throws: `ConfigError` naming a variable that is not set.
    package static func expandingPath(_ text: String, environment: [String: String], source: String, key: String) throws(ConfigError) -> String {
        var path = text
        if path == "~" || path.hasPrefix("~/") {
            guard let home = environment["HOME"], !home.isEmpty else {
                throw ConfigError(source: source, key: key, problem: "starts with ~ but HOME is not set")
            }
            path = home + path.dropFirst()
        }
        var result = ""
        var rest = Substring(path)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            var name = Substring("")
            var after = rest.index(after: dollar)
            if after < rest.endIndex, rest[after] == "{" {
                guard let close = rest[after...].firstIndex(of: "}") else {
                    throw ConfigError(source: source, key: key, problem: "has an unclosed ${ in '\(text)'")
                }
                name = rest[rest.index(after: after)..<close]
                after = rest.index(after: close)
            } else {
                let end = rest[after...].firstIndex { !($0.isLetter || $0.isNumber || $0 == "_") } ?? rest.endIndex
                name = rest[after..<end]
                after = end
            }
            guard !name.isEmpty else {
                result += "$"
                rest = rest[rest.index(after: dollar)...]
                continue
            }
            guard let value = environment[String(name)] else {
                throw ConfigError(source: source, key: key, problem: "uses $\(name), which is not set")
            }
            result += value
            rest = rest[after...]
        }
        return result + rest
    }

    /// `STORYTELLER_*` variables that are not settings of the daemon but are
    /// meant for it or for the CLI beside it (no warning about them).
    static let otherVariables: Set = ["STORYTELLER_CONFIG", "STORYTELLER_SYSTEM_SOCKET", "STORYTELLER_PROJECT"]

    /// Applies `STORYTELLER_<KEY>` variables. Other `STORYTELLER_*` names are
    /// returned so the daemon can warn about them (they may belong to tools).
    package mutating func apply(environment: [String: String]) throws(ConfigError) -> [String] {
        let known = Dictionary(uniqueKeysWithValues: Self.keys.map { (Self.environmentName(of: $0), $0) })
        var unknown: [String] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("STORYTELLER_") {
            if let key = known[name] {
                try set(key, to: value, source: "environment \(name)")
            } else if !Self.otherVariables.contains(name) {
                unknown.append(name)
            }
        }
        return unknown
    }
}

/// Who may use the control socket: the daemon's own user only (mode 0600,
/// the default for a user daemon), or also the members of one group (mode
/// 0660 and that group, for the system daemon). Checked per connection with
/// SO_PEERCRED besides the file mode.
package enum SocketAccess: Equatable, Sendable {
    case owner
    case group(name: String, id: gid_t)
}

/// A bad config file line, environment variable or value, naming the key.
package struct ConfigError: Error, CustomStringConvertible, Sendable {
    /// Where the value came from: `FILE:LINE`, an environment variable, a flag.
    package let source: String
    package let key: String?
    package let problem: String

    package var description: String {
        if let key { return "\(source): '\(key)' \(problem)" }
        return "\(source): \(problem)"
    }
}
