/// What changed between two views of a project (`storyteller diff`): scenes,
/// shots and layers added, removed, moved and renamed; strokes added, erased
/// and changed per layer; text fields changed. What is inside something added
/// or removed is not listed again (a removed scene's shots), except the
/// strokes of an added layer. Pure, on views. O(size · log size).
package struct ProjectDiff: Hashable, Sendable {
    /// A scene, shot or layer that came, went, moved or was renamed.
    package struct Item: Hashable, Sendable {
        /// `scene`, `shot` or `layer`.
        package var kind: String
        package var id: OpID
        /// `added`, `removed`, `moved` or `renamed`.
        package var change: String
        /// Where it is in words: `scene 2`, `shot 1-2`, `layer ink in shot 1-2`
        /// (as it is in the newer view; as it was, for one removed).
        package var place: String
        /// For `moved`, where it was (`shot 1-3`); for `renamed`, the old name.
        package var before: String?
        /// For `renamed`, the new name.
        package var after: String?
    }

    /// The strokes of one layer that came, went or changed (drawn over, moved, restyled).
    package struct Strokes: Hashable, Sendable {
        package var layer: OpID
        /// `layer ink in shot 1-2`.
        package var place: String
        package var added: Int
        package var erased: Int
        package var changed: Int
    }

    /// A text field whose value changed.
    package struct Text: Hashable, Sendable {
        package var object: OpID
        /// `project`, `scene 2`, `shot 1-2`.
        package var place: String
        /// `title`, `description`, `caption`, `notes`, `dialogue`, `action`,
        /// or `duration` (seconds, as `2.5 s`; nil: the project's default).
        package var field: String
        package var before: String?
        package var after: String?
    }

    package var items: [Item] = []
    package var strokes: [Strokes] = []
    package var texts: [Text] = []

    /// Whether nothing changed that a diff shows.
    package var isEmpty: Bool { items.isEmpty && strokes.isEmpty && texts.isEmpty }

    /// A duration as people read it: `2.5 s`, `3 s`.
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }

    /// The differences from `old` to `new`.
    package init(from old: ProjectView, to new: ProjectView) {
        func text(_ object: OpID, _ place: String, _ field: String, _ before: String?, _ after: String?) {
            if before != after { texts.append(Text(object: object, place: place, field: field, before: before, after: after)) }
        }
        text(.root, "project", "title", old.title, new.title)
        text(.root, "project", "description", old.description, new.description)

        // Scenes.
        let oldScenes = Dictionary(uniqueKeysWithValues: old.scenes.map { ($0.id, $0) })
        let newScenes = Dictionary(uniqueKeysWithValues: new.scenes.map { ($0.id, $0) })
        let movedScenes = Self.moved(old.scenes.map(\.id), new.scenes.map(\.id))
        for scene in new.scenes {
            let place = "scene \(scene.number)"
            guard let before = oldScenes[scene.id] else {
                items.append(Item(kind: "scene", id: scene.id, change: "added", place: place))
                continue
            }
            if movedScenes.contains(scene.id) {
                items.append(Item(kind: "scene", id: scene.id, change: "moved", place: place, before: "scene \(before.number)"))
            }
            if before.title != scene.title {
                items.append(Item(kind: "scene", id: scene.id, change: "renamed", place: place, before: before.title, after: scene.title))
            }
            text(scene.id, place, "description", before.description, scene.description)
        }
        for scene in old.scenes where newScenes[scene.id] == nil {
            items.append(Item(kind: "scene", id: scene.id, change: "removed", place: "scene \(scene.number)"))
        }

        // Shots: moved to another scene, or out of order among the shots both scenes keep.
        let oldShots = Dictionary(uniqueKeysWithValues: old.scenes.flatMap { scene in scene.shots.map { ($0.id, (scene.id, $0)) } })
        let newShots = Dictionary(uniqueKeysWithValues: new.scenes.flatMap { scene in scene.shots.map { ($0.id, (scene.id, $0)) } })
        var movedShots: Set<OpID> = []
        for scene in new.scenes {
            let kept = scene.shots.map(\.id).filter { oldShots[$0]?.0 == scene.id }
            let before = oldScenes[scene.id]?.shots.map(\.id).filter { newShots[$0]?.0 == scene.id } ?? []
            movedShots.formUnion(Self.moved(before, kept))
        }
        for (sceneID, shot) in new.scenes.flatMap({ scene in scene.shots.map { (scene.id, $0) } }) {
            let place = "shot \(shot.label)"
            guard let (oldScene, before) = oldShots[shot.id] else {
                // A shot of a scene added is part of adding the scene.
                if oldScenes[sceneID] != nil { items.append(Item(kind: "shot", id: shot.id, change: "added", place: place)) }
                continue
            }
            if oldScene != sceneID || movedShots.contains(shot.id) {
                items.append(Item(kind: "shot", id: shot.id, change: "moved", place: place, before: "shot \(before.label)"))
            }
            text(shot.id, place, "caption", before.caption, shot.caption)
            text(shot.id, place, "notes", before.notes, shot.notes)
            text(shot.id, place, "dialogue", before.dialogue, shot.dialogue)
            text(shot.id, place, "action", before.action, shot.action)
            text(shot.id, place, "duration", before.duration.map(Self.seconds), shot.duration.map(Self.seconds))
        }
        for (sceneID, shot) in old.scenes.flatMap({ scene in scene.shots.map { (scene.id, $0) } })
        where newShots[shot.id] == nil && newScenes[sceneID] != nil {
            items.append(Item(kind: "shot", id: shot.id, change: "removed", place: "shot \(shot.label)"))
        }

        // Layers and their strokes.
        let oldLayers = Dictionary(uniqueKeysWithValues: old.shots.flatMap { shot in shot.layers.map { ($0.id, (shot, $0)) } })
        let newLayers = Dictionary(uniqueKeysWithValues: new.shots.flatMap { shot in shot.layers.map { ($0.id, (shot, $0)) } })
        func layerPlace(_ layer: LayerView, in shot: ShotView) -> String {
            "layer \(layer.name ?? "(no name)") in shot \(shot.label)"
        }
        for shot in new.shots {
            let kept = shot.layers.map(\.id).filter { oldLayers[$0]?.0.id == shot.id }
            let earlier = oldShots[shot.id]?.1.layers.map(\.id).filter { newLayers[$0]?.0.id == shot.id } ?? []
            let outOfOrder = Self.moved(earlier, kept)
            for layer in shot.layers {
                let place = layerPlace(layer, in: shot)
                guard let (oldShot, before) = oldLayers[layer.id] else {
                    if oldShots[shot.id] != nil { items.append(Item(kind: "layer", id: layer.id, change: "added", place: place)) }
                    if !layer.strokes.isEmpty {
                        strokes.append(Strokes(layer: layer.id, place: place, added: layer.strokes.count, erased: 0, changed: 0))
                    }
                    continue
                }
                if oldShot.id != shot.id || outOfOrder.contains(layer.id) {
                    items.append(Item(kind: "layer", id: layer.id, change: "moved", place: place, before: layerPlace(before, in: oldShot)))
                }
                if before.name != layer.name {
                    items.append(Item(kind: "layer", id: layer.id, change: "renamed", place: place, before: before.name, after: layer.name))
                }
                let was = Dictionary(uniqueKeysWithValues: before.strokes.map { ($0.id, $0) })
                let now = Set(layer.strokes.map(\.id))
                let added = layer.strokes.filter { was[$0.id] == nil }.count
                let changed = layer.strokes.filter { stroke in was[stroke.id].map { $0 != stroke } ?? false }.count
                let erased = before.strokes.filter { !now.contains($0.id) }.count
                if added + erased + changed > 0 {
                    strokes.append(Strokes(layer: layer.id, place: place, added: added, erased: erased, changed: changed))
                }
            }
        }
        // A layer of a shot removed goes with the shot.
        for shot in old.shots where newShots[shot.id] != nil {
            for layer in shot.layers where newLayers[layer.id] == nil {
                items.append(Item(kind: "layer", id: layer.id, change: "removed", place: layerPlace(layer, in: shot)))
            }
        }
    }

    /// The ids of `new` (all also in `old`, or ignored) that are out of the
    /// order they had in `old`: those outside a longest run kept in order
    /// (a longest increasing subsequence), so one move marks one item.
    static func moved(_ old: [OpID], _ new: [OpID]) -> Set<OpID> {
        var position: [OpID: Int] = [:]
        for (index, id) in old.enumerated() { position[id] = index }
        let common = new.filter { position[$0] != nil }
        // Patience sorting: tails[k] is the index in `common` ending the best run of length k + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: common.count)
        for (index, id) in common.enumerated() {
            let value = position[id]!
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if position[common[tails[middle]]]! < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var inOrder: Set<OpID> = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            inOrder.insert(common[cursor])
            cursor = previous[cursor]
        }
        return Set(common).subtracting(inOrder)
    }
}
