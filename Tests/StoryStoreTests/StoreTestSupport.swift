import StoryIdentity
import Foundation
import StoryCore
import Testing

@testable import StoryStore

/// A temporary directory removed when the test ends.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        // Directories made read-only by a test must become writable to be removed.
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }
}

/// The bytes of a file, to check that a failed open left it untouched.
func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

/// A project in a store with one scene, one shot and one layer.
func makeProject(in store: Store, name: String = "Board") async throws -> (DocumentID, layer: OpID) {
    let id = try await store.createDocument(kind: .project, name: name, at: 1)
    let layer = try await store.editProject(id, at: 2) { editor in
        let scene = try editor.insertScene(at: 0)
        let shot = try editor.insertShot(in: scene, at: 0)
        return try editor.insertLayer(in: shot, at: 0)
    }.value
    return (id, layer)
}

func strokePoints(_ seed: Int, count: Int = 30) -> [Point] {
    (0..<count).map { Point(x: Double($0) / Double(count), y: Double(seed % 97) / 97, pressure: 0.6) }
}

/// Where the package's built products are (next to the test binary).
var productsDirectory: URL {
    URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        .deletingLastPathComponent()
}
