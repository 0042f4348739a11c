/// One atomic local transaction: everything a user did in one edit, applied
/// everywhere all at once or not at all.
///
/// Sequence numbers run 1, 2, 3 … per replica with no gaps. `dependencies`
/// holds the version vector the change was made on, delta-encoded against the
/// same replica's previous change: only the entries that grew since. A
/// receiver has applied that previous change (sequence numbers have no gaps),
/// so checking the delta is enough to know every dependency is present.
package struct Change: Hashable, Sendable {
    /// The replica that made the change.
    package var replica: ReplicaID
    /// Its position in that replica's sequence (1, 2, 3 …).
    package var seq: UInt64
    /// The Lamport counter of the first operation; the others follow.
    package var startCounter: UInt64
    /// Milliseconds since 1970 on the author's clock; informational only.
    package var wallTime: Int64
    /// Entries of the author's version vector that grew since its previous change.
    package var dependencies: VersionVector
    /// The operations, applied in order.
    package var operations: Operations
    /// Who the replica's author is: carried by the replica's first change in a
    /// document (signed documents), nil otherwise.
    package var declaration: AuthorDeclaration?
    /// The author's Ed25519 signature of the replica's chain up to this change
    /// (`Authorship`), when it came with the change: not part of the change's
    /// bytes, since one signature covers a run and most need not travel.
    package var signature: [UInt8]?

    /// Creates a change.
    package init(
        replica: ReplicaID, seq: UInt64, startCounter: UInt64, wallTime: Int64,
        dependencies: VersionVector, operations: Operations, declaration: AuthorDeclaration? = nil,
        signature: [UInt8]? = nil
    ) {
        self.replica = replica
        self.seq = seq
        self.startCounter = startCounter
        self.wallTime = wallTime
        self.dependencies = dependencies
        self.operations = operations
        self.declaration = declaration
        self.signature = signature
    }

    /// Creates a change of the operations in an array.
    package init(
        replica: ReplicaID, seq: UInt64, startCounter: UInt64, wallTime: Int64,
        dependencies: VersionVector, operations: [Operation], declaration: AuthorDeclaration? = nil,
        signature: [UInt8]? = nil
    ) {
        self.init(
            replica: replica, seq: seq, startCounter: startCounter, wallTime: wallTime, dependencies: dependencies,
            operations: Operations(operations), declaration: declaration, signature: signature)
    }

    /// The id of the operation at `index`.
    package func opID(at index: Int) -> OpID {
        OpID(counter: startCounter + UInt64(index), replica: replica)
    }

    /// The point blobs this change adds, by the id of the operation adding each.
    package var addedPoints: [(id: OpID, points: PointsBlob)] {
        operations.indices.compactMap { index in
            guard case .addStroke(_, _, let points) = operations[index] else { return nil }
            return (opID(at: index), points)
        }
    }

    /// The counter of the last operation.
    package var endCounter: UInt64 { startCounter + UInt64(max(operations.count, 1)) - 1 }

    /// The format version written at the start of every encoded change.
    /// Version 1 (no flags, never signed) is still read, for upgrades.
    package static let formatVersion: UInt8 = 2

    /// Largest counter a change may use, keeping counter arithmetic far from overflow.
    static let maximumCounter: UInt64 = 1 << 62

    /// Most operations in one change: the control API's limit per edit, so a
    /// peer cannot send what no user could make.
    package static let maximumOperations = 10_000

    /// Most points in one stroke (the control API's limit).
    package static let maximumStrokePoints = 100_000

    enum Flag {
        static let declaration: UInt8 = 1
        static let all: UInt8 = 1
    }

    /// The binary encoding (docs/crdt.md, "Changes"), unsigned.
    package func encoded() -> EncodedChange {
        encodedSharingPoints().change
    }

    /// The encoding, and for each `addStroke` operation the slice of the
    /// encoding holding its points, so the document can keep those bytes
    /// instead of a second copy. `sign`, given the bytes, returns the 64-byte
    /// signature kept beside them.
    func encodedSharingPoints(sign: ((ArraySlice<UInt8>) -> [UInt8])? = nil)
        -> (change: EncodedChange, points: [(index: Int, bytes: ArraySlice<UInt8>)])
    {
        var table = ReplicaTable(author: replica)
        var capacity = 32 + 8 * dependencies.count
        for op in operations {
            table.collect(op)
            if case .addStroke(_, _, let points) = op { capacity += points.bytes.count + 32 } else { capacity += 40 }
        }
        dependencies.forEach { replica, _ in table.add(replica) }
        capacity += 8 * table.replicas.count + (declaration?.certificate.count ?? 0) + 16
        var writer = ByteWriter(capacity: capacity)
        writer.write(byte: Change.formatVersion)
        writer.write(byte: declaration == nil ? 0 : Flag.declaration)
        writer.write(count: table.replicas.count)
        for replica in table.replicas { writer.write(fixed64: replica.rawValue) }
        writer.write(varint: seq)
        writer.write(varint: startCounter)
        writer.write(signed: wallTime)
        writer.write(count: dependencies.count)
        dependencies.forEach { replica, seq in
            writer.write(count: table.index(of: replica))
            writer.write(varint: seq)
        }
        if let declaration {
            writer.write(lengthPrefixed: declaration.certificate)
            writer.write(fixed64: declaration.nonce)
        }
        writer.write(count: operations.count)
        var pointRanges: [(Int, Range<Int>)] = []
        for (index, op) in operations.enumerated() {
            writer.write(op, table: table)
            if case .addStroke(_, _, let points) = op {
                pointRanges.append((index, (writer.count - points.bytes.count)..<writer.count))
            }
        }
        // The capacity above is a bound, about 70 bytes over: the log keeps
        // these bytes only until it packs them (`ChangeLog.packFull`), into an
        // array of their size, so they are not copied here.
        let bytes = writer.bytes
        let signature = sign.map { $0(bytes[...]) }
        precondition(signature.map { $0.count == Authorship.signatureBytes } ?? true, "an Ed25519 signature is 64 bytes")
        let change = EncodedChange(
            bytes: bytes[...], replica: replica, seq: seq, startCounter: startCounter, signature: signature)
        return (change, pointRanges.map { ($0.0, bytes[$0.1]) })
    }

    /// Decodes and structurally validates a change (every tag, index and
    /// point blob, and the wire limits); references to objects, the author's
    /// signature and rights are checked when it is applied.
    /// - Throws: `CodecError`.
    package init(decoding bytes: ArraySlice<UInt8>) throws(CodecError) {
        self = .placeholder
        try read(bytes)
    }

    /// A change to read into (`read`): no operations, no author.
    static let placeholder = Change(
        replica: .reserved, seq: 0, startCounter: 0, wallTime: 0, dependencies: VersionVector(), operations: [])

    /// Decodes `bytes` into this change, in place (see `init(decoding:)`).
    /// Reading into a change where it is kept (a batch's array) spares a
    /// copy per change: a throwing function or initializer builds a large
    /// result aside and copies it out. On a failure the change is left part read.
    /// Returns the bytes, taken and given back: moved through the reader
    /// rather than copied into it (a reference count each way, per change of
    /// every batch received).
    @discardableResult
    mutating func read(_ bytes: consuming ArraySlice<UInt8>) throws(CodecError) -> ArraySlice<UInt8> {
        var reader = ByteReader(bytes)
        let version = try reader.readByte()
        guard version == 1 || version == Change.formatVersion else {
            throw CodecError(.unsupportedVersion, "change format \(version) (this build reads 1 and \(Change.formatVersion))")
        }
        let flags = version == 1 ? 0 : try reader.readByte()
        guard flags & ~Flag.all == 0 else { throw CodecError(.invalidValue, "unknown change flags \(flags)") }
        let replicaCount = try reader.readCount("replica table", minimumElementSize: 8)
        guard replicaCount >= 1 else { throw CodecError(.invalidValue, "a change names no author") }
        // The replica table lives only while the change is read: in temporary
        // (stack) storage, not an array allocated per change.
        try withUnsafeTemporaryAllocation(of: ReplicaID.self, capacity: replicaCount) {
            (replicas: UnsafeMutableBufferPointer<ReplicaID>) throws(CodecError) in
            for index in 0..<replicaCount { replicas.initializeElement(at: index, to: ReplicaID(try reader.readFixed64())) }
            try read(from: &reader, flags: flags, replicas: UnsafeBufferPointer(replicas))
        }
        try reader.expectEnd("the change")
        return reader.base
    }

    /// The rest of a change after its replica table.
    private mutating func read(from reader: inout ByteReader, flags: UInt8, replicas: UnsafeBufferPointer<ReplicaID>) throws(CodecError) {
        guard replicas[0] != .reserved else { throw CodecError(.invalidValue, "the reserved replica cannot author") }
        replica = replicas[0]
        seq = try reader.readVarint()
        startCounter = try reader.readVarint()
        guard seq >= 1, startCounter >= OpID.firstCounter, startCounter < Change.maximumCounter else {
            throw CodecError(.invalidValue, "sequence number or counter out of range")
        }
        wallTime = try reader.readSigned()
        let depCount = try reader.readCount("dependencies", minimumElementSize: 2)
        dependencies = VersionVector(minimumCapacity: depCount)
        for _ in 0..<depCount {
            let replica = try reader.readReplica(in: replicas)
            let depSeq = try reader.readVarint()
            guard replica != replicas[0], replica != .reserved, depSeq >= 1, dependencies[replica] == 0 else {
                throw CodecError(.invalidValue, "dependency on \(replica) is invalid or repeated")
            }
            dependencies[replica] = depSeq
        }
        declaration = nil
        if flags & Flag.declaration != 0 {
            let certificate = try reader.readLengthPrefixed("author certificate")
            guard certificate.count <= AuthorDeclaration.maximumCertificateBytes else {
                throw CodecError(.overflow, "an author certificate of \(certificate.count) bytes")
            }
            declaration = AuthorDeclaration(certificate: Array(certificate), nonce: try reader.readFixed64())
        }
        let opCount = try reader.readCount("operations", minimumElementSize: 2)
        guard opCount >= 1, opCount <= Change.maximumOperations, startCounter + UInt64(opCount) < Change.maximumCounter else {
            throw CodecError(.invalidValue, "a change has \(opCount) operations (1 to \(Change.maximumOperations))")
        }
        // Read into the empty placeholder, a change has no operations to
        // drop (assigning an empty value destroyed them all the same).
        if !operations.isEmpty { operations = Operations() }
        operations.reserveCapacity(opCount)
        for _ in 0..<opCount { operations.append(try reader.readOperation(replicas: replicas)) }
        signature = nil
    }
}
