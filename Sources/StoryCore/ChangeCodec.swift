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
