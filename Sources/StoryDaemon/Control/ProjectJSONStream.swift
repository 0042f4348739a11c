import Foundation
import StoryAPI
import StoryCore
import StoryStore
import Synchronization

/// `GET /v1/projects/{id}` made a piece at a time: the same bytes as
/// encoding `API.Project` at once, but only one stroke's points are ever
/// decoded and encoded at a time, so a project of any size (a peer can add
/// strokes of up to 100,000 points) is answered in bounded memory, at the
/// pace the client reads (the stream is pulled, not pushed).
final class ProjectJSONStream: Sendable {
    private enum Piece: Sendable {
        case bytes(Data)
        case stroke(StrokeView)
    }

    /// Whether strokes carry their points (`?points=false` lists strokes
    /// with empty point arrays: the structure, for looking up names).
    private let withPoints: Bool

    private let pieces: [Piece]
    private let cursor = Mutex(0)
    static let chunkBytes = 64 << 10

    /// - Parameters:
    ///   - mediaStates: `complete`, `partial` or `missing` for each blob the project shows.
    ///   - version: the id of the past version `document` is (nil: the present).
    init(
        record: DocumentRecord, document: ProjectDocument, trash: API.Trash? = nil, withPoints: Bool = true,
        mediaStates: [BlobHash: String] = [:], version: String? = nil
    ) throws {
        self.withPoints = withPoints
        let encoder = API.encoder
        let view = document.view
        var pieces: [Piece] = []
        /// The object encoded with its list empty, split where the list's items go.
        /// With sorted keys and escaped strings, `"key":[]` can only be that key.
        func around(_ value: some Encodable, list key: String) throws -> (Data, Data) {
            let encoded = try encoder.encode(value)
            guard let range = encoded.range(of: Data("\"\(key)\":[]".utf8), options: .backwards) else {
                throw APIError(.internal, "the answer could not be made")
            }
            let split = range.upperBound - 1  // before the closing bracket
            return (encoded[..<split], encoded[split...])
        }
        func list<Item>(_ items: [Item], _ add: (Item) throws -> Void) rethrows {
            for (index, item) in items.enumerated() {
                if index > 0 { pieces.append(.bytes(Data(",".utf8))) }
                try add(item)
            }
        }
        var conflicted: [OpID: [String]] = [:]
        for conflict in document.fieldConflicts { conflicted[conflict.object, default: []].append(conflict.key.description) }
        var projectAnswer = API.Project(record: record, document: document, trash: trash, scenes: [])
        projectAnswer.conflicts = conflicted[.root]
        projectAnswer.version = version
        let (head, tail) = try around(projectAnswer, list: "scenes")
        pieces.append(.bytes(head))
        try list(view.scenes) { scene in
            var sceneAnswer = API.Scene(scene, shots: [])
            sceneAnswer.conflicts = conflicted[scene.id]
            let (head, tail) = try around(sceneAnswer, list: "shots")
            pieces.append(.bytes(head))
            try list(scene.shots) { shot in
                var shotAnswer = API.Shot(shot, layers: [])
                shotAnswer.sound?.state = shot.sound.map { mediaStates[$0.hash] ?? "missing" }
                shotAnswer.conflicts = conflicted[shot.id]
                let (head, tail) = try around(shotAnswer, list: "layers")
                pieces.append(.bytes(head))
                try list(shot.layers) { layer in
                    var layerAnswer = API.Layer(layer, strokes: [])
                    layerAnswer.image?.state = layer.image.map { mediaStates[$0.hash] ?? "missing" }
                    layerAnswer.conflicts = conflicted[layer.id]
                    let (head, tail) = try around(layerAnswer, list: "strokes")
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
            let encoder = API.encoder
            var chunk = Data()
            while index < pieces.count && chunk.count < Self.chunkBytes {
                switch pieces[index] {
                case .bytes(let bytes): chunk.append(bytes)
                case .stroke(let stroke): Self.append(stroke, to: &chunk, encoder: encoder, withPoints: withPoints)
                }
                index += 1
            }
            return chunk
        }
    }

    /// A stroke as `API.Stroke` encodes it (`{"brush":…,"id":…,"points":[…]}`),
    /// its points written straight into the chunk: JSONEncoder would build a
    /// tree of all 300,000 numbers of a long stroke first.
    private static func append(_ stroke: StrokeView, to chunk: inout Data, encoder: JSONEncoder, withPoints: Bool) {
        guard let brush = try? encoder.encode(API.BrushStyle(stroke.brush)), let id = try? encoder.encode(stroke.id.description) else {
            chunk.append(Data("null".utf8))
            return
        }
        chunk.append(Data(#"{"brush":"#.utf8))
        chunk.append(brush)
        chunk.append(Data(#","id":"#.utf8))
        chunk.append(id)
        chunk.append(Data(#","points":["#.utf8))
        guard withPoints else {
            chunk.append(Data("]}".utf8))
            return
        }
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
