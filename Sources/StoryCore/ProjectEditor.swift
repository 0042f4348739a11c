/// Makes the operations of one edit of a project. Every method applies at once
/// (later calls see earlier ones) and throws `DocumentError` without changing
/// anything if its arguments are wrong; if the edit's closure throws, the whole
/// edit is rolled back. Indices count the items a user sees.
package struct ProjectEditor: ChangeBuilder {
    var state: ProjectState
    var core: EditCore<ProjectJournalEntry>

    init(state: ProjectState, replica: ReplicaID, startCounter: UInt64, time: Int64) {
        self.state = state
        core = EditCore(replica: replica, startCounter: startCounter, time: time)
    }

    // MARK: - Reading inside an edit

    /// The scenes shown, in order.
    package var scenes: [OpID] { state.children(of: .root) }

    /// The shots shown in a scene, in order.
    package func shots(in scene: OpID) -> [OpID] { state.children(of: scene) }

    /// The layers shown in a shot, in order.
    package func layers(in shot: OpID) -> [OpID] { state.children(of: shot) }

    /// Whether an object is shown (not deleted, nor inside something deleted).
    package func isVisible(_ id: OpID) -> Bool { state.isVisible(id) }

    /// The kind of an object, if it exists.
    package func kind(of id: OpID) -> ObjectKind? { state.object(id)?.kind }

    /// The container an object is placed in.
    package func container(of id: OpID) -> OpID? { state.object(id)?.container.value }

    /// A field's current value (`.null` when unset).
    package func field(_ key: FieldKey, of id: OpID = .root) -> FieldValue { state.object(id)?.field(key) ?? .null }

    /// The value under a stroke key; nil when absent or erased.
    package func stroke(_ key: OpID, in layer: OpID) -> StrokeValue? { state.strokeMap(of: layer)[key]?.visibleValue }

    // MARK: - Fields

    /// Sets a field of the project (`.root`), a scene, shot or layer.
    package mutating func set(_ key: FieldKey, to value: FieldValue, on object: OpID = .root) throws(DocumentError) {
        try perform(.setField(object: object, key: key, value: value))
    }

    // MARK: - Scenes, shots and layers

    /// Inserts a scene so that it is shown at `index` (nil: last). Returns its id.
    @discardableResult
    package mutating func insertScene(at index: Int?) throws(DocumentError) -> OpID {
        try perform(.insert(kind: .scene, container: .root, anchor: anchor(at: index, in: .root)))
    }

    /// Inserts a shot into a scene at `index` (nil: last). Returns its id.
    @discardableResult
    package mutating func insertShot(in scene: OpID, at index: Int?) throws(DocumentError) -> OpID {
        try requireKind(scene, .scene)
        return try perform(.insert(kind: .shot, container: scene, anchor: anchor(at: index, in: scene)))
    }

    /// Inserts a layer into a shot at `index` (0 = bottom, nil: top). Returns its id.
    @discardableResult
    package mutating func insertLayer(in shot: OpID, at index: Int?) throws(DocumentError) -> OpID {
        try requireKind(shot, .shot)
        return try perform(.insert(kind: .layer, container: shot, anchor: anchor(at: index, in: shot)))
    }

    /// Moves a scene, shot or layer so that it ends up shown at `index` of
    /// `container` (default: where it is now). A shot may move to another scene
    /// and a layer to another shot, atomically: concurrent moves of one object
    /// never duplicate it. Moving to where it already is does nothing.
    package mutating func move(_ object: OpID, to index: Int, in container: OpID? = nil) throws(DocumentError) {
        guard let current = state.object(object), current.kind != .project else {
            throw DocumentError(.notFound, "no scene, shot or layer \(object)")
        }
        let here = current.container.value
        let target = container ?? here
        if target == here, state.children(of: target).firstIndex(of: object) == index {
            return
        }
        let anchor = try anchor(at: index, in: target, excluding: object)
        if target == here {
            try perform(.reorder(object: object, container: target, anchor: anchor))
        } else {
            try perform(.move(object: object, container: target, anchor: anchor))
        }
    }

    /// Deletes a scene, shot or layer. Reversible: its contents stay.
    /// - Throws: `DocumentError(.invalidOperation)` for the project itself (`deleteProject`).
    package mutating func delete(_ object: OpID) throws(DocumentError) {
        guard object != .root else { throw DocumentError(.invalidOperation, "the project itself is deleted with deleteProject") }
        try perform(.setDeleted(object: object, isDeleted: true))
    }

    /// Restores a deleted scene, shot or layer, with everything inside it.
    /// - Throws: `DocumentError(.invalidOperation)` for the project itself (`restoreProject`).
    package mutating func restore(_ object: OpID) throws(DocumentError) {
        guard object != .root else { throw DocumentError(.invalidOperation, "the project itself is restored with restoreProject") }
        try perform(.setDeleted(object: object, isDeleted: false))
    }

    // MARK: - The project's trash

    /// Whether the project is deleted for everyone (in the trash).
    package var isProjectDeleted: Bool { state.deletion != nil }

    /// Deletes the project for everyone who shares it: its root's deleted
    /// flag, and the edit's time as `deletedAt` (retention counts from it).
    /// Nothing inside is touched; `restoreProject` brings it all back.
    /// Deleting a deleted project does nothing.
    package mutating func deleteProject() throws(DocumentError) {
        guard !isProjectDeleted else { return }
        try perform(.setDeleted(object: .root, isDeleted: true))
        try perform(.setField(object: .root, key: .deletedAt, value: .number(Double(core.time))))
    }

    /// Names a version of the project (nil: takes the name away); the name
    /// then names that version on every replica (last writer wins per name).
    /// - Throws: `DocumentError(.invalidValue)` for an empty, too long or control-character name.
    package mutating func nameVersion(_ name: String, as version: VersionVector?) throws(DocumentError) {
        try perform(.nameVersion(name: name, version: version))
    }

    /// Takes the project out of the trash for everyone. Restoring a project
    /// that is not deleted does nothing.
    package mutating func restoreProject() throws(DocumentError) {
        guard isProjectDeleted else { return }
        try perform(.setDeleted(object: .root, isDeleted: false))
    }

    /// The label a shot shows now ("1-2"; "?" parts when it is not shown).
    package func label(ofShot shot: OpID) -> String { EditSummary.label(of: shot, in: state) }

    /// Duplicates a shot right after it (or at `index`): a new shot with the same
    /// fields and new layers whose strokes reference the source strokes. No
    /// point bytes are copied. Returns the new shot's id.
    @discardableResult
    package mutating func duplicateShot(_ shot: OpID, at index: Int? = nil) throws(DocumentError) -> OpID {
        try requireKind(shot, .shot)
        let source = state.object(shot)!
        let scene = source.container.value
        let anchor: Anchor
        if let index {
            anchor = try self.anchor(at: index, in: scene)
        } else {
            anchor = state.tree(of: scene)!.anchor(after: state.place(of: shot)?.entry)
        }
        let copy = try perform(.insert(kind: .shot, container: scene, anchor: anchor))
        for (key, register) in source.fields.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            try perform(.setField(object: copy, key: key, value: register.value))
        }
        var previousEntry: OpID?
        // Groups of the copy are the copy's own: each source group id maps to a new one.
        var groups: [OpID: OpID] = [:]
        for layer in state.children(of: shot) {
            let layerAnchor = previousEntry.map { state.tree(of: copy)!.anchor(after: $0) } ?? .root
            let newLayer = try perform(.insert(kind: .layer, container: copy, anchor: layerAnchor))
            previousEntry = newLayer
            for (key, register) in state.object(layer)!.fields.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                var value = register.value
                if case .id(let group) = value {
                    if groups[group] == nil { groups[group] = core.nextID }
                    value = .id(groups[group]!)
                }
                try perform(.setField(object: newLayer, key: key, value: value))
            }
            for (key, entry) in state.strokeMap(of: layer).sorted(by: { $0.key < $1.key }) {
                if let value = entry.visibleValue { try perform(.putStroke(layer: newLayer, key: key, value: value)) }
            }
        }
        return copy
    }

    /// Puts layers into one new group. Returns the group id.
    @discardableResult
    package mutating func groupLayers(_ layers: [OpID]) throws(DocumentError) -> OpID {
        guard !layers.isEmpty else { throw DocumentError(.invalidValue, "no layers to group") }
        let group = core.nextID
        for layer in layers {
            try requireKind(layer, .layer)
            try perform(.setField(object: layer, key: .group, value: .id(group)))
        }
        return group
    }

    /// Takes layers out of their groups.
    package mutating func ungroupLayers(_ layers: [OpID]) throws(DocumentError) {
        for layer in layers {
            try requireKind(layer, .layer)
            try perform(.setField(object: layer, key: .group, value: .null))
        }
    }

    // MARK: - Strokes

    /// Adds a stroke to a layer. Returns its id (its key in the layer).
    @discardableResult
    package mutating func addStroke(to layer: OpID, brush: Brush, points: [Point]) throws(DocumentError) -> OpID {
        guard !points.isEmpty, points.count <= Change.maximumStrokePoints else {
            throw DocumentError(.invalidValue, "a stroke has 1…\(Change.maximumStrokePoints) points, not \(points.count)")
        }
        return try addStroke(to: layer, brush: brush, encodedPoints: PointsBlob(encoding: points))
    }

    /// Adds a stroke whose points are already encoded.
    @discardableResult
    package mutating func addStroke(to layer: OpID, brush: Brush, encodedPoints: PointsBlob) throws(DocumentError) -> OpID {
        guard brush.isValid else { throw DocumentError(.invalidValue, "brush width \(brush.width) out of range") }
        guard encodedPoints.count <= Change.maximumStrokePoints else {
            throw DocumentError(.invalidValue, "a stroke has 1…\(Change.maximumStrokePoints) points, not \(encodedPoints.count)")
        }
        return try perform(.addStroke(layer: layer, brush: brush, points: encodedPoints))
    }

    /// Erases a stroke (a tombstone: undo or restore brings it back).
    package mutating func eraseStroke(_ key: OpID, in layer: OpID) throws(DocumentError) {
        try perform(.eraseStroke(layer: layer, key: key))
    }

    /// Replaces the value under a stroke key: a lasso move, a recolour, or
    /// bringing back an erased stroke.
    package mutating func replaceStroke(_ key: OpID, in layer: OpID, with value: StrokeValue) throws(DocumentError) {
        try perform(.putStroke(layer: layer, key: key, value: value))
    }

    /// Moves, scales or rotates strokes (a lasso edit): composes `transform`
    /// after each stroke's current one.
    package mutating func transformStrokes(_ keys: [OpID], in layer: OpID, by transform: Affine) throws(DocumentError) {
        for key in keys {
            var value = try liveStroke(key, in: layer)
            value.transform = (value.transform ?? .identity).followed(by: transform)
            if value.transform == .identity { value.transform = nil }
            try perform(.putStroke(layer: layer, key: key, value: value))
        }
    }

    /// Changes the brush of strokes (a lasso recolour or restyle).
    package mutating func restyleStrokes(_ keys: [OpID], in layer: OpID, _ change: (inout Brush) -> Void) throws(DocumentError) {
        for key in keys {
            var value = try liveStroke(key, in: layer)
            change(&value.brush)
            try perform(.putStroke(layer: layer, key: key, value: value))
        }
    }

    /// Brings back an erased stroke, with the last value it had. Anybody can
    /// restore any erased stroke: erasing keeps what was drawn.
    package mutating func restoreStroke(_ key: OpID, in layer: OpID) throws(DocumentError) {
        guard let entry = state.strokeMap(of: layer)[key] else {
            throw DocumentError(.notFound, "layer \(layer) has no stroke \(key)")
        }
        if entry.isErased { try perform(.putStroke(layer: layer, key: key, value: entry.value)) }
    }

    // MARK: - Tags

    /// The tags on the project (`.root`) or a shot, in their shown spellings, sorted.
    package func tags(of object: OpID = .root) -> [String] { state.tagNames(of: object) }

    /// Puts a tag on the project (`.root`) or a shot. `text` is trimmed; a
    /// tag already there in the same spelling is left as it is (another
    /// spelling of it is respelled).
    /// - Throws: `DocumentError` for an empty, too long or control-character
    ///   tag (`invalidValue`, naming the tag), an object that is not the
    ///   project or a shot, or one tag more than `Tag.maximumPerObject`.
    package mutating func addTag(_ text: String, to object: OpID = .root) throws(DocumentError) {
        let tag = try Tag.normalized(text)
        try requireTaggable(object)
        let entry = state.tagEntry(of: object, key: Tag.key(tag))
        if entry?.spelling == tag { return }
        if !(entry?.isLive ?? false), state.tagNames(of: object).count >= Tag.maximumPerObject {
            throw DocumentError(.invalidValue, "'tag': \(object == .root ? "the project" : "a shot") carries at most \(Tag.maximumPerObject) tags")
        }
        try perform(.addTag(object: object, tag: tag))
    }

    /// Takes a tag (in any case) off the project (`.root`) or a shot: removes
    /// every add of it this replica has seen.
    /// - Throws: `DocumentError(.notFound)` when the object does not carry
    ///   it; `invalidValue` for a tag that could not be one.
    package mutating func removeTag(_ text: String, from object: OpID = .root) throws(DocumentError) {
        let tag = try Tag.normalized(text)
        try requireTaggable(object)
        guard let entry = state.tagEntry(of: object, key: Tag.key(tag)), let spelling = entry.spelling else {
            throw DocumentError(.notFound, "'tag': \(object == .root ? "the project" : "the shot") has no tag \"\(tag)\"")
        }
        try perform(.removeTag(object: object, tag: spelling, dots: entry.liveDots))
    }

    private func requireTaggable(_ id: OpID) throws(DocumentError) {
        guard let object = state.object(id) else { throw DocumentError(.notFound, "no project or shot \(id)") }
        guard object.kind == .project || object.kind == .shot else {
            throw DocumentError(.wrongKind, "\(id) is a \(object.kind); only the project and shots carry tags")
        }
    }

    // MARK: - Helpers

    private func liveStroke(_ key: OpID, in layer: OpID) throws(DocumentError) -> StrokeValue {
        guard let value = state.strokeMap(of: layer)[key]?.visibleValue else {
            throw DocumentError(.notFound, "layer \(layer) shows no stroke \(key)")
        }
        return value
    }

    private func requireKind(_ id: OpID, _ kind: ObjectKind) throws(DocumentError) {
        guard let object = state.object(id) else { throw DocumentError(.notFound, "no \(kind) \(id)") }
        guard object.kind == kind else { throw DocumentError(.wrongKind, "\(id) is a \(object.kind), not a \(kind)") }
    }

    /// The anchor that puts a new entry at visible `index` of a list (`excluding`
    /// the object being moved, whose old entry will no longer show).
    private func anchor(at index: Int?, in container: OpID, excluding moving: OpID? = nil) throws(DocumentError) -> Anchor {
        guard let index else {
            // The end: after the last live entry, found from the back without listing them all.
            guard let tree = state.tree(of: container) else { return .root }
            return tree.anchor(after: state.lastLiveEntry(of: container, excluding: moving))
        }
        let live = state.liveEntries(of: container).filter { $0.object != moving }
        guard index >= 0 && index <= live.count else {
            throw DocumentError(.invalidValue, "index \(index) outside 0…\(live.count)")
        }
        guard let tree = state.tree(of: container) else { return .root }
        return tree.anchor(after: index == 0 ? nil : live[index - 1].entry)
    }

    /// Emits the operations that restore an undo record's registers that are
    /// still as the recorded change left them.
    mutating func invert(_ record: UndoRecord) throws(DocumentError) {
        for item in record.items.reversed() {
            switch (item.target, item.previous) {
            case (.field(let object, let key), .field(let value)):
                if state.object(object)?.fields[key]?.stamp == item.stamp {
                    try perform(.setField(object: object, key: key, value: value))
                }
            case (.place(let object), .place(let place?)):
                // Only if the object is still where this change put it.
                guard let current = state.place(of: object), current.entry == item.stamp,
                    let tree = state.tree(of: place.container)
                else { continue }
                let anchor = tree.anchor(after: place.entry)
                if current.container == place.container {
                    try perform(.reorder(object: object, container: place.container, anchor: anchor))
                } else {
                    try perform(.move(object: object, container: place.container, anchor: anchor))
                }
            case (.deleted(let object), .deleted(let isDeleted)):
                if state.object(object)?.deleted.stamp == item.stamp {
                    try perform(.setDeleted(object: object, isDeleted: isDeleted))
                }
            case (.tag(let object, let key), .tag(let spelling)):
                guard let entry = state.tagEntry(of: object, key: key), entry.stamp == item.stamp else { continue }
                if let spelling {
                    if entry.spelling != spelling { try perform(.addTag(object: object, tag: spelling)) }
                } else if let shown = entry.spelling {
                    try perform(.removeTag(object: object, tag: shown, dots: entry.liveDots))
                }
            case (.stroke(let layer, let key), .stroke(let value)):
                guard state.strokeMap(of: layer)[key]?.stamp == item.stamp else { continue }
                if let value {
                    try perform(.putStroke(layer: layer, key: key, value: value))
                } else {
                    try perform(.eraseStroke(layer: layer, key: key))
                }
            default:
                continue
            }
        }
    }

    static let placeholder = ProjectState()

    /// The stamp a register has now (nil: it does not exist).
    static func stamp(of target: UndoTarget, in state: ProjectState) -> OpID? {
        switch target {
        case .field(let object, let key): state.object(object)?.fields[key]?.stamp
        case .place(let object): state.place(of: object)?.entry
        case .deleted(let object): state.object(object)?.deleted.stamp
        case .stroke(let layer, let key): state.strokeMap(of: layer)[key]?.stamp
        case .tag(let object, let key): state.tagEntry(of: object, key: key)?.stamp
        }
    }

    /// The inverse of the journal of an edit.
    static func undoRecord(_ journal: [(OpID, ProjectJournalEntry)], in state: ProjectState) -> UndoRecord {
        var record = UndoRecord()
        for (id, entry) in journal {
            switch entry {
            case .field(let object, let key, let previous):
                record.add(.field(object, key), previous: .field(previous?.value ?? .null), stamp: id, previousStamp: previous?.stamp)
            case .moved(let object, let from):
                record.add(.place(object), previous: .place(from), stamp: id, previousStamp: from.entry)
            case .deleted(let object, let previous):
                record.add(.deleted(object), previous: .deleted(previous.value), stamp: id, previousStamp: previous.stamp)
            case .created(let object):
                record.add(.deleted(object), previous: .deleted(true), stamp: id, previousStamp: nil)
            case .stroke(let layer, let key, let previous):
                record.add(.stroke(layer: layer, key: key), previous: .stroke(previous?.visibleValue), stamp: id, previousStamp: previous?.stamp)
            case .drawn(let layer, let key):
                record.add(.stroke(layer: layer, key: key), previous: .stroke(nil), stamp: id, previousStamp: nil)
            case .tag(let object, let key, let previous):
                record.add(.tag(object, key), previous: .tag(previous?.spelling), stamp: id, previousStamp: previous?.stamp)
            case .entry, .content, .container, .writes, .versionName:
                continue
            }
        }
        record.summary = EditSummary.project(journal, in: state)
        return record
    }
}
