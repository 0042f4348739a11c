import Foundation

/// How long a project deleted for everyone stays in this machine's trash
/// before maintenance purges it: the `trash-retention` setting, written as a
/// number and a unit (`30d`, `12h`, `90m`, `45s`, `2w`); `0` means never.
package struct TrashRetention: Equatable, Sendable, CustomStringConvertible {
    /// Whole seconds, at least one.
    package let seconds: Int64

    /// The default: 30 days.
    package static let `default` = TrashRetention(seconds: 30 * 86_400)

    /// The longest accepted: 100 years (more is "never": write 0).
    static let maximumSeconds: Int64 = 100 * 365 * 86_400

    private static let units: [(suffix: Character, seconds: Int64)] = [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    init(seconds: Int64) {
        self.seconds = seconds
    }

    /// Reads `30d`, `12h`, `90m`, `45s` or `2w`; `0` (with or without a
    /// unit) is nil: never purge.
    /// - Throws: `TrashRetention.ParseError` saying what is wrong.
    package init?(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let last = trimmed.last else { throw ParseError(description: "is empty: write a duration like \"30d\", or \"0\" for never") }
        let unit = Self.units.first { $0.suffix == last }
        let digits = unit == nil ? Substring(trimmed) : trimmed.dropLast()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let count = Int64(digits) else {
            throw ParseError(description: "'\(text)' is not a duration: write a number and a unit, s, m, h, d or w (\"30d\"), or \"0\" for never")
        }
        if count == 0 { return nil }
        guard let unit else {
            throw ParseError(description: "'\(text)' has no unit: write \"\(text)d\" for days (or s, m, h, w), or \"0\" for never")
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit.seconds)
        guard !overflow, seconds <= Self.maximumSeconds else {
            throw ParseError(description: "'\(text)' is longer than 100 years: write \"0\" to never purge")
        }
        self.seconds = seconds
    }

    /// Milliseconds, as the store's times are.
    package var milliseconds: Int64 { seconds * 1_000 }

    /// In the largest unit that divides it: "30d", "36h", "90s".
    package var description: String {
        let unit = Self.units.first { seconds % $0.seconds == 0 }!
        return "\(seconds / unit.seconds)\(unit.suffix)"
    }

    /// A retention that does not read.
    package struct ParseError: Error, CustomStringConvertible, Sendable {
        package let description: String
    }
}
