import Foundation

/// The first line of a storyteller-trace/1 file (../shared/bench/TRACE.md).
struct TraceHeader: Decodable {
    var trace: String
    var name: String
    var replicas: Int
    var seed: Int?
    var ops: Int
}

/// A scalar value of a `*.set` operation.
enum TraceValue: Decodable {
    case string(String)
    case number(Double)
    case bool(Bool)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }
}

/// One operation line of a trace.
struct TraceOp: Decodable {
    var r: Int
    var op: String
    var id: String?
    var key: String?
    var value: TraceValue?
    var index: Int?
    var title: String?
    var scene: String?
    var shot: String?
    var layer: String?
    var name: String?
    var tool: String?
    var color: String?
    var width: Double?
    var points: [Double]?
    var a: Int?
    var b: Int?
}

/// The edits a trace line can name (its `op`, but `sync`).
enum TraceOpKind: String {
    case projectSet = "project.set"
    case sceneInsert = "scene.insert"
    case sceneMove = "scene.move"
    case sceneDelete = "scene.delete"
    case sceneSet = "scene.set"
    case shotInsert = "shot.insert"
    case shotMove = "shot.move"
    case shotDelete = "shot.delete"
    case shotSet = "shot.set"
    case layerInsert = "layer.insert"
    case layerMove = "layer.move"
    case layerDelete = "layer.delete"
    case layerSet = "layer.set"
    case strokeAdd = "stroke.add"
    case strokeErase = "stroke.erase"
}

/// Reads a trace line by line without holding the whole file.
struct TraceReader {
    let header: TraceHeader
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private let decoder = JSONDecoder()

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ValidationError("cannot open trace \(path)")
        }
        self.handle = handle
        var reader = Self(handle: handle)
        guard let first = reader.nextLine() else { throw ValidationError("\(path) is empty") }
        header = try JSONDecoder().decode(TraceHeader.self, from: Data(first))
        guard header.trace == "storyteller-trace/1" else { throw ValidationError("\(path) is not a storyteller-trace/1 file") }
        buffer = reader.buffer
        start = reader.start
        atEnd = reader.atEnd
    }

    private init(handle: FileHandle) {
        self.handle = handle
        header = TraceHeader(trace: "", name: "", replicas: 0, seed: nil, ops: 0)
    }

    /// The next operation, or nil at the end.
    mutating func next() throws -> TraceOp? {
        guard let line = nextLine() else { return nil }
        return try decoder.decode(TraceOp.self, from: Data(line))
    }

    private mutating func nextLine() -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return buffer[start..<newline]
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return buffer[start...]
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = handle.readData(ofLength: 1 << 18)
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

struct ValidationError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
