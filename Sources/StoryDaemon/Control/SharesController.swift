import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// Shares of a project (`projects/{id}/shares`) and of the library (`library/shares`).
struct SharesController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let manager: PeerManager
    let library: LibraryService
    let clock: WallClock

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/shares") { _, context in
            .json(try await lookup.shares(of: try await lookup.existingProject(try context.parameter("project"))))
        }
        routes.put("projects/:project/shares/:peer") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let peer = try await lookup.configuredPeer(try context.parameter("peer"))
            let mode = try await Self.shareMode(request, context)
            try await store.share(id, with: peer, role: mode.role, at: clock.milliseconds)
            try await store.setDirectShare(true, of: id, with: peer)
            return .json(API.Share(project: id.description, peer: peer.description, mode: mode.rawValue, role: mode.role.description))
        }
        routes.delete("projects/:project/shares/:peer") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let peer = try lookup.peerID(try context.parameter("peer"))
            guard let member = try await store.members(of: id).first(where: { $0.peer == peer }) else {
                throw APIError(.notFound, "\(id) is not shared with \(peer)")
            }
            guard member.role != .owner else { throw APIError(.forbidden, "\(peer) owns \(id); an owner's rights cannot be taken") }
            // What it has through a shared folder (or the library) it keeps: only the direct share goes.
            let reasons = try await library.reasons(for: id, peer: peer)
            let kept = reasons.map(\.role).max() ?? .none
            // The direct share goes; what a folder or the library gives stays (raised back to it, if the direct share was less).
            if kept != member.role { try await store.share(id, with: peer, role: kept, at: clock.milliseconds) }
            try await store.setDirectShare(false, of: id, with: peer)
            let keeps = reasons.map { API.Unshared.Kept(via: $0.path, role: $0.role.description) }
            return .json(API.Unshared(unshared: peer.description, keeps: keeps.isEmpty ? nil : keeps))
        }
        routes.get("shares") { request, _ in
            let peer = try request.decodeQuery(API.SharesQuery.self).peer.map { try lookup.peerID($0) }
            return .json(try await shareListing(peer: peer))
        }
        routes.get("shares/pending") { _, _ in
            .json(
                try await store.offers().map {
                    API.Offer(
                        document: $0.document.description, kind: $0.kind.description, name: $0.name, peer: $0.peer.description, received: $0.received)
                })
        }
        routes.post("shares/pending/:document/accept") { _, context in
            let id = try lookup.documentID(try context.parameter("document"))
            let offer: OfferRecord
            do {
                offer = try await manager.acceptOffer(id)
            } catch let error as StoreError where error.code == .notFound {
                throw APIError(.notFound, "no peer offers \(id) (storyteller shares pending lists what is offered)")
            }
            return .json(
                API.Offer(
                    document: id.description, kind: offer.kind.description, name: offer.name, peer: offer.peer.description, received: offer.received))
        }
        routes.post("shares/pending/:document/decline") { _, context in
            let id = try lookup.documentID(try context.parameter("document"))
            guard let offer = try await store.offers().first(where: { $0.document == id }) else {
                throw APIError(.notFound, "no peer offers \(id) (storyteller shares pending lists what is offered)")
            }
            for other in try await store.offers() where other.document == id { try await store.declineOffer(of: id, from: other.peer) }
            return .json(
                API.Offer(
                    document: id.description, kind: offer.kind.description, name: offer.name, peer: offer.peer.description, received: offer.received))
        }
        routes.get("library/shares") { _, _ in .json(try await lookup.shares(of: try await library.id())) }
        routes.put("library/shares/:peer") { request, context in
            let peer = try await lookup.configuredPeer(try context.parameter("peer"))
            let mode = try await Self.shareMode(request, context)
            let outcome = try await library.share(with: peer, role: mode.role)
            return .json(
                API.Share(
                    project: outcome.document.description, peer: peer.description, mode: mode.rawValue, role: mode.role.description,
                    shared: outcome.shared, notShared: outcome.notShared))
        }
        routes.delete("library/shares/:peer") { _, context in
            let peer = try lookup.peerID(try context.parameter("peer"))
            guard try await store.members(of: try await library.id()).contains(where: { $0.peer == peer }) else {
                throw APIError(.notFound, "the library is not shared with \(peer)")
            }
            try await library.unshare(from: peer)
            return .json(API.Unshared(unshared: peer.description))
        }
    }

    /// Every peer's rights to the documents here (one peer's with `peer`), and why.
    func shareListing(peer only: PeerID?) async throws -> [API.ShareListing] {
        let set = try await library.set()
        let me = identity.peerID
        let direct = Set(try await store.directShares().map { "\($0.document)/\($0.peer)" })
        var members: [DocumentID: [MemberRecord]] = [:]
        for member in try await store.members() where member.peer != me && (only == nil || member.peer == only) {
            members[member.document, default: []].append(member)
        }
        // Where each document is listed, and which library documents list it (through folders too).
        var places: [DocumentID: LibraryPlace] = [:]
        for (library, view) in set.views {
            for node in view.nodes where !node.isInTrash {
                if let document = node.document, places[document] == nil || library == set.main {
                    places[document] = LibraryPlace(library: library, node: node.id)
                }
            }
        }
        var listedBy: [DocumentID: [DocumentID]] = [:]
        for library in set.views.keys {
            for document in set.listed(in: library) { listedBy[document, default: []].append(library) }
        }
        var result: [API.ShareListing] = []
        for record in try await store.foundedDocuments() where !record.isDeleted {
            for member in members[record.id] ?? [] {
                var via: [String] = []
                for library in (listedBy[record.id] ?? []).sorted() where members[library]?.contains(where: { $0.peer == member.peer }) == true {
                    via.append(library == set.main ? "library" : "folder \(set.path(of: LibraryPlace(library: library, node: .root)))")
                }
                if direct.contains("\(record.id)/\(member.peer)") || via.isEmpty { via.insert("direct", at: 0) }
                let kind = record.id == set.main ? "library" : set.isFolder(record.id) ? "folder" : record.kind.description
                let path =
                    record.id == set.main
                    ? nil
                    : set.isFolder(record.id) ? set.path(of: LibraryPlace(library: record.id, node: .root)) : places[record.id].map(set.path)
                result.append(
                    API.ShareListing(
                        document: record.id.description, kind: kind, name: record.name, path: path, peer: member.peer.description,
                        role: member.role.description, mode: (ShareMode(role: member.role) ?? .readOnly).rawValue, via: via))
            }
        }
        return result
    }

    static func shareMode(_ request: Request, _ context: ControlContext) async throws -> ShareMode {
        let text = try await request.decodeIfPresent(API.SetShare.self, context: context)?.mode
        guard let mode = ShareMode(rawValue: text ?? ShareMode.readWrite.rawValue) else {
            throw APIError(.badRequest, "mode '\(text ?? "")' is not read-write or read-only")
        }
        return mode
    }
}
