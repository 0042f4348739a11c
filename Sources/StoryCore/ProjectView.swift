/// What a user sees of a project: fields, then scenes in order, each with its
/// shots in order, each with its layers bottom to top, each with its strokes
/// in z-order. Two replicas that have applied the same changes have equal views.
package struct ProjectView: Hashable, Sendable {
    package var title: String?
    package var description: String?
    /// The frame's width / height for shots without their own (default 16:9).
    package var aspectRatio: Double
    /// The tints of onion skins, when the project chose its own: the shots
    /// before the drawn one, and after it (else red and green).
    package var onionBefore: Color?
    package var onionAfter: Color?
    package var createdAt: Int64?
    package var updatedAt: Int64?
    /// Set while the project is deleted for everyone (in the trash); its
    /// scenes are still all here, shown as they were.
    package var deletion: ProjectDeletion?
    /// The project's tags, in their shown spellings, sorted case-insensitively.
    package var tags: [String]
    package var scenes: [SceneView]

    /// The default aspect ratio of a new project.
    package static let defaultAspectRatio = 16.0 / 9.0

    init(state: ProjectState, createdAt: Int64?, updatedAt: Int64?) {
        let root = state.object(.root)!
        title = root.field(.title).string
        description = root.field(.description).string
        let aspect = root.field(.aspectRatio).number ?? ProjectView.defaultAspectRatio
        aspectRatio = aspect
        onionBefore = root.field(.onionBefore).color
        onionAfter = root.field(.onionAfter).color
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        deletion = state.deletion
        tags = state.tagNames(of: .root)
        scenes = state.children(of: .root).enumerated().map { index, scene in
            SceneView(state: state, id: scene, number: index + 1, projectAspect: aspect)
        }
    }

    /// Every image and sound the shown shots reference, each once, in board order.
    package var media: [MediaReference] {
        var seen: Set<BlobHash> = []
        var result: [MediaReference] = []
        for shot in shots {
            for layer in shot.layers {
                if let image = layer.image, seen.insert(image.hash).inserted { result.append(image) }
            }
            if let sound = shot.sound, seen.insert(sound.hash).inserted { result.append(sound) }
        }
        return result
    }

    /// Every shot, in board order.
    package var shots: [ShotView] { scenes.flatMap(\.shots) }

    /// What an export limited to a tag draws: the scenes (of `scenes`,
    /// default all) with only their shots carrying `tag` (in any case), scenes
    /// left with none dropped. Shots keep their numbers and labels. Nil `tag`:
    /// the scenes as they are. O(shots).
    package func scenes(_ scenes: [SceneView]? = nil, withShotsTagged tag: String?) -> [SceneView] {
        let chosen = scenes ?? self.scenes
        guard let tag else { return chosen }
        return chosen.compactMap { scene in
            var kept = scene
            kept.shots = scene.shots.filter { $0.hasTag(tag) }
            return kept.shots.isEmpty ? nil : kept
        }
    }

    /// The view an export limited to a tag draws (`scenes(withShotsTagged:)`);
    /// itself for nil.
    package func limited(toShotsTagged tag: String?) -> ProjectView {
        guard tag != nil else { return self }
        var copy = self
        copy.scenes = scenes(withShotsTagged: tag)
        return copy
    }

    /// The shot with that id, if shown.
    package func shot(_ id: OpID) -> ShotView? { shots.first { $0.id == id } }

    /// Counts of what is shown.
    package var counts: (scenes: Int, shots: Int, layers: Int, strokes: Int, points: Int) {
        var result = (scenes: scenes.count, shots: 0, layers: 0, strokes: 0, points: 0)
        for shot in shots {
            result.shots += 1
            for layer in shot.layers {
                result.layers += 1
                result.strokes += layer.strokes.count
                result.points += layer.strokes.reduce(0) { $0 + $1.points.count }
            }
        }
        return result
    }
}

/// A scene as shown.
package struct SceneView: Hashable, Sendable {
    package var id: OpID
    /// 1-based position among the shown scenes.
    package var number: Int
    package var title: String?
    package var description: String?
    package var createdAt: Int64
    package var shots: [ShotView]

    /// The auto label, e.g. "2" (recomputed from order, so stable under reorder).
    package var label: String { String(number) }

    init(state: ProjectState, id: OpID, number: Int, projectAspect: Double) {
        let object = state.object(id)!
        self.id = id
        self.number = number
        title = object.field(.title).string
        description = object.field(.description).string
        createdAt = object.createdAt
        shots = state.children(of: id).enumerated().map { index, shot in
            ShotView(state: state, id: shot, scene: number, number: index + 1, projectAspect: projectAspect)
        }
    }
}

