import Foundation
import NIOHTTP1
import Logging
import StoryCore
import StoryIdentity
import StoryStore
import StorySync
import StoryTLS

/// The `/v1` routes of the control API served so far: status, identity and
/// peers (list, add, remove, pending, accept), and the project list.
struct ControlRoutes: Sendable {
    let store: Store
    let identity: Identity
    let manager: PeerManager
    let library: LibraryService
    let name: String
    let started: Date
    let logger: Logger

    struct StatusBody: Encodable {
        let peerID: String
        let name: String
        let uptimeSeconds: Int
        /// Documents in the store: the library and the projects.
        let documents: Int
        /// Projects not deleted.
        let projects: Int
        /// The TCP port peers connect to (null until the listener is up).
        let listenPort: Int?
        let peersConnected: Int
        let bytesSent: Int
        let bytesReceived: Int
        /// Per document: how many changes it holds and, per peer it is shared
        /// with, how many of them that peer has not acknowledged yet.
        let sync: [DocumentSync]
    }

    struct DocumentSync: Encodable {
        let id: String
        let kind: String
        let name: String?
        /// Changes known here (the sum of the version vector).
        let changes: UInt64
        let peers: [PeerSync]
    }

    struct PeerSync: Encodable {
        let peer: String
        let mode: String
        /// Its role in the document's access list: owner, editor or reader.
        let role: String
        let connected: Bool
        /// Changes known here that the peer has not acknowledged (null: it never acknowledged any).
        let behind: UInt64?
    }

    struct IdentityBody: Encodable {
        let peerID: String
        let name: String
        let certificatePEM: String
    }

    struct PeerBody: Encodable {
        let id: String
        let name: String?
        let address: String?
        let state: String
        let connected: Bool
        /// Sync with it is paused (`peers pause`).
        let paused: Bool
        let added: Int64
        let lastSeen: Int64?
        let lastAddress: String?
    }

    struct AddPeer: Decodable {
        let id: String
        let address: String?
        let name: String?
    }

    struct AcceptPeer: Decodable {
        let address: String?
    }

    struct SearchHitBody: Encodable {
        let project: String
        let projectName: String?
        /// The matching object (absent for the project itself).
        let object: String?
        let label: String
        let field: String
        let text: String
    }

    struct BackupRequest: Decodable {
        let path: String
    }

    struct BackupBody: Encodable {
        let path: String
        let bytes: Int
    }

    struct EditBody: Encodable {
        /// Per operation: the id it created, or null.
        let created: [String?]
        let changed: Bool
    }

    struct CreateProject: Decodable {
        let name: String
        /// The library folder for its entry (reference: id, well-known name or path); default the root.
        let folder: String?
    }

    struct CreateFolder: Decodable {
        let name: String
        let parent: String?
        let index: Int?
    }

    struct UpdateNode: Decodable {
        let name: String?
        let description: String?
    }

    struct MoveNode: Decodable {
        /// The folder to move into; absent: reorder within the current folder.
        let folder: String?
        let index: Int?
    }

    struct HistoryBody: Encodable {
        let project: String
        /// Older changes were folded into a snapshot and are not listed.
        let compacted: Bool
        let changes: [HistoryEntry]
    }

    struct HistoryEntry: Encodable {
        let replica: String
        let seq: UInt64
        /// Made on this daemon (else it came from a peer).
        let local: Bool
        let time: Int64
        let operations: Int
        let summary: String
        /// The peer id of the identity that signed it (null: unknown).
        let author: String?
    }

    struct SetShare: Decodable {
        let mode: String?
    }

    struct ShareBody: Encodable {
        let project: String
        let peer: String
        /// read-write or read-only (the owner's is read-write).
        let mode: String
        /// The role in the access list: owner, editor or reader.
        let role: String
    }

    struct CopyProject: Decodable {
        let name: String?
        let folder: String?
    }

    struct DocumentBody: Encodable {
        let id: String
        let kind: String
        let name: String?
        let created: Int64
        let deleted: Bool
    }

