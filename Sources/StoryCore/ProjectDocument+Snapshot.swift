extension ProjectDocument {
    /// The document's state as a columnar snapshot: enough to load it or merge
    /// it into another replica, without its change history. O(size).
    ///
    /// Without points (`includingPoints: false`) the contents section is
    /// empty: a checkpoint of the past that loads only with a later document
    /// of the same project, which holds every point blob the past held
    /// (`init(snapshot:author:pointsFrom:)`); a tenth of the size or less.
    package func snapshot() -> [UInt8] { snapshot(keepingPointsOf: { _ in true }) }

    /// The snapshot, with or without its points (see `snapshot()`).
    package func snapshot(includingPoints: Bool) -> [UInt8] { snapshot(keepingPointsOf: { _ in includingPoints }) }

    /// The snapshot with the point blobs of only the operations `isKept`
    /// names: a store whose change log still holds the others leaves them
    /// there, and gives them back to `init(snapshot:author:addingPoints:)`.
    package func snapshot(keepingPointsOf isKept: (OpID) -> Bool) -> [UInt8] {
        var replicas: Set<ReplicaID> = [.reserved]
        for (id, object) in state.allObjects {
            replicas.insert(id.replica)
            replicas.insert(object.container.stamp.replica)
            replicas.insert(object.container.value.replica)
            replicas.insert(object.deleted.stamp.replica)
            for register in object.fields.values {
                replicas.insert(register.stamp.replica)
                if case .id(let ref) = register.value { replicas.insert(ref.replica) }
            }
        }
        for tree in state.allContainers.values {
            for (id, entry) in tree.entries {
                replicas.insert(id.replica)
                replicas.insert(entry.object.replica)
            }
        }
        for map in state.allStrokes.values {
            for (key, entry) in map {
                replicas.insert(key.replica)
                replicas.insert(entry.valueStamp.replica)
                replicas.insert(entry.stamp.replica)
                replicas.insert(entry.value.content.replica)
            }
        }
        replicas.formUnion(state.allContents.replicas)
        for (object, map) in state.allTags {
            replicas.insert(object.replica)
            for entry in map.values {
                for dot in entry.adds.keys { replicas.insert(dot.replica) }
                for remover in entry.removed.values { replicas.insert(remover.replica) }
            }
        }
        for (slot, record) in state.allFieldWrites {
            replicas.insert(slot.object.replica)
            if let dot = record.keptBy { replicas.insert(dot.replica) }
            for write in record.overwritten {
                replicas.insert(write.stamp.replica)
                if let dot = write.dot { replicas.insert(dot.replica) }
            }
        }
        for named in state.versionNames.values { replicas.insert(named.stamp.replica) }
        // The point blobs are most of a snapshot: sized for them, with room
        // for each stroke's row and each object, the sections grow without copies.
        // Read in order straight from the table (`forEachInOrder`), where a
        // filtered copy sorted took 7 MB of buffers for the medium trace,
        // freed mid-snapshot: memory the process then kept.
        var keptBlobs = 0
        var keptBlobBytes = 0
        state.allContents.forEachInOrder { id, blob in
            guard isKept(id) else { return }
            keptBlobs += 1
            keptBlobBytes += blob.bytes.count
        }
        let contentBytes = keptBlobBytes + 24 * keptBlobs + 64
        var writer = SnapshotWriter(
            header: replicaState.header(kind: .project, document: id), replicas: replicas,
            capacity: contentBytes + 16 * statistics.strokeEntries + 64 * state.objectCount + (1 << 16))
        let table = writer.table

        writer.section { out in
            let objects = state.allObjects.sorted { $0.key < $1.key }
            out.write(count: objects.count)
            for (id, object) in objects {
                out.write(id, table: table)
                out.write(byte: object.kind.rawValue)
                out.write(signed: object.createdAt)
                out.write(object.container.value, table: table)
                out.write(object.container.stamp, table: table)
                out.write(bool: object.deleted.value)
                out.write(object.deleted.stamp, table: table)
                out.write(fields: object.fields, table: table)
            }
        }
        writer.section { out in out.write(trees: state.allContainers, table: table) }
        // About 3-6 bytes a stroke: room for 8, so the section does not grow by doubling.
        writer.section(capacity: 8 * statistics.strokeEntries + 1024) { out in Self.writeStrokes(state.allStrokes, table: table, into: &out) }
        writer.section(capacity: contentBytes) { out in
            out.write(count: keptBlobs)
            // One column at a time, each read in order from the table.
            func column(_ value: (OpID, PointsBlob) -> UInt64) -> [UInt64] {
                var column: [UInt64] = []
                column.reserveCapacity(keptBlobs)
                state.allContents.forEachInOrder { id, blob in if isKept(id) { column.append(value(id, blob)) } }
                return column
            }
            out.write(runLengthColumn: column { id, _ in UInt64(table.index(of: id.replica)) })
            var previous: UInt64 = 0
            out.write(
                varintColumn: column { id, _ in
                    defer { previous = id.counter }
                    return id.counter - previous
                })
            out.write(varintColumn: column { _, blob in UInt64(blob.bytes.count) })
            out.write(count: keptBlobBytes)
            state.allContents.forEachInOrder { id, blob in if isKept(id) { out.write(raw: blob.bytes) } }
        }
        writer.section { out in Self.writeTags(state.allTags, table: table, into: &out) }
        writer.section { out in out.write(fieldWrites: state.allFieldWrites, table: table) }
        // Format 3: named versions (name, stamp, time, the version or none).
        writer.section { out in
            let names = state.versionNames.values.sorted { $0.name < $1.name }
            out.write(count: names.count)
            for named in names {
                out.write(string: named.name)
                out.write(named.stamp, table: table)
                out.write(signed: named.time)
                out.write(bool: named.version != nil)
                if let version = named.version { out.write(raw: version.encoded()) }
            }
        }
        return writer.finish()
    }

    /// Stroke flags: which parts of an entry differ from the common case
    /// (a never-replaced, never-erased stroke added by the operation of its key).
    private enum StrokeFlag {
        static let erased: UInt64 = 1
        static let valueStampDiffers: UInt64 = 2
        static let stampDiffers: UInt64 = 4
        static let contentDiffers: UInt64 = 8
        static let transformed: UInt64 = 16
        static let all: UInt64 = 31
    }

    private static func writeStrokes(_ strokes: [OpID: StrokeMap], table: ReplicaTable, into out: inout ByteWriter) {
        let layers = strokes.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        out.write(count: layers.count)
        for (layer, map) in layers {
            out.write(layer, table: table)
            out.write(count: map.count)
        }
        // One column at a time, each read straight from the maps into an
        // array of its size and written before the next: a copy of every
        // row, then seven columns grown by doubling, took 7 MB more for the
        // medium trace, freed mid-snapshot.
        let total = layers.reduce(0) { $0 + $1.value.count }
        func column(_ value: (OpID, StrokeEntry) -> UInt64) -> [UInt64] {
            var column: [UInt64] = []
            column.reserveCapacity(total)
            for (_, map) in layers {
                for (key, entry) in map { column.append(value(key, entry)) }
            }
            return column
        }
        out.write(runLengthColumn: column { key, _ in UInt64(table.index(of: key.replica)) })
        do {
            // Counters restart at each layer's first key; a layer's strokes are in key order.
            var counters: [UInt64] = []
            counters.reserveCapacity(total)
            for (_, map) in layers {
                var previous: UInt64 = 0
                for (key, _) in map {
                    counters.append(key.counter - previous)
                    previous = key.counter
                }
            }
            out.write(varintColumn: counters)
        }
        var extras = ByteWriter(capacity: 64)
        out.write(
            runLengthColumn: column { key, entry in
                var flag: UInt64 = entry.isErased ? StrokeFlag.erased : 0
                if entry.valueStamp != key { flag |= StrokeFlag.valueStampDiffers }
                if entry.stamp != entry.valueStamp { flag |= StrokeFlag.stampDiffers }
                if entry.value.content != key { flag |= StrokeFlag.contentDiffers }
                if entry.value.transform != nil { flag |= StrokeFlag.transformed }
                if flag & StrokeFlag.valueStampDiffers != 0 { extras.write(entry.valueStamp, table: table) }
                if flag & StrokeFlag.stampDiffers != 0 { extras.write(entry.stamp, table: table) }
                if flag & StrokeFlag.contentDiffers != 0 { extras.write(entry.value.content, table: table) }
                if let transform = entry.value.transform { extras.write(affine: transform) }
                return flag
            })
        out.write(runLengthColumn: column { _, entry in UInt64(entry.value.brush.tool.rawValue) })
        out.write(runLengthColumn: column { _, entry in UInt64(entry.value.brush.color.rgba) })
        out.write(runLengthColumn: column { _, entry in UInt64(entry.value.brush.width.bitPattern) })
        out.write(runLengthColumn: column { _, entry in UInt64(entry.value.brush.cap.rawValue | entry.value.brush.join.rawValue << 4) })
        out.write(lengthPrefixed: extras.bytes)
    }

    /// Loads a document from a snapshot, as held by `replica`. O(size).
    /// - Throws: `CodecError` for malformed bytes, `DocumentError(.invalidSnapshot)`
    ///   for inconsistent contents.
    package init(snapshot bytes: [UInt8], replica: ReplicaID) throws {
        try self.init(snapshot: bytes) { ReplicaCore(replica: replica, document: $0) }
    }

    /// Loads a signed document from a snapshot this daemon stored (its
    /// authorship was checked before it was stored), as held by `author`.
    /// - Throws: `CodecError`, `DocumentError`.
    package init(snapshot bytes: [UInt8], author: LocalAuthor) throws {
        try self.init(snapshot: bytes) { ReplicaCore(author: author, document: $0) }
    }

    /// Loads a signed document from a snapshot this daemon stored that may
    /// lack its points (`snapshot(includingPoints: false)`): they are taken
    /// from `source`, a later document of the same project. A point blob is
    /// never removed from a project, so `source` holds all of them; those of
    /// operations the snapshot's state holds are taken (its last counter per
    /// replica says which). O(size + points of `source`).
    /// - Throws: `CodecError`, `DocumentError` (also when `source` lacks a blob).
    package init(snapshot bytes: [UInt8], author: LocalAuthor, pointsFrom source: ProjectDocument) throws {
        try self.init(snapshot: bytes, pointsFrom: source.state.allContents) { ReplicaCore(author: author, document: $0) }
    }

    /// Loads a signed document from a snapshot this daemon stored that left
    /// some of its points out (`snapshot(keepingPointsOf:)`): `points` holds
    /// them (and may hold more: those of operations the snapshot's state
    /// does not hold are ignored). O(size + points).
    /// - Throws: `CodecError`, `DocumentError` (also when a stroke's points are in neither).
    package init(snapshot bytes: [UInt8], author: LocalAuthor, addingPoints points: [OpID: PointsBlob]) throws {
        try self.init(snapshot: bytes, pointsFrom: ContentTable(points)) { ReplicaCore(author: author, document: $0) }
    }

    /// As `init(snapshot:author:pointsFrom:)`, for an open document held by `replica`.
    package init(snapshot bytes: [UInt8], replica: ReplicaID, pointsFrom source: ProjectDocument) throws {
        try self.init(snapshot: bytes, pointsFrom: source.state.allContents) { ReplicaCore(replica: replica, document: $0) }
    }

    /// The version vector and the wall time of the newest change of a
    /// project snapshot, read from its header. O(size) (the checksum).
    /// - Throws: `CodecError` for bytes that are not a snapshot.
    package static func snapshotVersion(_ bytes: [UInt8]) throws -> (version: VersionVector, updatedAt: Int64?) {
        let header = try SnapshotReader(bytes).header
        return (header.versionVector, header.updatedAt)
    }

    private init(snapshot bytes: [UInt8], pointsFrom source: ContentTable? = nil, core: (DocumentID) -> ReplicaCore) throws {
        var reader = try SnapshotReader(bytes)
        guard reader.header.kind == .project else {
            throw DocumentError(.invalidSnapshot, "the snapshot is of a library, not a project")
        }
        let state = try Self.readState(&reader, pointsFrom: source)
        let document = reader.header.document
        self.init(id: document, replicaState: try .loaded(from: reader.header, state: state, core: core(document)))
    }

    /// Merges another replica's snapshot of the same document into this one
    /// (state-based: the result is the same as if all its changes had been
    /// applied). Changes held back may become applicable and are applied; the
    /// errors of those that turn out invalid are returned (they are dropped).
    /// - Throws: `CodecError`, `DocumentError` for a bad snapshot; nothing changes then.
    @discardableResult
    package mutating func merge(snapshot bytes: [UInt8]) throws -> [any Error] {
        var reader = try SnapshotReader(bytes)
        let header = reader.header
        guard header.kind == .project, header.document == id else {
            throw DocumentError(.invalidSnapshot, "the snapshot is of another document")
        }
        // Points of operations this replica holds are left in the bytes: they
        // are here already (a blob never changes), and merging three
        // snapshots of one project spares most of the decoding.
        let other = try Self.readState(&reader, held: (state.allContents, core.lastCounters))
        return try replicaState.merge(other, header: header)
    }

    /// The state a snapshot holds. `pointsFrom`: blobs it may leave out (a
    /// checkpoint), added to it. `held`: blobs of a replica this state is
    /// merged into, and the operations that replica holds; the snapshot's
    /// blobs of those operations are skipped, not decoded, and the state's
    /// strokes may name them (for a merge only: the state alone lacks them).
    private static func readState(
        _ reader: inout SnapshotReader, pointsFrom source: ContentTable? = nil,
        held: (contents: ContentTable, known: [ReplicaID: UInt64])? = nil
    ) throws -> ProjectState {
        let replicas = reader.replicas
        var objects: [OpID: StoryObject] = [:]
        var section = try reader.section("objects")
        for _ in 0..<(try section.readCount("objects", minimumElementSize: 10)) {
            let id = try section.readOpID(replicas: replicas)
            guard let kind = ObjectKind(rawValue: try section.readByte()), kind.rawValue <= ObjectKind.layer.rawValue,
                (kind == .project) == (id == .root)
            else {
                throw CodecError(.invalidValue, "object \(id) has an unknown kind")
            }
            let createdAt = try section.readSigned()
            let container = try section.readOpID(replicas: replicas)
            let containerStamp = try section.readOpID(replicas: replicas)
            let deleted = try section.readBool("deleted")
            let deletedStamp = try section.readOpID(replicas: replicas)
            let fields = try section.readFields(replicas: replicas)
            for (key, register) in fields where !key.accepts(register.value, on: kind) {
                throw CodecError(.invalidValue, "\(kind) \(id) has a bad \(key) field")
            }
            guard objects[id] == nil else { throw CodecError(.invalidValue, "object \(id) repeated") }
            objects[id] = StoryObject(
                kind: kind, container: Register(value: container, stamp: containerStamp),
                deleted: Register(value: deleted, stamp: deletedStamp), fields: fields, createdAt: createdAt)
        }
        try section.expectEnd("objects")

        section = try reader.section("lists")
        let containers = try section.readTrees(replicas: replicas)
        try section.expectEnd("lists")

        section = try reader.section("strokes")
        let strokes = try readStrokes(&section, replicas: replicas, skipping: held.map { KnownOperations($0.known) })
        try section.expectEnd("strokes")

        section = try reader.section("contents")
        let count = try section.readCount("contents", minimumElementSize: 0)
        guard count <= section.remaining else { throw CodecError(.overflow, "content count \(count) too large") }
        let contentReplicas = try section.readRunLengthColumn(count: count, "content replicas")
        let contentCounters = try section.readVarintColumn(count: count, "content counters")
        let lengths = try section.readVarintColumn(count: count, "content lengths")
        var blobs = ByteReader(try section.readLengthPrefixed("points"))
        try section.expectEnd("contents")
        var contents = ContentTable()
        var knownHeld = KnownOperations(held?.known ?? [:])
        // The contents come in ascending order: the held ones are found by a cursor.
        var heldContents = held.map { ContentTable.OrderedLookup($0.contents) }
        var counter: UInt64 = 0
        var previous: OpID?
        for index in 0..<count {
            guard contentReplicas[index] < UInt64(replicas.count) else {
                throw CodecError(.badReference, "content replica index out of range")
            }
            let (sum, overflow) = counter.addingReportingOverflow(contentCounters[index])
            guard !overflow else { throw CodecError(.overflow, "content counter overflows") }
            counter = sum
            let id = OpID(counter: counter, replica: replicas[Int(contentReplicas[index])])
            guard previous.map({ id > $0 }) ?? true else { throw CodecError(.invalidValue, "contents out of order") }
            previous = id
            guard lengths[index] <= UInt64(blobs.remaining) else { throw CodecError(.truncated, "points of \(id) truncated") }
            if knownHeld.holds(id), heldContents?.contains(id) == true {
                try blobs.skip(count: Int(lengths[index]))
                continue
            }
            let slice = try blobs.readSlice(count: Int(lengths[index]))
            contents[id] = try PointsBlob(validating: slice)
        }
        try blobs.expectEnd("points")
        if let source {
            // Those the snapshot left out: every blob of an operation its state holds.
            var known = KnownOperations(reader.header.lastCounters)
            for (id, blob) in source where known.holds(id) && !contents.contains(id) { contents[id] = blob }
        }
        // Format 3 appends three sections: tags, overwritten values, version names.
        var tags: [OpID: [String: TagEntry]] = [:]
        var fieldWrites: [FieldSlot: FieldWrites] = [:]
        var names: [String: VersionName] = [:]
        if reader.format >= 3 {
            section = try reader.section("tags")
            tags = try readTags(&section, replicas: replicas)
            try section.expectEnd("tags")
            section = try reader.section("overwritten values")
            fieldWrites = try section.readFieldWrites(replicas: replicas, latestFirst: reader.format >= 4)
            try section.expectEnd("overwritten values")
            if reader.format == 3 {
                // Format 3 kept the largest stamp; a text field now shows the
                // latest of its open writes by wall time (`FieldWrites`).
                for (slot, record) in fieldWrites {
                    guard let register = objects[slot.object]?.fields[slot.key],
                        let (latest, kept) = FieldWrites.keeping(record.openWrites(kept: register))
                    else { continue }
                    fieldWrites[slot] = latest
                    objects[slot.object]!.fields[slot.key] = Register(value: kept.value, stamp: kept.stamp)
                }
            }
            section = try reader.section("version names")
            for _ in 0..<(try section.readCount("version names", minimumElementSize: 5)) {
                let name = try section.readString("a version name")
                let stamp = try section.readOpID(replicas: replicas)
                let time = try section.readSigned()
                let version = try section.readBool("version flag") ? try VersionVector(from: &section) : nil
                guard VersionName.isValid(name), names[name] == nil else { throw CodecError(.invalidValue, "a bad or repeated version name") }
                names[name] = VersionName(name: name, version: version, stamp: stamp, time: time)
            }
            try section.expectEnd("version names")
        }
        try reader.expectEnd()
        return try ProjectState(
            objects: objects, containers: containers, strokes: strokes, contents: contents, tags: tags, fieldWrites: fieldWrites,
            versionNames: names, contentsElsewhere: held?.contents ?? ContentTable())
    }

    /// The tags section (format 3): per object ascending, per tag ascending
    /// by key, every add with its spelling and whether (and by what) it was removed.
    private static func writeTags(_ tags: [OpID: [String: TagEntry]], table: ReplicaTable, into out: inout ByteWriter) {
        let objects = tags.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        out.write(count: objects.count)
        for (object, map) in objects {
            out.write(object, table: table)
            out.write(count: map.count)
            for (_, entry) in map.sorted(by: { $0.key < $1.key }) {
                out.write(count: entry.adds.count)
                for (dot, spelling) in entry.adds.sorted(by: { $0.key < $1.key }) {
                    out.write(dot, table: table)
                    out.write(string: spelling)
                    out.write(bool: entry.removed[dot] != nil)
                    if let remover = entry.removed[dot] { out.write(remover, table: table) }
                }
            }
        }
    }

    private static func readTags(_ input: inout ByteReader, replicas: [ReplicaID]) throws(CodecError) -> [OpID: [String: TagEntry]] {
        var result: [OpID: [String: TagEntry]] = [:]
        var previousObject: OpID?
        for _ in 0..<(try input.readCount("tagged objects", minimumElementSize: 3)) {
            let object = try input.readOpID(replicas: replicas)
            guard previousObject.map({ object > $0 }) ?? true else { throw CodecError(.invalidValue, "tagged objects out of order") }
            previousObject = object
            var map: [String: TagEntry] = [:]
            var previousKey: String?
            for _ in 0..<(try input.readCount("tags", minimumElementSize: 5)) {
                var entry = TagEntry()
                var previousDot: OpID?
                for _ in 0..<(try input.readCount("tag adds", minimumElementSize: 4)) {
                    let dot = try input.readOpID(replicas: replicas)
                    let spelling = try input.readTag()
                    guard previousDot.map({ dot > $0 }) ?? true else { throw CodecError(.invalidValue, "tag adds out of order") }
                    previousDot = dot
                    entry.adds[dot] = spelling
                    if try input.readBool("removed flag") { entry.removed[dot] = try input.readOpID(replicas: replicas) }
                }
                guard let key = entry.adds.values.first.map(Tag.key), previousKey.map({ key > $0 }) ?? true else {
                    throw CodecError(.invalidValue, "a tag of \(object) is empty or out of order")
                }
                previousKey = key
                map[key] = entry
            }
            result[object] = map
        }
        return result
    }

    /// The strokes section; with `skipping`, entries both of whose
    /// registers were written by operations it holds are left out (merging
    /// them into a replica that holds those operations changes nothing).
    private static func readStrokes(
        _ input: inout ByteReader, replicas: [ReplicaID], skipping known: KnownOperations? = nil
    ) throws(CodecError) -> [OpID: StrokeMap] {
        var known = known
        var layers: [(OpID, Int)] = []
        var total = 0
        for _ in 0..<(try input.readCount("stroke layers", minimumElementSize: 3)) {
            let layer = try input.readOpID(replicas: replicas)
            let count = try input.readCount("strokes", minimumElementSize: 0)
            guard count >= 1, count <= (1 << 26), layers.last.map({ layer > $0.0 }) ?? true else {
                throw CodecError(.invalidValue, "stroke layer \(layer) is empty, too large or out of order")
            }
            total += count
            guard total <= input.remaining * 8 + 64 else { throw CodecError(.overflow, "stroke count exceeds the snapshot") }
            layers.append((layer, count))
        }
        let keyReplicas = try input.readRunLengthColumn(count: total, "stroke key replicas")
        let keyCounters = try input.readVarintColumn(count: total, "stroke key counters")
        let flags = try input.readRunLengthColumn(count: total, "stroke flags")
        let tools = try input.readRunLengthColumn(count: total, "tools")
        let colors = try input.readRunLengthColumn(count: total, "colours")
        let widths = try input.readRunLengthColumn(count: total, "widths")
        let ends = try input.readRunLengthColumn(count: total, "line ends")
        var extras = ByteReader(try input.readLengthPrefixed("stroke extras"))
        var result: [OpID: StrokeMap] = [:]
        result.reserveCapacity(layers.count)
        var row = 0
        for (layer, count) in layers {
            var map = StrokeMap()
            var counter: UInt64 = 0
            var previous: OpID?
            for _ in 0..<count {
                defer { row += 1 }
                guard keyReplicas[row] < UInt64(replicas.count), flags[row] <= StrokeFlag.all,
                    tools[row] <= 255, colors[row] <= UInt64(UInt32.max), widths[row] <= UInt64(UInt32.max), ends[row] <= 255,
                    let tool = Brush.Tool(rawValue: UInt8(tools[row])),
                    let cap = Brush.Cap(rawValue: UInt8(ends[row]) & 0x0F), let join = Brush.Join(rawValue: UInt8(ends[row]) >> 4)
                else { throw CodecError(.invalidValue, "stroke \(row) has an out-of-range column value") }
                let (sum, overflow) = counter.addingReportingOverflow(keyCounters[row])
                guard !overflow else { throw CodecError(.overflow, "stroke key counter overflows") }
                counter = sum
                let key = OpID(counter: counter, replica: replicas[Int(keyReplicas[row])])
                guard previous.map({ key > $0 }) ?? true else { throw CodecError(.invalidValue, "stroke keys out of order") }
                previous = key
                let flag = flags[row]
                let valueStamp = flag & StrokeFlag.valueStampDiffers != 0 ? try extras.readOpID(replicas: replicas) : key
                let stamp = flag & StrokeFlag.stampDiffers != 0 ? try extras.readOpID(replicas: replicas) : valueStamp
                let content = flag & StrokeFlag.contentDiffers != 0 ? try extras.readOpID(replicas: replicas) : key
                let transform = flag & StrokeFlag.transformed != 0 ? try extras.readAffine() : nil
                let brush = Brush(
                    tool: tool, color: Color(rgba: UInt32(colors[row])),
                    width: Float(bitPattern: UInt32(widths[row])), cap: cap, join: join)
                guard brush.isValid else { throw CodecError(.invalidValue, "stroke \(key) has a bad brush width") }
                if known?.holds(valueStamp) == true && known?.holds(stamp) == true { continue }
                var entry = StrokeEntry(value: StrokeValue(content: content, brush: brush, transform: transform), id: valueStamp)
                entry.isErased = flag & StrokeFlag.erased != 0
                entry.stamp = stamp
                map[key] = entry
            }
            if !map.isEmpty { result[layer] = map }
        }
        try extras.expectEnd("stroke extras")
        return result
    }
}
