import Hummingbird
import Metrics
import StoryAPI
import StoryCore
import StoryStore

/// `projects/{id}/edits`, `undo` and `redo`.
struct EditsController: Sendable {
    let lookup: ResourceLookup
    let edits: EditService
    let store: Store
    let clock: WallClock

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/edits") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let request = try await request.decode(API.EditRequest.self, context: context)
            let result = try await edits.edit(id, request)
            return .json(result)
        }
        routes.post("projects/:project/undo") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decodeIfPresent(API.UndoRequest.self, context: context) ?? API.UndoRequest()
            let outcome = try await store.undo(
                id, session: body.session ?? ControlAPI.defaultSession, older: body.older ?? false, at: clock.milliseconds)
            return .json(try await undoResult(outcome, in: id, redo: false))
        }
        routes.post("projects/:project/redo") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let body = try await request.decodeIfPresent(API.UndoRequest.self, context: context) ?? API.UndoRequest()
            let outcome = try await store.redo(
                id, session: body.session ?? ControlAPI.defaultSession, older: body.older ?? false, at: clock.milliseconds)
            return .json(try await undoResult(outcome, in: id, redo: true))
        }
    }

    /// The outcome in the API's words: replicas become the peer ids of their authors.
    func undoResult(_ outcome: UndoOutcome, in id: DocumentID, redo: Bool) async throws -> API.UndoResult {
        let document = try await store.project(id)
        var authors: [String] = []
        for replica in outcome.overruledBy {
            let author = document.author(of: replica)?.description ?? replica.description
            if !authors.contains(author) { authors.append(author) }
        }
        let done = outcome.change != nil
        return API.UndoResult(
            undone: redo ? nil : done, redone: redo ? done : nil, summary: outcome.summary, overruled: outcome.isOverruled,
            overruledBy: authors, partsLeftAlone: outcome.partsLeftAlone, passedOver: outcome.passedOver)
    }

}

/// Applying a request's operations to a project as one signed change: the
/// edits route, and the routes that edit on the user's behalf (media, the
/// library, project settings).
struct EditService: Sendable {
    let store: Store
    let clock: WallClock
    let lookup: ResourceLookup

    /// Applies the operations as one change: all of them, or none.
    func edit(_ id: DocumentID, _ request: API.EditRequest) async throws -> API.EditResult {
        let started = ContinuousClock.now
        let operations = request.ops
        try await lookup.checkMediaIsHeld(operations)
        let result: EditResult<[OpID?]>
        do {
            result = try await store.editProject(id, session: request.session ?? ControlAPI.defaultSession, at: clock.milliseconds) { editor in
                try API.EditOperation.apply(operations, to: &editor)
            }
        } catch {
            DaemonMetrics.editApply.record(duration: ContinuousClock.now - started)
            throw error
        }
        DaemonMetrics.editApply.record(duration: ContinuousClock.now - started)
        // A picture or sound this machine's user put in the project (uploaded,
        // or named by hash: its bytes are here) may go to the project's members.
        for case .set(_, _, .media(let media)) in operations { try await store.proveBlobReference(media.hash, in: id) }
        return API.EditResult(created: result.value.map { $0?.description }, changed: result.change != nil)
    }
}
