import StoryCore

/// A one-line account of a change for `history`: "drew 2 strokes, moved 1 shot".
enum ChangeSummary {
    static func describe(
        _ change: Change, in document: ProjectDocument, puts: [OpID: StrokePutKind] = [:], naming name: (PeerID) -> String = { $0.short }
    ) -> String {
        describe([change], in: document, puts: puts, naming: name)
    }

    /// The account of several changes at once (one version of `history`):
    /// "drew 34 strokes, set caption", each object counted once per verb.
    /// `puts`: the stroke puts that restored or copied a stroke
    /// (`StrokePutTracker`); any other put "changed" one. `name`: what a
    /// peer is called here (its name, not its id: "made bob an editor").
    static func describe(
        _ changes: [Change], in document: ProjectDocument, puts: [OpID: StrokePutKind] = [:], naming name: (PeerID) -> String = { $0.short }
    ) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        var fields: [String] = []
        var extra: [String] = []
        var inserted: [OpID: ObjectKind] = [:]
        var counted: Set<String> = []
        /// The strokes (layer, key) these changes restored or copied.
        var broughtIn: Set<[OpID]> = []
        /// Counts each object once per verb (a restyle and a move of one stroke change 1 stroke).
        func note(_ verb: String, _ noun: String, _ object: OpID? = nil) {
            let key = "\(verb) \(noun)"
            if let object, !counted.insert("\(key) \(object)").inserted { return }
            if counts[key] == nil { order.append(key) }
            counts[key, default: 0] += 1
        }
        func kind(_ id: OpID) -> String {
            if id == .root { return "project" }
            return (inserted[id] ?? document.kind(of: id)).map { "\($0)" } ?? "object"
        }
        for change in changes {
            // What this change added: fields it sets on them are part of adding them
            // (a caption set in a later change of the same version is said).
            var insertedHere: Set<OpID> = []
            for (index, operation) in change.operations.enumerated() {
                switch operation {
                case .insert(let objectKind, _, _):
                    inserted[change.opID(at: index)] = objectKind
                    insertedHere.insert(change.opID(at: index))
                    note("added", "\(objectKind)")
                case .insertProjectEntry: note("added", "project entry")
                case .move(let object, _, _), .reorder(let object, _, _): note("moved", kind(object), object)
                case .setDeleted(.root, let isDeleted): extra.append(isDeleted ? "deleted the project" : "restored the project")
                case .setDeleted(let object, let isDeleted): note(isDeleted ? "deleted" : "restored", kind(object), object)
                case .addStroke: note("drew", "stroke")
                case .putStroke(let layer, let key, _):
                    switch puts[change.opID(at: index)] {
                    case .restored?:
                        broughtIn.insert([layer, key])
                        note("restored", "stroke", key)
                    case .copied?:
                        broughtIn.insert([layer, key])
                        note("copied", "stroke", key)
                    case nil:
                        // Restyled as it was brought back (`strokes replace --restore --width`): it was restored.
                        if !broughtIn.contains([layer, key]) { note("changed", "stroke", key) }
                    }
                case .eraseStroke(_, let key): note("erased", "stroke", key)
                case .purge(let nodes): for _ in nodes { note("purged", "node") }
                case .genesis: extra.append("founded it")
                case .nameVersion(let name, let version):
                    extra.append(version == nil ? "took the name \"\(name)\" away" : "named a version \"\(name)\"")
                case .addTag(let object, let tag): extra.append("tagged \(kind(object)) \"\(tag)\"")
                case .removeTag(let object, let tag, _): extra.append("untagged \(kind(object)) \"\(tag)\"")
                case .setAccess(let peer, let role):
                    extra.append(role == .none ? "took \(name(peer))'s rights" : "made \(name(peer)) \(role == .editor ? "an editor" : "a reader")")
                case .setField(let object, let key, _):
                    // Fields set on what the same change added are part of adding it.
                    // `deletedAt` goes with "deleted the project".
                    if !insertedHere.contains(object), key != .deletedAt, !fields.contains("\(key)") { fields.append("\(key)") }
                }
            }
        }
        var parts = order.map { key -> String in
            let count = counts[key] ?? 0
            return "\(key.split(separator: " ", maxSplits: 1)[0]) \(count) \(key.split(separator: " ", maxSplits: 1)[1])\(count == 1 ? "" : "s")"
        }
        if !fields.isEmpty { parts.append("set " + fields.joined(separator: ", ")) }
        parts += extra
        return parts.isEmpty ? "no visible change" : parts.joined(separator: ", ")
    }
}

extension ChangeSummary {
    /// The labels (`1-2`) of the shots a change touched, in the document as
    /// it is now (a shot deleted since is left out), for "drew 1 stroke in 1-2".
    static func shots(_ change: Change, in document: ProjectDocument, labels: [OpID: String]) -> [String] {
        var found: [String] = []
        func note(_ object: OpID) {
            var current: OpID? = object
            var steps = 0
            while let id = current, steps < 64 {
                if let label = labels[id] {
                    if !found.contains(label) { found.append(label) }
                    return
                }
                current = document.container(of: id)
                steps += 1
            }
        }
        for (index, operation) in change.operations.enumerated() {
            switch operation {
            case .insert(_, let container, _):
                note(container)
                note(change.opID(at: index))
            case .move(let object, let container, _):
                note(object)
                note(container)
            case .reorder(let object, _, _), .setDeleted(let object, _), .setField(let object, _, _): note(object)
            case .addTag(let object, _), .removeTag(let object, _, _): note(object)
            case .addStroke(let layer, _, _), .putStroke(let layer, _, _), .eraseStroke(let layer, _): note(layer)
            case .insertProjectEntry, .purge, .genesis, .setAccess, .nameVersion: continue
            }
        }
        return found
    }

    /// Every visible shot's label by id.
    static func shotLabels(_ document: ProjectDocument) -> [OpID: String] {
        var labels: [OpID: String] = [:]
        for shot in document.view.shots { labels[shot.id] = shot.label }
        return labels
    }
}
