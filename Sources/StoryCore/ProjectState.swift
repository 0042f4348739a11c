/// A scene, shot or layer (or the project root): the list it is in, its
/// deleted flag and its fields, each a last-writer-wins register. Its position
/// in that list is its newest entry there (`PositionTree.latest`).
struct StoryObject: Sendable {
    let kind: ObjectKind
    var container: Register<OpID>
    var deleted: Register<Bool>
    var fields: [FieldKey: Register<FieldValue>] = [:]
    /// Wall time of the change that created it (informational).
    let createdAt: Int64

    func field(_ key: FieldKey) -> FieldValue {
        fields[key]?.value ?? .null
    }
}

/// What is stored under one stroke key: two last-writer-wins registers.
///
/// `value` is the last value put (by add, replace, restore, copy); `isErased`
/// is set by erase and cleared by any put. An erased stroke keeps its value,
/// so anybody can bring it back, and replicas agree on that value whatever the
/// order in which a replace and a concurrent erase arrive.
struct StrokeEntry: Hashable, Sendable {
    var value: StrokeValue
    var valueStamp: OpID
    var isErased: Bool
    /// Stamp of the erased flag: the last put or erase.
    var stamp: OpID

    /// The value if the stroke is shown.
    var visibleValue: StrokeValue? { isErased ? nil : value }

    /// A stroke put by operation `id`.
    init(value: StrokeValue, id: OpID) {
        self.value = value
        valueStamp = id
        isErased = false
        stamp = id
    }

    /// Joins another entry for the same key.
    mutating func merge(_ other: StrokeEntry) {
        if other.valueStamp > valueStamp {
            value = other.value
            valueStamp = other.valueStamp
        }
        if other.stamp > stamp {
            isErased = other.isErased
            stamp = other.stamp
        }
    }
}

/// What applying one operation changed, so a failed change can be rolled back
/// and an undo can invert a session's own edit.
///
/// A batch of changes keeps one entry per write until it commits, so entries
/// are kept small (72 bytes): the two with large payloads (a field's value,
/// a stroke's entry) are boxed, and a stroke drawn, by far the most common
/// write, is one entry without a payload.
enum ProjectJournalEntry: Sendable {
    indirect case field(object: OpID, key: FieldKey, previous: Register<FieldValue>?)
    case container(object: OpID, previous: Register<OpID>)
    /// Where a move or reorder took the object from (for undo only).
    case moved(object: OpID, from: Place)
    case deleted(object: OpID, previous: Register<Bool>)
    case created(object: OpID)
    case entry(container: OpID, entry: OpID)
    case content(OpID)
    indirect case stroke(layer: OpID, key: OpID, previous: StrokeEntry?)
    /// A stroke drawn: its content and its entry under its own id, both new.
    case drawn(layer: OpID, key: OpID)
    /// A tag's entry before an add or remove (nil: the object never had it).
    case tag(object: OpID, key: String, previous: TagEntry?)
    /// What a text field remembered of its concurrent writes before.
    case writes(FieldSlot, previous: FieldWrites?)
    case versionName(name: String, previous: VersionName?)
}

/// The replicated state of one storyboard project: every object ever created,
/// every position entry, every stroke value and every point blob.
///
/// Nothing is destroyed: deletes are flags, erases are tombstones, moved-away
/// entries stay in their lists, and point blobs stay so that an erase can be
/// undone and a duplicated shot can reference strokes erased concurrently.
struct ProjectState: Sendable {
    private(set) var objects: [OpID: StoryObject]
    private(set) var containers: [OpID: PositionTree] = [:]
    /// Stroke maps by layer id.
    private(set) var strokes: [OpID: StrokeMap] = [:]
    /// Point blobs by the id of the operation that added them.
    private(set) var contents = ContentTable()
    /// Tags of the project (`.root`) and of shots: by object, then by tag key.
    private(set) var tags: [OpID: [String: TagEntry]] = [:]
    /// Media values written so far in this process (`FieldValue.media`): a
    /// change counter telling the store when to look for new references.
    private(set) var mediaWrites = 0
    /// What each text field remembers of its writes: who wrote the kept
    /// value, and the values written concurrently that it overwrote.
    private(set) var fieldWrites: [FieldSlot: FieldWrites] = [:]
    /// Values newly overwritten by a concurrent write so far in this process:
    /// a change counter telling the store when to report a new conflict.
    private(set) var overwrites = 0
    /// Text fields with overwritten values open (`fieldWrites` whose
    /// `overwritten` is not empty), kept as they change.
    private(set) var openConflicts = 0
    /// The change being applied (`begin`).
    private var context = WriteContext.local
    /// Named versions by name, taken-away names included (LWW per name).
    private(set) var versionNames: [String: VersionName] = [:]

