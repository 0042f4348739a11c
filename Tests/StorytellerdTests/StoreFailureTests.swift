import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// A store that fails under a running daemon is a 5xx with an error code,
/// logged, and never a 404 (only a missing object is "not found"); nothing
/// of the refused edit is applied, and the daemon goes on.
@Suite(.daemons, .timeLimit(.minutes(15))) struct StoreFailureTests {
    /// The data directory on a 4 MiB tmpfs the test mounts, fills and removes
    /// (root only; skipped elsewhere): the disk fills under the running daemon.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aDiskThatFillsUnderARunningDaemonIsA5xxNeverA404() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let data = home.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try run("/bin/mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", data)
        defer { try? run("/bin/umount", "-l", data) }
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", data, "--socket", home.path + "/control.sock", "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        let client = ControlClient(path: home.path + "/control.sock")
        let created = try client.post("/v1/projects", json: #"{"name": "Harbour"}"#)
        let project = try #require((created.json as? [String: Any])?["id"] as? String)
        let setup = try client.post(
            "/v1/projects/\(project)/edits",
            json: #"{"ops":[{"op":"scene.add"},{"op":"shot.add","scene":"$0"},{"op":"layer.add","shot":"$1"}]}"#)
        let layer = try #require(((setup.json as? [String: Any])?["created"] as? [Any])?[2] as? String)
        let before = try client.get("/v1/projects/\(project)").body

        // Fill the disk to the last byte.
        let filler = data + "/filler"
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let block = Data(repeating: 0x5A, count: 64 << 10)
        var bytes = block
        for _ in 0..<1_000 {
            do { try handle.write(contentsOf: bytes) } catch {
                if bytes.count == 1 { break }
                bytes = bytes.prefix(bytes.count / 2)
            }
        }
        try handle.close()

        let points = (0..<2_000).map { "\(Double($0) / 2_000), 0.5, 1" }.joined(separator: ",")
        let stroke = #"{"ops":[{"op":"stroke.add","layer":"\#(layer)","points":[\#(points)]}]}"#
        let refused = try client.post("/v1/projects/\(project)/edits", json: stroke)
        #expect(refused.status >= 500 && refused.status != 404, "\(refused.status) \(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.errorCode == "insufficient_storage" || refused.errorCode == "store_failure")
        // Logged with its details (the daemon's stderr arrives here a moment later).
        try await daemon.waitForLog("store failure")
        let after = try client.get("/v1/projects/\(project)")
        #expect(after.status == 200, "a store failure never makes the project 'not found'")
        #expect(after.body == before, "nothing of the refused edit was applied")

        // Room again: the daemon goes on.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try client.post("/v1/projects/\(project)/edits", json: stroke).status == 200)
    }

    private func run(_ tool: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) \(arguments) failed")
    }
}
