/// One atomic local transaction: everything a user did in one edit, applied
/// everywhere all at once or not at all.
///
/// Sequence numbers run 1, 2, 3 … per replica with no gaps. `dependencies`
/// holds the version vector the change was made on, delta-encoded against the
/// same replica's previous change: only the entries that grew since. A
/// receiver has applied that previous change (sequence numbers have no gaps),
/// so checking the delta is enough to know every dependency is present.
public struct Change: Hashable, Sendable {
    /// The replica that made the change.
    public var replica: ReplicaID
    /// Its position in that replica's sequence (1, 2, 3 …).
    public var seq: UInt64
    /// The Lamport counter of the first operation; the others follow.
    public var startCounter: UInt64
    /// Milliseconds since 1970 on the author's clock; informational only.
    public var wallTime: Int64
    /// Entries of the author's version vector that grew since its previous change.
    public var dependencies: VersionVector
    /// The operations, applied in order.
    public var operations: Operations
    /// Who the replica's author is: carried by the replica's first change in a
    /// document (signed documents), nil otherwise.
    public var declaration: AuthorDeclaration?
    /// The author's Ed25519 signature of the replica's chain up to this change
    /// (`Authorship`), when it came with the change: not part of the change's
    /// bytes, since one signature covers a run and most need not travel.
    public var signature: [UInt8]?

