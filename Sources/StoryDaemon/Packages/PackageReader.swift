import Foundation
import StoryCore
import StoryIdentity
import StoryStore
import ZIPFoundation

/// A package whose every entry checked out: its manifest's signature, each
/// entry's length and SHA-256, the change log and snapshot decoded. Blobs not
/// held here wait in the blob store's scratch directory (`BlobUpload`s)
/// until the project is stored, then are committed, or discarded.
final class OpenedPackage: @unchecked Sendable {
    let manifest: PackageManifest
    let project: DocumentID
    /// The daemon that made and signed the package.
    let exporter: PeerID
    let version: VersionVector
    let snapshot: [UInt8]
    let changes: [(EncodedChange, Change)]
    /// Blobs new to this machine, hashed and on disk, not yet committed.
    private(set) var staged: [(upload: BlobUpload, type: MediaType)]
    /// Every blob whose bytes the package carried (staged, or held here
    /// already and checked against the package's): the proof that whoever
    /// made the package had them, so they may go to the project's members.
    let carried: Set<BlobHash>

    init(
        manifest: PackageManifest, project: DocumentID, exporter: PeerID, version: VersionVector, snapshot: [UInt8],
        changes: [(EncodedChange, Change)], staged: [(upload: BlobUpload, type: MediaType)], carried: Set<BlobHash>
    ) {
        self.carried = carried
        self.manifest = manifest
        self.project = project
        self.exporter = exporter
        self.version = version
        self.snapshot = snapshot
        self.changes = changes
        self.staged = staged
    }

    /// Deletes the staged blobs not committed (again does nothing).
    func discard() {
        for (upload, _) in staged { upload.discard() }
    }
}

/// Opens and checks a project package, refusing anything that is not exactly
/// what a Storyteller daemon wrote and signed. Blocking: run it off the event
/// loops. Entries are read 1 MiB at a time; blobs go straight to disk.
enum PackageReader {
    /// The manifest, signature and certificate are small; more is not ours.
    static let maximumManifestBytes = 16 << 20
    static let maximumCertificateBytes = 64 << 10
    /// A snapshot or change log larger than this is not a storyboard.
    static let maximumDocumentBytes: UInt64 = 2 << 30
    static let chunkBytes = 1 << 20
    /// How much a deflated entry may grow: real content (a manifest, a
    /// snapshot or log someone re-zipped) deflates a few times; a zip bomb
    /// (a megabyte that inflates to a gigabyte) a thousand.
    static let maximumInflation: UInt64 = 32
    /// An allowance every deflated entry has on top (a small file deflates oddly).
    static let inflationAllowance: UInt64 = 1 << 20
    /// Bytes all deflated entries may inflate to together: what a package
    /// holds beyond this is stored, as Storyteller writes it (the bytes are
    /// then in the file, which the daemon's disk already bounds), so no file
    /// makes the daemon hold more than this that it does not have.
    static let maximumInflatedBytes: UInt64 = 48 << 20

    /// Refuses entries that would inflate far past what their compressed
    /// bytes can hold (a zip bomb), before a byte of them is inflated.
    /// - Throws: `PackageError(.tooLarge)` naming the entry.
    static func checkInflation(_ entries: [Entry], fileBytes: UInt64) throws(PackageError) {
        var inflated: UInt64 = 0
        for entry in entries {
            guard entry.compressedSize <= fileBytes, entry.isCompressed || entry.uncompressedSize <= fileBytes else {
                throw PackageError(.truncated, "'\(entry.path)' says it holds more bytes than the whole file has: the file is cut off or damaged")
            }
        }
        for entry in entries where entry.isCompressed {
            let (compressed, size) = (entry.compressedSize, entry.uncompressedSize)
            let (bound, overflow) = compressed.multipliedReportingOverflow(by: maximumInflation)
            guard !overflow, size <= bound + inflationAllowance else {
                throw PackageError(
                    .tooLarge,
                    "'\(entry.path)' would inflate from \(compressed) to \(size) bytes (\(compressed == 0 ? size : size / compressed) times): a zip bomb, not a package Storyteller wrote"
                )
            }
            inflated += size
            guard inflated <= maximumInflatedBytes else {
                throw PackageError(
                    .tooLarge,
                    "the package's deflated entries inflate to more than \(maximumInflatedBytes >> 20) MiB; Storyteller stores large entries uncompressed: export the project again"
                )
            }
        }
    }

