import Foundation

extension API {
    /// `GET /v1/projects/{id}/history`: newest first.
    package struct History: Codable, Sendable {
        package let project: String
        /// Older changes were folded into a snapshot and are not listed.
        package let compacted: Bool
        package let changes: [HistoryEntry]

        package init(project: String, compacted: Bool, changes: [HistoryEntry]) {
            self.project = project
            self.compacted = compacted
            self.changes = changes
        }
    }

    package struct HistoryEntry: Codable, Sendable {
        package let replica: String
        package let seq: UInt64
        /// Made on this daemon (else it came from a peer).
        package let local: Bool
        package let time: Int64
        package let operations: Int
        package let summary: String
        /// The peer id of the identity that signed it (null: unknown).
        package let author: String?
        /// `time` as ISO 8601 (UTC).
        package let at: String?
        /// The labels of the shots it touched (`1-2`), as they are now.
        package let shots: [String]

        package init(
            replica: String, seq: UInt64, local: Bool, time: Int64, operations: Int, summary: String, author: String?, shots: [String] = []
        ) {
            self.replica = replica
            self.seq = seq
            self.local = local
            self.time = time
            self.operations = operations
            self.summary = summary
            self.author = author
            self.at = API.isoTime(milliseconds: time)
            self.shots = shots
        }
    }
}

extension API {
    /// Milliseconds since the epoch as ISO 8601 in UTC (`2026-11-24T13:03:12.345Z`).
    /// Made by hand from the UTC calendar fields: a date formatter per call
    /// cost more than the rest of a thousand-project listing.
    package static func isoTime(milliseconds: Int64) -> String {
        let (seconds, millis) = (milliseconds.quotientAndRemainder(dividingBy: 1000))
        var whole = time_t(millis < 0 ? seconds - 1 : seconds)
        let fraction = millis < 0 ? millis + 1000 : millis
        var fields = tm()
        gmtime_r(&whole, &fields)
        func padded(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(fields.tm_year + 1900, 4))-\(padded(fields.tm_mon + 1, 2))-\(padded(fields.tm_mday, 2))T"
            + "\(padded(fields.tm_hour, 2)):\(padded(fields.tm_min, 2)):\(padded(fields.tm_sec, 2)).\(padded(Int32(fraction), 3))Z"
    }
}