    init() {
        let root = StoryObject(
            kind: .project, container: Register(value: .root, stamp: .root), deleted: Register(value: false, stamp: .root),
            createdAt: 0)
        objects = [.root: root]
    }

    // MARK: - Applying operations

    /// Applies one operation after checking it against the current state.
    /// Throws before changing anything; what it changes goes into `journal`.
    mutating func apply(
        _ op: Operation, id: OpID, time: Int64, journal: inout [ProjectJournalEntry]
    ) throws(DocumentError) {
        switch op {
        case .setField(let objectID, let key, let value):
            let object = try existing(objectID)
            guard key.accepts(value, on: object.kind) else {
                throw DocumentError(.invalidValue, "\(object.kind) \(objectID) has no \(key) field of that type")
            }
            let previous = object.fields[key]
            if FieldWrites.isTracked(key) {
                // A text field shows the latest of its open writes by wall
                // time (`FieldWrites`), not the largest stamp.
                let slot = FieldSlot(object: objectID, key: key)
                let write = FieldWrite(value: value, stamp: id, dot: context.dot, time: time)
                let (record, kept) = FieldWrites.after(write, in: context, current: previous, record: fieldWrites[slot])
                if record != fieldWrites[slot] {
                    let before = Set(fieldWrites[slot]?.overwritten.map(\.stamp) ?? [])
                    if record.overwritten.contains(where: { !before.contains($0.stamp) }) { overwrites &+= 1 }
                    journal.append(.writes(slot, previous: fieldWrites[slot]))
                    setFieldWrites(record, of: slot)
                }
                if previous?.stamp != kept.stamp {
                    journal.append(.field(object: objectID, key: key, previous: previous))
                    objects[objectID]!.fields[key] = Register(value: kept.value, stamp: kept.stamp)
                }
            } else if previous.map({ id > $0.stamp }) ?? true {
                journal.append(.field(object: objectID, key: key, previous: previous))
                objects[objectID]!.fields[key] = Register(value: value, stamp: id)
                if case .media = value { mediaWrites &+= 1 }
            }

        case .insert(let kind, let container, let anchor):
            guard kind == .scene || kind == .shot || kind == .layer else {
                throw DocumentError(.invalidOperation, "a project holds no \(kind)")
            }
            guard objects[id] == nil else { throw DocumentError(.invalidOperation, "object \(id) already exists") }
            try checkContainer(container, for: kind, anchor: anchor, entry: id)
            objects[id] = StoryObject(
                kind: kind, container: Register(value: container, stamp: id), deleted: Register(value: false, stamp: id),
                createdAt: time)
            journal.append(.created(object: id))
            containers[container, default: PositionTree()].insert(id, object: id, anchor: anchor)
            journal.append(.entry(container: container, entry: id))

        case .move(let objectID, let container, let anchor), .reorder(let objectID, let container, let anchor):
            let object = try existing(objectID)
            guard object.kind != .project else { throw DocumentError(.invalidOperation, "the project cannot move") }
            try checkContainer(container, for: object.kind, anchor: anchor, entry: id)
            if let from = place(of: objectID) { journal.append(.moved(object: objectID, from: from)) }
            containers[container, default: PositionTree()].insert(id, object: objectID, anchor: anchor)
            journal.append(.entry(container: container, entry: id))
            if case .move = op, id > object.container.stamp {
                journal.append(.container(object: objectID, previous: object.container))
                objects[objectID]!.container = Register(value: container, stamp: id)
            }

        case .setDeleted(let objectID, let isDeleted):
            // On `.root` it deletes the project itself for everyone who shares
            // it (the trash; docs/crdt.md, "Deleting a project"). Its contents
            // stay visible in the state: the flag hides nothing inside.
            let object = try existing(objectID)
            if id > object.deleted.stamp {
                journal.append(.deleted(object: objectID, previous: object.deleted))
                objects[objectID]!.deleted = Register(value: isDeleted, stamp: id)
            }

        case .addStroke(let layer, let brush, let points):
            try checkLayer(layer)
            guard !contents.contains(id) else { throw DocumentError(.invalidOperation, "content \(id) already exists") }
            contents[id] = points
            // One lookup of the layer's strokes, which puts the stroke and gives what was there.
            if let previous = strokes[layer, default: [:]].putDrawn(with: brush, under: id) {
                // Not reachable from valid states (a key names a content that
                // exists), but a rollback must restore whatever was there.
                journal.append(.content(id))
                journal.append(.stroke(layer: layer, key: id, previous: previous))
            } else {
                journal.append(.drawn(layer: layer, key: id))
            }

        case .putStroke(let layer, let key, let value):
            try checkLayer(layer)
            // Keys are ids of strokes drawn before (their contents exist): a put
            // can never claim the key of a stroke that has not been drawn yet.
            guard contents.contains(value.content), contents.contains(key) else {
                throw DocumentError(.notFound, "stroke \(key) or its content \(value.content) does not exist")
            }
            guard value.brush.isValid, value.transform?.isFinite ?? true else {
                throw DocumentError(.invalidValue, "stroke brush or transform out of range")
            }
            let put = StrokeEntry(value: value, id: id)
            let previous = strokes[layer]?[key]
            var merged = previous ?? put
            merged.merge(put)
            if merged != previous {
                journal.append(.stroke(layer: layer, key: key, previous: previous))
                strokes[layer, default: [:]][key] = merged
            }

        case .eraseStroke(let layer, let key):
            try checkLayer(layer)
            guard let previous = strokes[layer]?[key] else {
                throw DocumentError(.notFound, "layer \(layer) has no stroke \(key)")
            }
            if id > previous.stamp {
                journal.append(.stroke(layer: layer, key: key, previous: previous))
                strokes[layer]![key]!.isErased = true
                strokes[layer]![key]!.stamp = id
            }

        case .addTag(let objectID, let tag):
            try checkTaggable(objectID, tag: tag)
            let key = Tag.key(tag)
            let previous = tags[objectID]?[key]
            guard previous?.adds[id] == nil else { throw DocumentError(.invalidOperation, "tag add \(id) already exists") }
            journal.append(.tag(object: objectID, key: key, previous: previous))
            tags[objectID, default: [:]][key, default: TagEntry()].adds[id] = tag

        case .removeTag(let objectID, let tag, let dots):
            try checkTaggable(objectID, tag: tag)
            let key = Tag.key(tag)
            // Causal delivery brings every add a remove saw before the remove.
            guard let previous = tags[objectID]?[key], !dots.isEmpty, dots.allSatisfy({ previous.adds[$0] != nil && $0 < id })
            else { throw DocumentError(.notFound, "tag \"\(tag)\" of \(objectID) has no such adds to remove") }
            var entry = previous
            for dot in dots { entry.removed[dot] = max(entry.removed[dot] ?? id, id) }
            if entry != previous {
                journal.append(.tag(object: objectID, key: key, previous: previous))
                tags[objectID]![key] = entry
            }

        case .insertProjectEntry, .purge:
            throw DocumentError(.invalidOperation, "library operations do not apply to a project")
        case .genesis, .setAccess:
            throw DocumentError(.invalidOperation, "access operations apply to the access list, not the content")

        case .nameVersion(let name, let version):
            guard VersionName.isValid(name) else {
                throw DocumentError(
                    .invalidValue, "a version name is 1 to \(VersionName.maximumLength) characters, not only spaces, no control characters")
            }
            let previous = versionNames[name]
            // An older write arriving late changes nothing.
            if let previous, previous.stamp > id { return }
            journal.append(.versionName(name: name, previous: previous))
            versionNames[name] = VersionName(name: name, version: version, stamp: id, time: time)
        }
    }

