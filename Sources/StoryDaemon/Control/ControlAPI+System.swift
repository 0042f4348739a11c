import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryStore

/// `status`, `version`, `identity`, `search` and `backup`.
extension ControlAPI {
    func addSystemRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("status") { _, _ in .json(try await status()) }
        routes.get("version") { _, _ in .json(API.VersionInfo()) }
        routes.get("identity") { _, _ in
            .json(API.Identity(peerID: identity.peerID.description, name: name, certificatePEM: identity.certificatePEM))
        }
        routes.get("search") { request, _ in
            guard let query = request.query["q"], !query.isEmpty else { throw APIError(.badRequest, "give the text to find as ?q=") }
            return .json(try await search(query))
        }
        routes.post("backup") { request, context in
            .json(try await backup(try await request.decode(API.BackupRequest.self, context: context)))
        }
    }

    func status() async throws -> API.Status {
        let documents = try await store.documents()
        let sessions = Set(await manager.status().filter(\.isEstablished).map(\.peer))
        let bytes = await manager.totalBytes
        var sync: [API.DocumentSync] = []
        let members = try await store.members()
        for record in documents where !record.isDeleted {
            let version = try await store.storedVersion(of: record.id)
            let acknowledged = try await store.acknowledged(record.id)
            let peers = members.filter { $0.document == record.id && $0.peer != identity.peerID }.map { member in
                API.PeerSync(
                    peer: member.peer.description, mode: (ShareMode(role: member.role) ?? .readOnly).rawValue, role: member.role.description,
                    connected: sessions.contains(member.peer),
                    behind: acknowledged[member.peer].map { theirs in
                        version.sortedEntries.reduce(0) { $0 + ($1.seq > theirs[$1.replica] ? $1.seq - theirs[$1.replica] : 0) }
                    })
            }
            sync.append(
                API.DocumentSync(id: record.id.description, kind: record.kind.description, name: record.name, changes: version.totalChanges, peers: peers))
        }
        return API.Status(
            peerID: identity.peerID.description, name: name, uptimeSeconds: uptimeSeconds, documents: documents.count,
            projects: documents.filter { $0.kind == .project && !$0.isDeleted }.count, listenPort: await manager.listeningPort,
            peersConnected: sessions.count, bytesSent: bytes.sent, bytesReceived: bytes.received, sync: sync)
    }

    func search(_ query: String) async throws -> [API.SearchHit] {
        var hits: [API.SearchHit] = []
        for record in try await store.documents() where record.kind == .project && !record.isDeleted {
            for hit in try await store.project(record.id).view.search(query) {
                hits.append(
                    API.SearchHit(
                        project: record.id.description, projectName: record.name, object: hit.path.last?.description, label: hit.label,
                        field: hit.field.description, text: hit.text))
            }
        }
        return hits
    }

    /// A consistent copy of the database, made while edits and sync go on.
    func backup(_ request: API.BackupRequest) async throws -> API.Backup {
        let path = request.path
        guard path.hasPrefix("/") else { throw APIError(.badRequest, "'path' must be absolute (the daemon's working directory is not yours)") }
        guard !FileManager.default.fileExists(atPath: path) else { throw APIError(.conflict, "\(path) already exists") }
        do {
            try await store.backup(to: path)
        } catch let error as StoreError {
            try? FileManager.default.removeItem(atPath: path)
            if error.isDiskFull { throw APIError(.insufficientStorage, "the disk holding \(path) is full; nothing was written") }
            if error.code == .cannotOpen || error.code == .readOnly {
                throw APIError(.badRequest, "the daemon cannot write \(path): \(error.message)")
            }
            logger.error("backup to \(path) failed: \(error)")
            throw APIError(.storeFailure, "the backup failed: \(error.message)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return API.Backup(path: path, bytes: size)
    }
}
