import Foundation
import Logging
import StoryDaemon
import StoryTestSupport
import Synchronization
import Testing

/// The daemon's log lines: text with timestamps for a terminal or a file,
/// text without them and with syslog priorities for journald, JSON for log
/// collectors; journald recognised by `JOURNAL_STREAM` as systemd sets it.
@Suite(.daemons, .timeLimit(.minutes(15))) struct LogFormatTests {
    /// 2026-11-25T08:44:00.123Z.
    static let instant = Date(timeIntervalSince1970: 1_795_596_240.123)

    /// A logger writing through a `DaemonLogHandler` into a list of lines.
    private func logger(_ format: LogFormat, journal: Bool, level: Logger.Level = .trace) -> (Logger, CollectedLines) {
        let lines = CollectedLines()
        let output = LogOutput { text in lines.append(text) }
        var logger = Logger(label: "storytellerd") { label in
            DaemonLogHandler(label: label, format: format, journal: journal, level: level, output: output, clock: { Self.instant })
        }
        logger.logLevel = level
        return (logger, lines)
    }

    @Test func textOutsideJournaldHasALocalTimestampLevelLabelMessageAndMetadata() throws {
        let (logger, lines) = logger(.text, journal: false)
        logger.info("connected to ABCDEFG", metadata: ["peer": "ABCDEFG", "address": "10.0.0.4:7460", "note": "two words"])
        let line = try #require(lines.all.first)
        let match = try #require(
            line.wholeMatch(of: /(\S+) info storytellerd: connected to ABCDEFG address=10\.0\.0\.4:7460 note="two words" peer=ABCDEFG/))
        let timestamp = String(match.1)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.123[+-]\d\d:\d\d/) != nil, "\(timestamp)")
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(parser.date(from: timestamp) == Self.instant, "the local time with its offset is the same instant")
    }

    @Test(arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func underJournaldTextHasThePriorityAndNoTimestamp(level: Logger.Level, priority: Int) throws {
        let (logger, lines) = logger(.text, journal: true)
        logger.log(level: level, "cannot reach bob", metadata: ["peer": "ABCDEFG"])
        #expect(lines.all == ["<\(priority)>\(level.rawValue) storytellerd: cannot reach bob peer=ABCDEFG"])
    }

    @Test func underJournaldEachLineOfAMessageIsAnEntryWithThePriority() {
        let (logger, lines) = logger(.text, journal: true)
        logger.error("configuration error:\nline two")
        #expect(lines.all == ["<3>error storytellerd: configuration error:", "<3>line two"])
    }

    /// A name or reason from a peer that holds an escape sequence or a
    /// carriage return reaches the terminal or journal as escaped text.
    @Test func controlCharactersInAMessageAreWrittenEscaped() {
        let (logger, lines) = logger(.text, journal: true)
        logger.notice("took project \u{1B}]0;owned\u{7}Night\rTrain")
        #expect(lines.all == ["<5>notice storytellerd: took project \\u{1B}]0;owned\\u{7}Night\\rTrain"])
    }

    @Test func jsonIsOneObjectPerLineWithTimeLevelLabelMessageAndMetadata() throws {
        let (base, lines) = logger(.json, journal: false)
        var logger = base
        logger[metadataKey: "daemon"] = "a"
        logger.warning(
            "held back \"too much\"\nfrom a peer", metadata: ["peer": "ABCDEFG", "documents": ["d1", "d2"], "limits": ["bytes": "16"]])
        let all = lines.all
        #expect(all.count == 1, "a line break in the message stays inside the JSON string")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(all[0].utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "level", "label", "message", "metadata"])
        #expect(object["time"] as? String == "2026-11-25T08:44:00.123Z")
        #expect(object["level"] as? String == "warning")
        #expect(object["label"] as? String == "storytellerd")
        #expect(object["message"] as? String == "held back \"too much\"\nfrom a peer")
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["peer"] as? String == "ABCDEFG")
        #expect(metadata["daemon"] as? String == "a", "the logger's own metadata too")
        #expect(metadata["documents"] as? [String] == ["d1", "d2"])
        #expect(metadata["limits"] as? [String: String] == ["bytes": "16"])
    }

    @Test func jsonUnderJournaldKeepsThePriorityInFront() throws {
        let (logger, lines) = logger(.json, journal: true)
        logger.error("failed")
        let line = try #require(lines.all.first)
        #expect(line.hasPrefix("<3>{"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst(3).utf8)) as? [String: Any])
        #expect(object["message"] as? String == "failed")
    }

    @Test func entriesBelowTheLevelAreNotWritten() {
        let (logger, lines) = logger(.text, journal: false, level: .notice)
        logger.info("quiet")
        logger.notice("loud")
        #expect(lines.all.count == 1)
    }

    // MARK: - Journald detection

    @Test func journaldIsTheStreamWhoseDeviceAndInodeJournalStreamNames() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let path = home.path + "/stderr"
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        let descriptor = open(path, O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var info = stat()
        try #require(fstat(descriptor, &info) == 0)
        #expect(JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]))
        // Inherited by a process whose stderr was redirected elsewhere: another inode.
        #expect(!JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]))
        #expect(!JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": "\(info.st_dev + 1):\(info.st_ino)"]))
        #expect(!JournalStream.isConnected(descriptor, environment: [:]))
        for garbage in ["", "12", "a:b", "1:2:3", ":5", "-1:2"] {
            #expect(!JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": garbage]), "\(garbage)")
        }
    }

    // MARK: - The daemon

    @Test func theDaemonUnderJournaldWritesPrioritiesAndNoTimestamps() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: ["STORYTELLER_NOT_A_SETTING": "1"], journal: true)
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(try await daemon.terminate() == 0)
        let lines = daemon.errors.split(separator: "\n").map(String.init)
        #expect(lines.contains("<6>info storytellerd: ready"), "\(daemon.errors)")
        #expect(lines.contains { $0.hasPrefix("<4>warning storytellerd: ignoring STORYTELLER_NOT_A_SETTING") })
        #expect(lines.allSatisfy { $0.wholeMatch(of: /<[0-7]>[a-z]+ [a-z]+: .*/) != nil }, "every line: \(daemon.errors)")
    }

    @Test func theDaemonOutsideJournaldKeepsTimestampsEvenWithAnInheritedJournalStream() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: ["JOURNAL_STREAM": "8:12345"])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(try await daemon.terminate() == 0)
        let ready = try #require(daemon.errors.split(separator: "\n").first { $0.hasSuffix("info storytellerd: ready") })
        #expect(ready.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d info storytellerd: ready/) != nil, "\(ready)")
    }

    @Test func theDaemonWritesJSONLinesWithLogFormatJSON() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0", "--log-format", "json"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(try await daemon.terminate() == 0)
        let lines = daemon.errors.split(separator: "\n")
        #expect(!lines.isEmpty)
        var messages: [String] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["time"] is String && object["level"] is String && object["label"] is String && object["metadata"] is [String: Any])
            messages.append(object["message"] as? String ?? "")
        }
        #expect(messages.contains("ready") && messages.contains("stopped"))
        let bad = try DaemonProcess(arguments: ["--data-dir", home.path, "--log-format", "xml"], environment: [:])
        defer { bad.kill() }
        #expect(try await bad.waitForExit() == 64)
        #expect(bad.errors.contains("'xml' is not text or json"))
    }
}

/// The lines a test's `LogOutput` received.
private final class CollectedLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ text: String) {
        lines.withLock { $0 += text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
    }

    var all: [String] { lines.withLock { $0 } }
}