    /// Sets a text field's record, keeping `openConflicts` in step.
    private mutating func setFieldWrites(_ record: FieldWrites?, of slot: FieldSlot) {
        let wasOpen = fieldWrites[slot]?.overwritten.isEmpty == false
        let isOpen = record?.overwritten.isEmpty == false
        if wasOpen != isOpen { openConflicts += isOpen ? 1 : -1 }
        fieldWrites[slot] = record
    }

    /// Says which change the next operations belong to (see `WriteContext`).
    mutating func begin(_ context: WriteContext) {
        self.context = context
    }

    /// Undoes journal entries, newest first.
    mutating func rollback(_ journal: [ProjectJournalEntry]) {
        for entry in journal.reversed() {
            switch entry {
            case .field(let object, let key, let previous): objects[object]!.fields[key] = previous
            case .container(let object, let previous): objects[object]!.container = previous
            case .moved: break
            case .deleted(let object, let previous): objects[object]!.deleted = previous
            case .created(let object): objects[object] = nil
            case .entry(let container, let entry): containers[container]!.remove(entry)
            case .content(let id): contents[id] = nil
            case .stroke(let layer, let key, let previous): strokes[layer]![key] = previous
            case .drawn(let layer, let key):
                strokes[layer]![key] = nil
                contents[key] = nil
            case .tag(let object, let key, let previous):
                tags[object, default: [:]][key] = previous
                if tags[object]?.isEmpty ?? false { tags[object] = nil }
            case .writes(let slot, let previous): setFieldWrites(previous, of: slot)
            case .versionName(let name, let previous): versionNames[name] = previous
            }
        }
    }

