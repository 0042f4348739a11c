import Foundation
import StoryCore
import StoryStore
import Synchronization

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
    let scenes: Children<SceneBody>

    init(record: DocumentRecord, document: ProjectDocument, streaming: Bool = false) {
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
        scenes = streaming ? .streamed : .items(view.scenes.map { SceneBody($0) })
    }
}

struct SceneBody: Encodable {
    let id: String
    let number: Int
    let title: String?
    let description: String?
    let shots: Children<ShotBody>

    init(_ scene: SceneView, streaming: Bool = false) {
        id = scene.id.description
        number = scene.number
        title = scene.title
        description = scene.description
        shots = streaming ? .streamed : .items(scene.shots.map { ShotBody($0) })
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
    let layers: Children<LayerBody>

    init(_ shot: ShotView, streaming: Bool = false) {
        id = shot.id.description
        label = shot.label
        background = shot.background.map { $0.hexRGBA }
        caption = shot.caption
        notes = shot.notes
        duration = shot.duration
        aspectRatio = shot.aspectRatio
        layers = streaming ? .streamed : .items(shot.layers.map { LayerBody($0) })
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
    let strokes: Children<StrokeBody>

    init(_ layer: LayerView, streaming: Bool = false) {
        id = layer.id.description
        name = layer.name
        visible = layer.isVisible
        locked = layer.isLocked
        opacity = layer.opacity
        transform = layer.transform.components
        group = layer.group?.description
        strokes = streaming ? .streamed : .items(layer.strokes.map { StrokeBody($0) })
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

    init(_ stroke: StrokeView, withPoints: Bool = true) {
        id = stroke.id.description
        brush = BrushBody(
            tool: stroke.brush.tool.name, color: stroke.brush.color.hexRGBA, width: stroke.brush.width,
            cap: stroke.brush.cap.name, join: stroke.brush.join.name)
        var flat: [Double] = []
        if withPoints {
            let points = stroke.transformedPoints()
            flat.reserveCapacity(points.count * 3)
            for point in points { flat += [point.x, point.y, point.pressure] }
        }
        self.points = flat
    }
}

extension Affine {
    var components: [Double] { [a, b, c, d, tx, ty] }
}

/// A list in an answer: encoded whole, or left to `ProjectJSONStream` (a
/// marker the stream replaces by the list, made one item at a time).
enum Children<Item: Encodable>: Encodable {
    case items([Item])
    case streamed

    static var marker: String { "\u{0}streamed list\u{0}" }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .items(let items): try container.encode(items)
        case .streamed: try container.encode(Self.marker)
        }
    }
}

/// `GET /v1/projects/{id}` made a piece at a time: the same bytes as
/// encoding `ProjectBody` at once, but only one stroke's points are ever
/// decoded and encoded at a time, so a project of any size (a peer can add
/// strokes of up to 100,000 points) is answered in bounded memory, at the
/// pace the client reads (the stream is pulled, not pushed).
final class ProjectJSONStream: Sendable {
    private enum Piece: Sendable {
        case bytes(Data)
        case stroke(StrokeView)
    }

    private let pieces: [Piece]
    private let cursor = Mutex(0)
    static let chunkBytes = 64 << 10

    init(record: DocumentRecord, document: ProjectDocument) throws {
        let encoder = ControlJSON.encoder
        let view = document.view
        var pieces: [Piece] = []
        /// The object encoded with its list left out, split where the list goes.
        func around(_ value: some Encodable) throws -> (Data, Data) {
            let encoded = try encoder.encode(value)
            let marker = try encoder.encode(Children<Int>.marker)
            guard let range = encoded.range(of: marker) else { throw ControlError(.internal, "the answer could not be made") }
            return (encoded[..<range.lowerBound], encoded[range.upperBound...])
        }
        func list<Item>(_ items: [Item], _ add: (Item) throws -> Void) rethrows {
            pieces.append(.bytes(Data("[".utf8)))
            for (index, item) in items.enumerated() {
                if index > 0 { pieces.append(.bytes(Data(",".utf8))) }
                try add(item)
            }
            pieces.append(.bytes(Data("]".utf8)))
        }
        let (head, tail) = try around(ProjectBody(record: record, document: document, streaming: true))
        pieces.append(.bytes(head))
        try list(view.scenes) { scene in
            let (head, tail) = try around(SceneBody(scene, streaming: true))
            pieces.append(.bytes(head))
            try list(scene.shots) { shot in
                let (head, tail) = try around(ShotBody(shot, streaming: true))
                pieces.append(.bytes(head))
                try list(shot.layers) { layer in
                    let (head, tail) = try around(LayerBody(layer, streaming: true))
                    pieces.append(.bytes(head))
                    list(layer.strokes) { pieces.append(.stroke($0)) }
                    pieces.append(.bytes(tail))
                }
                pieces.append(.bytes(tail))
            }
            pieces.append(.bytes(tail))
        }
        pieces.append(.bytes(tail))
        self.pieces = pieces
    }

    /// The next chunk of about `chunkBytes`, nil at the end.
    func next() -> Data? {
        cursor.withLock { index -> Data? in
            guard index < pieces.count else { return nil }
            let encoder = ControlJSON.encoder
            var chunk = Data()
            while index < pieces.count && chunk.count < Self.chunkBytes {
                switch pieces[index] {
                case .bytes(let bytes): chunk.append(bytes)
                case .stroke(let stroke): Self.append(stroke, to: &chunk, encoder: encoder)
                }
                index += 1
            }
            return chunk
        }
    }

    /// A stroke as `StrokeBody` encodes it (`{"brush":…,"id":…,"points":[…]}`),
    /// its points written straight into the chunk: JSONEncoder would build a
    /// tree of all 300,000 numbers of a long stroke first.
    private static func append(_ stroke: StrokeView, to chunk: inout Data, encoder: JSONEncoder) {
        let body = StrokeBody(stroke, withPoints: false)
        guard let brush = try? encoder.encode(body.brush), let id = try? encoder.encode(body.id) else {
            chunk.append(Data("null".utf8))
            return
        }
        chunk.append(Data(#"{"brush":"#.utf8))
        chunk.append(brush)
        chunk.append(Data(#","id":"#.utf8))
        chunk.append(id)
        chunk.append(Data(#","points":["#.utf8))
        var text = ""
        text.reserveCapacity(32 * 1024)
        for (index, point) in stroke.transformedPoints().enumerated() {
            if index > 0 { text += "," }
            text += number(point.x) + "," + number(point.y) + "," + number(point.pressure)
            if text.utf8.count > 30 * 1024 {
                chunk.append(Data(text.utf8))
                text.removeAll(keepingCapacity: true)
            }
        }
        chunk.append(Data(text.utf8))
        chunk.append(Data("]}".utf8))
    }

    /// A number as JSONEncoder writes it: integral values without a fraction.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// The chunks as a stream the server pulls as it sends.
    var stream: AsyncStream<Data> {
        AsyncStream(unfolding: { self.next() })
    }
}
