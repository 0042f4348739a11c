/// What a user sees of a project: fields, then scenes in order, each with its
/// shots in order, each with its layers bottom to top, each with its strokes
/// in z-order. Two replicas that have applied the same changes have equal views.
public struct ProjectView: Hashable, Sendable {
    public var title: String?
    public var description: String?
    /// The frame's width / height for shots without their own (default 16:9).
    public var aspectRatio: Double
    /// The tints of onion skins, when the project chose its own: the shots
    /// before the drawn one, and after it (else red and green).
    public var onionBefore: Color?
    public var onionAfter: Color?
    public var createdAt: Int64?
    public var updatedAt: Int64?
    /// Set while the project is deleted for everyone (in the trash); its
    /// scenes are still all here, shown as they were.
    public var deletion: ProjectDeletion?
    public var scenes: [SceneView]

    /// The default aspect ratio of a new project.
    public static let defaultAspectRatio = 16.0 / 9.0

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
        scenes = state.children(of: .root).enumerated().map { index, scene in
            SceneView(state: state, id: scene, number: index + 1, projectAspect: aspect)
        }
    }

    /// Every image and sound the shown shots reference, each once, in board order.
    public var media: [MediaReference] {
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
    public var shots: [ShotView] { scenes.flatMap(\.shots) }

    /// The shot with that id, if shown.
    public func shot(_ id: OpID) -> ShotView? { shots.first { $0.id == id } }

    /// Counts of what is shown.
    public var counts: (scenes: Int, shots: Int, layers: Int, strokes: Int, points: Int) {
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
public struct SceneView: Hashable, Sendable {
    public var id: OpID
    /// 1-based position among the shown scenes.
    public var number: Int
    public var title: String?
    public var description: String?
    public var createdAt: Int64
    public var shots: [ShotView]

    /// The auto label, e.g. "2" (recomputed from order, so stable under reorder).
    public var label: String { String(number) }

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
public struct ShotView: Hashable, Sendable {
    public var id: OpID
    /// The number of its scene.
    public var sceneNumber: Int
    /// 1-based position within its scene.
    public var number: Int
    public var background: Color?
    public var caption: String?
    public var notes: String?
    /// The line spoken, and what happens (storyboard sheets print both).
    public var dialogue: String?
    public var action: String?
    /// Seconds.
    public var duration: Double?
    /// Its sound (at most one), with where it starts.
    public var sound: MediaReference?
    /// Its own aspect ratio, or the project's.
    public var aspectRatio: Double
    public var createdAt: Int64
    public var layers: [LayerView]

    /// The auto label "scene-shot", e.g. "2-3".
    public var label: String { "\(sceneNumber)-\(number)" }

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
        layers = state.children(of: id).map { LayerView(state: state, id: $0) }
    }
}

/// A layer as shown (hidden layers are listed with `isVisible` false).
public struct LayerView: Hashable, Sendable {
    public var id: OpID
    public var name: String?
    public var isVisible: Bool
    public var isLocked: Bool
    public var opacity: Double
    public var transform: Affine
    public var group: OpID?
    /// An image layer's picture (such a layer holds no strokes), and how it
    /// fits the frame before the transform.
    public var image: MediaReference?
    public var fit: String
    /// In z-order (creation order): later strokes draw on top.
    public var strokes: [StrokeView]

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
                StrokeView(id: key, content: value.content, brush: value.brush, transform: value.transform,
                    points: state.content(value.content)!)
            }
        }.sorted { $0.id < $1.id }
    }
}

/// A stroke as shown.
public struct StrokeView: Hashable, Sendable {
    /// Its key in the layer (the id of the operation that first drew it).
    public var id: OpID
    /// Whose points it draws.
    public var content: OpID
    public var brush: Brush
    public var transform: Affine?
    public var points: PointsBlob

    /// The points after the stroke's transform.
    public func transformedPoints() -> [Point] {
        let raw = points.points()
        guard let transform else { return raw }
        return raw.map { transform.applied(to: $0) }
    }
}

/// Where a search matched.
public struct SearchHit: Hashable, Sendable {
    /// The ids from the project down to the matching object (empty for the project itself).
    public var path: [OpID]
    /// A readable path, e.g. "Scene 2 › Shot 2-3".
    public var label: String
    public var field: FieldKey
    public var text: String
}

extension ProjectView {
    /// Case-insensitive substring search over the titles, descriptions, notes
    /// and captions of the project and its shown scenes and shots.
    public func search(_ query: String) -> [SearchHit] {
        let needle = query.lowercased()
        guard !needle.isEmpty else { return [] }
        var hits: [SearchHit] = []
        func check(_ text: String?, _ field: FieldKey, _ path: [OpID], _ label: String) {
            if let text, text.lowercased().contains(needle) {
                hits.append(SearchHit(path: path, label: label, field: field, text: text))
            }
        }
        check(title, .title, [], "Project")
        check(description, .description, [], "Project")
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
                for layer in shot.layers {
                    check(layer.name, .name, [scene.id, shot.id, layer.id], "\(shotLabel) › Layer \(layer.name ?? "")")
                }
            }
        }
        return hits
    }
}