    private func existing(_ id: OpID) throws(DocumentError) -> StoryObject {
        guard let object = objects[id] else { throw DocumentError(.notFound, "no object \(id)") }
        return object
    }

    /// Tags go on the project and on shots; the tag must be as stored.
    private func checkTaggable(_ id: OpID, tag: String) throws(DocumentError) {
        guard let object = objects[id] else { throw DocumentError(.notFound, "no project or shot \(id)") }
        guard object.kind == .project || object.kind == .shot else {
            throw DocumentError(.wrongKind, "\(id) is a \(object.kind); only the project and shots carry tags")
        }
        guard Tag.isValid(tag) else { throw DocumentError(.invalidValue, "tag \"\(tag)\" is empty, too long or not trimmed") }
    }

    private func checkLayer(_ id: OpID) throws(DocumentError) {
        // The kind alone: a copy of the object would retain its fields.
        guard let kind = objects[id]?.kind else { throw DocumentError(.notFound, "no layer \(id)") }
        guard kind == .layer else { throw DocumentError(.wrongKind, "\(id) is a \(kind), not a layer") }
    }

    private func checkContainer(
        _ container: OpID, for kind: ObjectKind, anchor: Anchor, entry: OpID
    ) throws(DocumentError) {
        guard let holderKind = objects[container]?.kind else { throw DocumentError(.notFound, "no container \(container)") }
        guard holderKind == kind.containerKind else {
            throw DocumentError(.wrongKind, "a \(kind) cannot be placed in a \(holderKind)")
        }
        guard containers[container]?.isValid(anchor) ?? (anchor == .root), anchor.parent.map({ $0 < entry }) ?? true else {
            throw DocumentError(.notFound, "position anchor \(anchor.parent.map(String.init(describing:)) ?? "root") is not in \(container)")
        }
    }

    mutating func adoptPoints(_ blobs: [(id: OpID, bytes: ArraySlice<UInt8>)]) {
        for (id, bytes) in blobs {
            contents[id]?.share(bytes)
        }
    }

    mutating func movePoints(of replica: ReplicaID, moved: [MovedChange]) {
        contents.move(replica: replica, moved: moved)
    }

    // MARK: - Reading

    func object(_ id: OpID) -> StoryObject? { objects[id] }

    /// Every image and sound a field holds now, deleted objects included
    /// (they can be restored), each hash once.
    var mediaReferences: [MediaReference] {
        var seen: Set<BlobHash> = []
        var result: [MediaReference] = []
        for object in objects.values {
            for key in [FieldKey.image, .sound] {
                if let media = object.fields[key]?.value.media, seen.insert(media.hash).inserted { result.append(media) }
            }
        }
        return result.sorted { $0.hash.description < $1.hash.description }
    }

    func content(_ id: OpID) -> PointsBlob? { contents[id] }

    /// The tags on an object, each in its shown spelling, sorted by key. O(tags).
    func tagNames(of object: OpID) -> [String] {
        guard let map = tags[object] else { return [] }
        return map.sorted { $0.key < $1.key }.compactMap { $0.value.spelling }
    }

    /// The entry of one tag (by key) of an object.
    func tagEntry(of object: OpID, key: String) -> TagEntry? { tags[object]?[key] }

    var allTags: [OpID: [String: TagEntry]] { tags }

    func strokeMap(of layer: OpID) -> StrokeMap { strokes[layer] ?? StrokeMap() }

