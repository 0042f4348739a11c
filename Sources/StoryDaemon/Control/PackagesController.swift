import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import StoryAPI
import StoryCore
import StoryIdentity
import StoryRender
import StoryStore
import StorySync

/// Project packages: `projects/{id}/exports/package` (a `.storyboard` zip
/// streamed out) and `imports` (one streamed in: added or merged).
struct PackagesController: Sendable {
    let lookup: ResourceLookup
    let store: Store
    let identity: Identity
    let manager: PeerManager
    let library: LibraryService
    let clock: WallClock
    let temporaryDirectory: String
    let blobs: BlobStore
    let logger: Logger
    let renderer: PanelRenderService
    let exports: ExportJobs
    let imports: SerialGate
    /// Which of a project's pictures and sounds it may use here.
    var media: ProjectMedia { lookup.media }

    /// Thumbnails are this many pixels wide.
    static let thumbnailWidth = 320

    func addRoutes(to routes: inout ControlRouteBuilder) {
        routes.get("projects/:project/exports/package") { _, context in
            try await exportPackage(try await lookup.existingProject(try context.parameter("project")))
        }
        routes.post("imports") { request, _ in
            let (answer, isNew) = try await importPackage(request)
            return .json(answer, status: isNew ? .created : .ok)
        }
    }

