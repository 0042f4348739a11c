/// The parts every snapshot shares: header, replica table, clocks, sections
/// and the trailing checksum (docs/crdt.md, "Snapshots").
enum SnapshotKind: UInt8 {
    case project = 1
    case library = 2
}

/// The header fields of a snapshot.
struct SnapshotHeader {
    var kind: SnapshotKind
    var document: DocumentID
    var versionVector: VersionVector
    var clock: UInt64
    var lastCounters: [ReplicaID: UInt64]
    var createdAt: Int64?
    var updatedAt: Int64?
    /// Signed documents (format 2): who authored what, how far each chain
    /// goes, each replica's causal frontier, and the access list.
    var authors: [ReplicaID: AuthorRecord] = [:]
    var heads: [ReplicaID: ChainHead] = [:]
    var frontiers: [ReplicaID: VersionVector] = [:]
    var access = AccessList()
}

enum SnapshotFormat {
    static let magic: [UInt8] = Array("STRY".utf8)
    /// Format 2 adds authorship to the header; format 3 appends sections (a
    /// project's tags, its overwritten text values, its named versions).
    /// Format 4 orders a text field's overwritten values latest first by
    /// wall time and keeps the latest as its value (`FieldWrites`); format 3
    /// ordered them by stamp, and is reordered as it is read. Formats 1 to 3
    /// are still read.
    static let version: UInt64 = 4
}

/// Writes a snapshot: header, then sections each length-prefixed, then a checksum.
struct SnapshotWriter {
    private(set) var writer: ByteWriter
    let table: ReplicaTable

    /// `capacity`: about the snapshot's size, where the document can tell.
    init(header: SnapshotHeader, replicas: Set<ReplicaID>, capacity: Int = 1 << 16) {
        writer = ByteWriter(capacity: capacity)
        var all = replicas
        all.formUnion(header.versionVector.replicas)
        all.formUnion(header.lastCounters.keys)
        all.formUnion(header.authors.keys)
        all.formUnion(header.heads.keys)
        for (replica, frontier) in header.frontiers {
            all.insert(replica)
            all.formUnion(frontier.replicas)
        }
        if let owner = header.access.ownerReplica { all.insert(owner) }
        for grant in header.access.allGrants { all.insert(grant.id.replica) }
        table = ReplicaTable(sorted: all.sorted())
        writer.write(raw: SnapshotFormat.magic)
        writer.write(varint: SnapshotFormat.version)
        writer.write(byte: header.kind.rawValue)
        writer.write(fixed64: header.document.high)
        writer.write(fixed64: header.document.low)
        writer.write(count: table.replicas.count)
        for replica in table.replicas { writer.write(fixed64: replica.rawValue) }
        let vv = header.versionVector.sortedEntries
        writer.write(count: vv.count)
        for (replica, seq) in vv {
            writer.write(count: table.index(of: replica))
            writer.write(varint: seq)
        }
        writer.write(varint: header.clock)
        let counters = header.lastCounters.sorted { $0.key < $1.key }
        writer.write(count: counters.count)
        for (replica, counter) in counters {
            writer.write(count: table.index(of: replica))
            writer.write(varint: counter)
        }
        for time in [header.createdAt, header.updatedAt] {
            writer.write(bool: time != nil)
            if let time { writer.write(signed: time) }
        }
        writer.writeAuthorship(of: header, table: table)
    }

    /// Appends one section written by `body`; `capacity`, a bound on its
    /// size where one is known, spares the copies of growing by doubling (a
    /// project's point blobs are most of its snapshot).
    mutating func section(capacity: Int = 256, _ body: (inout ByteWriter) -> Void) {
        var part = ByteWriter(capacity: capacity)
        body(&part)
        writer.write(lengthPrefixed: part.bytes)
    }

    /// Appends the checksum and returns the bytes, in a buffer of exactly their size.
    consuming func finish() -> [UInt8] {
        var checksum = ByteWriter(capacity: 8)
        checksum.write(fixed64: Checksum.of(writer.bytes[...]))
        let body = writer.bytes
        return [UInt8](unsafeUninitializedCapacity: body.count + 8) { output, count in
            _ = output.initialize(fromContentsOf: body)
            _ = output[body.count...].initialize(fromContentsOf: checksum.bytes)
            count = body.count + 8
        }
    }
}