    func tree(of container: OpID) -> PositionTree? { containers[container] }

    /// Whether the entry is where its object currently is, and the object is not deleted.
    func isLive(entry: OpID, in container: OpID, object id: OpID) -> Bool {
        guard let object = objects[id] else { return false }
        return !object.deleted.value && object.container.value == container && containers[container]?.latest[id] == entry
    }

    /// The list an object is in and its entry there.
    func place(of id: OpID) -> Place? {
        guard let container = objects[id]?.container.value, let entry = containers[container]?.latest[id] else { return nil }
        return Place(container: container, entry: entry)
    }

    /// The objects shown in a list, in order: each live entry's object. O(entries).
    func children(of container: OpID) -> [OpID] {
        guard let tree = containers[container] else { return [] }
        var result: [OpID] = []
        for entry in tree.order {
            let object = tree.entries[entry]!.object
            if isLive(entry: entry, in: container, object: object) { result.append(object) }
        }
        return result
    }

    /// The last live entry of a list (skipping `excluded`'s), scanning from
    /// the end: O(1) when the tail is live, as after appends.
    func lastLiveEntry(of container: OpID, excluding excluded: OpID? = nil) -> OpID? {
        guard let tree = containers[container] else { return nil }
        for entry in tree.order.reversed() {
            let object = tree.entries[entry]!.object
            if object != excluded && isLive(entry: entry, in: container, object: object) { return entry }
        }
        return nil
    }

    /// The live entries of a list, in order, with their objects.
    func liveEntries(of container: OpID) -> [(entry: OpID, object: OpID)] {
        guard let tree = containers[container] else { return [] }
        return tree.order.compactMap { entry in
            let object = tree.entries[entry]!.object
            return isLive(entry: entry, in: container, object: object) ? (entry, object) : nil
        }
    }

    /// The project's deletion for everyone, if it is deleted: the operation
    /// that wrote the flag, and the time it gave (`deletedAt`). O(1).
    var deletion: ProjectDeletion? {
        guard let root = objects[.root], root.deleted.value else { return nil }
        let time = root.field(.deletedAt).number.flatMap { Int64(exactly: $0.rounded()) }
        return ProjectDeletion(operation: root.deleted.stamp, time: time)
    }

    /// Whether an object is shown: not deleted, and its container is shown.
    /// The project's own deleted flag (the trash) hides nothing inside it.
    func isVisible(_ id: OpID) -> Bool {
        var current = id
        // Depth is at most three (layer → shot → scene → project).
        for _ in 0..<4 {
            guard let object = objects[current] else { return false }
            if object.kind == .project { return true }
            if object.deleted.value { return false }
            current = object.container.value
        }
        return false
    }

    var objectCount: Int { objects.count }

    var contentCount: Int { contents.count }

    /// All objects (for snapshots and checks).
    var allObjects: [OpID: StoryObject] { objects }

    var allContainers: [OpID: PositionTree] { containers }

    var allStrokes: [OpID: StrokeMap] { strokes }

    var allContents: ContentTable { contents }

    var allFieldWrites: [FieldSlot: FieldWrites] { fieldWrites }

    // MARK: - Merging states

    /// Joins another replica's state, which covers the changes of
    /// `theirs`, into this one, which covers `ours`: as `merge(_:)`, and each
    /// text field keeps the open writes of both sides that the other side
    /// had not replaced (`FieldWrites.merged`). O(state).
    mutating func merge(_ other: ProjectState, ours: VersionVector, theirs: VersionVector, known: [ReplicaID: UInt64] = [:]) {
        // A field with no record on either side (written before records were
        // kept) has nothing to merge beyond its register.
        let slots = Set(fieldWrites.keys).union(other.fieldWrites.keys)
        var merged: [FieldSlot: (record: FieldWrites, kept: FieldWrite)] = [:]
        for slot in slots {
            let mine = objects[slot.object]?.fields[slot.key].map { ($0, fieldWrites[slot]) }
            let theirsSide = other.objects[slot.object]?.fields[slot.key].map { ($0, other.fieldWrites[slot]) }
            let field = FieldWrites.merged(mine: mine, theirs: theirsSide, ours: ours, theirsVector: theirs)
            let before = Set(fieldWrites[slot]?.overwritten.map(\.stamp) ?? [])
            if field?.record.overwritten.contains(where: { !before.contains($0.stamp) }) ?? false { overwrites &+= 1 }
            merged[slot] = field
        }
        if isPristine {
            // Nothing to join: the other state as it is (a first snapshot merged
            // into a new document), without walking it entry by entry.
            objects = other.objects
            containers = other.containers
            strokes = other.strokes
            contents = other.contents
            tags = other.tags
            versionNames = other.versionNames
            mediaWrites &+= 1
        } else {
            merge(other, known: KnownOperations(known))
        }
        // Each text field shows the latest of its open writes, which the
        // register merge (by stamp) may not have picked.
        fieldWrites = merged.mapValues(\.record)
        for (slot, field) in merged where objects[slot.object] != nil {
            objects[slot.object]!.fields[slot.key] = Register(value: field.kept.value, stamp: field.kept.stamp)
        }
        openConflicts = fieldWrites.values.count { !$0.overwritten.isEmpty }
    }