    func handle(_ request: ControlRequest) async -> ControlResponse {
        do {
            return try await route(request)
        } catch let error as ControlError {
            return error.response
        } catch let error as DocumentError {
            return Self.controlError(for: error).response
        } catch let error as StoreError {
            // A failure of the disk or database, never a missing object: logged with its details.
            logger.error("store failure on \(request.method) /\(request.segments.joined(separator: "/")): \(error)")
            if error.code == .io && error.sqliteCode.map({ $0 & 0xFF == 13 }) == true {
                return ControlError(.insufficientStorage, "the disk is full: \(error.message)").response
            }
            return ControlError(.internal, "the store failed: \(error)").response
        } catch {
            logger.error("failure on \(request.method) /\(request.segments.joined(separator: "/")): \(error)")
            return ControlError(.internal, "\(error)").response
        }
    }

    /// The answer to an edit or share the document refused.
    static func controlError(for error: DocumentError) -> ControlError {
        switch error.code {
        case .notFound: ControlError(.notFound, "refused, nothing applied: \(error.message)")
        case .forbidden: ControlError(error.message.hasPrefix("read-only") ? .readOnly : .forbidden, error.message)
        case .invalidOperation, .conflict: ControlError(.conflict, error.message)
        default: ControlError(.badRequest, "refused, nothing applied: \(error.message)")
        }
    }

