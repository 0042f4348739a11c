import Dispatch
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// `status`, `version`, `identity`, `search` and `backup`.
struct SystemController: Sendable {
    let store: Store
    let identity: Identity
    let manager: PeerManager
    let library: LibraryService
    let trash: ProjectTrash
    let name: String
    let temporaryDirectory: String
    let logger: Logger
    let started: ContinuousClock.Instant

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("status") { _, _ in .json(try await status()) }
        routes.get("version") { _, _ in .json(API.VersionInfo()) }
        routes.get("identity") { _, _ in
            .json(API.Identity(peerID: identity.peerID.description, name: name, certificatePEM: identity.certificatePEM))
        }
        routes.get("search") { request, _ in
            guard let query = try request.decodeQuery(API.SearchQuery.self).q, !query.isEmpty else {
                throw APIError(.badRequest, "give the text to find as ?q=")
            }
            return .json(try await search(query))
        }
        routes.get("backup") { _, _ in try await backup() }
    }

    func status() async throws -> API.Status {
        let states = try await store.syncStates()
        let established = await manager.status().filter(\.isEstablished)
        let sessions = Set(established.map(\.peer))
        var advertised: [PeerID: [DocumentID: VersionVector]] = [:]
        for session in established { advertised[session.peer] = session.peerVersions }
        let bytes = await manager.totalBytes
        let conflicts = try await store.openConflicts()
        var members: [DocumentID: [MemberRecord]] = [:]
        for member in try await store.members() where member.peer != identity.peerID { members[member.document, default: []].append(member) }
        var sync: [API.DocumentSync] = []
        // Projects in the trash are listed too: they still sync (a restore made anywhere must arrive).
        // A document only hidden here that is not a project (a library an upgrade put aside) is not.
        for (record, version, acknowledged) in states where (!record.isDeleted || record.kind == .project) && !record.isAwaitingFounding {
            let peers = (members[record.id] ?? []).map { member in
                API.PeerSync(
                    peer: member.peer.description, mode: (ShareMode(role: member.role) ?? .readOnly).rawValue, role: member.role.description,
                    connected: sessions.contains(member.peer),
                    behind: acknowledged[member.peer].map { theirs in
                        version.sortedEntries.reduce(0) { $0 + ($1.seq > theirs[$1.replica] ? $1.seq - theirs[$1.replica] : 0) }
                    },
                    ahead: advertised[member.peer]?[record.id].map { theirs in
                        theirs.sortedEntries.reduce(0) { $0 + ($1.seq > version[$1.replica] ? $1.seq - version[$1.replica] : 0) }
                    })
            }
            sync.append(
                API.DocumentSync(
                    id: record.id.description, kind: record.kind.description, name: record.name, changes: version.totalChanges,
                    deleted: record.isDeleted ? true : nil, peers: peers))
        }
        return API.Status(
            peerID: identity.peerID.description, name: name, uptimeSeconds: ControlAPI.seconds(since: started),
            documents: states.filter { !$0.record.isAwaitingFounding }.count,
            projects: states.filter { $0.record.kind == .project && !$0.record.isDeleted && !$0.record.isAwaitingFounding }.count,
            listenPort: await manager.listeningPort,
            peersConnected: sessions.count, bytesSent: bytes.sent, bytesReceived: bytes.received, sync: sync,
            conflicts: conflicts.fields, conflictedProjects: conflicts.projects)
    }

    func search(_ query: String) async throws -> [API.SearchHit] {
        var hits: [API.SearchHit] = []
        let needle = query.lowercased()
        for record in try await store.foundedDocuments() where record.kind == .project && !record.isDeleted {
            let document = try await store.project(record.id)
            let view = document.view
            for hit in view.search(query) {
                hits.append(
                    API.SearchHit(
                        project: record.id.description, projectName: record.name, object: hit.path.last?.description, label: hit.label,
                        field: hit.fieldName, text: hit.text))
            }
            // What a concurrent edit overwrote is found too, marked as such:
            // nothing anybody wrote vanishes from search.
            let conflicts = document.fieldConflicts
            guard !needle.isEmpty, !conflicts.isEmpty else { continue }
            let references = FieldReferences(view)
            for conflict in conflicts {
                guard let target = references.target(of: conflict.object) else { continue }
                for overwritten in conflict.overwritten {
                    guard let text = overwritten.value.string, text.lowercased().contains(needle) else { continue }
                    hits.append(
                        API.SearchHit(
                            project: record.id.description, projectName: record.name, object: target.path.last?.description,
                            label: target.label, field: conflict.key.description, text: text, overwritten: true,
                            reference: references.text(of: conflict.object, key: conflict.key)))
                }
            }
        }
        return hits
    }

    /// A consistent copy of the database, made while edits and sync go on,
    /// streamed to the client (which writes the file as its own user, where
    /// it likes: the daemon under the hardened unit can write neither the
    /// caller's home nor the real /tmp).
    ///
    /// The copy is made first, with SQLite's online backup, into the daemon's
    /// scratch directory in the state directory (so a full disk is a 507
    /// before any byte is sent), opened, and unlinked at once: the open file
    /// is all that is left of it, freed when the answer is sent, the client
    /// leaves or the daemon stops, whatever happens. Its size is the
    /// answer's Content-Length.
    func backup() async throws -> Response {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            logger.error("cannot make \(temporaryDirectory) for a backup: \(error)")
            throw APIError(.storeFailure, "the backup failed: cannot use the daemon's scratch directory \(temporaryDirectory)")
        }
        let path = temporaryDirectory + "/backup-\(UUID().uuidString).sqlite"
        do {
            try await store.backup(to: path)
        } catch let error as StoreError {
            try? manager.removeItem(atPath: path)
            if error.isDiskFull {
                throw APIError(
                    .insufficientStorage,
                    "the disk holding the daemon's state (\(temporaryDirectory)) has no room for a copy of the database; nothing was sent")
            }
            logger.error("backup failed: \(error)")
            throw APIError(.storeFailure, "the backup failed: \(error.message)")
        }
        let file = OpenBackup(path: path)
        unlink(path)
        guard let file else { throw APIError(.storeFailure, "the backup failed: cannot open the copy \(path)") }
        return Response(
            status: .ok,
            headers: [.contentType: "application/octet-stream", .contentDisposition: "attachment; filename=\"storyteller-backup.sqlite\""],
            body: ResponseBody(contentLength: file.size) { writer in
                var offset = 0
                while offset < file.size {
                    let start = offset
                    let chunk = try await NIOThreadPool.singleton.runIfActive { try file.read(at: start, count: OpenBackup.chunkBytes) }
                    guard chunk.readableBytes > 0 else { throw APIError(.storeFailure, "the backup copy ended early") }
                    offset += chunk.readableBytes
                    try await writer.write(chunk)
                }
                try await writer.finish(nil)
            })
    }
}

/// A backup copy being sent: an open file whose name is already gone,
/// closed (and so freed) when the last reference to it goes.
final class OpenBackup: Sendable {
    /// Bytes read and sent at a time.
    static let chunkBytes = 256 << 10

    let descriptor: Int32
    let size: Int

    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes at `offset` (blocking: run it off the event loops).
    func read(at offset: Int, count: Int) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            max(0, pread(descriptor, raw.baseAddress, count, off_t(offset)))
        }
        guard read > 0 || count == 0 else {
            throw APIError(.storeFailure, "cannot read the backup copy: \(String(cString: strerror(errno)))")
        }
        return buffer
    }
}
