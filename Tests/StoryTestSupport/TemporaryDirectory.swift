import Foundation

/// A directory of its own under the system's temporary directory, removed
/// by `remove()` or, at the latest, when the last reference to it goes.
package final class TemporaryDirectory: Sendable {
    package let path: String

    package init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside it.
    package func file(_ name: String) -> String { path + "/" + name }

    /// Removes it and what it holds (a directory a test made read-only too).
    package func remove() {
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}