    /// Whether this is the state of a new document: the project root alone,
    /// never written.
    private var isPristine: Bool {
        objects.count == 1 && objects[.root].map { $0.fields.isEmpty && $0.deleted.stamp == .root && $0.container.stamp == .root } == true
            && containers.isEmpty && strokes.isEmpty && contents.isEmpty && tags.isEmpty && versionNames.isEmpty
            && fieldWrites.isEmpty
    }

    /// Joins another state into this one: registers take the later write, lists,
    /// strokes and contents take the union. Commutative, associative, idempotent.
    /// Text fields keep the record of the side whose value they keep, its
    /// changes made unknown: this is a baseline taken from another document
    /// (`adoptBaseline`), whose changes no write here can name, so its open
    /// values stay until the field is written again (replicas of one
    /// document merge with their vectors instead).
    /// - Precondition: `other` is internally consistent (a validated snapshot).
    mutating func merge(_ other: ProjectState) { merge(other, known: KnownOperations([:])) }

    private mutating func merge(_ other: ProjectState, known: KnownOperations) {
        mediaWrites &+= 1
        for (slot, record) in other.fieldWrites {
            let theirs = other.objects[slot.object]?.fields[slot.key]?.stamp
            let mine = objects[slot.object]?.fields[slot.key]?.stamp
            guard let theirs, mine.map({ theirs > $0 }) ?? true else { continue }
            setFieldWrites(
                FieldWrites(
                    keptBy: nil, keptAt: record.keptAt,
                    overwritten: record.overwritten.map { FieldWrite(value: $0.value, stamp: $0.stamp, dot: nil, time: $0.time) }),
                of: slot)
        }
        for (name, theirs) in other.versionNames where theirs.stamp > versionNames[name]?.stamp ?? OpID(counter: 0, replica: .reserved) {
            versionNames[name] = theirs
        }
        for (id, theirs) in other.objects {
            guard var mine = objects[id] else {
                objects[id] = theirs
                continue
            }
            mine.container.merge(theirs.container)
            mine.deleted.merge(theirs.deleted)
            for (key, register) in theirs.fields {
                if let current = mine.fields[key] {
                    if register.stamp > current.stamp { mine.fields[key] = register }
                } else {
                    mine.fields[key] = register
                }
            }
            objects[id] = mine
        }
        if contents.isEmpty {
            contents = other.contents
        } else {
            // Contents never change once added: those of operations this state
            // holds are here already, and skipping them spares a lookup each.
            var known = known
            for (id, blob) in other.contents where !known.holds(id) && !contents.contains(id) { contents[id] = blob }
        }
        var knownStrokes = known
        for (layer, theirs) in other.strokes {
            guard strokes[layer] != nil else {
                strokes[layer] = theirs
                continue
            }
            // In place: a local copy of the map would be copied again on write.
            ProjectState.merge(theirs, into: &strokes[layer]!, known: &knownStrokes)
        }
        for (object, theirs) in other.tags {
            for (key, entry) in theirs {
                if tags[object]?[key] == nil { tags[object, default: [:]][key] = entry } else { tags[object]![key]!.merge(entry) }
            }
        }
        for (container, theirs) in other.containers {
            var mine = containers[container] ?? PositionTree()
            // Parents before children: an entry's parent always has a smaller id
            // (checked when entries are made and when snapshots are decoded).
            var added = false
            for entry in theirs.entries.keys.sorted() where !mine.contains(entry) {
                let source = theirs.entries[entry]!
                mine.insertWithoutOrdering(entry, object: source.object, anchor: Anchor(parent: source.parent, side: source.side))
                added = true
            }
            if added { mine.rebuildOrder() }
            containers[container] = mine
        }
    }