    /// Opens `path` and checks every entry. Blobs whose hash `isHeld` says
    /// this machine holds are checked, not kept.
    /// - Throws: `PackageError` saying what is wrong; nothing is left behind then.
    static func open(_ path: String, blobs: BlobStore, isHeld: (BlobHash) -> Bool) throws(PackageError) -> OpenedPackage {
        try checkMagic(path)
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw PackageError(
                .truncated, "the file is a cut-off or damaged zip (its central directory is missing or wrong); was it copied completely?")
        }
        var entries: [String: Entry] = [:]
        for entry in archive where entry.type != .directory {
            guard entries.updateValue(entry, forKey: entry.path) == nil else {
                throw PackageError(.tampered, "the zip holds '\(entry.path)' twice")
            }
        }
        // The whole is bounded before a byte is inflated: no entry may say it
        // holds more than the file, nor inflate like a zip bomb.
        let fileBytes = UInt64((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.uint64Value ?? 0)
        try checkInflation(Array(entries.values), fileBytes: fileBytes)
        guard let manifestEntry = entries[PackageManifest.Path.manifest] else {
            throw PackageError(.foreign, "the file is a zip, but not a Storyteller project package (it has no manifest.json)")
        }
        let manifestBytes = try read(manifestEntry, of: archive, limit: UInt64(maximumManifestBytes))
        let manifest = try decodeManifest(manifestBytes)
        let exporter = try checkSignature(manifest, manifestBytes, entries, archive)

        // Every entry listed, every listed entry there, each exactly once.
        var listed: Set<String> = [PackageManifest.Path.manifest, PackageManifest.Path.signature]
        for entry in manifest.entries {
            guard listed.insert(entry.path).inserted else { throw PackageError(.tampered, "the manifest lists '\(entry.path)' twice") }
            guard let found = entries[entry.path] else {
                throw PackageError(.truncated, "'\(entry.path)', which the manifest lists, is not in the zip")
            }
            guard found.uncompressedSize == entry.bytes else {
                throw PackageError(.tampered, "'\(entry.path)' holds \(found.uncompressedSize) bytes, the manifest says \(entry.bytes)")
            }
        }
        if let stray = entries.keys.sorted().first(where: { !listed.contains($0) }) {
            throw PackageError(.tampered, "the zip holds '\(stray)', which the signed manifest does not list")
        }

        var snapshot: [UInt8]?
        var changeBytes: [UInt8]?
        var staged: [(upload: BlobUpload, type: MediaType)] = []
        var carried: Set<BlobHash> = []
        let hasher = SHA256Stream()
        do {
            for entry in manifest.entries {
                let zipEntry = entries[entry.path]!
                switch entry.role {
                case PackageManifest.Role.snapshot, PackageManifest.Role.changes:
                    guard entry.path == PackageManifest.Path.snapshot || entry.path == PackageManifest.Path.changes else {
                        throw PackageError(.tampered, "'\(entry.path)' cannot be the project's \(entry.role)")
                    }
                    let bytes = try read(zipEntry, of: archive, limit: maximumDocumentBytes)
                    try check(hasher.digest(of: bytes), entry)
                    if entry.role == PackageManifest.Role.snapshot { snapshot = bytes } else { changeBytes = bytes }
                case PackageManifest.Role.media:
                    guard let hash = BlobHash(hex: entry.sha256), entry.path == PackageManifest.Path.media(hash.description),
                        let typeName = entry.type, let type = MediaType(mimeType: typeName)
                    else {
                        throw PackageError(.tampered, "'\(entry.path)' is not a media entry as Storyteller writes them")
                    }
                    if isHeld(hash) {
                        try stream(zipEntry, of: archive, limit: entry.bytes) { hasher.update(contentsOf: $0) }
                        try check(hasher.finalize(), entry)
                    } else {
                        staged.append((try stage(zipEntry, entry, hash, of: archive, into: blobs), type))
                    }
                    carried.insert(hash)
                default:
                    // Thumbnails, the README, the certificate, sheets and roles
                    // of newer writers: checked, not used.
                    try stream(zipEntry, of: archive, limit: entry.bytes) { hasher.update(contentsOf: $0) }
                    try check(hasher.finalize(), entry)
                }
            }
        } catch let error as PackageError {
            for (upload, _) in staged { upload.discard() }
            throw error
        } catch {
            for (upload, _) in staged { upload.discard() }
            throw PackageError(.io, "\(error)")
        }
        do {
            guard let snapshot, let changeBytes else {
                throw PackageError(.foreign, "the manifest lists no project snapshot or change log")
            }
            guard let project = DocumentID(manifest.project) else {
                throw PackageError(.invalidContent, "the manifest's project '\(manifest.project)' is not a project or folder id (32 hex digits)")
            }
            var version = VersionVector()
            for (text, seq) in manifest.version {
                guard let replica = ReplicaID(hex: text) else { throw PackageError(.invalidContent, "the manifest's version names '\(text)'") }
                version[replica] = seq
            }
            let changes: [(EncodedChange, Change)]
            do {
                changes = try ChangeBatch.decode(changeBytes[...])
            } catch {
                throw PackageError(.invalidContent, "the project's change log does not decode: \(error.message)")
            }
            return OpenedPackage(
                manifest: manifest, project: project, exporter: exporter, version: version, snapshot: snapshot, changes: changes,
                staged: staged, carried: carried)
        } catch let error as PackageError {
            for (upload, _) in staged { upload.discard() }
            throw error
        } catch {
            for (upload, _) in staged { upload.discard() }
            throw PackageError(.io, "\(error)")
        }
    }