/// Reads what `SnapshotWriter` wrote, checking the checksum first.
struct SnapshotReader {
    var header: SnapshotHeader
    let replicas: [ReplicaID]
    /// The format the snapshot was written in (1 to `SnapshotFormat.version`;
    /// sections appended by later formats are read only when it has them).
    let format: UInt64
    private var reader: ByteReader

    init(_ bytes: [UInt8]) throws(CodecError) {
        guard bytes.count >= 12 else { throw CodecError(.truncated, "a snapshot is at least 12 bytes") }
        guard Array(bytes[0..<4]) == SnapshotFormat.magic else {
            throw CodecError(.badMagic, "not a Storyteller snapshot")
        }
        let body = bytes[..<(bytes.count - 8)]
        var tail = ByteReader(bytes[(bytes.count - 8)...])
        let expected = try tail.readFixed64()
        guard Checksum.of(body) == expected else {
            throw CodecError(.invalidValue, "snapshot checksum mismatch: the bytes are corrupted")
        }
        try self.init(body: body)
    }

    /// Reads the header (through the authorship) from the first bytes of a
    /// snapshot that has not all arrived: the checksum, at the end, is not
    /// checked, so what it says is only a claim, to check again once whole.
    /// - Throws: `CodecError(.truncated)` while the header has not all arrived.
    init(prefix bytes: ArraySlice<UInt8>) throws(CodecError) {
        guard bytes.count >= 4 else { throw CodecError(.truncated, "the snapshot's magic has not arrived") }
        guard Array(bytes.prefix(4)) == SnapshotFormat.magic else { throw CodecError(.badMagic, "not a Storyteller snapshot") }
        try self.init(body: bytes)
    }

    private init(body: ArraySlice<UInt8>) throws(CodecError) {
        reader = ByteReader(body)
        _ = try reader.readSlice(count: 4)
        let version = try reader.readVarint()
        guard version >= 1 && version <= SnapshotFormat.version else {
            throw CodecError(.unsupportedVersion, "snapshot format \(version) (this build reads 1 to \(SnapshotFormat.version))")
        }
        format = version
        guard let kind = SnapshotKind(rawValue: try reader.readByte()) else {
            throw CodecError(.invalidValue, "unknown snapshot kind")
        }
        let document = DocumentID(high: try reader.readFixed64(), low: try reader.readFixed64())
        let replicaCount = try reader.readCount("replica table", minimumElementSize: 8)
        var replicas: [ReplicaID] = []
        for _ in 0..<replicaCount {
            let replica = ReplicaID(try reader.readFixed64())
            if let last = replicas.last, replica <= last {
                throw CodecError(.invalidValue, "snapshot replica table is not sorted")
            }
            replicas.append(replica)
        }
        self.replicas = replicas
        var vv = VersionVector()
        var previous: ReplicaID?
        for _ in 0..<(try reader.readCount("version vector", minimumElementSize: 2)) {
            let replica = try reader.readReplica(in: replicas)
            let seq = try reader.readVarint()
            guard previous.map({ replica > $0 }) ?? true, replica != .reserved, seq >= 1 else {
                throw CodecError(.invalidValue, "version vector entries must be sorted, unique, non-reserved and non-zero")
            }
            previous = replica
            vv[replica] = seq
        }
        let clock = try reader.readVarint()
        var counters: [ReplicaID: UInt64] = [:]
        for _ in 0..<(try reader.readCount("counters", minimumElementSize: 2)) {
            let replica = try reader.readReplica(in: replicas)
            let counter = try reader.readVarint()
            guard counter <= clock, counters.updateValue(counter, forKey: replica) == nil else {
                throw CodecError(.invalidValue, "counter entry for \(replica) is repeated or beyond the clock")
            }
        }
        let createdAt = try reader.readBool("created flag") ? try reader.readSigned() : nil
        let updatedAt = try reader.readBool("updated flag") ? try reader.readSigned() : nil
        header = SnapshotHeader(
            kind: kind, document: document, versionVector: vv, clock: clock, lastCounters: counters,
            createdAt: createdAt, updatedAt: updatedAt)
        if version >= 2 { try reader.readAuthorship(into: &header, replicas: replicas) }
    }