    /// Writes the package into the scratch directory, then sends that file
    /// (unlinked once open, as a backup is): its size is the Content-Length,
    /// a full disk a 507 before the first byte.
    func exportPackage(_ id: DocumentID) async throws -> Response {
        let started = ContinuousClock.now
        let record = try await lookup.projectRecord(id)
        let content = try await store.packageContent(of: id)
        let read = ContinuousClock.now
        let view = content.view
        let shots = view.shots
        let files = await media.files(shots.flatMap(PanelRenderer.pictures(drawnIn:)), of: id)
        let title = view.title ?? record.name
        // The print sheet people without Storyteller open (the defaults of
        // `export pdf`), drawn while the thumbnails are: the sheet is one
        // renderer's thread, the thumbnails the other cores'.
        let pictureFiles = files
        async let drawnSheet = printSheetFile(of: view, title: title ?? "Untitled", pictureFiles: pictureFiles)
        let thumbnails = await Self.thumbnails(of: shots, in: view, pictureFiles: pictureFiles)
        let sheet = try await drawnSheet
        defer { if let sheet { unlink(sheet) } }
        let rendered = ContinuousClock.now
        // Only the bytes the project may pass on (proven for it, of their type): a
        // reference alone carries nothing into a package.
        var held: [(media: MediaReference, path: String)] = []
        var missing: [BlobHash] = []
        let usable = await media.files(content.media, of: id)
        for reference in content.media {
            if let path = usable[reference.hash] { held.append((reference, path)) } else { missing.append(reference.hash) }
        }
        let contents = PackageWriter.Contents(
            project: id, title: title, content: content, thumbnails: thumbnails, blobs: held, missing: missing,
            sheets: sheet, exportedAt: clock.milliseconds, generator: "storytellerd \(API.version)")
        let path = try scratchPath("package", ".storyboard")
        let identity = self.identity
        do {
            try await NIOThreadPool.singleton.runIfActive { try PackageWriter.write(contents, to: path, signer: identity) }
        } catch {
            unlink(path)
            if Self.isDiskFull(temporaryDirectory) {
                throw APIError(
                    .insufficientStorage, "the disk holding the daemon's state (\(temporaryDirectory)) has no room for the package; nothing was sent")
            }
            logger.error("cannot write a package of \(id): \(error)")
            throw APIError(.storeFailure, "the package could not be made: \(error)")
        }
        let file = OpenBackup(path: path)
        unlink(path)
        guard let file else { throw APIError(.storeFailure, "the package could not be made: cannot open \(path)") }
        logger.info(
            "exporting \(id) as a package (\(file.size) bytes, \(content.changeCount) changes, \(held.count) blobs): read \(read - started), \(thumbnails.count) thumbnails and the print sheet \(rendered - read), written \(ContinuousClock.now - rendered)"
        )
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/zip",
                .contentDisposition: "attachment; filename=\"\(Self.fileName(title ?? "project")).storyboard\"",
            ],
            body: ResponseBody(contentLength: file.size) { writer in
                var offset = 0
                while offset < file.size {
                    let start = offset
                    let chunk = try await NIOThreadPool.singleton.runIfActive { try file.read(at: start, count: OpenBackup.chunkBytes) }
                    guard chunk.readableBytes > 0 else { throw APIError(.storeFailure, "the package file ended early") }
                    offset += chunk.readableBytes
                    try await writer.write(chunk)
                }
                try await writer.finish(nil)
            })
    }

    /// The whole board as a print sheet (A4 landscape, 6 a page, label,
    /// caption, dialogue and duration), written page by page into a scratch
    /// file; nil, logged, when the renderer is busy with other sheets for
    /// longer than a few seconds or cannot draw it (the package is still
    /// whole without it: its manifest says so).
    func printSheetFile(of view: ProjectView, title: String, pictureFiles: [BlobHash: String]) async throws -> String? {
        let options = API.PrintSheetOptions()
        let size = options.pageSize
        let layout = PrintSheetLayout(
            pageWidth: size.width, pageHeight: size.height, rows: options.rows, columns: options.columns,
            isTextBeside: options.text == .beside, fields: options.fields.compactMap { PrintSheetLayout.Field(rawValue: $0.rawValue) },
            pages: nil)
        var opened: (sheet: Int, pageCount: Int, first: [UInt8])?
        for attempt in 0..<50 {
            do {
                opened = try await renderer.openSheet(
                    scenes: view.scenes, of: view, title: title, date: ExportsController.today(clock), layout: layout, pictureFiles: pictureFiles)
            } catch {
                logger.warning("the package of \(title) goes without its print sheet: \(error)")
                return nil
            }
            if opened != nil { break }
            if attempt == 49 { logger.warning("the package of \(title) goes without its print sheet: the renderer stayed busy") }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard let opened else { return nil }
        let path = try scratchPath("sheets", ".pdf")
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            await renderer.closeSheet(opened.sheet)
            throw APIError(.storeFailure, "cannot write the package's print sheet in \(temporaryDirectory)")
        }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: opened.first)
            while let chunk = try await renderer.nextChunk(ofSheet: opened.sheet) { try handle.write(contentsOf: chunk) }
        } catch {
            await renderer.closeSheet(opened.sheet)
            unlink(path)
            logger.warning("the package of \(title) goes without its print sheet: \(error)")
            return nil
        }
        return path
    }

    /// A PNG per shot, `thumbnailWidth` wide, in board order; nil for a shot
    /// that does not render (it still travels in the project). Drawn by a
    /// renderer per core (at most two), each on a thread of its own as
    /// `PanelRenderService` draws: never on the event loops or the
    /// cooperative pool, and a thumbnail's surface is small (320×180×4 bytes).
    static func thumbnails(
        of shots: [ShotView], in view: ProjectView, pictureFiles files: [BlobHash: String]
    ) async -> [(shot: ShotView, png: [UInt8]?)] {
        let count = max(1, min(2, ProcessInfo.processInfo.activeProcessorCount, shots.count))
        var pngs = [[UInt8]?](repeating: nil, count: shots.count)
        await withTaskGroup(of: [(Int, [UInt8]?)].self) { group in
            for lane in 0..<count {
                group.addTask {
                    let renderer = PanelRenderService()
                    var done: [(Int, [UInt8]?)] = []
                    for index in stride(from: lane, to: shots.count, by: count) {
                        let png = try? await renderer.render(
                            shots[index], in: view, as: .png, width: thumbnailWidth, onion: 0, pictureFiles: files)
                        done.append((index, png))
                    }
                    return done
                }
            }
            for await lane in group { for (index, png) in lane { pngs[index] = png } }
        }
        return zip(shots, pngs).map { ($0, $1) }
    }

    /// Receives a package into the scratch directory, checks all of it, then
    /// stores the project (added, or merged into the copy here) in one
    /// transaction through the store's verifying path, and only then commits
    /// the blobs it references. Anything refused leaves nothing behind.
    func importPackage(_ request: Request) async throws -> (API.PackageImported, isNew: Bool) {
        let folder = try await library.folderForNewProject(try request.decodeQuery(API.PackageImportQuery.self).folder)
        let path = try scratchPath("import", ".storyboard")
        defer { unlink(path) }
        // Before a byte is read: a package that cannot fit on this disk is refused.
        let room = Self.freeBytes(temporaryDirectory)
        if let length = request.headers[.contentLength].flatMap({ UInt64($0) }), length > room {
            throw APIError(
                .tooLarge,
                "the package is \(MediaController.bytesText(length)); the disk holding the daemon's state has \(MediaController.bytesText(room)) free; nothing was stored"
            )
        }
        try await receiveFile(request, into: path, limit: room)
        // Received side by side, checked and stored one at a time.
        return try await imports.run { try await importReceived(path, into: folder) }
    }

    /// Checks and stores a package received into `path` (`importPackage`).
    private func importReceived(_ path: String, into folder: LibraryPlace) async throws -> (API.PackageImported, isNew: Bool) {
        let heldBlobs = Set(
            await blobs.records().compactMap { record -> BlobHash? in
                if case .complete = record.state { record.hash } else { nil }
            })
        let blobs = self.blobs
        let opened: OpenedPackage
        do {
            opened = try await NIOThreadPool.singleton.runIfActive {
                try PackageReader.open(path, blobs: blobs, isHeld: { heldBlobs.contains($0) })
            }
        } catch let error as PackageError {
            logger.notice("refused a package: \(error)")
            throw error.apiError
        }
        defer { opened.discard() }
        unlink(path)
        let id = opened.project
        let result: Store.PackageImport
        do {
            result = try await store.importPackage(
                id, snapshot: opened.snapshot, version: opened.version, changes: opened.changes, from: opened.exporter,
                name: opened.manifest.title, at: clock.milliseconds)
        } catch let error as DocumentError {
            logger.notice("refused a package of \(id) from \(opened.exporter): \(error)")
            throw APIError(.invalidPackage, "refused, nothing stored: the project in the package does not check out: \(error.message)")
        } catch let error as CodecError {
            throw APIError(.invalidPackage, "refused, nothing stored: the project in the package does not decode: \(error.message)")
        }
        // Only what the project references, as it references it (type and size:
        // the document's word, as for a blob from a peer), is kept; the rest goes with `discard`.
        var referenced: [BlobHash: MediaReference] = [:]
        for media in try await store.blobReferences(of: id) { referenced[media.hash] = media }
        var added = 0
        var addedBytes: UInt64 = 0
        for (upload, _) in opened.staged {
            guard let (hash, size) = try? upload.finish(), let media = referenced[hash], media.byteCount == size else { continue }
            do {
                _ = try await blobs.commit(upload, type: media.type)
                // The package's word on the type is no better than a peer's: probe the bytes.
                if let problem = try await blobs.probeComplete(hash).problem {
                    logger.notice("imported \(id): blob \(hash) is kept aside: \(problem)")
                }
            } catch {
                // The project is stored; a blob not kept is fetched from peers like any missing one.
                logger.error("imported \(id), but could not keep blob \(hash): \(error)")
                continue
            }
            added += 1
            addedBytes += size
        }
        // The package carried these bytes: whoever made it had them, so they may go to the project's members.
        for hash in opened.carried where referenced[hash] != nil {
            try await store.proveBlobReference(hash, in: id)
            await manager.blobExchange?.announce(hash)
        }
        let document = try await store.project(id)
        let title = document.view.title ?? opened.manifest.title
        if result.isNew {
            do {
                try await library.file(id, named: title ?? "Untitled", in: folder)
            } catch {
                // The project is stored (it shows in Incoming); only its filing failed: say both.
                let reason = (error as? APIError)?.error.message ?? "\(error)"
                logger.notice("imported \(id), but could not file it in the folder asked for: \(reason)")
                throw APIError(.conflict, "the project was added (it shows in Incoming), but could not be filed in that folder: \(reason)")
            }
        }
        logger.info(
            "imported \(id) from a package by \(opened.exporter): \(result.isNew ? "added" : "merged"), \(result.newChanges) new changes, \(added) blobs"
        )
        return (
            API.PackageImported(
                outcome: result.isNew ? "added" : "merged", project: id.description, title: title, newChanges: result.newChanges,
                blobsAdded: added, blobBytesAdded: addedBytes, usedSnapshot: result.usedSnapshot,
                exportedBy: opened.exporter.description, role: document.localRole.description),
            result.isNew
        )
    }

    /// Streams a request body into a new file (mode 0600); over `limit`
    /// bytes the rest is read and dropped, and the answer is a 413.
    private func receiveFile(_ request: Request, into path: String, limit: UInt64) async throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw APIError(.storeFailure, "cannot receive the package: cannot make \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var written: UInt64 = 0
        var refusal: APIError?
        do {
            for try await chunk in request.body {
                guard refusal == nil else { continue }
                written += UInt64(chunk.readableBytes)
                guard written <= limit else {
                    refusal = APIError(
                        .tooLarge, "the package is larger than the free space of the disk holding the daemon's state; nothing was stored")
                    continue
                }
                let failure: Int32? = chunk.withUnsafeReadableBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                        if n < 0 && errno == EINTR { continue }
                        guard n > 0 else { return errno }
                        offset += n
                    }
                    return nil
                }
                if let failure {
                    refusal =
                        failure == ENOSPC || failure == EDQUOT
                        ? APIError(.insufficientStorage, "the disk holding the daemon's state is full; nothing was stored")
                        : APIError(.storeFailure, "cannot receive the package: \(String(cString: strerror(failure)))")
                }
            }
        } catch {
            logger.notice("a package upload ended before its last byte: \(error)")
            throw APIError(.badRequest, "the upload ended before its last byte; nothing was stored")
        }
        if let refusal { throw refusal }
        guard written > 0 else { throw APIError(.badRequest, "the upload is empty; send the package file's bytes as the request body") }
    }

    /// A new path in the daemon's scratch directory (made 0700 if needed).
    private func scratchPath(_ prefix: String, _ suffix: String) throws -> String {
        do {
            try FileManager.default.createDirectory(
                atPath: temporaryDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            logger.error("cannot make \(temporaryDirectory): \(error)")
            throw APIError(.storeFailure, "cannot use the daemon's scratch directory \(temporaryDirectory)")
        }
        return temporaryDirectory + "/\(prefix)-\(UUID().uuidString)\(suffix)"
    }

    /// Bytes free for the daemon on the disk holding `directory`.
    static func freeBytes(_ directory: String) -> UInt64 {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return .max }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
    }

    /// Whether the disk holding `directory` has (almost) no room left.
    static func isDiskFull(_ directory: String) -> Bool { freeBytes(directory) < 1 << 20 }

    /// A title as a file name: letters, digits, space, `-`, `_` and `.`; the rest `_`.
    static func fileName(_ title: String) -> String {
        let kept = String(
            title.unicodeScalars.map { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || " -_.".unicodeScalars.contains(scalar))
                    ? Character(scalar) : "_"
            }
        ).trimmingCharacters(in: CharacterSet(charactersIn: " ."))
        return kept.isEmpty ? "project" : String(kept.prefix(100))
    }
}
