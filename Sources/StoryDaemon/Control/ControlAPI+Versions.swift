import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// `projects/{id}/versions`, and the one resolver of `?at=` that every route
/// showing the past (`projects show`, `render`, exports) goes through.
extension ControlAPI {
    func addVersionRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/versions") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            var limit = 100
            if let text = request.query["limit"] {
                guard let value = Int(text), (1...10_000).contains(value) else { throw APIError(.badRequest, "limit must be 1...10000") }
                limit = value
            }
            var since: Int64?
            if let text = request.query["since"] {
                guard let time = parseTime(text) else {
                    throw APIError(.badRequest, "since must be a time such as 2026-11-25T14:00 or 2026-11-25T14:00Z, not '\(text)'")
                }
                since = time
            }
            var shot: OpID?
            if let text = request.query["shot"] { shot = try objectID(text, "shot") }
            return .json(try await versions(of: id, shot: shot, since: since, limit: limit))
        }
        routes.get("projects/:project/diff") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            guard let from = request.query["from"] else {
                throw APIError(.badRequest, "from is required: the version to compare from (an id, a name or a time)")
            }
            let (old, _) = try await projectDocument(id, at: from)
            let (new, _) = try await projectDocument(id, at: request.query["to"])
            let diff = ProjectDiff(from: old.view, to: new.view)
            return .json(
                API.Diff(
                    project: id.description, from: old.versionVector.shortID, to: new.versionVector.shortID,
                    items: diff.items.map {
                        API.DiffItem(kind: $0.kind, id: $0.id.description, change: $0.change, place: $0.place, before: $0.before, after: $0.after)
                    },
                    strokes: diff.strokes.map {
                        API.DiffStrokes(layer: $0.layer.description, place: $0.place, added: $0.added, erased: $0.erased, changed: $0.changed)
                    },
                    texts: diff.texts.map {
                        API.DiffText(object: $0.object.description, place: $0.place, field: $0.field, before: $0.before, after: $0.after)
                    }))
        }
        routes.post("projects/:project/versions/restore") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let body = try await request.decode(API.RestoreVersion.self, context: context)
            guard body.shot == nil || body.scene == nil else { throw APIError(.badRequest, "give a shot or a scene, not both") }
            let scope: RestoreScope =
                if let shot = body.shot { .shot(try objectID(shot, "shot")) } else if let scene = body.scene { .scene(try objectID(scene, "scene")) } else { .project }
            let (past, version) = try await projectDocument(id, at: body.to)
            let present = try await store.project(id)
            let edit = try await store.editProject(id, session: body.session ?? Self.defaultSession, at: clock.milliseconds) { editor in
                try editor.restore(scope, asIn: past)
            }
            var summary = ""
            let names = await peerNames()
            if let change = try edit.change?.decoded() {
                var puts = StrokePutTracker { present }
                summary = ChangeSummary.describe(change, in: try await store.project(id), puts: puts.kinds(in: change), naming: names)
            }
            return .json(API.Restored(version: version ?? past.versionVector.shortID, changed: edit.change != nil, summary: summary))
        }
        routes.get("projects/:project/versions/names") { _, context in
            let id = try await existingProject(try context.parameter("project"))
            let document = try await store.project(id)
            return .json(document.versionNames.map { nameEntry($0, in: document) })
        }
        routes.post("projects/:project/versions/names") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let body = try await request.decode(API.NameVersion.self, context: context)
            let name = body.name.trimmingCharacters(in: .whitespaces)
            guard VersionName.isValid(name) else {
                throw APIError(
                    .badRequest, "a version's name is 1 to \(VersionName.maximumLength) characters, not only spaces and without control characters")
            }
            let vector: VersionVector
            if let at = body.at {
                let history = try await store.projectHistory(id)
                vector = try resolveVersion(at, in: history, names: try await store.project(id).versionNames)
            } else {
                vector = try await store.project(id).versionVector
            }
            _ = try await store.editProject(id, at: clock.milliseconds) { try $0.nameVersion(name, as: vector) }
            let document = try await store.project(id)
            guard let named = document.versionNames.first(where: { $0.name == name }) else {
                throw APIError(.internal, "the name \(name) was not kept")
            }
            return .json(nameEntry(named, in: document), status: .created)
        }
        routes.delete("projects/:project/versions/names/:name") { _, context in
            let id = try await existingProject(try context.parameter("project"))
            let name = try context.parameter("name")
            let document = try await store.project(id)
            guard let named = document.versionNames.first(where: { $0.name == name }) else {
                throw APIError(.notFound, "no version of this project is named '\(name)' (`storyteller versions list` shows the names)")
            }
            _ = try await store.editProject(id, at: clock.milliseconds) { try $0.nameVersion(name, as: nil) }
            return .json(nameEntry(named, in: document))
        }
    }

    func nameEntry(_ named: VersionName, in document: ProjectDocument) -> API.VersionNameEntry {
        let vector = named.version ?? VersionVector()
        return API.VersionNameEntry(
            name: named.name, version: vector.shortID, vector: Self.vectorAnswer(vector), time: named.time,
            author: document.author(of: named.stamp.replica)?.description)
    }

    func versions(of id: DocumentID, shot: OpID?, since: Int64?, limit: Int) async throws -> API.Versions {
        let history = try await store.projectHistory(id)
        let document = try await store.project(id)
        let labels = ChangeSummary.shotLabels(document)
        let puts = history.strokePutKinds()
        let names = await peerNames()
        // A shot deleted since has its history too.
        if let shot, document.kind(of: shot) != .shot { throw APIError(.notFound, "no shot \(shot) in \(id)") }
        var answers: [API.Version] = []
        for version in history.versions().reversed() {
            if let since, version.lastTime < since { break }
            let shots = version.changes.reduce(into: [String]()) { found, change in
                for label in ChangeSummary.shots(change, in: document, labels: labels) where !found.contains(label) { found.append(label) }
            }
            if let shot, !version.changes.contains(where: { Self.change($0, touches: shot, in: document) }) { continue }
            // "This machine" is whoever signed it, not the replica id a change claims.
            let author = document.author(of: version.replica)
            let local = author == identity.peerID
            let changes = version.changes.reversed().map {
                API.HistoryEntry(
                    replica: $0.replica.description, seq: $0.seq, local: local, time: $0.wallTime, operations: $0.operations.count,
                    summary: ChangeSummary.describe($0, in: document, puts: puts, naming: names), author: author?.description,
                    shots: ChangeSummary.shots($0, in: document, labels: labels))
            }
            answers.append(
                API.Version(
                    id: version.id, vector: Self.vectorAnswer(version.vector), time: version.lastTime, since: version.firstTime,
                    author: author?.description, local: local, summary: ChangeSummary.describe(version.changes, in: document, puts: puts, naming: names),
                    shots: shots, changes: changes))
            if answers.count == limit { break }
        }
        // Checkpoints say nothing of which shots changed: none for `shot`.
        let checkpoints = shot != nil ? [] : history.bases.reversed().compactMap { base -> API.Checkpoint? in
            guard base.isCheckpoint, let time = base.updatedAt, since.map({ time >= $0 }) ?? true else { return nil }
            return API.Checkpoint(id: base.versionVector.shortID, time: time)
        }
        return API.Versions(
            project: id.description, compacted: !history.oldestVersion.isEmpty, oldest: history.oldestVersion.shortID, versions: answers,
            checkpoints: checkpoints)
    }

    /// Whether a change touched `target` or something inside it (its layers, their strokes).
    static func change(_ change: Change, touches target: OpID, in document: ProjectDocument) -> Bool {
        func inside(_ object: OpID) -> Bool {
            var current: OpID? = object
            var steps = 0
            while let id = current, steps < 64 {
                if id == target { return true }
                current = document.container(of: id)
                steps += 1
            }
            return false
        }
        for (index, operation) in change.operations.enumerated() {
            switch operation {
            case .insert(_, let container, _): if inside(container) || inside(change.opID(at: index)) { return true }
            case .move(let object, let container, _): if inside(object) || inside(container) { return true }
            case .reorder(let object, _, _), .setDeleted(let object, _), .setField(let object, _, _): if inside(object) { return true }
            case .addStroke(let layer, _, _), .putStroke(let layer, _, _), .eraseStroke(let layer, _): if inside(layer) { return true }
            case .addTag(let object, _), .removeTag(let object, _, _): if inside(object) { return true }
            case .insertProjectEntry, .purge, .genesis, .setAccess, .nameVersion: continue
            }
        }
        return false
    }

    static func vectorAnswer(_ vector: VersionVector) -> [String: UInt64] {
        Dictionary(uniqueKeysWithValues: vector.sortedEntries.map { ($0.replica.description, $0.seq) })
    }

    /// A time in a request (`API.parseTime`), "now" being the daemon's clock.
    func parseTime(_ text: String) -> Int64? {
        API.parseTime(text, now: Date(timeIntervalSince1970: Double(clock.milliseconds) / 1000))
    }

    // MARK: - The past

    /// The project now (`at` nil), or as it was at the version `at` names:
    /// read-only, a document of its own that nothing writes back. Returns
    /// the shown version's id with it (nil for now).
    /// - Throws: `APIError` `unknown_version`, `history_compacted` or `bad_request`, in the user's words.
    func projectDocument(_ id: DocumentID, at text: String?) async throws -> (document: ProjectDocument, version: String?) {
        guard let text else { return (try await store.project(id), nil) }
        let history = try await store.projectHistory(id)
        let vector = try resolveVersion(text, in: history, names: try await store.project(id).versionNames)
        do {
            let document = try history.document(at: vector)
            return (document, document.versionVector.shortID)
        } catch let error as HistoryError {
            throw Self.apiError(error, history: history, asked: text)
        }
    }

    /// The version `text` names: a name given with `versions tag`, a version
    /// id from `history` (or a unique prefix of 4 or more of its digits),
    /// `now`, or a time (the changes made at or before it).
    func resolveVersion(_ text: String, in history: ProjectHistory, names: [VersionName]) throws(APIError) -> VersionVector {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let named = names.first(where: { $0.name == trimmed }) ?? names.first(where: { $0.name.lowercased() == trimmed.lowercased() }),
            let version = named.version
        {
            return version
        }
        let word = trimmed.lowercased()
        if word == "now" { return history.current }
        if (4...8).contains(word.count), word.allSatisfy(\.isHexDigit) {
            var known = Set(history.versions().map(\.vector))
            known.insert(history.current)
            for base in history.bases { known.insert(base.versionVector) }
            for named in names { if let version = named.version { known.insert(version) } }
            let matches = known.filter { $0.shortID.hasPrefix(word) }
            if matches.count == 1 { return matches.first! }
            if matches.count > 1 {
                throw APIError(.badRequest, "'\(text)' is the start of \(matches.count) version ids; give more of its digits")
            }
            // Perhaps a version from before what this machine still has.
            if !history.oldestVersion.isEmpty, API.parseTime(text) == nil {
                let compacted = Self.apiError(HistoryError(.compacted, ""), history: history, asked: text)
                throw APIError(.historyCompacted, "no version \(text) among those this machine still has: \(compacted.message)")
            }
        }
        if let time = parseTime(text) {
            do {
                return try history.vector(at: time)
            } catch {
                throw Self.apiError(error, history: history, asked: API.isoTime(milliseconds: time))
            }
        }
        throw APIError(
            .unknownVersion,
            "no version '\(text)' in this project's history: give a version id from `storyteller history`, a name from `storyteller versions list`, a time such as 2026-11-25T14:00, or now")
    }

    /// A version the history cannot show, in the user's words.
    static func apiError(_ error: HistoryError, history: ProjectHistory, asked: String) -> APIError {
        switch error.code {
        case .compacted:
            let oldest = history.oldestVersion
            let when = history.bases.first?.updatedAt.map { API.isoTime(milliseconds: $0) }
            return APIError(
                .historyCompacted,
                "history before \(when ?? "version \(oldest.shortID)") was compacted on this machine; "
                    + "the oldest version it can show is \(oldest.shortID)\(when.map { " (\($0))" } ?? "")")
        case .beforeProject:
            let first = history.createdAt.map { " (its first change is from \(API.isoTime(milliseconds: $0)))" } ?? ""
            return APIError(.unknownVersion, "the project did not exist yet at \(asked)\(first)")
        default:
            return APIError(.unknownVersion, "version \(asked) holds changes this machine has not received")
        }
    }
}
