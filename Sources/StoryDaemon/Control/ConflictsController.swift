import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore

/// `projects/{id}/conflicts`: text fields whose kept value overwrote values
/// written concurrently, and bringing one of those back.
struct ConflictsController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let clock: WallClock

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/conflicts") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            return .json(try await conflicts(of: id))
        }
        routes.post("projects/:project/conflicts/keep") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decode(API.KeepRequest.self, context: context)
            return .json(try await keep(body, in: id))
        }
    }

    /// The open conflicts of the fields shown (a deleted shot's are kept in
    /// the document, and listed again if it is restored).
    func conflicts(of id: DocumentID) async throws -> API.Conflicts {
        let document = try await store.project(id)
        let references = FieldReferences(document.view)
        return API.Conflicts(
            project: id.description,
            conflicts: document.fieldConflicts.compactMap { conflict in
                guard let field = references.text(of: conflict.object, key: conflict.key),
                    let target = references.target(of: conflict.object)
                else { return nil }
                return API.FieldConflict(
                    field: field, kind: "\(target.kind)", object: conflict.object.description, key: conflict.key.description,
                    kept: written(conflict.kept, index: nil, in: document),
                    overwritten: conflict.overwritten.enumerated().map { written($1, index: $0 + 1, in: document) })
            })
    }

    private func written(_ value: WrittenValue, index: Int?, in document: ProjectDocument) -> API.WrittenValue {
        // "This machine" is whoever signed it, not the replica id a change claims.
        let author = document.author(of: value.replica)
        return API.WrittenValue(
            index: index, value: value.value.string, author: author?.description, local: author == identity.peerID,
            replica: value.replica.description, operation: value.operation.description, time: value.time)
    }

    /// Sets the field to one of its overwritten values: an ordinary edit
    /// made on everything this daemon holds, so it has seen every open value
    /// and resolves the conflict here and, once synced, everywhere.
    /// - Throws: `APIError(.notFound)` for an unknown field, `.conflict` for a
    ///   field with no overwritten values, `.badRequest` for a value number out of range.
    func keep(_ body: API.KeepRequest, in id: DocumentID) async throws -> API.KeepResult {
        let document = try await store.project(id)
        let (object, key) = try FieldReferences(document.view).resolve(body.field)
        let field = body.field
        let number = body.value
        let result = try await store.editProject(id, session: body.session ?? ControlAPI.defaultSession, at: clock.milliseconds) {
            editor -> (kept: FieldValue, replaced: FieldValue) in
            guard let conflict = editor.fieldConflict(key, of: object) else {
                throw APIError(
                    .conflict,
                    "\(field) has no overwritten values: nobody wrote it concurrently, or that was resolved (storyteller conflicts lists what is open)"
                )
            }
            let count = conflict.overwritten.count
            guard (1...count).contains(number) else {
                throw APIError(
                    .badRequest,
                    "\(field) has \(count) overwritten value\(count == 1 ? "" : "s"): --value takes \(count == 1 ? "1" : "1 to \(count)"), not \(number)"
                )
            }
            let value = conflict.overwritten[number - 1].value
            try editor.set(key, to: value, on: object)
            return (value, conflict.kept.value)
        }
        let open = try await store.project(id).fieldConflict(key, of: object)?.overwritten.count ?? 0
        return API.KeepResult(field: field, value: result.value.kept.string, replaced: result.value.replaced.string, open: open)
    }
}
