import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore

/// `projects/{id}/history`.
struct HistoryController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/history") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let limit = try request.decodeQuery(API.HistoryQuery.self).limit ?? 100
            guard (1...10_000).contains(limit) else { throw APIError.badField("limit", "must be 1...10000") }
            return .json(try await history(of: id, limit: limit))
        }
    }

    func history(of id: DocumentID, limit: Int) async throws -> API.History {
        let (changes, compacted) = try await store.history(of: id, limit: limit)
        let document = try await store.project(id)
        let labels = ChangeSummary.shotLabels(document)
        // Whether a stroke put restored, copied or changed a stroke, judged
        // from the changes listed (oldest first): `watch` asks this for every
        // change it shows, so the whole history is not read for it. A restore
        // of a stroke erased before them reads "changed"; versions, which
        // read the whole history anyway, tell it.
        var tracker = StrokePutTracker { nil }
        let puts = tracker.kinds(in: changes.reversed())
        let names = await lookup.peerNames()
        return API.History(
            project: id.description, compacted: compacted,
            changes: changes.map {
                // "This machine" is whoever signed it, not the replica id a change claims.
                let author = document.author(of: $0.replica)
                return API.HistoryEntry(
                    replica: $0.replica.description, seq: $0.seq, local: author == identity.peerID, time: $0.wallTime,
                    operations: $0.operations.count, summary: ChangeSummary.describe($0, in: document, puts: puts, naming: names),
                    author: author?.description,
                    shots: ChangeSummary.shots($0, in: document, labels: labels))
            })
    }
}
