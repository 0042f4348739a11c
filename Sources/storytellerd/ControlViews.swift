import StoryCore
import StoryStore

/// JSON shapes of the visible state (`GET /v1/projects/{id}`). Ids are
/// strings usable on every peer; a stroke's points are a flat
/// `[x, y, pressure, …]` array with its stroke transform applied.
struct ProjectBody: Encodable {
    let id: String
    let name: String?
    let title: String?
    let description: String?
    let aspectRatio: Double
    let createdAt: Int64?
    let updatedAt: Int64?
    let deleted: Bool
    /// This daemon's role: owner, editor, reader, or none (not a member).
    let role: String
    /// Whether this daemon's edits are refused (it is a reader or not a member).
    let readOnly: Bool
    /// The peer id of the identity that founded it.
    let owner: String?
    /// Made before signed authorship: kept and editable here, never synced.
    let legacy: Bool
    let scenes: [SceneBody]

    init(record: DocumentRecord, document: ProjectDocument) {
        let view = document.view
        id = record.id.description
        name = record.name
        title = view.title
        description = view.description
        aspectRatio = view.aspectRatio
        createdAt = view.createdAt
        updatedAt = view.updatedAt
        deleted = record.isDeleted
        role = document.localRole.description
        readOnly = !document.localRole.canWrite
        owner = document.owner?.description
        legacy = document.isLegacy
        scenes = view.scenes.map(SceneBody.init)
    }
}

struct SceneBody: Encodable {
    let id: String
    let number: Int
    let title: String?
    let description: String?
    let shots: [ShotBody]

    init(_ scene: SceneView) {
        id = scene.id.description
        number = scene.number
        title = scene.title
        description = scene.description
        shots = scene.shots.map(ShotBody.init)
    }
}

struct ShotBody: Encodable {
    let id: String
    let label: String
    let background: String?
    let caption: String?
    let notes: String?
    let duration: Double?
    let aspectRatio: Double
    let layers: [LayerBody]

    init(_ shot: ShotView) {
        id = shot.id.description
        label = shot.label
        background = shot.background.map { $0.hexRGBA }
        caption = shot.caption
        notes = shot.notes
        duration = shot.duration
        aspectRatio = shot.aspectRatio
        layers = shot.layers.map(LayerBody.init)
    }
}

struct LayerBody: Encodable {
    let id: String
    let name: String?
    let visible: Bool
    let locked: Bool
    let opacity: Double
    /// `[a, b, c, d, tx, ty]`.
    let transform: [Double]
    let group: String?
    let strokes: [StrokeBody]

    init(_ layer: LayerView) {
        id = layer.id.description
        name = layer.name
        visible = layer.isVisible
        locked = layer.isLocked
        opacity = layer.opacity
        transform = layer.transform.components
        group = layer.group?.description
        strokes = layer.strokes.map(StrokeBody.init)
    }
}

struct StrokeBody: Encodable {
    struct BrushBody: Encodable {
        let tool: String
        let color: String
        let width: Float
        let cap: String
        let join: String
    }

    let id: String
    let brush: BrushBody
    let points: [Double]

    init(_ stroke: StrokeView) {
        id = stroke.id.description
        brush = BrushBody(
            tool: stroke.brush.tool.name, color: stroke.brush.color.hexRGBA, width: stroke.brush.width,
            cap: stroke.brush.cap.name, join: stroke.brush.join.name)
        var flat: [Double] = []
        let points = stroke.transformedPoints()
        flat.reserveCapacity(points.count * 3)
        for point in points { flat += [point.x, point.y, point.pressure] }
        self.points = flat
    }
}

extension Affine {
    var components: [Double] { [a, b, c, d, tx, ty] }
}
