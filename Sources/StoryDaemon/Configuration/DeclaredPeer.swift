import Foundation
import StoryAPI
package import StoryCore
import TOMLKit

/// A peer declared in the config file, for provisioning a machine:
///
/// ```toml
/// [[peer]]
/// id = "QCRP7LQ-7DQ2KPY-A5I4PGB-SEDLTCF-QT6QNXH-RVJR5AR-A4IOYWZ-TG7NPAO"
/// name = "bob"
/// addresses = ["bob-laptop.local:7460", "100.64.0.12:7460"]
/// auto-accept = true
/// ```
///
/// At every start the daemon makes each one a configured peer (accepting it
/// if it was pending); the fields a table sets win over what was set at run
/// time, the others are left as they are. Its addresses are tried in turn,
/// then those local discovery hears it at.
package struct DeclaredPeer: Equatable, Sendable {
    package var id: PeerID
    package var name: String?
    /// `HOST:PORT`s to dial, in order; empty: it is dialed where local
    /// discovery hears it, or waits for it to dial.
    package var addresses: [String] = []
    /// Take the documents this peer shares without asking (overrides `accept-shares` for it).
    package var autoAccept: Bool?
    /// Where its `[[peer]]` table is (`FILE:LINE`).
    package var source: String

    package init(id: PeerID, name: String? = nil, addresses: [String] = [], autoAccept: Bool? = nil, source: String) {
        self.id = id
        self.name = name
        self.addresses = addresses
        self.autoAccept = autoAccept
        self.source = source
    }

    /// The keys a `[[peer]]` table may have.
    package static let keys = ["id", "name", "addresses", "auto-accept"]

    /// At most this many addresses per peer (each may cost a connect timeout per attempt).
    static let maximumAddresses = API.PeerAddress.maximumPerPeer

    /// The peers of the `peer` key of a config file: an array of tables, each
    /// checked strictly (a peer id with valid check characters, no id twice,
    /// no unknown key, values of the right kind).
    /// - Parameters:
    ///   - path: the file, and `text` its contents, for `FILE:LINE` in errors.
    /// - Throws: `ConfigError` naming the file, the line and the key.
    static func peers(from value: any TOMLValueConvertible, path: String, text: String) throws(ConfigError) -> [DeclaredPeer] {
        var peers: [DeclaredPeer] = []
        for declared in try TableLines.tables("peer", of: value, keys: keys, path: path, text: text) {
            let table = declared.table
            func source(_ key: String? = nil) -> String { declared.source(key) }
            guard let idValue = table["id"] else {
                throw ConfigError(source: source(), key: "peer", problem: "has no 'id' (the peer's id, as `storyteller id` prints it there)")
            }
            guard let idText = idValue.string else {
                throw ConfigError(source: source("id"), key: "peer.id", problem: "must be a string, not a \(idValue.type)")
            }
            guard let id = PeerID(idText) else {
                throw ConfigError(
                    source: source("id"), key: "peer.id",
                    problem: "'\(idText)' is not a peer id (8 groups of 7 characters as `storyteller id` prints it; "
                        + "a mistyped character fails the check characters)")
            }
            if let first = peers.first(where: { $0.id == id }) {
                throw ConfigError(source: source("id"), key: "peer.id", problem: "\(id.short)… is declared twice (first at \(first.source))")
            }
            var peer = DeclaredPeer(id: id, source: source())
            if let nameValue = table["name"] {
                guard let name = nameValue.string else {
                    throw ConfigError(source: source("name"), key: "peer.name", problem: "must be a string, not a \(nameValue.type)")
                }
                guard !name.isEmpty, name.utf8.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw ConfigError(source: source("name"), key: "peer.name", problem: "must be 1 to 64 bytes without control characters")
                }
                peer.name = name
            }
            if let addressesValue = table["addresses"] {
                guard let list = addressesValue.array else {
                    throw ConfigError(
                        source: source("addresses"), key: "peer.addresses",
                        problem: "must be a list of \"HOST:PORT\" strings (addresses = [\"b.local:7460\"]), not a \(addressesValue.type)")
                }
                guard list.count <= maximumAddresses else {
                    throw ConfigError(source: source("addresses"), key: "peer.addresses", problem: "has more than \(maximumAddresses) addresses")
                }
                for item in list {
                    guard let text = item.string else {
                        throw ConfigError(
                            source: source("addresses"), key: "peer.addresses", problem: "\(item.debugDescription) is not a \"HOST:PORT\" string")
                    }
                    let address: API.PeerAddress
                    do {
                        address = try API.PeerAddress(text)
                    } catch {
                        throw ConfigError(
                            source: source("addresses"), key: "peer.addresses",
                            problem: "has \(item.debugDescription), not a \"HOST:PORT\" to dial: \(error.error.message)")
                    }
                    if !peer.addresses.contains(address.description) { peer.addresses.append(address.description) }
                }
            }
            if let acceptValue = table["auto-accept"] {
                guard let flag = acceptValue.bool else {
                    throw ConfigError(
                        source: source("auto-accept"), key: "peer.auto-accept", problem: "must be true or false, not \(acceptValue.debugDescription)")
                }
                peer.autoAccept = flag
            }
            peers.append(peer)
        }
        return peers
    }

    /// The peer as a `[[peer]]` table, with where it was declared (`--print-config`).
    var toml: String {
        let quoted = TableLines.quoted
        var lines = ["[[peer]]  # \(source)", "id = \(quoted(id.description))"]
        if let name { lines.append("name = \(quoted(name))") }
        lines.append("addresses = [\(addresses.map(quoted).joined(separator: ", "))]")
        if let autoAccept { lines.append("auto-accept = \(autoAccept)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Where the tables of an array of tables (`[[name]]`) and their keys are in
/// a TOML file: TOMLKit gives positions only for syntax errors, and errors
/// must say the line.
enum TableLines {
    /// One `[[name]]` table of a config file, with where it and its keys are.
    struct Table {
        let table: TOMLTable
        let lines: Entry
        let path: String

        /// `FILE:LINE` of `key`, or of the table's header.
        func source(_ key: String? = nil) -> String { "\(path):\(key.flatMap { lines.keys[$0] } ?? lines.header)" }
    }

    /// The `[[name]]` tables of the value of key `name` in the file at `path`
    /// (contents `text`), each checked to be a table with no key but `keys`.
    /// - Throws: `ConfigError` naming the file, the line and the key.
    static func tables(_ name: String, of value: any TOMLValueConvertible, keys: [String], path: String, text: String) throws(ConfigError)
        -> [Table]
    {
        let entries = entries(of: name, in: text)
        let fallbackLine = DaemonSettings.line(of: name, in: text)
        guard value.type == .array, let array = value.array else {
            throw ConfigError(
                source: "\(path):\(fallbackLine)", key: name,
                problem: "must be [[\(name)]] tables (with \(keys.joined(separator: ", "))), not a \(value.type)")
        }
        var tables: [Table] = []
        for (index, element) in array.enumerated() {
            let lines = index < entries.count ? entries[index] : Entry(header: fallbackLine, keys: [:])
            let source = "\(path):\(lines.header)"
            guard element.type == .table, let table = element.table else {
                throw ConfigError(source: source, key: name, problem: "must be [[\(name)]] tables, not a list of \(element.type)s")
            }
            let declared = Table(table: table, lines: lines, path: path)
            for key in table.keys.sorted(by: { (lines.keys[$0] ?? 0) < (lines.keys[$1] ?? 0) }) where !keys.contains(key) {
                throw ConfigError(
                    source: declared.source(key), key: "\(name).\(key)",
                    problem: "is not a key of a [[\(name)]] table (known: \(keys.joined(separator: ", ")))")
            }
            tables.append(declared)
        }
        return tables
    }

    /// `text` as a TOML basic string.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    struct Entry: Equatable {
        /// The line of the `[[name]]` header.
        var header: Int
        /// The line of each key set in the table.
        var keys: [String: Int]
    }

    /// The `[[name]]` tables of `text`, in order (keys of sub-tables are not tracked).
    static func entries(of name: String, in text: String) -> [Entry] {
        var entries: [Entry] = []
        var inside = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let header = line.prefix { $0 != "#" }.replacingOccurrences(of: " ", with: "")
                inside = header == "[[\(name)]]"
                if inside { entries.append(Entry(header: index + 1, keys: [:])) }
                continue
            }
            guard inside, let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { continue }
            var key = line[..<equals].trimmingCharacters(in: .whitespaces)
            if key.count >= 2, let first = key.first, first == "\"" || first == "'", key.last == first { key = String(key.dropFirst().dropLast()) }
            if entries[entries.count - 1].keys[key] == nil { entries[entries.count - 1].keys[key] = index + 1 }
        }
        return entries
    }
}
