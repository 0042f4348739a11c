/// A sentence for what one local edit did, in the words of the board:
/// "moved shot 1-2 to scene 2 (now 2-1)", "drew 2 strokes on layer ink in
/// 1-3", "set caption of shot 1-1". Made from the edit's journal and the state
/// after it, once per undoable edit, so undo and redo can say what they take
/// back even after the labels changed.
enum EditSummary {
    /// At most this many phrases; the rest are counted ("and 4 more").
    static let phrases = 3

    /// One phrase, named only if it is shown (naming costs a walk of a list,
    /// and an edit may add ten thousand scenes).
    private enum Phrase {
        case added(OpID)
        case deleted(OpID, isDeleted: Bool)
        case moved(OpID, from: Place)
        case fields(OpID)
        case strokes(layer: OpID)
        /// "tagged shot 1-2 \"night\"", "untagged the project \"draft\"".
        case tag(OpID, name: String, isOn: Bool)
    }

    static func project(_ journal: [(OpID, ProjectJournalEntry)], in state: ProjectState) -> String {
        var created: Set<OpID> = []
        for (_, entry) in journal { if case .created(let object) = entry { created.insert(object) } }
        var phrases: [Phrase] = []
        var fieldKeys: [OpID: [FieldKey]] = [:]
        var strokeCounts: [OpID: [String: Int]] = [:]
        var seenMoves: Set<OpID> = []
        var seenDeletes: Set<OpID> = []
        for (_, entry) in journal {
            switch entry {
            case .created(let object):
                phrases.append(.added(object))
            case .deleted(let object, let previous) where !created.contains(object) && seenDeletes.insert(object).inserted:
                let isDeleted = state.object(object)?.deleted.value ?? previous.value
                guard isDeleted != previous.value else { continue }
                phrases.append(.deleted(object, isDeleted: isDeleted))
            case .moved(let object, let from) where !created.contains(object) && seenMoves.insert(object).inserted:
                phrases.append(.moved(object, from: from))
            case .field(let object, let key, _) where !created.contains(object) && key != .deletedAt:
                if var keys = fieldKeys[object] {
                    if !keys.contains(key) { keys.append(key) }
                    fieldKeys[object] = keys
                } else {
                    fieldKeys[object] = [key]
                    phrases.append(.fields(object))
                }
            case .drawn(let layer, _):
                if strokeCounts[layer] == nil { phrases.append(.strokes(layer: layer)) }
                strokeCounts[layer, default: [:]]["drew", default: 0] += 1
            case .stroke(let layer, let key, let previous):
                let now = state.strokeMap(of: layer)[key]
                let verb: String
                switch (previous, now) {
                // A put where the layer had no such stroke: a copy (a duplicated shot's).
                case (nil, _): verb = "copied"
                case (let before?, let after?) where !before.isErased && after.isErased: verb = "erased"
                case (let before?, let after?) where before.isErased && !after.isErased: verb = "restored"
                default: verb = "changed"
                }
                if strokeCounts[layer] == nil { phrases.append(.strokes(layer: layer)) }
                strokeCounts[layer, default: [:]][verb, default: 0] += 1
            case .tag(let object, let key, let previous):
                let now = state.tagEntry(of: object, key: key)
                guard let name = now?.spelling ?? previous?.spelling, now?.spelling != previous?.spelling else { continue }
                phrases.append(.tag(object, name: name, isOn: now?.isLive ?? false))
            default:
                continue
            }
        }
        func words(_ phrase: Phrase) -> String {
            switch phrase {
            case .added(let object): return "added \(name(of: object, in: state))"
            case .deleted(let object, let isDeleted): return "\(isDeleted ? "deleted" : "restored") \(name(of: object, in: state))"
            case .moved(let object, let from): return move(of: object, from: from, in: state)
            case .fields(let object):
                let list = (fieldKeys[object] ?? []).map { "\($0)" }.joined(separator: ", ")
                return object == .root ? "set the project's \(list)" : "set \(list) of \(name(of: object, in: state))"
            case .strokes(let layer):
                let counts = strokeCounts[layer] ?? [:]
                let verbs = ["drew", "erased", "restored", "copied", "changed"].compactMap { verb in
                    counts[verb].map { "\(verb) \($0) stroke\($0 == 1 ? "" : "s")" }
                }
                return "\(verbs.joined(separator: " and ")) on \(name(of: layer, in: state))"
            case .tag(let object, let tag, let isOn):
                return "\(isOn ? "tagged" : "untagged") \(name(of: object, in: state)) \"\(tag)\""
            }
        }
        let shown = phrases.count > Self.phrases ? Self.phrases - 1 : phrases.count
        return joined(phrases.prefix(shown).map(words), total: phrases.count)
    }

