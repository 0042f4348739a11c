package import Foundation
package import Logging
import StoryCore
import Synchronization

/// The daemon's swift-log handler: one line per entry on standard error, as
/// text for people or as JSON for log collectors (`log-format`).
///
/// Text: `2026-11-25T09:44:00.123+01:00 info storytellerd: connected to ABCDEFG peer=ABCDEFG`
/// (local time with its offset, level, label, message, metadata sorted as
/// `key=value`). Under journald (`JournalStream`) the same line has no time
/// of its own (the journal stamps every entry) and starts with the syslog
/// priority, `<6>info storytellerd: …`, which journald takes as the entry's
/// level (`journalctl -p warning` works); a message of several lines is
/// written as that many entries, each with the priority.
///
/// JSON: `{"time":"2026-11-25T08:44:00.123Z","level":"info","label":"storytellerd","message":"…","metadata":{"peer":"ABCDEFG"}}`,
/// with the priority in front under journald too (journald strips it, the
/// entry's message stays the JSON object).
package struct DaemonLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package let label: String
    let format: LogFormat
    let journal: Bool
    let output: LogOutput
    let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - journal: standard error goes to journald (`JournalStream.isStandardError`).
    ///   - output: where lines go (standard error; tests collect them).
    ///   - clock: the time of each entry (tests fix it).
    package init(
        label: String, format: LogFormat, journal: Bool, level: Logger.Level, output: LogOutput = .standardError,
        metadataProvider: Logger.MetadataProvider? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.label = label
        self.format = format
        self.journal = journal
        self.logLevel = level
        self.output = output
        self.metadataProvider = metadataProvider
        self.clock = clock
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        output.write(formatted(level: event.level, message: event.message.description, metadata: merged, at: clock()))
    }

    /// The entry as it is written, ending with a newline.
    func formatted(level: Logger.Level, message: String, metadata: Logger.Metadata, at time: Date) -> String {
        let priority = journal ? "<\(Self.syslogPriority(level))>" : ""
        switch format {
        case .json:
            var object = "{\"time\":\(Self.quoted(Self.timestamp(time, utc: true)))"
            object += ",\"level\":\(Self.quoted(level.rawValue)),\"label\":\(Self.quoted(label)),\"message\":\(Self.quoted(message))"
            object += ",\"metadata\":\(Self.json(.dictionary(metadata)))}"
            return priority + object + "\n"
        case .text:
            let fields = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\(Self.text($0.value))" }.joined()
            let head = journal ? "\(level.rawValue) \(label): " : "\(Self.timestamp(time, utc: false)) \(level.rawValue) \(label): "
            // Each line of a long message is an entry of its own in the journal: each gets the priority.
            // No other control character reaches the terminal or the journal (an escape
            // sequence in a name from a peer would retitle a terminal that tails the log).
            let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { PrintableText.escaped(String($0)) }
            return lines.enumerated().map { index, line in
                priority + (index == 0 ? head : journal ? "" : "    ") + line + (index == lines.count - 1 ? fields : "") + "\n"
            }.joined()
        }
    }

    /// The syslog priority journald reads from a `<N>` prefix (sd-daemon(3)).
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// ISO 8601 with milliseconds: UTC with `Z`, or local time with its offset.
    static func timestamp(_ time: Date, utc: Bool) -> String {
        // To the nearest millisecond (a Date's double rarely holds .123 exactly).
        let total = Int64((time.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(total.floorDivided(by: 1000))
        let milliseconds = Int(total - Int64(seconds) * 1000)
        var parts = tm()
        if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let base = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fraction = "." + String(repeating: "0", count: 3 - String(milliseconds).count) + String(milliseconds)
        if utc { return base + fraction + "Z" }
        let offset = parts.tm_gmtoff
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return base + fraction + sign + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    /// A metadata value for a text line: bare when it has no space, `"` or `=`, else quoted.
    static func text(_ value: Logger.Metadata.Value) -> String {
        let plain: String
        switch value {
        case .string(let string): plain = string
        case .stringConvertible(let convertible): plain = convertible.description
        case .array, .dictionary: return json(value)
        }
        if plain.isEmpty || plain.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return quoted(plain) }
        return plain
    }

    /// A metadata value as JSON: strings, and arrays and objects of them (keys sorted).
    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): quoted(string)
        case .stringConvertible(let convertible): quoted(convertible.description)
        case .array(let items): "[" + items.map(json).joined(separator: ",") + "]"
        case .dictionary(let entries):
            "{" + entries.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension Int64 {
    /// Division rounding towards minus infinity (times before 1970 too).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// Where a `DaemonLogHandler` writes whole lines: standard error, or a
/// function (tests). Lines of concurrent entries never interleave.
package final class LogOutput: Sendable {
    private let sink: @Sendable (String) -> Void
    private let lock = Mutex(())

    package init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// Standard error, unbuffered: each entry is one `write`, so lines from
    /// several threads come out whole.
    package static let standardError = LogOutput { text in
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    func write(_ text: String) { lock.withLock { _ in sink(text) } }
}