    /// The next section's reader.
    mutating func section(_ name: String) throws(CodecError) -> ByteReader {
        ByteReader(try reader.readLengthPrefixed(name))
    }

    func expectEnd() throws(CodecError) {
        try reader.expectEnd("the snapshot")
    }
}

// MARK: - Columns

extension ByteWriter {
    /// A run-length column: (run length, value) pairs, as one length-prefixed block.
    mutating func write(runLengthColumn values: [UInt64]) {
        var column = ByteWriter(capacity: 16)
        var index = 0
        while index < values.count {
            var end = index + 1
            while end < values.count && values[end] == values[index] { end += 1 }
            column.write(count: end - index)
            column.write(varint: values[index])
            index = end
        }
        write(lengthPrefixed: column.bytes)
    }

    /// A plain varint column as one length-prefixed block.
    mutating func write(varintColumn values: [UInt64]) {
        var column = ByteWriter(capacity: values.count + 8)
        for value in values { column.write(varint: value) }
        write(lengthPrefixed: column.bytes)
    }

    /// A list of position trees: container id, then entries by id.
    mutating func write(trees: [OpID: PositionTree], table: ReplicaTable) {
        write(count: trees.count)
        for (container, tree) in trees.sorted(by: { $0.key < $1.key }) {
            write(container, table: table)
            write(count: tree.count)
            for (id, entry) in tree.entries.sorted(by: { $0.key < $1.key }) {
                write(id, table: table)
                write(Anchor(parent: entry.parent, side: entry.side), table: table)
                write(entry.object, table: table)
            }
        }
    }

    /// Fields of an object: count, then key, value, stamp.
    mutating func write(fields: [FieldKey: Register<FieldValue>], table: ReplicaTable) {
        write(count: fields.count)
        for (key, register) in fields.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            write(byte: key.rawValue)
            if case .id(let id) = register.value {
                write(byte: 7)
                write(id, table: table)
            } else {
                write(fieldValue: register.value)
            }
            write(register.stamp, table: table)
        }
    }
}

extension ByteReader {
    /// Reads exactly `count` values from a run-length column.
    mutating func readRunLengthColumn(count: Int, _ name: String) throws(CodecError) -> [UInt64] {
        var column = ByteReader(try readLengthPrefixed(name))
        var values: [UInt64] = []
        values.reserveCapacity(count)
        while !column.isAtEnd {
            let run = try column.readVarint()
            let value = try column.readVarint()
            guard run >= 1, run <= UInt64(count - values.count) else {
                throw CodecError(.overflow, "\(name) runs exceed \(count) values")
            }
            values.append(contentsOf: repeatElement(value, count: Int(run)))
        }
        guard values.count == count else { throw CodecError(.truncated, "\(name) has \(values.count) of \(count) values") }
        return values
    }

