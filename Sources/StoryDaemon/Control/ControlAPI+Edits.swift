import Hummingbird
import Metrics
import StoryAPI
import StoryCore
import StoryStore

/// `projects/{id}/edits`, `undo` and `redo`.
extension ControlAPI {
    func addEditRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/edits") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let edits = try await request.decode(API.EditRequest.self, context: context)
            let result = try await edit(id, edits)
            return .json(result)
        }
        routes.post("projects/:project/undo") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let session = try await request.decodeIfPresent(API.UndoRequest.self, context: context)?.session ?? Self.defaultSession
            return .json(API.UndoResult(undone: try await store.undo(id, session: session, at: clock.milliseconds) != nil))
        }
        routes.post("projects/:project/redo") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let session = try await request.decodeIfPresent(API.UndoRequest.self, context: context)?.session ?? Self.defaultSession
            return .json(API.UndoResult(redone: try await store.redo(id, session: session, at: clock.milliseconds) != nil))
        }
    }

    /// Applies the operations as one change: all of them, or none.
    func edit(_ id: DocumentID, _ request: API.EditRequest) async throws -> API.EditResult {
        let started = ContinuousClock.now
        let operations = request.ops
        let result: EditResult<[OpID?]>
        do {
            result = try await store.editProject(id, session: request.session ?? Self.defaultSession, at: clock.milliseconds) { editor in
                try API.EditOperation.apply(operations, to: &editor)
            }
        } catch {
            DaemonMetrics.editApply.record(duration: ContinuousClock.now - started)
            throw error
        }
        DaemonMetrics.editApply.record(duration: ContinuousClock.now - started)
        return API.EditResult(created: result.value.map { $0?.description }, changed: result.change != nil)
    }
}
