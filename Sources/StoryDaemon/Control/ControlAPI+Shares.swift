import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// Shares of a project (`projects/{id}/shares`) and of the library (`library/shares`).
extension ControlAPI {
    func addShareRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/shares") { _, context in
            .json(try await shares(of: try await existingProject(try context.parameter("project"))))
        }
        routes.put("projects/:project/shares/:peer") { request, context in
            let id = try await existingProject(try context.parameter("project"))
            let peer = try await configuredPeer(try context.parameter("peer"))
            let mode = try await shareMode(request, context)
            try await store.share(id, with: peer, role: mode.role, at: clock.milliseconds)
            return .json(API.Share(project: id.description, peer: peer.description, mode: mode.rawValue, role: mode.role.description))
        }
        routes.delete("projects/:project/shares/:peer") { _, context in
            let id = try await existingProject(try context.parameter("project"))
            let peer = try peerID(try context.parameter("peer"))
            guard let member = try await store.members(of: id).first(where: { $0.peer == peer }) else {
                throw APIError(.notFound, "\(id) is not shared with \(peer)")
            }
            guard member.role != .owner else { throw APIError(.forbidden, "\(peer) owns \(id); an owner's rights cannot be taken") }
            try await store.share(id, with: peer, role: .none, at: clock.milliseconds)
            return .json(API.Unshared(unshared: peer.description))
        }
        routes.get("library/shares") { _, _ in .json(try await shares(of: try await library.id())) }
        routes.put("library/shares/:peer") { request, context in
            let peer = try await configuredPeer(try context.parameter("peer"))
            let mode = try await shareMode(request, context)
            try await library.share(with: peer, role: mode.role)
            return .json(
                API.Share(project: try await library.id().description, peer: peer.description, mode: mode.rawValue, role: mode.role.description))
        }
        routes.delete("library/shares/:peer") { _, context in
            let peer = try peerID(try context.parameter("peer"))
            guard try await store.members(of: try await library.id()).contains(where: { $0.peer == peer }) else {
                throw APIError(.notFound, "the library is not shared with \(peer)")
            }
            try await library.unshare(from: peer)
            return .json(API.Unshared(unshared: peer.description))
        }
    }

    /// The members of a document other than this daemon.
    func shares(of id: DocumentID) async throws -> [API.Share] {
        try await store.members(of: id).filter { $0.peer != identity.peerID }.map {
            API.Share(
                project: id.description, peer: $0.peer.description, mode: (ShareMode(role: $0.role) ?? .readOnly).rawValue,
                role: $0.role.description)
        }
    }

    private func shareMode(_ request: Request, _ context: ControlContext) async throws -> ShareMode {
        let text = try await request.decodeIfPresent(API.SetShare.self, context: context)?.mode
        guard let mode = ShareMode(rawValue: text ?? ShareMode.readWrite.rawValue) else {
            throw APIError(.badRequest, "mode '\(text ?? "")' is not read-write or read-only")
        }
        return mode
    }
}