    /// Reads exactly `count` varints from a column.
    mutating func readVarintColumn(count: Int, _ name: String) throws(CodecError) -> [UInt64] {
        var column = ByteReader(try readLengthPrefixed(name))
        guard count <= column.remaining else { throw CodecError(.overflow, "\(name) cannot hold \(count) values") }
        var values: [UInt64] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try column.readVarint()) }
        try column.expectEnd(name)
        return values
    }

    mutating func readTrees(replicas: [ReplicaID]) throws(CodecError) -> [OpID: PositionTree] {
        var trees: [OpID: PositionTree] = [:]
        for _ in 0..<(try readCount("lists", minimumElementSize: 3)) {
            let container = try readOpID(replicas: replicas)
            guard trees[container] == nil else { throw CodecError(.invalidValue, "list \(container) repeated") }
            var tree = PositionTree()
            var previous: OpID?
            for _ in 0..<(try readCount("entries", minimumElementSize: 5)) {
                let id = try readOpID(replicas: replicas)
                let anchor = try readAnchor(replicas: replicas)
                let object = try readOpID(replicas: replicas)
                // Sorted by id with every parent before its children: the tree can
                // be rebuilt in one pass and cannot contain a cycle.
                guard previous.map({ id > $0 }) ?? true, tree.isValid(anchor), anchor.parent.map({ $0 < id }) ?? true
                else { throw CodecError(.badReference, "entry \(id) of \(container) is out of order or unanchored") }
                tree.insertWithoutOrdering(id, object: object, anchor: anchor)
                previous = id
            }
            tree.rebuildOrder()
            trees[container] = tree
        }
        return trees
    }

    mutating func readFields(replicas: [ReplicaID]) throws(CodecError) -> [FieldKey: Register<FieldValue>] {
        var fields: [FieldKey: Register<FieldValue>] = [:]
        for _ in 0..<(try readCount("fields", minimumElementSize: 4)) {
            guard let key = FieldKey(rawValue: try readByte()) else {
                throw CodecError(.invalidValue, "unknown field key")
            }
            let tag = try readByte()
            let value = tag == 7 ? .id(try readOpID(replicas: replicas)) : try readFieldValue(tag: tag)
            let stamp = try readOpID(replicas: replicas)
            guard fields.updateValue(Register(value: value, stamp: stamp), forKey: key) == nil else {
                throw CodecError(.invalidValue, "field \(key) repeated")
            }
        }
        return fields
    }
}

/// What a snapshot's header says, read without decoding the document (the
/// checksum is still verified).
package struct SnapshotSummary: Sendable, Hashable {
    package var document: DocumentID
    package var isLibrary: Bool
    /// The changes the snapshot covers.
    package var version: VersionVector
    /// The access list the snapshot carries.
    var access: AccessList

    /// Reads the header of snapshot bytes.
    /// - Throws: `CodecError` if they are not a valid snapshot.
    package init(reading bytes: [UInt8]) throws(CodecError) {
        self.init(try SnapshotReader(bytes).header)
    }

    /// Reads the header from the first bytes of a snapshot still arriving
    /// (its checksum, at the end, unchecked): enough to refuse at once a
    /// snapshot whose access list does not let its sender send it, before
    /// the rest is held.
    /// - Throws: `CodecError(.truncated)` while the header (with its
    ///   authorship) has not all arrived; another `CodecError` for bytes
    ///   that are no snapshot.
    package init(readingPrefix bytes: ArraySlice<UInt8>) throws(CodecError) {
        self.init(try SnapshotReader(prefix: bytes).header)
    }

    private init(_ header: SnapshotHeader) {
        document = header.document
        isLibrary = header.kind == .library
        version = header.versionVector
        access = header.access
    }

    /// A peer's role in the access list the snapshot carries (its claim:
    /// merging checks it against the owner binding, authors and chains).
    package func role(of peer: PeerID) -> Role { access.role(of: peer) }
}

// MARK: - Authorship

private enum AccessFlag {
    static let owner: UInt8 = 1
    static let legacy: UInt8 = 2
    static let ownerReplica: UInt8 = 4
    static let all: UInt8 = 7
}

extension ByteWriter {
    mutating func writeAuthorship(of header: SnapshotHeader, table: ReplicaTable) {
        let authors = header.authors.sorted { $0.key < $1.key }
        write(count: authors.count)
        for (replica, record) in authors {
            write(count: table.index(of: replica))
            write(fixed64: record.nonce)
            write(lengthPrefixed: record.certificate)
        }
        let heads = header.heads.sorted { $0.key < $1.key }
        write(count: heads.count)
        for (replica, head) in heads {
            write(count: table.index(of: replica))
            write(varint: head.seq)
            write(raw: head.hash.bytes)
            if let signature = head.signature {
                write(byte: 1)
                write(raw: signature)
            } else {
                write(byte: 0)
            }
        }
        let frontiers = header.frontiers.sorted { $0.key < $1.key }
        write(count: frontiers.count)
        for (replica, frontier) in frontiers {
            write(count: table.index(of: replica))
            let entries = frontier.sortedEntries
            write(count: entries.count)
            for (other, seq) in entries {
                write(count: table.index(of: other))
                write(varint: seq)
            }
        }
        let access = header.access
        var flags: UInt8 = access.owner == nil ? 0 : AccessFlag.owner
        if access.isLegacy { flags |= AccessFlag.legacy }
        if access.ownerReplica != nil { flags |= AccessFlag.ownerReplica }
        write(byte: flags)
        if let owner = access.owner {
            write(raw: owner.digest)
            if let replica = access.ownerReplica { write(count: table.index(of: replica)) }
            let salt = access.salt ?? 0
            write(fixed64: UInt64(truncatingIfNeeded: salt >> 64))
            write(fixed64: UInt64(truncatingIfNeeded: salt))
        }
        let grants = access.allGrants
        write(count: grants.count)
        for grant in grants {
            write(grant.id, table: table)
            write(varint: grant.seq)
            write(raw: grant.author.digest)
            write(raw: grant.target.digest)
            write(byte: grant.role.rawValue)
        }
    }
}