    static func library(_ journal: [(OpID, LibraryJournalEntry)], in state: LibraryState) -> String {
        var created: Set<OpID> = []
        var phrases: [String] = []
        var seen: Set<OpID> = []
        func name(_ node: OpID) -> String {
            let kind = state.node(node)?.kind == .folder ? "folder" : "project"
            return state.node(node)?.field(.name).string.map { "\(kind) \"\($0)\"" } ?? kind
        }
        for (_, entry) in journal {
            switch entry {
            case .created(let node):
                created.insert(node)
                phrases.append("added \(name(node))")
            case .moved(let node, _) where !created.contains(node) && seen.insert(node).inserted:
                phrases.append(state.location(of: node) == .trash ? "deleted \(name(node))" : "moved \(name(node))")
            case .field(let node, let key, _) where !created.contains(node):
                phrases.append(key == .name ? "renamed \(name(node))" : "set \(key) of \(name(node))")
            default:
                continue
            }
        }
        let shown = phrases.count > Self.phrases ? Array(phrases.prefix(Self.phrases - 1)) : phrases
        return joined(shown, total: phrases.count)
    }

    /// The phrases shown, and how many there were in all.
    private static func joined(_ shown: [String], total: Int) -> String {
        guard total > 0 else { return "no visible change" }
        guard total > shown.count else { return shown.joined(separator: ", ") }
        return shown.joined(separator: ", ") + " and \(total - shown.count) more changes"
    }

    // MARK: - Names

    /// "shot 1-2", "scene 2 \"Tunnel\"", "layer ink in 1-2", "the project".
    static func name(of object: OpID, in state: ProjectState) -> String {
        guard object != .root, let kind = state.object(object)?.kind else { return "the project" }
        switch kind {
        case .scene:
            let title = state.object(object)?.field(.title).string.map { " \"\($0)\"" } ?? ""
            return "scene \(number(of: object, in: state).map(String.init) ?? "?")\(title)"
        case .shot:
            return "shot \(label(of: object, in: state))"
        case .layer:
            let name = state.object(object)?.field(.name).string.map { "layer \($0)" } ?? "a layer"
            guard let shot = state.object(object)?.container.value else { return name }
            return "\(name) in \(label(of: shot, in: state))"
        default:
            return "\(kind)"
        }
    }

    /// The shot's label at `place` (default: where it is now): "2-3".
    static func label(of shot: OpID, at place: Place? = nil, in state: ProjectState) -> String {
        guard let place = place ?? state.place(of: shot) else { return "?" }
        let scene = number(of: place.container, in: state).map(String.init) ?? "?"
        let position = ordinal(of: shot, at: place.entry, in: place.container, state: state).map(String.init) ?? "?"
        return "\(scene)-\(position)"
    }

    /// A scene's number (1-based among the shown scenes), where it is now.
    private static func number(of scene: OpID, in state: ProjectState) -> Int? {
        guard let place = state.place(of: scene) else { return nil }
        return ordinal(of: scene, at: place.entry, in: place.container, state: state)
    }

    /// The 1-based position `entry` has among the shown objects of a list,
    /// counting `object` itself as there (also when it is deleted or has
    /// moved away since). O(entries of the list).
    static func ordinal(of object: OpID, at entry: OpID, in container: OpID, state: ProjectState) -> Int? {
        guard let tree = state.tree(of: container) else { return nil }
        var position = 1
        for other in tree.order {
            if other == entry { return position }
            guard let owner = tree.object(at: other), owner != object else { continue }
            if state.isLive(entry: other, in: container, object: owner) { position += 1 }
        }
        return nil
    }

    /// "moved shot 1-2 to scene 2 (now 2-1)", "moved shot 1-2 (now 1-4)", "moved layer ink in 1-2".
    private static func move(of object: OpID, from: Place, in state: ProjectState) -> String {
        guard let kind = state.object(object)?.kind else { return "moved something" }
        switch kind {
        case .shot:
            let before = label(of: object, at: from, in: state)
            let after = label(of: object, in: state)
            guard let container = state.place(of: object)?.container, container != from.container else {
                return "moved shot \(before) (now \(after))"
            }
            return "moved shot \(before) to scene \(number(of: container, in: state).map(String.init) ?? "?") (now \(after))"
        case .scene:
            let before = ordinal(of: object, at: from.entry, in: from.container, state: state).map(String.init) ?? "?"
            let after = number(of: object, in: state).map(String.init) ?? "?"
            return "moved scene \(before) (now \(after))"
        default:
            return "moved \(name(of: object, in: state))"
        }
    }
}
