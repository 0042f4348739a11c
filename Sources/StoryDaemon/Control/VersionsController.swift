import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore

/// `projects/{id}/versions`, and the one resolver of `?at=` that every route
/// showing the past (`projects show`, `render`, exports) goes through.
struct VersionsController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let name: String
    let clock: WallClock
    let exports: ExportJobs

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/versions") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let query = try request.decodeQuery(API.VersionsQuery.self)
            let limit = query.limit ?? 100
            guard (1...10_000).contains(limit) else { throw APIError.badField("limit", "must be 1...10000") }
            var since: Int64?
            if let text = query.since {
                guard let time = lookup.parseTime(text) else {
                    throw APIError(.badRequest, "since must be a time such as 2026-11-25T14:00 or 2026-11-25T14:00Z, not '\(text)'")
                }
                since = time
            }
            var shot: OpID?
            if let text = query.shot { shot = try lookup.objectID(text, "shot") }
            return .json(try await versions(of: id, shot: shot, since: since, limit: limit))
        }
        routes.get("projects/:project/diff") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let query = try request.decodeQuery(API.DiffQuery.self)
            guard let from = query.from else {
                throw APIError(.badRequest, "from is required: the version to compare from (an id, a name or a time)")
            }
            let (old, _) = try await lookup.projectDocument(id, at: from)
            let (new, _) = try await lookup.projectDocument(id, at: query.to)
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
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decode(API.RestoreVersion.self, context: context)
            guard body.shot == nil || body.scene == nil else { throw APIError(.badRequest, "give a shot or a scene, not both") }
            let scope: RestoreScope =
                if let shot = body.shot { .shot(try lookup.objectID(shot, "shot")) } else if let scene = body.scene {
                    .scene(try lookup.objectID(scene, "scene"))
                } else { .project }
            let (past, version) = try await lookup.projectDocument(id, at: body.to)
            let present = try await store.project(id)
            let edit = try await store.editProject(id, session: body.session ?? ControlAPI.defaultSession, at: clock.milliseconds) { editor in
                try editor.restore(scope, asIn: past)
            }
            var summary = ""
            let names = await lookup.peerNames()
            if let change = try edit.change?.decoded() {
                var puts = StrokePutTracker { present }
                summary = ChangeSummary.describe(change, in: try await store.project(id), puts: puts.kinds(in: change), naming: names)
            }
            return .json(API.Restored(version: version ?? past.versionVector.shortID, changed: edit.change != nil, summary: summary))
        }
        routes.get("projects/:project/versions/names") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let document = try await store.project(id)
            return .json(document.versionNames.map { nameEntry($0, in: document) })
        }
        routes.post("projects/:project/versions/names") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decode(API.NameVersion.self, context: context)
            let name = body.name.trimmingCharacters(in: .whitespaces)
            guard VersionName.isValid(name) else {
                throw APIError(
                    .badRequest, "a version's name is 1 to \(VersionName.maximumLength) characters, not only spaces and without control characters")
            }
            let vector: VersionVector
            if let at = body.at {
                let history = try await store.projectHistory(id)
                vector = try lookup.resolveVersion(at, in: history, names: try await store.project(id).versionNames)
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
            let id = try await lookup.existingProject(try context.parameter("project"))
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
        let names = await lookup.peerNames()
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
                    author: author?.description, local: local,
                    summary: ChangeSummary.describe(version.changes, in: document, puts: puts, naming: names),
                    shots: shots, changes: changes))
            if answers.count == limit { break }
        }
        // Checkpoints say nothing of which shots changed: none for `shot`.
        let checkpoints =
            shot != nil
            ? []
            : history.bases.reversed().compactMap { base -> API.Checkpoint? in
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

}
