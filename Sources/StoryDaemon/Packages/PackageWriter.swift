import Foundation
import StoryCore
import StoryIdentity
import StoryStore
import ZIPFoundation

/// Writes a project package: a zip file (ZIPFoundation) holding the
/// project's snapshot and change log, its media blobs, a PNG thumbnail per
/// shot, a README for people without Storyteller, and the signed manifest.
/// Blocking file I/O: run it off the event loops (the control API runs it on
/// NIO's thread pool). Blobs are copied 1 MiB at a time, never read whole.
enum PackageWriter {
    /// What goes into one package.
    struct Contents {
        var project: DocumentID
        var title: String?
        var content: Store.PackageContent
        /// Per visible shot in board order: the shot and its PNG thumbnail (nil when it did not render).
        var thumbnails: [(shot: ShotView, png: [UInt8]?)]
        /// Blobs held whole here, with their files.
        var blobs: [(media: MediaReference, path: String)]
        /// Blobs referenced but not held whole here.
        var missing: [BlobHash]
        /// The board's print sheet (a PDF file), if it could be drawn.
        var sheets: String?
        var exportedAt: Int64
        var generator: String
    }

    /// Bytes read from a blob file and written at a time.
    static let chunkBytes = 1 << 20

    /// Writes the package to `path` (a new file).
    /// - Throws: `PackageError(.io)` when a file cannot be read or written.
    static func write(_ contents: Contents, to path: String, signer identity: Identity) throws(PackageError) {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        } catch {
            throw PackageError(.io, "cannot make the package file \(path): \(error)")
        }
        let date = Date(timeIntervalSince1970: Double(contents.exportedAt) / 1000)
        var entries: [PackageManifest.Entry] = []
        let hasher = SHA256Stream()

        func add(_ name: String, role: String, _ bytes: [UInt8], compressed: Bool, type: String? = nil) throws(PackageError) {
            do {
                try archive.addEntry(
                    with: name, type: .file, uncompressedSize: Int64(bytes.count), modificationDate: date,
                    compressionMethod: compressed ? .deflate : .none
                ) { position, size in
                    let start = Int(position)
                    return Data(bytes[start..<min(bytes.count, start + size)])
                }
            } catch {
                throw PackageError(.io, "cannot write \(name) into \(path): \(error)")
            }
            entries.append(
                PackageManifest.Entry(
                    path: name, role: role, bytes: UInt64(bytes.count), sha256: hasher.digest(of: bytes).description, type: type))
        }

