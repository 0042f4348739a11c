/// How the daemon writes its log lines (the `log-format` setting).
package enum LogFormat: String, Sendable, CaseIterable {
    /// One line per entry for people: time, level, label, message, metadata
    /// as `key=value`; under journald without the time and with the syslog
    /// priority in front.
    case text
    /// One JSON object per line: `time` (ISO 8601), `level`, `label`,
    /// `message`, `metadata`.
    case json
}