extension ByteReader {
    mutating func readPeerID() throws(CodecError) -> PeerID {
        PeerID(digest: Array(try readSlice(count: 32)))!
    }

    mutating func readAuthorship(into header: inout SnapshotHeader, replicas: [ReplicaID]) throws(CodecError) {
        for _ in 0..<(try readCount("authors", minimumElementSize: 10)) {
            let replica = try readReplica(in: replicas)
            let nonce = try readFixed64()
            let certificate = try readLengthPrefixed("author certificate")
            guard certificate.count <= AuthorDeclaration.maximumCertificateBytes, header.authors[replica] == nil else {
                throw CodecError(.invalidValue, "author of \(replica) repeated or too large")
            }
            // The peer and key are filled in by whoever checks the certificate.
            header.authors[replica] = AuthorRecord(
                peer: PeerID(digest: [UInt8](repeating: 0, count: 32))!, publicKey: [], certificate: Array(certificate), nonce: nonce)
        }
        for _ in 0..<(try readCount("heads", minimumElementSize: 35)) {
            let replica = try readReplica(in: replicas)
            let seq = try readVarint()
            let hash = Digest32(try readSlice(count: 32))!
            let signature = try readBool("head signature flag") ? Array(try readSlice(count: Authorship.signatureBytes)) : nil
            guard seq >= 1, header.heads[replica] == nil else { throw CodecError(.invalidValue, "head of \(replica) repeated") }
            header.heads[replica] = ChainHead(seq: seq, hash: hash, signature: signature)
        }
        for _ in 0..<(try readCount("frontiers", minimumElementSize: 2)) {
            let replica = try readReplica(in: replicas)
            var frontier = VersionVector()
            for _ in 0..<(try readCount("frontier", minimumElementSize: 2)) {
                let other = try readReplica(in: replicas)
                let seq = try readVarint()
                guard seq >= 1, other != .reserved, frontier[other] == 0 else {
                    throw CodecError(.invalidValue, "frontier of \(replica) has a bad entry")
                }
                frontier[other] = seq
            }
            guard header.frontiers[replica] == nil else { throw CodecError(.invalidValue, "frontier of \(replica) repeated") }
            header.frontiers[replica] = frontier
        }
        let flags = try readByte()
        guard flags & ~AccessFlag.all == 0 else { throw CodecError(.invalidValue, "unknown access flags \(flags)") }
        var access = AccessList()
        if flags & AccessFlag.owner != 0 {
            access.owner = try readPeerID()
            if flags & AccessFlag.ownerReplica != 0 { access.ownerReplica = try readReplica(in: replicas) }
            let high = UInt128(try readFixed64())
            access.salt = high << 64 | UInt128(try readFixed64())
            access.isLegacy = flags & AccessFlag.legacy != 0
        }
        var previous: OpID?
        for _ in 0..<(try readCount("grants", minimumElementSize: 68)) {
            let id = try readOpID(replicas: replicas)
            let seq = try readVarint()
            let author = try readPeerID()
            let target = try readPeerID()
            guard let role = Role(rawValue: try readByte()), role != .owner, previous.map({ id > $0 }) ?? true, seq >= 1 else {
                throw CodecError(.invalidValue, "access grant \(id) is out of order or has a bad role")
            }
            previous = id
            access.add(AccessGrant(id: id, seq: seq, author: author, target: target, role: role))
        }
        header.access = access
    }
}
