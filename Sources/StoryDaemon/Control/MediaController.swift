import Foundation
import Hummingbird
import Logging
import NIOCore
import StoryAPI
import StoryCore
import StoryMedia
import StoryStore
import StorySync

/// Images and sounds: `projects/{id}/shots/{shot}/images`,
/// `projects/{id}/shots/{shot}/sound`, `projects/{id}/media[/{blob}]`,
/// `media/transfers` and `media/sounds`. Uploads are streamed request bodies (any size up to
/// `blob-max-bytes`, never held whole in memory), checked from their bytes
/// before anything is stored.
struct MediaController: Sendable {
    let lookup: ResourceLookup
    let edits: EditService
    let store: Store
    let manager: PeerManager
    let name: String
    let blobs: BlobStore
    let acceptedMediaTypes: Set<StoryCore.MediaType>
    let logger: Logger
    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.post("projects/:project/shots/:shot/images") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let shot = try lookup.objectID(try context.parameter("shot"), "shot")
            let query = try request.decodeQuery(API.ImageUploadQuery.self)
            let fit = query.fit ?? "contain"
            guard FieldKey.fitModes.contains(fit) else {
                throw APIError.badField("fit", "is '\(fit)'; it takes \(FieldKey.fitModes.joined(separator: ", "))")
            }
            let name = try query.name.map { try layerName($0) }
            let session = try sessionName(query.session)
            try await checkWritable(id, shot: shot)
            // Where among the shot's layers (0 = bottom): under a layer (`below`), at a position (`at`), else on top.
            var position: Int?
            if let at = query.at {
                guard at >= 0 else { throw APIError.badField("at", "is '\(at)'; it takes a position, 0 for the bottom") }
                position = at
            }
            if let text = query.below {
                let layer = try lookup.objectID(text, "layer")
                guard let index = try await store.project(id).view.shot(shot)?.layers.firstIndex(where: { $0.id == layer }) else {
                    throw APIError(.notFound, "shot \(shot) has no layer \(layer) to go below")
                }
                position = index
            }
            let media = try await receiveMedia(request, wanting: .image)
            let result = try await edits.edit(
                id,
                API.EditRequest(
                    ops: [
                        .addLayer(shot: .id(shot), at: position, name: name ?? "Image"), .set(.created(0), .image, .media(media)),
                        .set(.created(0), .fit, .string(fit)),
                    ],
                    session: session))
            await manager.blobExchange?.announce(media.hash)
            guard let text = result.created.first.flatMap({ $0 }), let layer = OpID(text) else {
                throw APIError(.internal, "the image layer was not created")
            }
            return try await layerAnswer(layer, shot: shot, in: id, status: .created)
        }
        routes.put("projects/:project/shots/:shot/sound") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let shot = try lookup.objectID(try context.parameter("shot"), "shot")
            let query = try request.decodeQuery(API.SoundUploadQuery.self)
            var offset = 0.0
            if let text = query.offset {
                // Decimal seconds only ("0x10" would parse as sixteen).
                guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(text), value.isFinite,
                    (0...86_400).contains(value)
                else {
                    throw APIError.badField("offset", "is '\(text)'; it takes seconds from 0 to 86400")
                }
                offset = value
            }
            let session = try sessionName(query.session)
            try await checkWritable(id, shot: shot)
            var media = try await receiveMedia(request, wanting: .sound)
            media.offset = offset
            _ = try await edits.edit(id, API.EditRequest(ops: [.set(.id(shot), .sound, .media(media))], session: session))
            await manager.blobExchange?.announce(media.hash)
            return .json(API.Media(media, state: "complete"))
        }
        routes.delete("projects/:project/shots/:shot/sound") { request, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let shot = try lookup.objectID(try context.parameter("shot"), "shot")
            let session = try sessionName(try request.decodeQuery(API.SessionQuery.self).session)
            // Clearing what is not there changes nothing (and says so).
            guard try await store.project(id).field(.sound, of: shot) != .null else {
                try await checkWritable(id, shot: shot)
                return .json(API.EditResult(created: [nil], changed: false))
            }
            let result = try await edits.edit(id, API.EditRequest(ops: [.set(.id(shot), .sound, .null)], session: session))
            return .json(result)
        }
        routes.get("projects/:project/media") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            return .json(try await mediaEntries(of: id))
        }
        routes.get("projects/:project/media/:blob") { _, context in
            let id = try await lookup.existingProject(try context.parameter("project"))
            let text = try context.parameter("blob")
            guard let hash = BlobHash(hex: text) else { throw APIError(.badRequest, "'\(text)' is not a SHA-256 (64 hex digits)") }
            guard let reference = try await store.blobReferences(of: id).first(where: { $0.hash == hash }) else {
                throw APIError(.notFound, "project \(id) references no blob \(hash)")
            }
            if let reason = await media.leftOut([reference], of: id)[hash] {
                throw APIError(.notFound, "blob \(hash) of project \(id): \(reason) (see `storyteller media status`)")
            }
            guard let record = await blobs.record(hash) else { throw APIError(.notFound, "blob \(hash) is not on this machine yet") }
            return try Self.fileResponse(blobs.completePath(hash), bytes: record.byteCount, contentType: record.type.mimeType)
        }
        routes.get("media/transfers") { _, _ in
            .json(try await mediaStatus())
        }
        // A sound kept in the blob store without a shot (an animatic's soundtrack): nothing
        // references it, so garbage collection removes it after `blob-gc-grace-days`.
        routes.post("media/sounds") { request, _ in
            .json(API.Media(try await receiveMedia(request, wanting: .sound), state: "complete"), status: .created)
        }
    }

    /// A layer name given in a query: at most 200 bytes, no control characters.
    func layerName(_ text: String) throws(APIError) -> String {
        guard !text.isEmpty, text.utf8.count <= 200, !ControlAPI.hasControlCharacters(text) else {
            throw APIError.badField("name", "must be 1 to 200 bytes without control characters")
        }
        return text
    }

    /// An undo session given in a query: 1 to 64 bytes, as in an edit's body.
    func sessionName(_ text: String?) throws(APIError) -> String? {
        guard let text else { return nil }
        guard !text.isEmpty, text.utf8.count <= 64 else { throw APIError.badField("session", "must be 1 to 64 bytes") }
        return text
    }

    enum MediaKind { case image, sound }

    /// A reader's upload, or one to a shot the project does not show, is
    /// refused before a byte of it is stored.
    func checkWritable(_ id: DocumentID, shot: OpID) async throws {
        let document = try await store.project(id)
        guard document.kind(of: shot) == .shot, document.isVisible(shot) else {
            throw APIError(.notFound, "refused, nothing applied: project \(id) shows no shot \(shot)")
        }
        guard document.localRole.canWrite else {
            throw APIError(.readOnly, "read-only: this project was shared with this machine to look at, not to change; media cannot be added")
        }
    }

    /// Streams the request body into the blob store, checks what it is from
    /// its bytes, and keeps it only if it is the kind wanted: the reference
    /// to put in the document. Anything refused leaves nothing behind.
    func receiveMedia(_ request: Request, wanting kind: MediaKind) async throws -> MediaReference {
        // A file announced larger than the limit is refused before a byte of it is read.
        let limit = blobs.options.maximumBlobBytes
        if let length = request.headers[.contentLength].flatMap({ UInt64($0) }), length > limit {
            throw APIError(
                .tooLarge, "the file is \(Self.bytesText(length)), over the limit of \(Self.bytesText(limit)) (blob-max-bytes); nothing was stored")
        }
        let upload = try blobs.beginUpload()
        var refusal: (any Error)?
        do {
            for try await chunk in request.body {
                // Over the limit, the rest is read and dropped: the client, still
                // sending, gets the answer instead of a reset connection.
                guard refusal == nil else { continue }
                do { try chunk.withUnsafeReadableBytes { try upload.write($0) } } catch { refusal = error }
            }
        } catch {
            upload.discard()
            logger.notice("an upload ended before its last byte: \(error)")
            throw APIError(.badRequest, "the upload ended before its last byte; nothing was stored")
        }
        if let refusal {
            upload.discard()
            throw refusal
        }
        let hash: BlobHash
        let size: UInt64
        do {
            (hash, size) = try upload.finish()
        } catch {
            upload.discard()
            throw error
        }
        guard size > 0 else {
            upload.discard()
            throw APIError(.badRequest, "the upload is empty; send the file's bytes as the request body")
        }
        let info: MediaInfo
        do {
            let source = try FileMediaSource(path: upload.temporaryPath)
            info = try MediaProbe.probe(source)
        } catch {
            upload.discard()
            logger.notice("refused an upload: \(error.message)")
            throw APIError(.unsupportedMedia, error.message)
        }
        guard acceptedMediaTypes.contains(info.type) else {
            upload.discard()
            let accepted = MediaType.allCases.filter { acceptedMediaTypes.contains($0) }.map(\.fileExtension).joined(separator: ", ")
            throw APIError(.unsupportedMedia, "the file is a \(info.type), which this daemon does not take (media-types: \(accepted))")
        }
        let isWanted = kind == .image ? info.type.isImage : info.type.isSound
        guard isWanted else {
            upload.discard()
            let wanted = kind == .image ? "an image (PNG, JPEG or WebP)" : "a sound (WAV, MP3, M4A, Ogg or FLAC)"
            throw APIError(.unsupportedMedia, "the file is a \(info.type), not \(wanted)")
        }
        _ = try await blobs.commit(upload, type: info.type)
        return MediaReference(
            hash: hash, type: info.type, byteCount: size, pixelWidth: info.pixelWidth, pixelHeight: info.pixelHeight,
            duration: info.type.isSound ? info.duration : 0)
    }

    /// A layer of a shot as `projects show` shows it.
    func layerAnswer(_ layer: OpID, shot: OpID, in id: DocumentID, status: HTTPResponse.Status) async throws -> Response {
        let document = try await store.project(id)
        guard let shotView = document.view.shot(shot), let view = shotView.layers.first(where: { $0.id == layer }) else {
            throw APIError(.notFound, "no layer \(layer) in shot \(shot)")
        }
        var answer = API.Layer(view, strokes: [])
        answer.image = view.image.map { API.Media($0, state: "complete") }
        return .json(answer, status: status)
    }

    /// What a project references, with where, how much is here, and who has it.
    func mediaEntries(of id: DocumentID) async throws -> [API.MediaEntry] {
        let view = try await store.project(id).view
        var usedBy: [BlobHash: [String]] = [:]
        for shot in view.shots {
            for layer in shot.layers {
                if let image = layer.image { usedBy[image.hash, default: []].append("\(shot.label) layer \(layer.name ?? "image")") }
            }
            if let sound = shot.sound { usedBy[sound.hash, default: []].append("\(shot.label) sound") }
        }
        var entries: [API.MediaEntry] = []
        let proven = try await store.provenBlobs(of: id)
        for media in try await store.blobReferences(of: id) {
            let (state, held, problem) = await lookup.blobState(media, proven: proven)
            let peers = await manager.blobExchange?.holders(of: media.hash) ?? []
            entries.append(
                API.MediaEntry(
                    blob: media.hash.description, type: media.type.mimeType, bytes: media.byteCount, state: state, heldBytes: held,
                    usedBy: usedBy[media.hash] ?? [], peers: peers.map(\.description).sorted(), problem: problem))
        }
        // Shown first what the board shows, then what only history holds.
        return entries.sorted { ($0.usedBy.isEmpty ? 1 : 0, $0.blob) < ($1.usedBy.isEmpty ? 1 : 0, $1.blob) }
    }

    func mediaStatus() async throws -> API.MediaStatus {
        let transfers = await manager.blobExchange?.status() ?? []
        var missing = 0
        var missingBytes: UInt64 = 0
        for (_, reference) in try await store.referencedBlobs() {
            if case .complete? = await blobs.record(reference.media.hash)?.state { continue }
            missing += 1
            missingBytes += reference.media.byteCount
        }
        let records = await blobs.records().filter { if case .complete = $0.state { true } else { false } }
        return API.MediaStatus(
            transfers: transfers.map {
                API.MediaTransfer(
                    blob: $0.hash.description, type: $0.type.mimeType, peer: $0.peer?.description, bytes: $0.totalBytes,
                    heldBytes: $0.heldBytes, rate: $0.rate, projects: $0.documents.map(\.description))
            },
            missing: missing, missingBytes: missingBytes, stored: records.count, storedBytes: records.reduce(0) { $0 + $1.byteCount })
    }

    /// "2.1 GB", "1 GiB" as people read sizes.
    static func bytesText(_ bytes: UInt64) -> String {
        if bytes >= 1 << 30, bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1_000_000_000 { return String(format: "%.1f GB", Double(bytes) / 1e9) }
        if bytes >= 1_000_000 { return String(format: "%.1f MB", Double(bytes) / 1e6) }
        return "\(bytes) bytes"
    }

    /// A file's bytes as the answer, read and sent 1 MiB at a time.
    static func fileResponse(_ path: String, bytes: UInt64, contentType: String) throws -> Response {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw APIError(.internal, "cannot open the stored blob \(path)") }
        return Response(
            status: .ok, headers: [.contentType: contentType, .contentLength: String(bytes)],
            body: ResponseBody { writer in
                defer { try? handle.close() }
                while true {
                    let data = try handle.read(upToCount: 1 << 20) ?? Data()
                    if data.isEmpty { break }
                    try await writer.write(ByteBuffer(bytes: data))
                }
                try await writer.finish(nil)
            })
    }
}