    private func route(_ request: ControlRequest) async throws -> ControlResponse {
        guard request.segments.first == "v1" else { throw notFound(request) }
        // Match the path against the route templates: literal segments must be
        // equal, `{}` takes anything (so a folder may be called "restore").
        let path = Array(request.segments.dropFirst())
        // The most specific templates win: `peers/pending` is that list, never a peer called "pending".
        let matching = Self.routes.filter { Self.matches($0.template, path) }
        let specific = matching.map { Self.literalCount($0.template) }.max() ?? 0
        let candidates = matching.filter { Self.literalCount($0.template) == specific }
        guard let route = candidates.first(where: { $0.method == request.method }) else {
            if candidates.isEmpty { throw notFound(request) }
            let allowed = Set(candidates.map { "\($0.method)" }).sorted()
            throw ControlError(
                .methodNotAllowed, "\(request.method) is not allowed on /\(request.segments.joined(separator: "/")) (only \(allowed.joined(separator: ", ")))",
                allowed: allowed)
        }
        let template = route.template
        let parameters = zip(template.split(separator: "/"), path).filter { $0.0 == "{}" }.map(\.1)
        switch (request.method, template) {
        case (.GET, "status"):
            let documents = try await store.documents()
            let sessions = Set(await manager.status().filter(\.isEstablished).map(\.peer.description))
            let connected = sessions.count
            let bytes = await manager.totalBytes
            var sync: [DocumentSync] = []
            let members = try await store.members()
            for record in documents where !record.isDeleted {
                let version = try await store.storedVersion(of: record.id)
                let acknowledged = try await store.acknowledged(record.id)
                let peers = members.filter { $0.document == record.id && $0.peer != identity.peerID }.map { member in
                    let peer = member.peer.description
                    return PeerSync(
                        peer: peer, mode: (ShareMode(role: member.role) ?? .readOnly).rawValue, role: member.role.description,
                        connected: sessions.contains(peer),
                        behind: acknowledged[peer].map { theirs in
                            version.sortedEntries.reduce(0) { $0 + ($1.seq > theirs[$1.replica] ? $1.seq - theirs[$1.replica] : 0) }
                        })
                }
                sync.append(DocumentSync(id: record.id.description, kind: record.kind.description, name: record.name, changes: version.totalChanges, peers: peers))
            }
            return .json(
                StatusBody(
                    peerID: identity.peerID.description, name: name, uptimeSeconds: Int(Date().timeIntervalSince(started)),
                    documents: documents.count, projects: documents.filter { $0.kind == .project && !$0.isDeleted }.count, listenPort: await manager.listeningPort, peersConnected: connected, bytesSent: bytes.sent,
                    bytesReceived: bytes.received, sync: sync))
        case (.GET, "identity"):
            return .json(IdentityBody(peerID: identity.peerID.description, name: name, certificatePEM: identity.certificatePEM))
        case (.GET, "peers"):
            return .json(try await peers().filter { $0.state == "configured" })
        case (.GET, "peers/pending"):
            return .json(try await peers().filter { $0.state == "pending" })
        case (.POST, "peers"):
            let body = try ControlJSON.decode(AddPeer.self, from: request.body)
            let id = try peerID(body.id)
            if let address = body.address, !isHostPort(address) {
                throw ControlError(.badRequest, "address '\(address)' is not HOST:PORT")
            }
            guard id != identity.peerID.description else { throw ControlError(.badRequest, "that is this daemon's own peer id") }
            try await store.addPeer(id, name: body.name, address: body.address, at: millisecondsSinceEpoch())
            return .json(try await peer(id), status: .created)
        case (.POST, "peers/{}/accept"):
            let id = try peerID(parameters[0])
            guard let record = try await store.peers().first(where: { $0.id == id }), record.state == .pending else {
                throw ControlError(.notFound, "no pending peer \(id)")
            }
            // Its source address is an ephemeral port: the address to dial comes with the request, if any.
            let address = request.body.readableBytes > 0 ? try ControlJSON.decode(AcceptPeer.self, from: request.body).address : nil
            if let address, !isHostPort(address) { throw ControlError(.badRequest, "address '\(address)' is not HOST:PORT") }
            try await store.addPeer(id, address: address, at: millisecondsSinceEpoch())
            return .json(try await peer(id))
        case (.DELETE, "peers/{}"):
            let id = try peerID(parameters[0])
            guard try await store.peers().contains(where: { $0.id == id }) else { throw ControlError(.notFound, "no peer \(id)") }
            try await store.removePeer(id)
            return .json(["removed": id])
        case (.GET, "projects"):
            guard [nil, "true", "false"].contains(request.query["deleted"]) else { throw ControlError(.badRequest, "deleted must be true or false") }
            let records = try await store.documents().filter { $0.kind == .project && ($0.isDeleted == false || request.query["deleted"] == "true") }
            return .json(
                records.map {
                    DocumentBody(id: $0.id.description, kind: "project", name: $0.name, created: $0.created, deleted: $0.isDeleted)
                })
        case (.POST, "projects"):
            let body = try ControlJSON.decode(CreateProject.self, from: request.body)
            let name = try projectName(body.name)
            let folder = try LibraryReference.resolve(body.folder ?? "root", in: try await library.view())
            let now = millisecondsSinceEpoch()
            let id = try await store.createDocument(kind: .project, name: name, at: now)
            _ = try await store.editProject(id, at: now) { try $0.set(.title, to: .string(name)) }
            try await library.edit { try $0.createProjectEntry(named: name, document: id, in: folder) }
            try await library.shareWithMembers(id)
            return try await project(id, status: .created)
        case (.POST, "projects/{}/copy"):
            let source = try await existingProject(parameters[0])
            let body = request.body.readableBytes > 0 ? try ControlJSON.decode(CopyProject.self, from: request.body) : CopyProject(name: nil, folder: nil)
            let name = try body.name.map(projectName)
            let folder = try LibraryReference.resolve(body.folder ?? "root", in: try await library.view())
            let id = try await store.copyProject(source, name: name, at: millisecondsSinceEpoch())
            let title = try await store.document(id).name ?? "Untitled"
            try await library.edit { try $0.createProjectEntry(named: title, document: id, in: folder) }
            try await library.shareWithMembers(id)
            return try await project(id, status: .created)
        case (.GET, "projects/{}"):
            return try await project(try documentID(parameters[0]))
        case (.PATCH, "projects/{}"):
            let id = try await existingProject(parameters[0])
            let body = try ControlJSON.decode(CreateProject.self, from: request.body)
            let name = try projectName(body.name)
            // The signed edit first: a read-only project is refused before anything changes.
            _ = try await store.editProject(id, session: Self.defaultSession, at: millisecondsSinceEpoch()) { try $0.set(.title, to: .string(name)) }
            try await store.setName(name, of: id)
            let entries = try await store.library(try await library.id()).entries(for: id)
            if !entries.isEmpty { try await library.edit { editor in for entry in entries { try editor.rename(entry, to: name) } } }
            return try await project(id)
        case (.DELETE, "projects/{}"):
            let id = try await existingProject(parameters[0])
            try await store.setDeleted(true, of: id)
            let entries = try await libraryEntries(of: id, inTrash: false)
            if !entries.isEmpty { try await library.edit { editor in for entry in entries { try editor.delete(entry) } } }
            return try await project(id)
        case (.POST, "projects/{}/restore"):
            let id = try await existingProject(parameters[0])
            try await store.setDeleted(false, of: id)
            let entries = try await libraryEntries(of: id, inTrash: true)
            if !entries.isEmpty { try await library.edit { editor in for entry in entries { try editor.restore(entry) } } }
            return try await project(id)
        case (.GET, "projects/{}/shares"):
            let id = try await existingProject(parameters[0])
            return .json(try await shares(of: id))
        case (.PUT, "projects/{}/shares/{}"):
            return .json(try await share(try await existingProject(parameters[0]), with: parameters[1], request: request))
        case (.DELETE, "projects/{}/shares/{}"):
            return .json(try await unshare(try await existingProject(parameters[0]), from: parameters[1]))
        case (.POST, "projects/{}/edits"):
            let id = try await existingProject(parameters[0])
            guard let body = (try? JSONSerialization.jsonObject(with: Data(request.body.readableBytesView))) as? [String: Any] else {
                throw ControlError(.badRequest, "the body must be a JSON object {\"ops\": [...], \"session\": \"...\"}")
            }
            let operations = try EditOperation.parse(body["ops"])
            let session = try sessionName(body["session"]) ?? Self.defaultSession
            let result = try await store.editProject(id, session: session, at: millisecondsSinceEpoch()) { editor in
                try EditOperation.apply(operations, to: &editor)
            }
            return .json(EditBody(created: result.value.map { $0?.description }, changed: result.change != nil))
        case (.POST, "projects/{}/undo"), (.POST, "projects/{}/redo"):
            let id = try await existingProject(parameters[0])
            let body = request.body.readableBytes > 0 ? (try? JSONSerialization.jsonObject(with: Data(request.body.readableBytesView))) as? [String: Any] : [:]
            guard let body else { throw ControlError(.badRequest, "the body must be a JSON object {\"session\": \"...\"}") }
            let session = try sessionName(body["session"]) ?? Self.defaultSession
            let now = millisecondsSinceEpoch()
            let undo = template.hasSuffix("undo")
            let change = undo ? try await store.undo(id, session: session, at: now) : try await store.redo(id, session: session, at: now)
            return .json([undo ? "undone" : "redone": change != nil])
        case (.GET, "projects/{}/shots/{}/render"):
            let id = try await existingProject(parameters[0])
            guard let shotID = OpID(parameters[1]) else { throw ControlError(.badRequest, "'\(parameters[1])' is not a shot id") }
            var onion = 0
            if let text = request.query["onion"] {
                guard let value = Int(text), (0...10).contains(value) else { throw ControlError(.badRequest, "onion must be 0...10") }
                onion = value
            }
            let view = try await store.project(id).view
            guard let shot = view.shot(shotID) else { throw ControlError(.notFound, "no visible shot \(shotID) in \(id)") }
            return ControlResponse(status: .ok, body: Data(ShotRenderer.svg(of: shot, in: view, onion: onion).utf8), contentType: "image/svg+xml")
        case (.GET, "search"):
            guard let query = request.query["q"], !query.isEmpty else { throw ControlError(.badRequest, "give the text to find as ?q=") }
            var hits: [SearchHitBody] = []
            for record in try await store.documents() where record.kind == .project && !record.isDeleted {
                for hit in try await store.project(record.id).view.search(query) {
                    hits.append(
                        SearchHitBody(
                            project: record.id.description, projectName: record.name, object: hit.path.last?.description,
                            label: hit.label, field: hit.field.description, text: hit.text))
                }
            }
            return .json(hits)
        case (.POST, "backup"):
            let body = try ControlJSON.decode(BackupRequest.self, from: request.body)
            guard body.path.hasPrefix("/") else { throw ControlError(.badRequest, "'path' must be absolute (the daemon's working directory is not yours)") }
            guard !FileManager.default.fileExists(atPath: body.path) else { throw ControlError(.conflict, "\(body.path) already exists") }
            do {
                try await store.backup(to: body.path)
            } catch let error as StoreError {
                try? FileManager.default.removeItem(atPath: body.path)
                if error.code == .io && error.sqliteCode.map({ $0 & 0xFF == 13 }) == true {
                    throw ControlError(.insufficientStorage, "the disk holding \(body.path) is full; nothing was written")
                }
                if error.code == .cannotOpen || error.code == .readOnly {
                    throw ControlError(.badRequest, "the daemon cannot write \(body.path): \(error.message)")
                }
                logger.error("backup to \(body.path) failed: \(error)")
                throw ControlError(.internal, "the backup failed: \(error.message)")
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: body.path)[.size] as? Int) ?? 0
            return .json(BackupBody(path: body.path, bytes: size))
        case (.GET, "metrics"):
            return ControlResponse(status: .ok, body: Data(try await metrics().utf8), contentType: "text/plain; version=0.0.4")
        case (.POST, "peers/{}/pause"), (.POST, "peers/{}/resume"):
            let id = try peerID(parameters[0])
            guard try await store.peers().contains(where: { $0.id == id && $0.state == .configured }), let peer = PeerID(id) else {
                throw ControlError(.notFound, "no configured peer \(id)")
            }
            if template.hasSuffix("pause") { try await manager.pause(peer) } else { try await manager.resume(peer) }
            return .json(try await self.peer(id))
        case (.GET, "projects/{}/history"):
            let id = try await existingProject(parameters[0])
            var limit = 100
            if let text = request.query["limit"] {
                guard let value = Int(text), (1...10_000).contains(value) else { throw ControlError(.badRequest, "limit must be 1...10000") }
                limit = value
            }
            let (changes, compacted) = try await store.history(of: id, limit: limit)
            let doc = try await store.project(id)
            return .json(
                HistoryBody(
                    project: id.description, compacted: compacted,
                    changes: changes.map {
                        // "This machine" is whoever signed it, not the replica id a change claims.
                        let author = doc.author(of: $0.replica)
                        return HistoryEntry(
                            replica: $0.replica.description, seq: $0.seq, local: author == identity.peerID, time: $0.wallTime,
                            operations: $0.operations.count, summary: ChangeSummary.describe($0, in: doc), author: author?.description)
                    }))
        case (.GET, "library"):
            return .json(try await libraryBody())
        case (.GET, "library/shares"):
            return .json(try await shares(of: try await library.id()))
        case (.PUT, "library/shares/{}"):
            let peer = try await configuredPeer(parameters[0])
            let mode = try shareMode(request)
            try await library.share(with: peer, role: mode.role)
            return .json(ShareBody(project: try await library.id().description, peer: peer.description, mode: mode.rawValue, role: mode.role.description))
        case (.DELETE, "library/shares/{}"):
            let peer = try peerID(parameters[0])
            guard try await store.members(of: try await library.id()).contains(where: { $0.peer.description == peer }), let id = PeerID(peer) else {
                throw ControlError(.notFound, "the library is not shared with \(peer)")
            }
            try await library.unshare(from: id)
            return .json(["unshared": peer])
        case (.POST, "library/folders"):
            let body = try ControlJSON.decode(CreateFolder.self, from: request.body)
            let name = try nodeName(body.name)
            let parent = try LibraryReference.resolve(body.parent ?? "root", in: try await library.view())
            let index = body.index
            let id = try await library.edit { try $0.createFolder(named: name, in: parent, at: index) }
            return .json(try await node(id), status: .created)
        case (.GET, "library/nodes/{}"):
            return .json(try await node(try LibraryReference.resolve(parameters[0], in: try await library.view())))
        case (.PATCH, "library/nodes/{}"):
            let id = try LibraryReference.resolve(parameters[0], in: try await library.view())
            let body = try ControlJSON.decode(UpdateNode.self, from: request.body)
            guard body.name != nil || body.description != nil else { throw ControlError(.badRequest, "give 'name' and/or 'description'") }
            let name = try body.name.map(nodeName)
            guard (body.description?.utf8.count ?? 0) <= 10_000 else { throw ControlError(.badRequest, "description is over 10000 bytes") }
            let description = body.description
            try await library.edit { editor in
                if let name { try editor.rename(id, to: name) }
                if let description { try editor.describe(id, as: description) }
            }
            return .json(try await node(id))
        case (.POST, "library/nodes/{}/move"):
            let view = try await library.view()
            let body = try ControlJSON.decode(MoveNode.self, from: request.body)
            if let project = DocumentID(parameters[0].trimmingCharacters(in: .whitespaces)),
                try await library.incoming().contains(where: { $0.id == project })
            {
                // Filing a project from the virtual Incoming gives it an entry.
                guard let folderText = body.folder else { throw ControlError(.badRequest, "give 'folder' to file the project in") }
                let folder = try LibraryReference.resolve(folderText, in: view)
                if let index = body.index, index < 0 { throw ControlError(.badRequest, "index must be 0 or more") }
                try await library.shareWithMembers(project)
                let name = try await store.document(project).name ?? "Untitled"
                let index = body.index
                let entry = try await library.edit { try $0.createProjectEntry(named: name, document: project, in: folder, at: index) }
                return .json(try await node(entry))
            }
            let id = try LibraryReference.resolve(parameters[0], in: view)
            let index = body.index
            if let index, index < 0 { throw ControlError(.badRequest, "index must be 0 or more") }
            if let folderText = body.folder {
                let folder = try LibraryReference.resolve(folderText, in: view)
                try await library.edit { try $0.move(id, to: folder, at: index) }
            } else {
                guard let index else { throw ControlError(.badRequest, "give 'folder' to move into, or 'index' to reorder") }
                try await library.edit { try $0.reorder(id, to: index) }
            }
            return .json(try await node(id))
        case (.DELETE, "library/nodes/{}"):
            let id = try LibraryReference.resolve(parameters[0], in: try await library.view())
            try await library.edit { try $0.delete(id) }
            return .json(try await node(id))
        case (.POST, "library/nodes/{}/restore"):
            let id = try LibraryReference.resolve(parameters[0], in: try await library.view(), inTrash: true)
            try await library.edit { try $0.restore(id) }
            return .json(try await node(id))
        case (.GET, "events"):
            var project: DocumentID?
            if let text = request.query["project"] { project = try await existingProject(text) }
            let sse = request.query["format"] == "sse" || (request.accept?.contains("text/event-stream") ?? false)
            let stream = await EventStream.make(store: store, manager: manager, library: try await library.id(), project: project, sse: sse)
            return .streaming(stream, contentType: sse ? "text/event-stream" : "application/x-ndjson")
        default:
            throw notFound(request)
        }
    }

    /// The undo session of edits that name none.
    static let defaultSession = "default"

    /// Every route: method and path template below `/v1` (the documentation test reads this).
    static let routes: [(method: HTTPMethod, template: String)] = [
        (.GET, "status"), (.GET, "identity"), (.GET, "peers"), (.POST, "peers"), (.DELETE, "peers/{}"),
        (.GET, "peers/pending"), (.POST, "peers/{}/accept"), (.GET, "projects"), (.POST, "projects"), (.GET, "projects/{}"),
        (.PATCH, "projects/{}"), (.DELETE, "projects/{}"), (.POST, "projects/{}/restore"), (.POST, "projects/{}/copy"), (.GET, "projects/{}/shares"), (.PUT, "projects/{}/shares/{}"),
        (.DELETE, "projects/{}/shares/{}"), (.POST, "projects/{}/edits"), (.POST, "projects/{}/undo"), (.POST, "projects/{}/redo"),
        (.GET, "projects/{}/shots/{}/render"), (.GET, "search"), (.POST, "backup"), (.GET, "metrics"),
        (.POST, "peers/{}/pause"), (.POST, "peers/{}/resume"), (.GET, "projects/{}/history"),
        (.GET, "library"), (.POST, "library/folders"), (.GET, "library/nodes/{}"), (.PATCH, "library/nodes/{}"),
        (.POST, "library/nodes/{}/move"), (.DELETE, "library/nodes/{}"), (.POST, "library/nodes/{}/restore"),
        (.GET, "events"), (.GET, "library/shares"), (.PUT, "library/shares/{}"), (.DELETE, "library/shares/{}"),
    ]

    static func matches(_ template: String, _ path: [String]) -> Bool {
        let parts = template.split(separator: "/")
        return parts.count == path.count && zip(parts, path).allSatisfy { $0 == "{}" || $0 == $1 }
    }

    static func literalCount(_ template: String) -> Int { template.split(separator: "/").filter { $0 != "{}" }.count }

    private func notFound(_ request: ControlRequest) -> ControlError {
        ControlError(.notFound, "no route \(request.method) /\(request.segments.joined(separator: "/"))")
    }

    private func peerID(_ text: String) throws(ControlError) -> String {
        guard let id = PeerID(text) else {
            throw ControlError(.badRequest, "'\(text)' is not a peer id (8 groups of 7 characters, with check characters)")
        }
        return id.description
    }

    /// An undo session name: 1 to 64 bytes (edits with the same session undo together).
    private func sessionName(_ value: Any?) throws(ControlError) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        guard let text = value as? String, !text.isEmpty, text.utf8.count <= 64 else {
            throw ControlError(.badRequest, "'session' must be a string of 1 to 64 bytes")
        }
        return text
    }

    /// Prometheus text exposition of the daemon's gauges and counters.
    private func metrics() async throws -> String {
        let documents = try await store.documents()
        let peers = try await store.peers()
        let sessions = await manager.status()
        let bytes = await manager.totalBytes
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for (labels, value) in samples { lines.append("\(name)\(labels) \(value)") }
        }
        metric("storyteller_documents", "gauge", "Documents in the store.", [
            ("{kind=\"project\"}", documents.filter { $0.kind == .project && !$0.isDeleted }.count),
            ("{kind=\"library\"}", documents.filter { $0.kind == .library }.count),
        ])
        metric("storyteller_stored_changes", "gauge", "Changes in the change log (not yet compacted).", [("", documents.reduce(0) { $0 + $1.changeCount })])
        metric("storyteller_peers", "gauge", "Peers by state.", [
            ("{state=\"configured\"}", peers.filter { $0.state == .configured }.count),
            ("{state=\"pending\"}", peers.filter { $0.state == .pending }.count),
        ])
        metric("storyteller_peers_connected", "gauge", "Peers with an established session.", [("", sessions.filter(\.isEstablished).count)])
        metric("storyteller_sync_sent_bytes_total", "counter", "Bytes of sync frames sent (below TLS).", [("", bytes.sent)])
        metric("storyteller_sync_received_bytes_total", "counter", "Bytes of sync frames received (below TLS).", [("", bytes.received)])
        metric("storyteller_uptime_seconds", "gauge", "Seconds since the daemon started.", [("", Int(Date().timeIntervalSince(started)))])
        return lines.joined(separator: "\n") + "\n"
    }

    /// Shares a project with a configured peer; the mode from the body.
    private func share(_ id: DocumentID, with peerText: String, request: ControlRequest) async throws -> ShareBody {
        let peer = try await configuredPeer(peerText)
        let mode = try shareMode(request)
        try await store.share(id, with: peer, role: mode.role, at: millisecondsSinceEpoch())
        return ShareBody(project: id.description, peer: peer.description, mode: mode.rawValue, role: mode.role.description)
    }

    /// Takes a peer's rights to a project away (for good, until someone entitled shares it again).
    private func unshare(_ id: DocumentID, from peerText: String) async throws -> [String: String] {
        let peer = try peerID(peerText)
        guard let member = try await store.members(of: id).first(where: { $0.peer.description == peer }) else {
            throw ControlError(.notFound, "\(id) is not shared with \(peer)")
        }
        guard member.role != .owner else { throw ControlError(.forbidden, "\(peer) owns \(id); an owner's rights cannot be taken") }
        try await store.share(id, with: member.peer, role: .none, at: millisecondsSinceEpoch())
        return ["unshared": peer]
    }

    /// The members of a document other than this daemon.
    private func shares(of id: DocumentID) async throws -> [ShareBody] {
        try await store.members(of: id).filter { $0.peer != identity.peerID }.map {
            ShareBody(
                project: id.description, peer: $0.peer.description, mode: (ShareMode(role: $0.role) ?? .readOnly).rawValue,
                role: $0.role.description)
        }
    }

    private func shareMode(_ request: ControlRequest) throws(ControlError) -> ShareMode {
        let text = request.body.readableBytes > 0 ? try ControlJSON.decode(SetShare.self, from: request.body).mode : nil
        guard let mode = ShareMode(rawValue: text ?? ShareMode.readWrite.rawValue) else {
            throw ControlError(.badRequest, "mode '\(text ?? "")' is not read-write or read-only")
        }
        return mode
    }

    private func configuredPeer(_ text: String) async throws -> PeerID {
        let peer = try peerID(text)
        guard try await store.peers().contains(where: { $0.id == peer && $0.state == .configured }), let id = PeerID(peer) else {
            throw ControlError(.notFound, "no configured peer \(peer): add it first")
        }
        return id
    }

    /// The library as shown: this daemon's tree with the virtual Incoming,
    /// and the libraries peers share with it.
    private func libraryBody() async throws -> LibraryBody {
        let documents = Set(try await store.documents().map(\.id))
        var nodes = try await library.view().nodes.map { LibraryNodeBody($0, documents: documents) }
        let incoming = try await library.incoming().map { LibraryNodeBody(incoming: $0) }
        if !incoming.isEmpty {
            let trashStart = nodes.firstIndex { $0.inTrash } ?? nodes.endIndex
            var insertion = trashStart
            if let folder = nodes.firstIndex(where: { $0.id == "incoming" }) {
                insertion = folder + 1
                while insertion < trashStart && nodes[insertion].depth > nodes[folder].depth { insertion += 1 }
            } else {
                nodes.insert(.incomingFolder, at: insertion)
                insertion += 1
            }
            nodes.insert(contentsOf: incoming, at: insertion)
        }
        var shared: [SharedLibraryBody] = []
        for record in try await library.sharedLibraries() {
            let document = try await store.library(record.id)
            shared.append(
                SharedLibraryBody(
                    id: record.id.description, owner: document.owner?.description, role: document.localRole.description,
                    nodes: document.view.nodes.map { LibraryNodeBody($0, documents: documents) }))
        }
        return LibraryBody(id: try await library.id().description, nodes: nodes, shared: shared)
    }

    /// A folder name: 1 to 200 bytes, no `/` (paths use it), no control characters.
    private func nodeName(_ text: String) throws(ControlError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.utf8.count <= 200, !name.contains("/"), !Self.hasControlCharacters(name) else {
            throw ControlError(.badRequest, "a name must be 1 to 200 bytes without '/' or control characters")
        }
        return name
    }

    /// A project name: 1 to 200 bytes, no control characters (a NUL would
    /// cut it short in other programs, a newline break listings).
    private func projectName(_ text: String) throws(ControlError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.utf8.count <= 200 else { throw ControlError(.badRequest, "name must be 1 to 200 bytes") }
        guard !Self.hasControlCharacters(name) else {
            throw ControlError(.badRequest, "name must not contain control characters (such as NUL or a line break)")
        }
        return name
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private func node(_ id: OpID) async throws -> LibraryNodeBody {
        guard let node = try await library.view().node(id) else { throw ControlError(.notFound, "no library node \(id)") }
        return LibraryNodeBody(node, documents: Set(try await store.documents().map(\.id)))
    }

    /// The library entries of a project, in the library or in its trash.
    private func libraryEntries(of project: DocumentID, inTrash: Bool) async throws -> [OpID] {
        let view = try await library.view()
        return view.nodes.filter { $0.document == project && $0.isInTrash == inTrash && !(inTrash && $0.parent != .trash) }.map(\.id)
    }

    private func documentID(_ text: String) throws(ControlError) -> DocumentID {
        guard let id = DocumentID(text) else { throw ControlError(.badRequest, "'\(text)' is not a document id") }
        return id
    }

    /// A project id that names a stored project.
    private func existingProject(_ text: String) async throws -> DocumentID {
        try await projectRecord(try documentID(text)).id
    }

    /// The project as an answer, streamed (bounded memory for any size).
    private func project(_ id: DocumentID, status: HTTPResponseStatus = .ok) async throws -> ControlResponse {
        let record = try await projectRecord(id)
        let stream = try ProjectJSONStream(record: record, document: try await store.project(id))
        var response = ControlResponse.streaming(stream.stream, contentType: "application/json")
        response.status = status
        return response
    }

    /// The record of a stored project; a store failure is a 5xx, only a missing project a 404.
    private func projectRecord(_ id: DocumentID) async throws -> DocumentRecord {
        do {
            let record = try await store.document(id)
            guard record.kind == .project else { throw ControlError(.notFound, "no project \(id)") }
            return record
        } catch let error as StoreError where error.code == .notFound {
            throw ControlError(.notFound, "no project \(id)")
        }
    }

    private func peers() async throws -> [PeerBody] {
        let connected = Set(await manager.status().filter(\.isEstablished).map(\.peer.description))
        let paused = Set(await manager.paused.map(\.description))
        return try await store.peers().map {
            PeerBody(
                id: $0.id, name: $0.name, address: $0.address, state: $0.state.rawValue, connected: connected.contains($0.id),
                paused: paused.contains($0.id),
                added: $0.added, lastSeen: $0.lastSeen, lastAddress: $0.lastAddress)
        }
    }

    private func peer(_ id: String) async throws -> PeerBody {
        guard let found = try await peers().first(where: { $0.id == id }) else { throw ControlError(.notFound, "no peer \(id)") }
        return found
    }

    private func isHostPort(_ text: String) -> Bool { (try? ListenAddress(text)).map { $0.port > 0 } ?? false }
}
