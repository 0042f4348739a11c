import Foundation
import StoryCore
import StoryTestSupport

@testable import StoryRender

/// A project built through the document's own editor, so a test renders the
/// view a daemon would.
struct TestBoard {
    var document = ProjectDocument(id: DocumentID(high: 0x5707, low: 0x7e11), replica: ReplicaID(1))
    private var time: Int64 = 1

    /// Makes an edit and returns what the closure returns.
    @discardableResult
    mutating func edit<Value>(_ body: (inout ProjectEditor) throws -> Value) throws -> Value {
        time += 1
        return try document.edit(at: time, body).value
    }

    /// A new scene with `count` empty shots; their ids.
    mutating func scene(shots count: Int) throws -> [OpID] {
        try edit { editor in
            let scene = try editor.insertScene(at: nil)
            return try (0..<count).map { _ in try editor.insertShot(in: scene, at: nil) }
        }
    }

    /// A new layer on top of `shot`, with one stroke per entry of `strokes`.
    @discardableResult
    mutating func layer(on shot: OpID, strokes: [(Brush, [Point])] = [], _ fields: [FieldKey: FieldValue] = [:]) throws -> OpID {
        try edit { editor in
            let layer = try editor.insertLayer(in: shot, at: nil)
            for (brush, points) in strokes { _ = try editor.addStroke(to: layer, brush: brush, points: points) }
            for (key, value) in fields { try editor.set(key, to: value, on: layer) }
            return layer
        }
    }

    mutating func set(_ key: FieldKey, to value: FieldValue, on object: OpID = .root) throws {
        try edit { try $0.set(key, to: value, on: object) }
    }

    var view: ProjectView { document.view }

    func shot(_ id: OpID) throws -> ShotView {
        guard let shot = view.shot(id) else { throw RenderTestError(description: "no shot \(id)") }
        return shot
    }

    /// Renders a shot and decodes it when it is a PNG.
    func png(_ shot: OpID, width: Int = 1600, onion: Int = 0, pictures: [BlobHash: String] = [:]) throws -> RasterImage {
        try RasterImage(png: PanelRenderer.render(try self.shot(shot), in: view, as: .png, width: width, onion: onion, pictureFiles: pictures))
    }
}

struct RenderTestError: Error, CustomStringConvertible {
    let description: String
}

/// Points along a straight line from `start` to `end`, pressure going from `from` to `to`.
func line(_ start: (Double, Double), _ end: (Double, Double), count: Int = 2, pressure from: Double = 1, to: Double = 1) -> [Point] {
    (0..<count).map { index in
        let t = count == 1 ? 0 : Double(index) / Double(count - 1)
        return Point(x: start.0 + (end.0 - start.0) * t, y: start.1 + (end.1 - start.1) * t, pressure: from + (to - from) * t)
    }
}

/// A scratch directory, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "storyteller-render-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ bytes: [UInt8], named name: String) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The bytes of a file in Fixtures/.
func fixture(_ name: String) throws -> String {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/" + name).path
    guard FileManager.default.fileExists(atPath: path) else { throw RenderTestError(description: "no fixture \(name)") }
    return path
}

/// A reference to a picture as a document holds one (the hash only has to be distinct here).
func picture(_ type: MediaType, width: UInt32, height: UInt32, tag: UInt8) -> MediaReference {
    MediaReference(hash: BlobHash(Array(repeating: tag, count: 32))!, type: type, byteCount: 100, pixelWidth: width, pixelHeight: height)
}

/// Blue over yellow, in two bands (the fixtures' picture).
func bands(width: Int, height: Int) -> [UInt8] {
    TestMedia.png(width: width, height: height) { _, y in y < height / 2 ? (0, 0, 255) : (255, 255, 0) }
}

extension RasterImage.Pixel {
    static let blue = RasterImage.Pixel(red: 0, green: 0, blue: 255)
    static let yellow = RasterImage.Pixel(red: 255, green: 255, blue: 0)
    static let white = RasterImage.Pixel(red: 255, green: 255, blue: 255)
    static let black = RasterImage.Pixel(red: 0, green: 0, blue: 0)
}

/// A JPEG with an EXIF APP1 segment saying `orientation`, put right after its start marker.
func withEXIFOrientation(_ jpeg: [UInt8], _ orientation: UInt16, bigEndian: Bool = true) -> [UInt8] {
    func u16(_ value: UInt16) -> [UInt8] { bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)] }
    func u32(_ value: UInt32) -> [UInt8] {
        bigEndian ? u16(UInt16(value >> 16)) + u16(UInt16(value & 0xFFFF)) : u16(UInt16(value & 0xFFFF)) + u16(UInt16(value >> 16))
    }
    let tiff = (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(8)
    // One IFD entry: Orientation (0x0112), SHORT (3), count 1, the value in the first two bytes of the field.
    let ifd = u16(1) + u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0] + u32(0)
    let payload = Array("Exif".utf8) + [0, 0] + tiff + ifd
    let length = UInt16(payload.count + 2)
    return Array(jpeg[0..<2]) + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + Array(jpeg[2...])
}