    /// A file that does not start as a zip does is said to be what it looks like.
    private static func checkMagic(_ path: String) throws(PackageError) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PackageError(.io, "cannot read the received package") }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        guard !head.isEmpty else { throw PackageError(.notZip, "the file is empty") }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return }
        let isText = head.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32..<127).contains($0) || $0 >= 0x80 }
        throw PackageError(
            .notZip,
            isText
                ? "the file is text, not a Storyteller package (a .storyboard file is a zip)"
                : "the file is not a zip file, so not a Storyteller package")
    }

    private static func decodeManifest(_ bytes: [UInt8]) throws(PackageError) -> PackageManifest {
        let decoder = JSONDecoder()
        guard let header = try? decoder.decode(PackageManifest.Header.self, from: Data(bytes)),
            header.format == PackageManifest.formatName, let formatVersion = header.formatVersion
        else {
            throw PackageError(.foreign, "the file is a zip with a manifest.json, but not a Storyteller project package's")
        }
        guard formatVersion <= PackageManifest.currentFormatVersion else {
            throw PackageError(
                .newerFormat,
                "the package is of format \(formatVersion), made by a newer Storyteller; this one reads format \(PackageManifest.currentFormatVersion) (update Storyteller to import it)"
            )
        }
        guard formatVersion >= 1 else { throw PackageError(.foreign, "the package names format \(formatVersion), which never existed") }
        do {
            return try decoder.decode(PackageManifest.self, from: Data(bytes))
        } catch {
            throw PackageError(.tampered, "the manifest does not decode: \(error)")
        }
    }

    /// The exporter's identity, once its certificate names the peer the
    /// manifest names and its signature over the manifest checks.
    private static func checkSignature(
        _ manifest: PackageManifest, _ bytes: [UInt8], _ entries: [String: Entry], _ archive: Archive
    ) throws(PackageError) -> PeerID {
        guard let signatureEntry = entries[PackageManifest.Path.signature],
            let certificateEntry = entries[PackageManifest.Path.certificate]
        else {
            throw PackageError(.tampered, "the package is not signed (no manifest.sig or exporter.der)")
        }
        let signature = try read(signatureEntry, of: archive, limit: 64)
        let certificate = try read(certificateEntry, of: archive, limit: UInt64(maximumCertificateBytes))
        let crypto = OpenSSLCrypto.shared
        guard let identity = crypto.identity(ofCertificate: certificate[...]) else {
            throw PackageError(.tampered, "exporter.der is not a certificate with an Ed25519 key")
        }
        guard identity.peer.description == manifest.exportedBy else {
            throw PackageError(.tampered, "the manifest names exporter \(manifest.exportedBy), but the certificate is \(identity.peer)")
        }
        guard crypto.isValidSignature(signature[...], of: PackageManifest.signedPrefix + bytes, publicKey: identity.publicKey) else {
            throw PackageError(.tampered, "the manifest's signature does not check: the package was altered after it was made")
        }
        return identity.peer
    }

    private static func check(_ hash: BlobHash, _ entry: PackageManifest.Entry) throws(PackageError) {
        guard hash.description == entry.sha256.lowercased() else {
            throw PackageError(.tampered, "'\(entry.path)' is not what the manifest says (its SHA-256 differs): the package was altered")
        }
    }

    /// Writes a blob entry into a new upload of the blob store, checking its hash.
    private static func stage(
        _ zipEntry: Entry, _ entry: PackageManifest.Entry, _ hash: BlobHash, of archive: Archive, into blobs: BlobStore
    ) throws(PackageError) -> BlobUpload {
        let upload: BlobUpload
        do {
            upload = try blobs.beginUpload()
        } catch {
            throw PackageError(.io, "cannot stage a blob: \(error.message)")
        }
        do {
            try stream(zipEntry, of: archive, limit: entry.bytes) { try upload.write($0) }
            let (received, _) = try upload.finish()
            guard received == hash else {
                throw PackageError(.tampered, "'\(entry.path)' is not what the manifest says (its SHA-256 differs): the package was altered")
            }
            return upload
        } catch {
            upload.discard()
            if let error = error as? PackageError { throw error }
            if let error = error as? BlobError, error.kind == .tooLarge {
                throw PackageError(.tooLarge, "'\(entry.path)' (\(entry.bytes) bytes) is over this daemon's blob-max-bytes")
            }
            throw PackageError(.io, "cannot stage '\(entry.path)': \(error)")
        }
    }

    /// An entry's bytes, at most `limit` of them.
    private static func read(_ entry: Entry, of archive: Archive, limit: UInt64) throws(PackageError) -> [UInt8] {
        guard entry.uncompressedSize <= limit else {
            throw PackageError(.tampered, "'\(entry.path)' is \(entry.uncompressedSize) bytes, more than such an entry can be")
        }
        // Grown as the bytes come, not reserved from the header: a header may lie.
        var bytes: [UInt8] = []
        try stream(entry, of: archive, limit: limit) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Feeds an entry's bytes to `consumer` 1 MiB at a time, checking its
    /// CRC-32 and that it holds no more than `limit` bytes (nor more than its
    /// header says: a deflated entry cannot inflate past it).
    private static func stream(
        _ entry: Entry, of archive: Archive, limit: UInt64, _ consumer: (Data) throws -> Void
    ) throws(PackageError) {
        let allowed = min(limit, entry.uncompressedSize)
        var seen: UInt64 = 0
        do {
            let crc = try archive.extract(entry, bufferSize: chunkBytes, skipCRC32: false) { data in
                seen += UInt64(data.count)
                guard seen <= allowed else { throw PackageError(.tampered, "'\(entry.path)' holds more bytes than its header says") }
                try consumer(data)
            }
            // `extract` with a consumer computes the CRC-32 but leaves the comparison to us.
            guard crc == entry.checksum else { throw Archive.ArchiveError.invalidCRC32 }
        } catch let error as PackageError {
            throw error
        } catch Archive.ArchiveError.invalidCRC32 {
            throw PackageError(.tampered, "'\(entry.path)' is damaged (its CRC-32 does not match): the file was altered or cut")
        } catch let error as BlobError {
            throw PackageError(error.kind == .tooLarge ? .tooLarge : .io, error.message)
        } catch {
            throw PackageError(.truncated, "'\(entry.path)' cannot be read whole (\(error)): the file is cut off or damaged")
        }
        guard seen == entry.uncompressedSize else {
            throw PackageError(.truncated, "'\(entry.path)' ends after \(seen) of its \(entry.uncompressedSize) bytes")
        }
    }
}
