import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@testable import StoryStore

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
