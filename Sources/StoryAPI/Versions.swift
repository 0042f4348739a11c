package import Foundation

extension API {
    /// `GET /v1/projects/{id}/versions`: the history as people read it, newest first.
    package struct Versions: Codable, Sendable {
        package let project: String
        /// Older changes were folded into a snapshot: versions before `oldest` cannot be shown.
        package let compacted: Bool
        /// The oldest version this machine can show.
        package let oldest: String
        package let versions: [Version]
        /// What this machine kept of the time before its logged changes
        /// (history retention's daily and weekly checkpoints, named
        /// versions'), newest first; each shows with `--at ID` or a time.
        /// Absent from older daemons.
        package let checkpoints: [Checkpoint]?

        package init(project: String, compacted: Bool, oldest: String, versions: [Version], checkpoints: [Checkpoint]? = nil) {
            self.project = project
            self.compacted = compacted
            self.oldest = oldest
            self.versions = versions
            self.checkpoints = checkpoints
        }
    }

    /// A state of a project kept from before its logged changes.
    package struct Checkpoint: Codable, Sendable {
        /// The short version id: `--at ID`.
        package let id: String
        /// The time of its newest change, and as ISO 8601 (UTC).
        package let time: Int64
        package let at: String

        package init(id: String, time: Int64) {
            self.id = id
            self.time = time
            at = API.isoTime(milliseconds: time)
        }
    }

    /// One author's burst of edits, named by the version it made.
    package struct Version: Codable, Sendable {
        /// The short version id (8 hex digits), the same on every machine: `--at ID`.
        package let id: String
        /// The version vector: replica id → sequence number.
        package let vector: [String: UInt64]
        /// When the burst ended (its last change), and as ISO 8601 (UTC).
        package let time: Int64
        package let at: String
        /// When it began.
        package let since: Int64
        /// The peer id that signed it (null: unknown); `local`: this daemon's.
        package let author: String?
        package let local: Bool
        /// "drew 34 strokes, set caption"
        package let summary: String
        /// The labels of the shots it touched, as they are now.
        package let shots: [String]
        /// Its changes one by one, newest first (what `history --changes` lists).
        package let changes: [HistoryEntry]

        package init(
            id: String, vector: [String: UInt64], time: Int64, since: Int64, author: String?, local: Bool, summary: String,
            shots: [String], changes: [HistoryEntry]
        ) {
            self.id = id
            self.vector = vector
            self.time = time
            self.at = API.isoTime(milliseconds: time)
            self.since = since
            self.author = author
            self.local = local
            self.summary = summary
            self.shots = shots
            self.changes = changes
        }
    }
}

extension API {
    /// A time as people type it for `--at` and `--since`, in milliseconds
    /// since 1970: `2026-11-25T14:00`, `2026-11-25 14:00:30`, `2026-11-25`
    /// (the end of that day: the project as it was that day), each with `Z`
    /// or an offset (`+01:00`) or else in `timeZone`; `now`, `today` and
    /// `yesterday` (the end of the day). Nil if the text is not a time.
    package static func parseTime(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let word = text.trimmingCharacters(in: .whitespaces).lowercased()
        func endOfDay(_ date: Date) -> Int64? {
            guard let next = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date)) else { return nil }
            return Int64((next.timeIntervalSince1970 * 1000).rounded()) - 1
        }
        switch word {
        case "now": return Int64((now.timeIntervalSince1970 * 1000).rounded())
        case "today": return endOfDay(now)
        case "yesterday": return calendar.date(byAdding: .day, value: -1, to: now).flatMap(endOfDay)
        default: break
        }
        var rest = Substring(word)
        func number(_ count: Int) -> Int? {
            let head = rest.prefix(count)
            guard head.count == count, head.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            rest = rest.dropFirst(count)
            return Int(head)
        }
        func take(_ character: Character) -> Bool {
            guard rest.first == character else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2) else { return nil }
        var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        var dateOnly = true
        if take("t") || take(" ") {
            guard let hour = number(2), take(":"), let minute = number(2) else { return nil }
            components.hour = hour
            components.minute = minute
            if take(":") {
                guard let second = number(2) else { return nil }
                components.second = second
                if take(".") {
                    var digits = ""
                    while let next = rest.first, next.isASCII, next.isNumber {
                        digits.append(next)
                        rest = rest.dropFirst()
                    }
                    guard !digits.isEmpty else { return nil }
                    components.nanosecond = Int((Double("0." + digits) ?? 0) * 1_000_000_000)
                }
            }
            dateOnly = false
        }
        var zone = timeZone
        if take("z") {
            zone = TimeZone(secondsFromGMT: 0)!
        } else if let sign = rest.first, sign == "+" || sign == "-" {
            rest = rest.dropFirst()
            guard let hours = number(2) else { return nil }
            _ = take(":")
            let minutes = rest.isEmpty ? 0 : number(2)
            guard let minutes, hours <= 14, minutes < 60 else { return nil }
            guard let offset = TimeZone(secondsFromGMT: (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)) else { return nil }
            zone = offset
        }
        guard rest.isEmpty, (1...12).contains(month), (1...31).contains(day), components.hour! < 24, components.minute! < 60,
            components.second! < 60
        else { return nil }
        calendar.timeZone = zone
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return dateOnly ? endOfDay(date) : Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}