        let view = contents.content.view
        var shots: [PackageManifest.Shot] = []
        try add(
            PackageManifest.Path.readme, role: PackageManifest.Role.readme, Array(readme(contents).utf8), compressed: true,
            type: "text/plain")
        for (index, (shot, png)) in contents.thumbnails.enumerated() {
            var name: String?
            if let png {
                let number = String(index + 1)
                let path = "thumbnails/" + String(repeating: "0", count: max(0, 3 - number.count)) + number + " shot \(shot.label).png"
                try add(path, role: PackageManifest.Role.thumbnail, png, compressed: false, type: "image/png")
                name = path
            }
            shots.append(PackageManifest.Shot(id: shot.id.description, label: shot.label, caption: shot.caption, thumbnail: name))
        }
        // Stored: points are Rice-coded already (deflate took 2 to 5 % off the benchmark board, for a tenth of a second).
        try add(PackageManifest.Path.snapshot, role: PackageManifest.Role.snapshot, contents.content.snapshot, compressed: false)
        try add(PackageManifest.Path.changes, role: PackageManifest.Role.changes, contents.content.changes, compressed: false)
        for (media, file) in contents.blobs {
            let name = PackageManifest.Path.media(media.hash.description)
            try addFile(file, bytes: media.byteCount, as: name, to: archive, date: date)
            entries.append(
                PackageManifest.Entry(
                    path: name, role: PackageManifest.Role.media, bytes: media.byteCount, sha256: media.hash.description,
                    type: media.type.mimeType))
        }
        if let sheets = contents.sheets {
            let size: UInt64
            let digest: String
            do {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: sheets), options: .alwaysMapped)
                size = UInt64(bytes.count)
                digest = hasher.digest(of: bytes).description
            } catch {
                throw PackageError(.io, "cannot read the print sheet \(sheets): \(error)")
            }
            try addFile(sheets, bytes: size, as: PackageManifest.Path.sheets, to: archive, date: date)
            entries.append(
                PackageManifest.Entry(
                    path: PackageManifest.Path.sheets, role: PackageManifest.Role.sheets, bytes: size, sha256: digest, type: "application/pdf"))
        }
        try add(PackageManifest.Path.certificate, role: "certificate", identity.certificateDER, compressed: false)
        var version: [String: UInt64] = [:]
        for (replica, seq) in contents.content.version.sortedEntries { version[replica.description] = seq }
        let manifest = PackageManifest(
            format: PackageManifest.formatName, formatVersion: PackageManifest.currentFormatVersion, generator: contents.generator,
            project: contents.project.description, title: contents.title ?? view.title, exportedBy: identity.peerID.description,
            exportedAt: contents.exportedAt, version: version, changeCount: contents.content.changeCount, entries: entries,
            shots: shots, missingMedia: contents.missing.map(\.description),
            optional: contents.sheets != nil
                ? [:]
                : [PackageManifest.Path.sheets: "a printable PDF sheet of every shot (role 'sheets'); it could not be drawn for this package"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let manifestBytes: [UInt8]
        do {
            manifestBytes = Array(try encoder.encode(manifest))
        } catch {
            throw PackageError(.io, "cannot encode the manifest: \(error)")
        }
        let signature = identity.sign(PackageManifest.signedPrefix + manifestBytes)
        for (name, bytes, compressed) in [
            (PackageManifest.Path.manifest, manifestBytes, true), (PackageManifest.Path.signature, signature, false),
        ] {
            do {
                try archive.addEntry(
                    with: name, type: .file, uncompressedSize: Int64(bytes.count), modificationDate: date,
                    compressionMethod: compressed ? .deflate : .none
                ) { position, size in Data(bytes[Int(position)..<min(bytes.count, Int(position) + size)]) }
            } catch {
                throw PackageError(.io, "cannot write \(name) into \(path): \(error)")
            }
        }
    }

    /// Copies a blob file into the archive a piece at a time (stored, not
    /// deflated: pictures and sounds are compressed already).
    private static func addFile(_ file: String, bytes: UInt64, as name: String, to archive: Archive, date: Date) throws(PackageError) {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw PackageError(.io, "cannot read the blob \(file)") }
        defer { try? handle.close() }
        do {
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(bytes), modificationDate: date, compressionMethod: .none,
                bufferSize: chunkBytes
            ) { position, size in
                try handle.seek(toOffset: UInt64(position))
                let data = try handle.read(upToCount: size) ?? Data()
                guard data.count == size else { throw PackageError(.io, "the blob \(file) is shorter than its record") }
                return data
            }
        } catch let error as PackageError {
            throw error
        } catch {
            throw PackageError(.io, "cannot copy the blob \(file) into the package: \(error)")
        }
    }

    /// What a person who opens the zip without Storyteller reads first.
    static func readme(_ contents: Contents) -> String {
        let title = contents.title ?? contents.content.view.title ?? "Untitled"
        return """
            \(title): a Storyteller storyboard package

            thumbnails/   a PNG picture of every shot, in board order ("003 shot 1-3.png" is scene 1, shot 3)
            media/        the images and sounds the shots use, each named by its SHA-256
            project/      the storyboard itself (snapshot and change history), for Storyteller
            manifest.json what is in here, with the SHA-256 of every file; signed (manifest.sig) by
                          the machine that wrote it (exporter.der)

            To open it in Storyteller:  storyteller import "\(title).storyboard"
            Importing it where the project already is merges both: nothing drawn on either side is lost.

            """
    }
}