    private static func merge(_ theirs: StrokeMap, into mine: inout StrokeMap, known: inout KnownOperations) {
        for (key, entry) in theirs {
            // Both registers written by operations this state holds: ours is
            // the same or later, so there is nothing to take.
            if known.holds(entry.valueStamp) && known.holds(entry.stamp) { continue }
            if mine[key] == nil { mine[key] = entry } else { mine[key]!.merge(entry) }
        }
    }

    /// Builds a state from decoded parts (a snapshot), checking that every
    /// reference inside it resolves; a stroke's points may be in
    /// `contentsElsewhere` instead (those of the state it is merged into).
    init(
        objects: [OpID: StoryObject], containers: [OpID: PositionTree], strokes: [OpID: StrokeMap],
        contents: ContentTable, tags: [OpID: [String: TagEntry]] = [:], fieldWrites: [FieldSlot: FieldWrites] = [:],
        versionNames: [String: VersionName] = [:], contentsElsewhere: ContentTable = ContentTable()
    ) throws(DocumentError) {
        self.objects = objects
        self.fieldWrites = fieldWrites
        openConflicts = fieldWrites.values.count { !$0.overwritten.isEmpty }
        self.containers = containers
        self.strokes = strokes
        self.contents = contents
        self.tags = tags
        self.versionNames = versionNames
        for (object, map) in tags {
            guard let kind = objects[object]?.kind, kind == .project || kind == .shot else {
                throw DocumentError(.invalidSnapshot, "tags of \(object), which is not the project or a shot")
            }
            for (key, entry) in map {
                guard !entry.adds.isEmpty, entry.adds.values.allSatisfy({ Tag.key($0) == key }),
                    entry.removed.allSatisfy({ entry.adds[$0.key] != nil && $0.key < $0.value })
                else { throw DocumentError(.invalidSnapshot, "tag \(key) of \(object) is inconsistent") }
            }
        }
        guard objects[.root]?.kind == .project else { throw DocumentError(.invalidSnapshot, "the project root is missing") }
        for (id, object) in objects where id != .root {
            let container = object.container.value
            guard let holder = objects[container], holder.kind == object.kind.containerKind,
                containers[container]?.latest[id] != nil
            else { throw DocumentError(.invalidSnapshot, "\(object.kind) \(id) has a dangling place") }
        }
        for (container, tree) in containers {
            guard objects[container] != nil else { throw DocumentError(.invalidSnapshot, "list of unknown \(container)") }
            for (_, entry) in tree.entries where objects[entry.object] == nil {
                throw DocumentError(.invalidSnapshot, "an entry of \(container) names an unknown object")
            }
        }
        for (slot, record) in fieldWrites {
            guard let register = objects[slot.object]?.fields[slot.key], FieldWrites.isTracked(slot.key),
                case let kept = FieldWrite(value: register.value, stamp: register.stamp, dot: record.keptBy, time: record.keptAt),
                record.overwritten.allSatisfy({ kept.isLater(than: $0) })
            else { throw DocumentError(.invalidSnapshot, "overwritten values of \(slot.key) of \(slot.object) do not match its field") }
        }
        for (layer, map) in strokes {
            guard objects[layer]?.kind == .layer else { throw DocumentError(.invalidSnapshot, "strokes of unknown layer \(layer)") }
            for (_, entry) in map {
                if !contents.contains(entry.value.content) && !contentsElsewhere.contains(entry.value.content) {
                    throw DocumentError(.invalidSnapshot, "a stroke of \(layer) names unknown content")
                }
            }
        }
    }
}

/// The operations a state holds, as the last counter of each replica (every
/// operation of that replica up to it is in; a replica's counters grow with
/// its changes, which apply in order). Remembers the last replica asked
/// about, since entries come in runs of one author.
struct KnownOperations {
    private let last: [ReplicaID: UInt64]
    private var replica = ReplicaID.reserved
    private var limit: UInt64 = 0

    init(_ last: [ReplicaID: UInt64]) { self.last = last }

    /// Whether the state holds operation `id`.
    mutating func holds(_ id: OpID) -> Bool {
        if id.replica != replica {
            replica = id.replica
            limit = last[id.replica] ?? 0
        }
        return id.counter <= limit
    }
}
