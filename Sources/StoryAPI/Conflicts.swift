extension API {
    /// `GET /v1/projects/{id}/conflicts`: the text fields whose kept value
    /// overwrote values written concurrently, and those values.
    package struct Conflicts: Codable, Sendable {
        package let project: String
        package let conflicts: [FieldConflict]

        package init(project: String, conflicts: [FieldConflict]) {
            self.project = project
            self.conflicts = conflicts
        }
    }

    /// One field with overwritten values.
    package struct FieldConflict: Codable, Sendable {
        /// What to type back to `conflicts keep`: `title` (the project's),
        /// `2.title` (a scene), `1-2.caption` (a shot), `1-2/Ink.name` (a layer).
        package let field: String
        /// `project`, `scene`, `shot` or `layer`, its id, and the field's name.
        package let kind: String
        package let object: String
        package let key: String
        /// The value shown now.
        package let kept: WrittenValue
        /// The values it overwrote, numbered from 1 (`--value N`).
        package let overwritten: [WrittenValue]

        package init(field: String, kind: String, object: String, key: String, kept: WrittenValue, overwritten: [WrittenValue]) {
            self.field = field
            self.kind = kind
            self.object = object
            self.key = key
            self.kept = kept
            self.overwritten = overwritten
        }
    }

    /// A value written into a text field, by whom and when.
    package struct WrittenValue: Codable, Sendable, Equatable {
        /// 1, 2, … for overwritten values; absent for the kept one.
        package let index: Int?
        /// The text (absent: the writer cleared the field).
        package let value: String?
        /// The peer id of the identity that wrote it (absent: unknown).
        package let author: String?
        /// Written on this daemon.
        package let local: Bool
        package let replica: String
        /// The operation that wrote it.
        package let operation: String
        /// Milliseconds since 1970, and as ISO 8601 (absent: unknown).
        package let time: Int64?
        package let at: String?

        package init(index: Int?, value: String?, author: String?, local: Bool, replica: String, operation: String, time: Int64?) {
            self.index = index
            self.value = value
            self.author = author
            self.local = local
            self.replica = replica
            self.operation = operation
            self.time = time
            self.at = time.map { API.isoTime(milliseconds: $0) }
        }
    }

    /// `POST /v1/projects/{id}/conflicts/keep`: make overwritten value
    /// `value` (1-based, as listed) of `field` the field's value, as a new
    /// edit that has seen every value (so it resolves the conflict), undoable.
    package struct KeepRequest: Codable, Sendable {
        package let field: String
        package let value: Int
        /// The undo session (default: the daemon's).
        package let session: String?

        package init(field: String, value: Int, session: String? = nil) {
            self.field = field
            self.value = value
            self.session = session
        }
    }

    /// What `keep` did.
    package struct KeepResult: Codable, Sendable {
        package let field: String
        /// The value the field shows now (absent: cleared).
        package let value: String?
        /// The value it showed before, now replaced (absent: it was empty).
        package let replaced: String?
        /// Overwritten values still open on the field (0: resolved).
        package let open: Int

        package init(field: String, value: String?, replaced: String?, open: Int) {
            self.field = field
            self.value = value
            self.replaced = replaced
            self.open = open
        }
    }
}
