package import StoryCore

/// What peers say to each other (docs/protocol.md).
package enum Message: Hashable, Sendable {
    /// First message both ways: protocol version, daemon name, capabilities.
    case hello(version: UInt64, name: String, capabilities: [String])
    /// A document shared with the receiver: its kind and name, the role the
    /// sender's access list gives the receiver, and the sender's version.
    case advertise(Advertisement)
    /// Changes of a document (a `ChangeBatch`), in causal order.
    case changes(document: DocumentID, batch: ArraySlice<UInt8>)
    /// A document's snapshot, for a receiver behind the sender's compaction horizon.
    case snapshot(document: DocumentID, kind: UInt8, bytes: ArraySlice<UInt8>)
    /// Part of a snapshot too large for one frame: `total` bytes in all, this
    /// part's bytes starting at `offset`. Parts come in order, one snapshot at
    /// a time; only to a peer whose Hello named `Message.snapshotPartsCapability`.
    case snapshotPart(document: DocumentID, kind: UInt8, total: UInt64, offset: UInt64, bytes: ArraySlice<UInt8>)
    /// What the sender now has of a document (after applying what it received).
    case ack(document: DocumentID, version: VersionVector)
    case ping(UInt64)
    case pong(UInt64)
    case error(code: UInt64, message: String)
    /// The sender is closing the connection on purpose.
    case goodbye(reason: String)
    /// The sender holds these blobs (complete) that `document` references.
    case blobHave(document: DocumentID, hashes: [BlobHash])
    /// Asks for a blob `document` references: its manifest (`manifest`)
    /// and/or chunks by index.
    case blobRequest(BlobRequest)
    /// A blob's size, type, chunk size and the SHA-256 of each chunk.
    case blobManifest(BlobManifest)
    /// One chunk of a blob.
    case blobChunk(hash: BlobHash, index: UInt32, bytes: ArraySlice<UInt8>)
    /// The sender will not (or cannot) send that blob: it lacks it, or the
    /// receiver has no right to it.
    case blobUnavailable(hash: BlobHash, reason: String)

    /// A request for (part of) a blob.
    package struct BlobRequest: Hashable, Sendable {
        /// A document shared with the sender that references the blob.
        package var document: DocumentID
        package var hash: BlobHash
        package var manifest: Bool
        package var chunks: [UInt32]

        package init(document: DocumentID, hash: BlobHash, manifest: Bool, chunks: [UInt32]) {
            self.document = document
            self.hash = hash
            self.manifest = manifest
            self.chunks = chunks
        }

        /// Most chunks one request may ask for.
        package static let maximumChunks = 256
    }

    /// What a blob is made of.
    package struct BlobManifest: Hashable, Sendable {
        package var hash: BlobHash
        package var byteCount: UInt64
        package var type: MediaType
        package var chunkSize: UInt32
        package var chunks: [BlobHash]

        package init(hash: BlobHash, byteCount: UInt64, type: MediaType, chunkSize: UInt32, chunks: [BlobHash]) {
            self.hash = hash
            self.byteCount = byteCount
            self.type = type
            self.chunkSize = chunkSize
            self.chunks = chunks
        }

        /// Chunk sizes a manifest may use (16 KiB to 4 MiB).
        package static let chunkSizes: ClosedRange<UInt32> = (16 << 10)...(4 << 20)
        /// Most chunks a manifest may list (8 MiB of hashes).
        package static let maximumChunks = 1 << 18
    }

    /// Most hashes one BlobHave may carry.
    package static let maximumHaveHashes = 4096

    /// A document offered to the peer.
    package struct Advertisement: Hashable, Sendable {
        package var document: DocumentID
        /// 1 = project, 2 = library.
        package var kind: UInt8
        package var name: String
        /// The receiver's role in the sender's access list (informational:
        /// every change is checked against the receiver's own copy of it).
        package var role: Role
        package var version: VersionVector

        package init(document: DocumentID, kind: UInt8, name: String, role: Role, version: VersionVector) {
            self.document = document
            self.kind = kind
            self.name = name
            self.role = role
            self.version = version
        }
    }

    /// The protocol version this build speaks (2: signed changes, access
    /// lists; 3: media values in changes, blob messages; 4: tag operations
    /// in changes and snapshot format 3; 5: snapshot format 4, a text field
    /// shows its latest concurrent write by wall time, which a build on 4
    /// would pick differently).
    package static let protocolVersion: UInt64 = 5

    /// What a peer on protocol `theirs` is told, and what is logged here,
    /// when the two differ: which side to upgrade, in words.
    static func upgradeAdvice(theirs: UInt64) -> (here: String, there: String) {
        let ours = protocolVersion
        guard theirs < ours else {
            return (
                "the peer speaks sync protocol \(theirs), newer than this Storyteller's \(ours): upgrade Storyteller on this machine",
                "this peer speaks sync protocol \(ours), older than your \(theirs): it must upgrade Storyteller"
            )
        }
        return (
            "the peer speaks sync protocol \(theirs), older than this Storyteller's \(ours): upgrade Storyteller on the peer",
            "this peer speaks sync protocol \(ours), newer than your \(theirs): upgrade Storyteller on your machine"
        )
    }

    /// The Hello capability of a peer that takes snapshots in parts (`snapshotPart`).
    package static let snapshotPartsCapability = "snapshot-parts"
    /// The Goodbye reason of a daemon that paused sync with its peer (`peers
    /// pause`): the peer shows "paused by them" rather than retrying blind.
    package static let pausedReason = "sync with you is paused"
    /// What daemons before `pausedReason` said for the same.
    static let legacyPausedReason = "paused"

    /// Longest document name an Advertise, or daemon name a Hello, may carry
    /// (the control API's limit).
    package static let maximumNameBytes = 200

    /// A reason or message from a peer, as it is shown and logged: control
    /// characters escaped (no forged log line, no terminal escape), at most
    /// 1,000 characters.
    static func peerWords(_ text: String) -> String {
        let escaped = PrintableText.escaped(text)
        return escaped.count <= 1_000 ? escaped : String(escaped.prefix(1_000)) + "…"
    }

    /// Frame type bytes.
    enum Kind: UInt8 {
        case hello = 1, advertise, changes, snapshot, ack, ping, pong, error, goodbye
        case blobHave, blobRequest, blobManifest, blobChunk, blobUnavailable
        case snapshotPart
    }

    var kind: Kind {
        switch self {
        case .hello: .hello
        case .advertise: .advertise
        case .changes: .changes
        case .snapshot: .snapshot
        case .snapshotPart: .snapshotPart
        case .ack: .ack
        case .ping: .ping
        case .pong: .pong
        case .error: .error
        case .goodbye: .goodbye
        case .blobHave: .blobHave
        case .blobRequest: .blobRequest
        case .blobManifest: .blobManifest
        case .blobChunk: .blobChunk
        case .blobUnavailable: .blobUnavailable
        }
    }

    /// The payload bytes (without the frame header).
    func payload() -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        switch self {
        case .hello(let version, let name, let capabilities):
            writer.write(varint: version)
            writer.write(string: name)
            writer.write(count: capabilities.count)
            for capability in capabilities { writer.write(string: capability) }
        case .advertise(let ad):
            writer.write(document: ad.document)
            writer.write(byte: ad.kind)
            writer.write(string: ad.name)
            writer.write(byte: ad.role.rawValue)
            writer.write(raw: ad.version.encoded())
        case .changes(let document, let batch):
            writer.write(document: document)
            writer.write(raw: batch)
        case .snapshot(let document, let kind, let bytes):
            writer.write(document: document)
            writer.write(byte: kind)
            writer.write(raw: bytes)
        case .snapshotPart(let document, let kind, let total, let offset, let bytes):
            writer.write(document: document)
            writer.write(byte: kind)
            writer.write(varint: total)
            writer.write(varint: offset)
            writer.write(raw: bytes)
        case .ack(let document, let version):
            writer.write(document: document)
            writer.write(raw: version.encoded())
        case .ping(let nonce), .pong(let nonce):
            writer.write(varint: nonce)
        case .error(let code, let message):
            writer.write(varint: code)
            writer.write(string: message)
        case .goodbye(let reason):
            writer.write(string: reason)
        case .blobHave(let document, let hashes):
            writer.write(document: document)
            writer.write(count: hashes.count)
            for hash in hashes { writer.write(raw: hash.bytes) }
        case .blobRequest(let request):
            writer.write(document: request.document)
            writer.write(raw: request.hash.bytes)
            writer.write(bool: request.manifest)
            writer.write(count: request.chunks.count)
            for index in request.chunks { writer.write(varint: UInt64(index)) }
        case .blobManifest(let manifest):
            writer.write(raw: manifest.hash.bytes)
            writer.write(varint: manifest.byteCount)
            writer.write(byte: manifest.type.rawValue)
            writer.write(varint: UInt64(manifest.chunkSize))
            writer.write(count: manifest.chunks.count)
            for chunk in manifest.chunks { writer.write(raw: chunk.bytes) }
        case .blobChunk(let hash, let index, let bytes):
            writer.write(raw: hash.bytes)
            writer.write(varint: UInt64(index))
            writer.write(raw: bytes)
        case .blobUnavailable(let hash, let reason):
            writer.write(raw: hash.bytes)
            writer.write(string: reason)
        }
        return writer.bytes
    }

    /// Decodes a frame's payload. Never trusts a length or count.
    /// - Throws: `SyncError(.malformed)`.
    init(type: UInt8, payload: ArraySlice<UInt8>) throws(SyncError) {
        guard let kind = Kind(rawValue: type) else { throw SyncError(.malformed, "unknown message type \(type)") }
        var reader = ByteReader(payload)
        do {
            switch kind {
            case .hello:
                let version = try reader.readVarint()
                let name = try reader.readString("name")
                guard name.utf8.count <= Message.maximumNameBytes else {
                    throw CodecError(.overflow, "a daemon name of \(name.utf8.count) bytes")
                }
                guard !PrintableText.hasControlCharacters(name) else {
                    throw CodecError(.invalidValue, "a daemon name with control characters (\(PrintableText.escaped(name)))")
                }
                let count = try reader.readCount("capabilities")
                guard count <= 64 else { throw CodecError(.overflow, "\(count) capabilities (at most 64)") }
                var capabilities: [String] = []
                for _ in 0..<count {
                    let capability = try reader.readString("capability")
                    guard capability.utf8.count <= 64 else { throw CodecError(.overflow, "a capability of \(capability.utf8.count) bytes") }
                    capabilities.append(capability)
                }
                self = .hello(version: version, name: name, capabilities: capabilities)
            case .advertise:
                let document = try reader.readDocument()
                let kind = try reader.readByte()
                guard kind == 1 || kind == 2 else { throw CodecError(.invalidValue, "document kind \(kind)") }
                let name = try reader.readString("name")
                guard name.utf8.count <= Message.maximumNameBytes else {
                    throw CodecError(.overflow, "a document name of \(name.utf8.count) bytes")
                }
                guard !PrintableText.hasControlCharacters(name) else {
                    throw CodecError(.invalidValue, "a document name with control characters (\(PrintableText.escaped(name)))")
                }
                guard let role = Role(rawValue: try reader.readByte()) else { throw CodecError(.invalidValue, "unknown role") }
                let version = try VersionVector(from: &reader)
                self = .advertise(Advertisement(document: document, kind: kind, name: name, role: role, version: version))
            case .changes:
                let document = try reader.readDocument()
                self = .changes(document: document, batch: try reader.readSlice(count: reader.remaining))
            case .snapshot:
                let document = try reader.readDocument()
                let kind = try reader.readByte()
                self = .snapshot(document: document, kind: kind, bytes: try reader.readSlice(count: reader.remaining))
            case .snapshotPart:
                let document = try reader.readDocument()
                let kind = try reader.readByte()
                let total = try reader.readVarint()
                let offset = try reader.readVarint()
                let bytes = try reader.readSlice(count: reader.remaining)
                guard !bytes.isEmpty, offset < total, UInt64(bytes.count) <= total - offset else {
                    throw CodecError(.invalidValue, "a part of \(bytes.count) bytes at \(offset) of a \(total)-byte snapshot")
                }
                self = .snapshotPart(document: document, kind: kind, total: total, offset: offset, bytes: bytes)
            case .ack:
                self = .ack(document: try reader.readDocument(), version: try VersionVector(from: &reader))
            case .ping: self = .ping(try reader.readVarint())
            case .pong: self = .pong(try reader.readVarint())
            // A peer's words are kept to show and log: escaped, and bounded.
            case .error: self = .error(code: try reader.readVarint(), message: Self.peerWords(try reader.readString("message")))
            case .goodbye: self = .goodbye(reason: Self.peerWords(try reader.readString("reason")))
            case .blobHave:
                let document = try reader.readDocument()
                let count = try reader.readCount("blob hashes", minimumElementSize: 32)
                guard count <= Message.maximumHaveHashes else {
                    throw CodecError(.overflow, "\(count) blob hashes (at most \(Message.maximumHaveHashes))")
                }
                var hashes: [BlobHash] = []
                for _ in 0..<count { hashes.append(try reader.readHash()) }
                self = .blobHave(document: document, hashes: hashes)
            case .blobRequest:
                let document = try reader.readDocument()
                let hash = try reader.readHash()
                let manifest = try reader.readBool("manifest")
                let count = try reader.readCount("chunk indices")
                guard count <= BlobRequest.maximumChunks else {
                    throw CodecError(.overflow, "\(count) chunks in one request (at most \(BlobRequest.maximumChunks))")
                }
                var chunks: [UInt32] = []
                for _ in 0..<count { chunks.append(UInt32(try reader.readVarint(max: UInt64(UInt32.max), "chunk index"))) }
                self = .blobRequest(BlobRequest(document: document, hash: hash, manifest: manifest, chunks: chunks))
            case .blobManifest:
                let hash = try reader.readHash()
                let byteCount = try reader.readVarint()
                let typeByte = try reader.readByte()
                guard let type = MediaType(rawValue: typeByte) else { throw CodecError(.invalidValue, "unknown media type \(typeByte)") }
                let chunkSize = try reader.readVarint(max: UInt64(BlobManifest.chunkSizes.upperBound), "chunk size")
                guard BlobManifest.chunkSizes.contains(UInt32(chunkSize)) else {
                    throw CodecError(.invalidValue, "a chunk size of \(chunkSize) bytes")
                }
                let count = try reader.readCount("chunk hashes", minimumElementSize: 32)
                guard byteCount > 0, count <= BlobManifest.maximumChunks,
                    UInt64(count) == (byteCount + chunkSize - 1) / chunkSize
                else { throw CodecError(.invalidValue, "\(count) chunks for \(byteCount) bytes in chunks of \(chunkSize)") }
                var chunks: [BlobHash] = []
                chunks.reserveCapacity(count)
                for _ in 0..<count { chunks.append(try reader.readHash()) }
                self = .blobManifest(BlobManifest(hash: hash, byteCount: byteCount, type: type, chunkSize: UInt32(chunkSize), chunks: chunks))
            case .blobChunk:
                let hash = try reader.readHash()
                let index = UInt32(try reader.readVarint(max: UInt64(UInt32.max), "chunk index"))
                let bytes = try reader.readSlice(count: reader.remaining)
                guard !bytes.isEmpty, bytes.count <= Int(BlobManifest.chunkSizes.upperBound) else {
                    throw CodecError(.invalidValue, "a chunk of \(bytes.count) bytes")
                }
                self = .blobChunk(hash: hash, index: index, bytes: bytes)
            case .blobUnavailable:
                self = .blobUnavailable(hash: try reader.readHash(), reason: Self.peerWords(try reader.readString("reason")))
            }
            try reader.expectEnd("the \(kind) message")
        } catch {
            throw SyncError(.malformed, "bad \(kind) message: \(error)")
        }
    }

    /// A short description for logs (no payload bytes).
    package var summary: String {
        switch self {
        case .hello(let version, let name, _): "hello v\(version) from \(name)"
        case .advertise(let ad): "advertise \(ad.document) \(ad.version)"
        case .changes(let document, let batch): "changes \(document) (\(batch.count) bytes)"
        case .snapshot(let document, _, let bytes): "snapshot \(document) (\(bytes.count) bytes)"
        case .snapshotPart(let document, _, let total, let offset, let bytes):
            "snapshot part \(document) (\(bytes.count) bytes at \(offset) of \(total))"
        case .ack(let document, let version): "ack \(document) \(version)"
        case .ping(let nonce): "ping \(nonce)"
        case .pong(let nonce): "pong \(nonce)"
        case .error(let code, let message): "error \(SyncError.Code(rawValue: code)): \(message)"
        case .goodbye(let reason): "goodbye: \(reason)"
        case .blobHave(let document, let hashes): "blob-have \(document) (\(hashes.count))"
        case .blobRequest(let request):
            "blob-request \(request.hash)\(request.manifest ? " manifest" : "") (\(request.chunks.count) chunks)"
        case .blobManifest(let manifest): "blob-manifest \(manifest.hash) (\(manifest.chunks.count) chunks)"
        case .blobChunk(let hash, let index, let bytes): "blob-chunk \(hash) #\(index) (\(bytes.count) bytes)"
        case .blobUnavailable(let hash, let reason): "blob-unavailable \(hash): \(reason)"
        }
    }
}

extension ByteWriter {
    mutating func write(document: DocumentID) {
        write(fixed64: document.high)
        write(fixed64: document.low)
    }
}

extension ByteReader {
    mutating func readHash() throws(CodecError) -> BlobHash {
        BlobHash(try readSlice(count: 32))!
    }

    mutating func readDocument() throws(CodecError) -> DocumentID {
        DocumentID(high: try readFixed64(), low: try readFixed64())
    }
}