extension API {
    /// A named version: `GET /v1/projects/{id}/versions/names` lists them.
    package struct VersionNameEntry: Codable, Sendable {
        /// The name ("client review 2").
        package let name: String
        /// The id of the version it names (what `?at=` also takes).
        package let version: String
        /// That version's vector: replica id → sequence number.
        package let vector: [String: UInt64]
        /// When it was named (the namer's clock), and as ISO 8601 (UTC).
        package let time: Int64
        package let at: String
        /// The peer id that named it (null: unknown).
        package let author: String?

        package init(name: String, version: String, vector: [String: UInt64], time: Int64, author: String?) {
            self.name = name
            self.version = version
            self.vector = vector
            self.time = time
            self.at = API.isoTime(milliseconds: time)
            self.author = author
        }
    }

    /// `POST /v1/projects/{id}/versions/names`: name a version (`at`: any form `?at=` takes; default now).
    package struct NameVersion: Codable, Sendable {
        package let name: String
        package let at: String?

        package init(name: String, at: String? = nil) {
            self.name = name
            self.at = at
        }
    }
}

extension API {
    /// `GET /v1/projects/{id}/diff?from=&to=`: what changed between two versions.
    package struct Diff: Codable, Sendable {
        package let project: String
        /// The ids of the two versions compared.
        package let from: String
        package let to: String
        /// Scenes, shots and layers added, removed, moved, renamed.
        package let items: [DiffItem]
        /// Strokes added, erased and changed, per layer.
        package let strokes: [DiffStrokes]
        /// Text fields changed.
        package let texts: [DiffText]

        package init(project: String, from: String, to: String, items: [DiffItem], strokes: [DiffStrokes], texts: [DiffText]) {
            self.project = project
            self.from = from
            self.to = to
            self.items = items
            self.strokes = strokes
            self.texts = texts
        }
    }

    package struct DiffItem: Codable, Sendable {
        /// `scene`, `shot` or `layer`; `change`: `added`, `removed`, `moved` or `renamed`.
        package let kind: String
        package let id: String
        package let change: String
        /// `shot 1-2`, `layer ink in shot 1-2` (as it is in `to`; as it was, if removed).
        package let place: String
        /// moved: where it was; renamed: the old name.
        package let before: String?
        /// renamed: the new name.
        package let after: String?

        package init(kind: String, id: String, change: String, place: String, before: String?, after: String?) {
            self.kind = kind
            self.id = id
            self.change = change
            self.place = place
            self.before = before
            self.after = after
        }
    }

    package struct DiffStrokes: Codable, Sendable {
        package let layer: String
        package let place: String
        package let added: Int
        package let erased: Int
        /// Drawn over, moved or restyled.
        package let changed: Int

        package init(layer: String, place: String, added: Int, erased: Int, changed: Int) {
            self.layer = layer
            self.place = place
            self.added = added
            self.erased = erased
            self.changed = changed
        }
    }

    package struct DiffText: Codable, Sendable {
        package let object: String
        package let place: String
        /// `title`, `description`, `caption`, `notes`, `dialogue` or `action`.
        package let field: String
        package let before: String?
        package let after: String?

        package init(object: String, place: String, field: String, before: String?, after: String?) {
            self.object = object
            self.place = place
            self.field = field
            self.before = before
            self.after = after
        }
    }
}

extension API {
    /// `POST /v1/projects/{id}/versions/restore`: bring the project, a scene or a shot back to a version.
    package struct RestoreVersion: Codable, Sendable {
        /// The version: any form `?at=` takes.
        package let to: String
        /// Only this shot, or only this scene (ids); neither: the whole project.
        package let shot: String?
        package let scene: String?
        /// The undo session (default: the daemon's default session).
        package let session: String?

        package init(to: String, shot: String? = nil, scene: String? = nil, session: String? = nil) {
            self.to = to
            self.shot = shot
            self.scene = scene
            self.session = session
        }
    }

    /// What a restore did.
    package struct Restored: Codable, Sendable {
        /// The id of the version brought back.
        package let version: String
        /// Whether anything had to change (false: the scope was already as it was then).
        package let changed: Bool
        /// "restored 2 strokes, set caption" (empty when nothing changed).
        package let summary: String

        package init(version: String, changed: Bool, summary: String) {
            self.version = version
            self.changed = changed
            self.summary = summary
        }
    }
}