/// A shot as shown.
package struct ShotView: Hashable, Sendable {
    package var id: OpID
    /// The number of its scene.
    package var sceneNumber: Int
    /// 1-based position within its scene.
    package var number: Int
    package var background: Color?
    package var caption: String?
    package var notes: String?
    /// The line spoken, and what happens (storyboard sheets print both).
    package var dialogue: String?
    package var action: String?
    /// Seconds.
    package var duration: Double?
    /// Its sound (at most one), with where it starts.
    package var sound: MediaReference?
    /// Its own aspect ratio, or the project's.
    package var aspectRatio: Double
    package var createdAt: Int64
    /// Its tags, in their shown spellings, sorted case-insensitively.
    package var tags: [String]
    package var layers: [LayerView]

    /// The auto label "scene-shot", e.g. "2-3".
    package var label: String { "\(sceneNumber)-\(number)" }

    /// Whether it carries `tag` (in any case).
    package func hasTag(_ tag: String) -> Bool {
        let key = Tag.key(tag)
        return tags.contains { Tag.key($0) == key }
    }

    init(state: ProjectState, id: OpID, scene: Int, number: Int, projectAspect: Double) {
        let object = state.object(id)!
        self.id = id
        sceneNumber = scene
        self.number = number
        background = object.field(.background).color
        caption = object.field(.caption).string
        notes = object.field(.notes).string
        dialogue = object.field(.dialogue).string
        action = object.field(.action).string
        duration = object.field(.duration).number
        sound = object.field(.sound).media
        aspectRatio = object.field(.aspectRatio).number ?? projectAspect
        createdAt = object.createdAt
        tags = state.tagNames(of: id)
        layers = state.children(of: id).map { LayerView(state: state, id: $0) }
    }
}

/// A layer as shown (hidden layers are listed with `isVisible` false).
package struct LayerView: Hashable, Sendable {
    package var id: OpID
    package var name: String?
    package var isVisible: Bool
    package var isLocked: Bool
    package var opacity: Double
    package var transform: Affine
    package var group: OpID?
    /// An image layer's picture (such a layer holds no strokes), and how it
    /// fits the frame before the transform.
    package var image: MediaReference?
    package var fit: String
    /// In z-order (creation order): later strokes draw on top.
    package var strokes: [StrokeView]

    init(state: ProjectState, id: OpID) {
        let object = state.object(id)!
        self.id = id
        name = object.field(.name).string
        isVisible = object.field(.visible).bool ?? true
        isLocked = object.field(.locked).bool ?? false
        opacity = object.field(.opacity).number ?? 1
        transform = object.field(.transform).transform ?? .identity
        group = object.field(.group).id
        image = object.field(.image).media
        fit = object.field(.fit).string ?? "contain"
        strokes = state.strokeMap(of: id).compactMap { key, entry in
            entry.visibleValue.map { value in
                StrokeView(
                    id: key, content: value.content, brush: value.brush, transform: value.transform,
                    points: state.content(value.content)!)
            }
        }.sorted { $0.id < $1.id }
    }
}

/// A stroke as shown.
package struct StrokeView: Hashable, Sendable {
    /// Its key in the layer (the id of the operation that first drew it).
    package var id: OpID
    /// Whose points it draws.
    package var content: OpID
    package var brush: Brush
    package var transform: Affine?
    package var points: PointsBlob

    /// The points after the stroke's transform.
    package func transformedPoints() -> [Point] {
        let raw = points.points()
        guard let transform else { return raw }
        return raw.map { transform.applied(to: $0) }
    }
}

/// Where a search matched.
package struct SearchHit: Hashable, Sendable {
    /// The ids from the project down to the matching object (empty for the project itself).
    package var path: [OpID]
    /// A readable path, e.g. "Scene 2 › Shot 2-3".
    package var label: String
    /// The field that matched; nil when one of the object's tags did.
    package var field: FieldKey?
    package var text: String

    /// The field's name as the API spells it, `tags` for a tag.
    package var fieldName: String { field?.description ?? "tags" }
}

extension ProjectView {
    /// Case-insensitive substring search over the titles, descriptions, notes
    /// and captions of the project and its shown scenes and shots, and the
    /// tags of the project and its shown shots (one hit per matching tag).
    package func search(_ query: String) -> [SearchHit] {
        let needle = query.lowercased()
        guard !needle.isEmpty else { return [] }
        var hits: [SearchHit] = []
        func check(_ text: String?, _ field: FieldKey?, _ path: [OpID], _ label: String) {
            if let text, text.lowercased().contains(needle) {
                hits.append(SearchHit(path: path, label: label, field: field, text: text))
            }
        }
        check(title, .title, [], "Project")
        check(description, .description, [], "Project")
        for tag in tags { check(tag, nil, [], "Project") }
        for scene in scenes {
            let sceneLabel = "Scene \(scene.label)"
            check(scene.title, .title, [scene.id], sceneLabel)
            check(scene.description, .description, [scene.id], sceneLabel)
            for shot in scene.shots {
                let shotLabel = "\(sceneLabel) › Shot \(shot.label)"
                check(shot.caption, .caption, [scene.id, shot.id], shotLabel)
                check(shot.notes, .notes, [scene.id, shot.id], shotLabel)
                check(shot.dialogue, .dialogue, [scene.id, shot.id], shotLabel)
                check(shot.action, .action, [scene.id, shot.id], shotLabel)
                for tag in shot.tags { check(tag, nil, [scene.id, shot.id], shotLabel) }
                for layer in shot.layers {
                    check(layer.name, .name, [scene.id, shot.id, layer.id], "\(shotLabel) › Layer \(layer.name ?? "")")
                }
            }
        }
        return hits
    }
}
