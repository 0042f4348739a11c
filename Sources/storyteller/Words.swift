import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

// How the CLI prints what the daemon answers: tables, times, sizes, states, in people's words.

/// ", not here yet" for media this machine does not hold completely.
func mediaState(_ media: API.Media) -> String {
    switch media.state {
    case "partial"?: ", arriving"
    case "missing"?: ", not here yet"
    default: ""
    }
}

typealias ControlClientResponse = ControlClient.Response
typealias ControlClientFailure = ControlClient.Failure

func printError(_ message: String) {
    FileHandle.standardError.write(Data("storyteller: \(message)\n".utf8))
}

/// Percent-encodes one path segment.
func segment(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.@"))) ?? text
}

/// Prints rows as a table with a header, columns padded to their widths.
func printTable(_ header: [String], _ rows: [[String]]) {
    // Names and titles may come from peers: no control character reaches the terminal.
    let rows = rows.map { $0.map(PrintableText.escaped) }
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    let useColour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
    print(useColour ? "\u{1B}[1m" + line(header) + "\u{1B}[0m" : line(header))
    for row in rows { print(line(row)) }
}

func text(_ value: Any?) -> String {
    switch value {
    case let string as String: PrintableText.escaped(string)
    case let number as NSNumber: number.stringValue
    case nil, is NSNull: "-"
    default: "\(value!)"
    }
}

/// "3 d 4 h", "2 h 5 min", "12 s".
func duration(_ seconds: Int) -> String {
    switch seconds {
    case ..<60: "\(seconds) s"
    case ..<3600: "\(seconds / 60) min \(seconds % 60) s"
    case ..<86400: "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    default: "\(seconds / 86400) d \(seconds % 86400 / 3600) h"
    }
}

/// "for everyone by b, 3 h ago", "here only, 2 min ago", "no".
func trashWords(_ trash: API.Trash?, names: Names, me: String?) -> String {
    guard let trash else { return "no" }
    let when = trash.time.map { " " + ago(Date(timeIntervalSince1970: Double($0) / 1000)) } ?? ""
    guard trash.isForEveryone else { return "here only," + when }
    return "for everyone by \(names.who(trash.by, local: false, me: me)),\(when)"
}

/// When the daemon purges a project in the trash: "in 29 d", "due", "never".
func purgeWords(_ trash: API.Trash?) -> String {
    guard let trash else { return "" }
    guard let time = trash.purgeTime else { return "never" }
    let seconds = Int(Double(time) / 1000 - Date().timeIntervalSince1970)
    guard seconds > 0 else { return "due" }
    return "in " + duration(seconds)
}

/// "3 h ago", "2 min ago", "just now", "4 d ago".
func ago(_ date: Date, now: Date = Date()) -> String {
    let seconds = Int(now.timeIntervalSince(date))
    switch seconds {
    case ..<10: return "just now"
    case ..<60: return "\(seconds) s ago"
    case ..<3600: return "\(seconds / 60) min ago"
    case ..<86400: return "\(seconds / 3600) h ago"
    default: return "\(seconds / 86400) d ago"
    }
}

/// "12.3 kB".
func bytes(_ count: Int) -> String {
    ByteCountFormatter.string(fromByteCount: Int64(count), countStyle: .file)
}

/// A time as ISO 8601 with the local zone: `2026-11-24T14:03:12+01:00`.
func isoTime(milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone.current
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