    /// Creates a change.
    public init(
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
    public init(
        replica: ReplicaID, seq: UInt64, startCounter: UInt64, wallTime: Int64,
        dependencies: VersionVector, operations: [Operation], declaration: AuthorDeclaration? = nil,
        signature: [UInt8]? = nil
    ) {
        self.init(
            replica: replica, seq: seq, startCounter: startCounter, wallTime: wallTime, dependencies: dependencies,
            operations: Operations(operations), declaration: declaration, signature: signature)
    }

    /// The id of the operation at `index`.
    public func opID(at index: Int) -> OpID {
        OpID(counter: startCounter + UInt64(index), replica: replica)
    }

    /// The point blobs this change adds, by the id of the operation adding each.
    public var addedPoints: [(id: OpID, points: PointsBlob)] {
        operations.indices.compactMap { index in
            guard case .addStroke(_, _, let points) = operations[index] else { return nil }
            return (opID(at: index), points)
        }
    }

    /// The counter of the last operation.
    public var endCounter: UInt64 { startCounter + UInt64(max(operations.count, 1)) - 1 }

    /// The format version written at the start of every encoded change.
    /// Version 1 (no flags, never signed) is still read, for upgrades.
    public static let formatVersion: UInt8 = 2

    /// Largest counter a change may use, keeping counter arithmetic far from overflow.
    static let maximumCounter: UInt64 = 1 << 62

    /// Most operations in one change: the control API's limit per edit, so a
    /// peer cannot send what no user could make.
    public static let maximumOperations = 10_000

    /// Most points in one stroke (the control API's limit).
    public static let maximumStrokePoints = 100_000

    fileprivate enum Flag {
        static let declaration: UInt8 = 1
        static let all: UInt8 = 1
    }

    /// The binary encoding (docs/crdt.md, "Changes"), unsigned.
    public func encoded() -> EncodedChange {
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
    public init(decoding bytes: ArraySlice<UInt8>) throws(CodecError) {
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

/// A change as bytes, with the header fields needed to route and order it.
/// This is what logs keep and what travels on the wire. Two are equal when
/// their bytes are.
public struct EncodedChange: Hashable, Sendable {
    /// The encoded change.
    public let bytes: ArraySlice<UInt8>
    public let replica: ReplicaID
    public let seq: UInt64
    public let startCounter: UInt64
    /// The last operation's counter, read from the header when asked (a
    /// log read for a sync never asks: not stored, 16 bytes less to copy
    /// per change read).
    public var endCounter: UInt64 { Self.headerFields(of: bytes).endCounter }
    /// When the change was made, read from the header when asked.
    public var wallTime: Int64 { Self.headerFields(of: bytes).wallTime }
    /// The author's signature of its chain up to this change, when it came
    /// with it (it travels only where a receiver checks it: `ChangeBatch.encode`).
    public let signature: [UInt8]?
    /// Whether this daemon checked (or made) this change's own signature, not
    /// only a later one in its chain: a sender ends every replica's run in a
    /// batch at such a change, so the receiver's check of that signature passes.
    public internal(set) var isAnchor = false

    /// `bytes` must encode a change with these header fields.
    init(
        bytes: ArraySlice<UInt8>, replica: ReplicaID, seq: UInt64, startCounter: UInt64,
        signature: [UInt8]? = nil, isAnchor: Bool = false
    ) {
        self.bytes = bytes
        self.replica = replica
        self.seq = seq
        self.startCounter = startCounter
        self.signature = signature
        self.isAnchor = isAnchor
    }

    public static func == (lhs: EncodedChange, rhs: EncodedChange) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// What the chain hash covers: the bytes (the signature is beside them).
    var body: ArraySlice<UInt8> { bytes }

    /// The same change with another signature beside it (nil: none).
    public func withSignature(_ signature: [UInt8]?) -> EncodedChange {
        EncodedChange(
            bytes: bytes, replica: replica, seq: seq, startCounter: startCounter, signature: signature, isAnchor: isAnchor)
    }

    /// The same change marked as checked (or not) by this daemon (as a store
    /// reads it back).
    public func markedAnchor(_ anchor: Bool) -> EncodedChange {
        var copy = self
        copy.isAnchor = anchor
        return copy
    }

    /// Decodes the change. O(size).
    /// - Throws: `CodecError`.
    public func decoded() throws(CodecError) -> Change {
        var change = try Change(decoding: bytes)
        change.signature = signature
        return change
    }

    /// Decodes `bytes` and keeps them as the encoding.
    /// - Throws: `CodecError`.
    public static func decoding(_ bytes: ArraySlice<UInt8>, signature: [UInt8]? = nil) throws(CodecError) -> (EncodedChange, Change) {
        var change = try Change(decoding: bytes)
        change.signature = signature
        return (EncodedChange(bytes: bytes, of: change), change)
    }

    /// An empty encoding, replaced before use (`ChangeBatch.decodeReceived`).
    static let placeholder = EncodedChange(bytes: [], replica: .reserved, seq: 0, startCounter: 0)

    /// `bytes`, the encoding of `change`, with its header fields and signature.
    init(bytes: ArraySlice<UInt8>, of change: borrowing Change) {
        self.init(
            bytes: bytes, replica: change.replica, seq: change.seq, startCounter: change.startCounter,
            signature: change.signature)
    }

    /// Causal order for sending: by start counter, then replica. A dependency
    /// always has a smaller counter (Lamport), so this order respects causality.
    static func causalOrder(_ a: EncodedChange, _ b: EncodedChange) -> Bool {
        a.startCounter != b.startCounter ? a.startCounter < b.startCounter : a.replica < b.replica
    }
}

/// A batch of changes on the wire or in a file: a count, then each change
/// length-prefixed, each followed by its signature when it carries one.
public enum ChangeBatch {
    /// Encodes changes in the given order, with the signatures a receiver
    /// checks: of each replica's last change in the batch, and of every change
    /// `Authorship.isCheckedInRun` names (a receiver checks those too). The
    /// others are covered by the chain and stay behind.
    public static func encode(_ changes: [EncodedChange]) -> [UInt8] {
        var last: [ReplicaID: Int] = [:]
        for index in changes.indices { last[changes[index].replica] = index }
        var writer = ByteWriter(capacity: changes.reduce(8) { $0 + $1.bytes.count + 4 } + last.count * 65)
        writer.write(count: changes.count)
        // Read in place through the buffer: a change taken out of the array
        // (`for change in changes`) was copied, a reference count each.
        changes.withUnsafeBufferPointer { changes in
            for index in changes.indices {
                writer.write(lengthPrefixed: changes[index].bytes)
                if let signature = changes[index].signature,
                    last[changes[index].replica] == index
                        || Authorship.isCheckedInRun(seq: changes[index].seq, bytes: changes[index].bytes.count)
                {
                    writer.write(byte: 1)
                    writer.write(raw: signature)
                } else {
                    writer.write(byte: 0)
                }
            }
        }
        return writer.bytes
    }

    /// Cuts changes (in causal order) into batches of about `targetBytes`
    /// each, such that every replica's last change in a batch is one whose own
    /// signature this daemon checked or made (an anchor): the receiver checks
    /// exactly that signature, and an author who signed some changes of a run
    /// badly must not make a good relay look bad. A run is extended to the
    /// next anchor (fewer than `Authorship.anchorInterval` changes of under
    /// `Authorship.anchorBytes` each away), or cut
    /// back before an unchecked tail that has no anchor yet (sent later).
    public static func split(_ changes: [EncodedChange], targetBytes: Int) -> [[EncodedChange]] {
        var byReplica: [ReplicaID: [Int]] = [:]
        for index in changes.indices { byReplica[changes[index].replica, default: []].append(index) }
        var positionInReplica = [Int](repeating: 0, count: changes.count)
        for list in byReplica.values { for (position, index) in list.enumerated() { positionInReplica[index] = position } }
        var taken = [Bool](repeating: false, count: changes.count)
        var batches: [[EncodedChange]] = []
        var cursor = 0
        func isAnchor(_ change: EncodedChange) -> Bool { change.isAnchor }
        while cursor < changes.count {
            var batch: [Int] = []
            var bytes = 0
            while cursor < changes.count && bytes < targetBytes {
                if !taken[cursor] {
                    batch.append(cursor)
                    bytes += changes[cursor].bytes.count
                }
                cursor += 1
            }
            guard !batch.isEmpty else { break }
            var lastOfReplica: [ReplicaID: Int] = [:]
            for index in batch { lastOfReplica[changes[index].replica] = index }
            var dropped: Set<Int> = []
            for (replica, last) in lastOfReplica where !isAnchor(changes[last]) {
                let list = byReplica[replica]!
                if let anchor = list[(positionInReplica[last] + 1)...].first(where: { isAnchor(changes[$0]) }) {
                    for index in list[(positionInReplica[last] + 1)...positionInReplica[anchor]] where !taken[index] { batch.append(index) }
                } else {
                    // No anchor yet after it: hold back this replica's unchecked tail.
                    let inBatch = batch.filter { changes[$0].replica == replica }
                    let keep = inBatch.lastIndex { isAnchor(changes[$0]) }.map { inBatch[...$0] } ?? []
                    dropped.formUnion(inBatch.filter { !keep.contains($0) })
                    for index in list[positionInReplica[last]...] { taken[index] = true }
                }
            }
            batch = batch.filter { !dropped.contains($0) }.sorted()
            for index in batch { taken[index] = true }
            if !batch.isEmpty { batches.append(batch.map { changes[$0] }) }
        }
        return batches
    }

    /// Decodes and validates every change of a batch (all or nothing).
    /// - Throws: `CodecError` naming the first bad change.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> [(EncodedChange, Change)] {
        try decode(bytes) { (result, slice, signature) throws(CodecError) in
            result.append(try EncodedChange.decoding(slice, signature: signature))
        }
    }

    /// Decodes and validates every change of a batch (all or nothing) into
    /// the records a document holds while it applies them: each change is
    /// read where it is kept, not copied there (see `Change.read`).
    /// - Throws: `CodecError` naming the first bad change.
    public static func decodeReceived(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> ReceivedChanges {
        var received = ReceivedChanges(
            arrivals: try decode(bytes) { (result, slice, signature) throws(CodecError) in
                result.append(.placeholder)
                try result[result.count - 1].read(slice, signature: signature)
            })
        received.batch = bytes
        return received
    }

    /// Decodes every change of a batch: `append` adds the change whose
    /// bytes and signature it is given to the result.
    private static func decode<Element>(
        _ bytes: ArraySlice<UInt8>, appending append: (inout [Element], consuming ArraySlice<UInt8>, [UInt8]?) throws(CodecError) -> Void
    ) throws(CodecError) -> [Element] {
        var reader = ByteReader(bytes)
        let count = try reader.readCount("changes", minimumElementSize: 3)
        var result: [Element] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let slice = try reader.readLengthPrefixed("change")
            let signature = try reader.readBool("signature flag") ? Array(try reader.readSlice(count: Authorship.signatureBytes)) : nil
            do {
                try append(&result, slice, signature)
            } catch {
                throw CodecError(error.code, "change \(index + 1) of \(count): \(error.message)", offset: error.offset)
            }
        }
        try reader.expectEnd("the batch")
        return result
    }
}

/// The replicas a change mentions; index 0 is the author. Op ids are written
/// as (index, counter) so a 64-bit replica id is spelled once per change.
/// A change names a handful of replicas, so lookups are linear; a snapshot's
/// table is sorted and searched by bisection.
struct ReplicaTable {
    private(set) var replicas: [ReplicaID]
    private let isSorted: Bool

    init(author: ReplicaID) {
        replicas = [author]
        isSorted = false
    }

    /// A table with the given replicas in that order (snapshots sort them).
    init(sorted replicas: [ReplicaID]) {
        self.replicas = replicas
        isSorted = true
    }

    mutating func add(_ replica: ReplicaID) {
        if !replicas.contains(replica) { replicas.append(replica) }
    }

    func index(of replica: ReplicaID) -> Int {
        if isSorted {
            var low = 0
            var high = replicas.count
            while low < high {
                let middle = (low + high) / 2
                if replicas[middle] < replica { low = middle + 1 } else { high = middle }
            }
            if low < replicas.count && replicas[low] == replica { return low }
        } else if let index = replicas.firstIndex(of: replica) {
            return index
        }
        preconditionFailure("replica \(replica) not collected")
    }

    mutating func collect(_ op: Operation) {
        switch op {
        case .setField(let object, _, let value):
            add(object.replica)
            if case .id(let id) = value { add(id.replica) }
        case .insert(_, let container, let anchor), .insertProjectEntry(let container, let anchor, _):
            add(container.replica)
            if let parent = anchor.parent { add(parent.replica) }
        case .move(let object, let container, let anchor), .reorder(let object, let container, let anchor):
            add(object.replica)
            add(container.replica)
            if let parent = anchor.parent { add(parent.replica) }
        case .setDeleted(let object, _): add(object.replica)
        case .addStroke(let layer, _, _): add(layer.replica)
        case .putStroke(let layer, let key, let value):
            add(layer.replica)
            add(key.replica)
            add(value.content.replica)
        case .eraseStroke(let layer, let key):
            add(layer.replica)
            add(key.replica)
        case .purge(let nodes): for node in nodes { add(node.replica) }
        case .genesis, .setAccess, .nameVersion: break
        case .addTag(let object, _): add(object.replica)
        case .removeTag(let object, _, let dots):
            add(object.replica)
            for dot in dots { add(dot.replica) }
        }
    }
}

extension ByteWriter {
    mutating func write(_ id: OpID, table: ReplicaTable) {
        write(count: table.index(of: id.replica))
        write(varint: id.counter)
    }

    mutating func write(_ anchor: Anchor, table: ReplicaTable) {
        write(byte: anchor.side.rawValue | (anchor.parent == nil ? 0 : 2))
        if let parent = anchor.parent { write(parent, table: table) }
    }

    mutating func write(_ op: Operation, table: ReplicaTable) {
        switch op {
        case .setField(let object, let key, let value):
            write(byte: OperationTag.setField.rawValue)
            write(object, table: table)
            write(byte: key.rawValue)
            if case .id(let id) = value {
                // Ids inside values also go through the table.
                write(byte: 7)
                write(id, table: table)
            } else {
                write(fieldValue: value)
            }
        case .insert(let kind, let container, let anchor):
            write(byte: OperationTag.insert.rawValue)
            write(byte: kind.rawValue)
            write(container, table: table)
            write(anchor, table: table)
        case .insertProjectEntry(let container, let anchor, let document):
            write(byte: OperationTag.insertProjectEntry.rawValue)
            write(container, table: table)
            write(anchor, table: table)
            write(fixed64: document.high)
            write(fixed64: document.low)
        case .move(let object, let container, let anchor):
            write(byte: OperationTag.move.rawValue)
            write(object, table: table)
            write(container, table: table)
            write(anchor, table: table)
        case .reorder(let object, let container, let anchor):
            write(byte: OperationTag.reorder.rawValue)
            write(object, table: table)
            write(container, table: table)
            write(anchor, table: table)
        case .setDeleted(let object, let isDeleted):
            write(byte: OperationTag.setDeleted.rawValue)
            write(object, table: table)
            write(bool: isDeleted)
        case .addStroke(let layer, let brush, let points):
            write(byte: OperationTag.addStroke.rawValue)
            write(layer, table: table)
            write(brush: brush)
            write(lengthPrefixed: points.bytes)
        case .putStroke(let layer, let key, let value):
            write(byte: OperationTag.putStroke.rawValue)
            write(layer, table: table)
            write(key, table: table)
            write(value.content, table: table)
            write(brush: value.brush)
            if let transform = value.transform {
                write(byte: 1)
                write(affine: transform)
            } else {
                write(byte: 0)
            }
        case .eraseStroke(let layer, let key):
            write(byte: OperationTag.eraseStroke.rawValue)
            write(layer, table: table)
            write(key, table: table)
        case .purge(let nodes):
            write(byte: OperationTag.purge.rawValue)
            write(count: nodes.count)
            for node in nodes { write(node, table: table) }
        case .genesis(let salt):
            write(byte: OperationTag.genesis.rawValue)
            write(fixed64: UInt64(truncatingIfNeeded: salt >> 64))
            write(fixed64: UInt64(truncatingIfNeeded: salt))
        case .setAccess(let peer, let role):
            write(byte: OperationTag.setAccess.rawValue)
            write(raw: peer.digest)
            write(byte: role.rawValue)
        case .addTag(let object, let tag):
            write(byte: OperationTag.addTag.rawValue)
            write(object, table: table)
            write(string: tag)
        case .removeTag(let object, let tag, let dots):
            write(byte: OperationTag.removeTag.rawValue)
            write(object, table: table)
            write(string: tag)
            write(count: dots.count)
            for dot in dots { write(dot, table: table) }
        case .nameVersion(let name, let version):
            write(byte: OperationTag.nameVersion.rawValue)
            write(string: name)
            write(bool: version != nil)
            if let version { write(raw: version.encoded()) }
        }
    }
}

extension ByteReader {
    /// `table`: an array, or a change's own table in temporary storage (`Change.init(decoding:)`).
    mutating func readReplica<Table: RandomAccessCollection<ReplicaID>>(in table: Table) throws(CodecError) -> ReplicaID
    where Table.Index == Int {
        let start = offset
        let index = try readVarint()
        guard index < UInt64(table.count) else {
            throw CodecError(.badReference, "replica index \(index) outside a table of \(table.count)", offset: start)
        }
        return table[table.startIndex + Int(index)]
    }

    mutating func readOpID<Table: RandomAccessCollection<ReplicaID>>(replicas: Table) throws(CodecError) -> OpID
    where Table.Index == Int {
        let replica = try readReplica(in: replicas)
        return OpID(counter: try readVarint(), replica: replica)
    }

    mutating func readAnchor<Table: RandomAccessCollection<ReplicaID>>(replicas: Table) throws(CodecError) -> Anchor
    where Table.Index == Int {
        let start = offset
        let flags = try readByte()
        guard flags <= 3, let side = Anchor.Side(rawValue: flags & 1) else {
            throw CodecError(.invalidValue, "bad anchor flags \(flags)", offset: start)
        }
        let parent = flags & 2 != 0 ? try readOpID(replicas: replicas) : nil
        if parent == nil && side == .left {
            throw CodecError(.invalidValue, "the root of a list has no left side", offset: start)
        }
        return Anchor(parent: parent, side: side)
    }

    /// A tag as stored (trimmed, 1…64 bytes, no control characters).
    mutating func readTag() throws(CodecError) -> String {
        let start = offset
        let tag = try readString("tag")
        guard Tag.isValid(tag) else { throw CodecError(.invalidValue, "a tag that is empty, too long or not trimmed", offset: start) }
        return tag
    }

    mutating func readOperation<Table: RandomAccessCollection<ReplicaID>>(replicas: Table) throws(CodecError) -> Operation
    where Table.Index == Int {
        let start = offset
        guard let tag = OperationTag(rawValue: try readByte()) else {
            throw CodecError(.invalidValue, "unknown operation tag", offset: start)
        }
        switch tag {
        case .setField:
            let object = try readOpID(replicas: replicas)
            guard let key = FieldKey(rawValue: try readByte()) else {
                throw CodecError(.invalidValue, "unknown field key", offset: offset - 1)
            }
            let valueTag = try readByte()
            let value = valueTag == 7 ? .id(try readOpID(replicas: replicas)) : try readFieldValue(tag: valueTag)
            return .setField(object: object, key: key, value: value)
        case .insert:
            guard let kind = ObjectKind(rawValue: try readByte()), kind != .project, kind != .projectEntry else {
                throw CodecError(.invalidValue, "cannot insert that kind of object", offset: offset - 1)
            }
            return .insert(
                kind: kind, container: try readOpID(replicas: replicas), anchor: try readAnchor(replicas: replicas))
        case .insertProjectEntry:
            let container = try readOpID(replicas: replicas)
            let anchor = try readAnchor(replicas: replicas)
            let document = DocumentID(high: try readFixed64(), low: try readFixed64())
            return .insertProjectEntry(container: container, anchor: anchor, document: document)
        case .move:
            return .move(
                object: try readOpID(replicas: replicas), container: try readOpID(replicas: replicas),
                anchor: try readAnchor(replicas: replicas))
        case .reorder:
            return .reorder(
                object: try readOpID(replicas: replicas), container: try readOpID(replicas: replicas),
                anchor: try readAnchor(replicas: replicas))
        case .setDeleted:
            return .setDeleted(object: try readOpID(replicas: replicas), isDeleted: try readBool("deleted flag"))
        case .addStroke:
            let layer = try readOpID(replicas: replicas)
            let brush = try readBrush()
            let points = try PointsBlob(validating: try readLengthPrefixed("points"))
            guard points.count <= Change.maximumStrokePoints else {
                throw CodecError(.overflow, "a stroke of \(points.count) points (at most \(Change.maximumStrokePoints))", offset: start)
            }
            return .addStroke(layer: layer, brush: brush, points: points)
        case .putStroke:
            let layer = try readOpID(replicas: replicas)
            let key = try readOpID(replicas: replicas)
            let content = try readOpID(replicas: replicas)
            let brush = try readBrush()
            let transform = try readBool("transform flag") ? try readAffine() : nil
            return .putStroke(layer: layer, key: key, value: StrokeValue(content: content, brush: brush, transform: transform))
        case .eraseStroke:
            return .eraseStroke(layer: try readOpID(replicas: replicas), key: try readOpID(replicas: replicas))
        case .purge:
            let count = try readCount("purged nodes", minimumElementSize: 2)
            var nodes: [OpID] = []
            for _ in 0..<count { nodes.append(try readOpID(replicas: replicas)) }
            return .purge(nodes: nodes)
        case .genesis:
            let high = UInt128(try readFixed64())
            return .genesis(salt: high << 64 | UInt128(try readFixed64()))
        case .setAccess:
            guard let peer = PeerID(digest: Array(try readSlice(count: 32))) else {
                throw CodecError(.truncated, "a peer id", offset: start)
            }
            guard let role = Role(rawValue: try readByte()), role != .owner else {
                throw CodecError(.invalidValue, "unknown or ungivable role", offset: offset - 1)
            }
            return .setAccess(peer: peer, role: role)
        case .addTag:
            let object = try readOpID(replicas: replicas)
            return .addTag(object: object, tag: try readTag())
        case .removeTag:
            let object = try readOpID(replicas: replicas)
            let tag = try readTag()
            let count = try readCount("removed tag dots", minimumElementSize: 2)
            guard count >= 1 else { throw CodecError(.invalidValue, "a tag removal names no add", offset: start) }
            var dots: [OpID] = []
            for _ in 0..<count { dots.append(try readOpID(replicas: replicas)) }
            return .removeTag(object: object, tag: tag, dots: dots)
        case .nameVersion:
            let name = try readString("a version name")
            let version = try readBool("version flag") ? try VersionVector(from: &self) : nil
            return .nameVersion(name: name, version: version)
        }
    }
}

extension EncodedChange {
    /// The counters and wall time of the change encoded in `bytes`, read from
    /// its header (`ChangeLog` keeps changes without their header fields).
    /// - Precondition: `bytes` decoded as a change before.
    static func headerFields(of bytes: ArraySlice<UInt8>) -> (startCounter: UInt64, endCounter: UInt64, wallTime: Int64) {
        bytes.withUnsafeBufferPointer { bytes in
            var header = HeaderScan(bytes)
            let startCounter = header.varint()
            let wallTime = ByteWriter.unzigzag(header.varint())
            for _ in 0..<header.varint() {
                _ = header.varint()
                _ = header.varint()
            }
            if header.hasDeclaration { header.skip(Int(header.varint()) + 8) }
            let opCount = header.varint()
            return (startCounter, startCounter + max(opCount, 1) - 1, wallTime)
        }
    }

    /// The first counter of the change encoded in `bytes` (its header's
    /// first field: what a log read for sending needs, without the rest).
    /// - Precondition: `bytes` decoded as a change before.
    static func startCounter(of bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBufferPointer { bytes in
            var header = HeaderScan(bytes)
            return header.varint()
        }
    }

    /// A reader of a logged change's header, past the format version, flags,
    /// replica table and sequence number: at the first counter (the layout
    /// `Change.read` reads and checked). Every read is bounds-checked.
    private struct HeaderScan {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        let hasDeclaration: Bool

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            precondition(bytes.count >= 2, "a logged change is too short to read")
            let version = bytes[0]
            hasDeclaration = version != 1 && bytes[1] & Change.Flag.declaration != 0
            position = version == 1 ? 1 : 2
            skip(8 * Int(varint()))
            skipVarint()
        }

        /// Inlined, with a one-byte value read at once: a call per field
        /// was half the instructions of a scan.
        @inline(__always)
        mutating func varint() -> UInt64 {
            precondition(position < bytes.count, "a logged change's header no longer reads")
            let first = bytes[position]
            if first < 0x80 {
                position &+= 1
                return UInt64(first)
            }
            return longVarint()
        }

        private mutating func longVarint() -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                precondition(position < bytes.count && shift < 64, "a logged change's header no longer reads")
                let byte = bytes[position]
                position += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
            }
        }

        /// Steps over a varint (the sequence number, which the log knows)
        /// without decoding it: a sequence number past 127 took the long read.
        @inline(__always)
        mutating func skipVarint() {
            while true {
                precondition(position < bytes.count, "a logged change's header no longer reads")
                let byte = bytes[position]
                position &+= 1
                if byte < 0x80 { return }
            }
        }

        mutating func skip(_ count: Int) {
            precondition(count >= 0 && count <= bytes.count - position, "a logged change's header no longer reads")
            position += count
        }
    }
}
