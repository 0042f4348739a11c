import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

/// Images and sounds through real daemons and the CLI: added offline and
/// fetched after a reconnect, byte for byte; bad uploads refused with nothing
/// stored; a transfer cut by SIGKILL resuming from the chunks it held.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct MediaDaemonTests {
    /// a and b trust and dial each other.
    func pair(_ a: StartedDaemon, _ b: StartedDaemon) async throws -> (aID: String, bID: String) {
        let (aID, bID) = (try a.peerID(), try b.peerID())
        #expect(try await a.cli("peers", "add", bID, "--address", "127.0.0.1:\(try b.port())", "--name", "b").status == 0)
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())", "--name", "a").status == 0)
        return (aID, bID)
    }

    /// A project with one scene and shot (1-1) on `daemon`.
    func boardWithAShot(on daemon: StartedDaemon, _ name: String) async throws -> String {
        let project = try await daemon.cli("projects", "create", name).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("scenes", "add", project).status == 0)
        #expect(try await daemon.cli("shots", "add", project, "1").status == 0)
        return project
    }

    func write(_ bytes: [UInt8], named name: String, in directory: TemporaryDirectory) -> String {
        let path = directory.path + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func sha256(_ bytes: [UInt8]) -> String { OpenSSLCrypto.shared.sha256(nil, bytes[...]).description }

    /// `media list --json` of a project on a daemon.
    func media(_ project: String, on daemon: StartedDaemon) async throws -> [[String: Any]] {
        try await daemon.json("media", "list", project) as? [[String: Any]] ?? []
    }

    @Test func anImageAndASoundAddedOfflineArriveAfterTheReconnectByteForByte() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        var b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        let project = try await boardWithAShot(on: a, "Night Train")
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try b.client.get("/v1/projects/\(project)").status == 200 }
        // b goes offline; a adds a photo (over a megabyte: several chunks), a sound and dialogue.
        b.daemon.kill()
        let picture = TestMedia.png(width: 800, height: 600, seed: 11)
        let sound = TestMedia.wav(seconds: 1.5, seed: 2)
        let added = try await a.json(
            "images", "add", project, "1-1", write(picture, named: "platform.png", in: files), "--name", "Plate", "--fit", "cover")
        let layer = try #require(added as? [String: Any])
        #expect(layer["kind"] as? String == "image" && layer["name"] as? String == "Plate" && layer["fit"] as? String == "cover")
        let image = try #require(layer["image"] as? [String: Any])
        #expect(image["blob"] as? String == sha256(picture))
        #expect(image["type"] as? String == "image/png" && image["width"] as? Int == 800 && image["height"] as? Int == 600)
        let set = try await a.cli("sound", "set", project, "1-1", write(sound, named: "whistle.wav", in: files), "--offset", "0.5")
        #expect(set.status == 0, "\(set.errors)")
        #expect(set.output.contains("1.50 s") && set.output.contains(sha256(sound)), "\(set.output)")
        #expect(try await a.cli("shots", "set", project, "1-1", "--dialogue", "Tickets, please.", "--action", "She runs.").status == 0)
        // Drawing on the image layer is refused: strokes go on other layers.
        let drawn = try await a.cli("strokes", "add", project, "1-1/Plate", "--points", "[0.1,0.1,0.5,0.2,0.2,0.5]")
        #expect(drawn.status != 0 && drawn.errors.contains("image layer"), "\(drawn.errors) \(drawn.output)")

        b = try await StartedDaemon.start(in: b.home, name: "b")
        try await eventually("b holds both", timeout: .seconds(60)) {
            let entries = try await media(project, on: b)
            return entries.count == 2 && entries.allSatisfy { $0["state"] as? String == "complete" }
        }
        let got = files.path + "/got.png"
        let fetched = try await b.cli("media", "get", project, String(sha256(picture).prefix(10)), "--out", got)
        #expect(fetched.status == 0, "\(fetched.errors)")
        #expect(FileManager.default.contents(atPath: got).map { Array($0) } == picture)
        let shot = try #require(((await b.json("shots", "list", project) as? [[String: Any]]) ?? []).first)
        #expect(shot["dialogue"] as? String == "Tickets, please." && shot["action"] as? String == "She runs.")
        let onB = try #require(shot["sound"] as? [String: Any])
        #expect(onB["blob"] as? String == sha256(sound) && onB["offset"] as? Double == 0.5)
        #expect(abs((onB["duration"] as? Double ?? 0) - 1.5) < 0.01)
        // b draws the picture where it goes, from its own copy.
        let shotID = try #require(shot["id"] as? String)
        let svg = String(decoding: try b.client.get("/v1/projects/\(project)/shots/\(shotID)/render").body, as: UTF8.self)
        #expect(svg.contains("data:image/png;base64,\(Data(picture).base64EncodedString())"), "the PNG embedded as it is")
        // Cover-fitted, the noise of the picture fills the panel (an outline would leave it white and grey).
        let panel = try RasterImage(png: Array(try b.client.get("/v1/projects/\(project)/shots/\(shotID)/render?format=png&width=400").body))
        let colours = Set((0..<400).map { panel[$0, 112] })
        #expect(colours.count > 150, "the picture's pixels across the panel: \(colours.count) colours")
        // The sound cleared on b reaches a.
        #expect(try await b.cli("sound", "clear", project, "1-1").status == 0)
        try await eventually("a has no sound on 1-1") {
            let shots = try await a.json("shots", "list", project) as? [[String: Any]] ?? []
            return shots.first.map { $0["sound"] == nil } ?? false
        }
    }

    @Test func badUploadsAreRefusedAndNothingIsStored() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        // At most 1 MiB, and only PNG images (media-types).
        let daemon = try await StartedDaemon.start(environment: ["STORYTELLER_BLOB_MAX_BYTES": "1048576", "STORYTELLER_MEDIA_TYPES": "png"])
        defer { daemon.stop() }
        let project = try await boardWithAShot(on: daemon, "Refusals")
        let picture = TestMedia.png(width: 100, height: 80, seed: 1)
        let cases: [(String, [UInt8], [String], String)] = [
            ("notes.png", Array("hello, this is text\n".utf8), ["images", "add"], "not an image"),
            ("cut.png", Array(picture.prefix(picture.count / 2)), ["images", "add"], "PNG"),
            ("sound.png", TestMedia.wav(seconds: 0.5), ["images", "add"], "WAV sound"),
            ("line.wav", TestMedia.wav(seconds: 0.5), ["sound", "set"], "does not take"),
            ("picture.wav", picture, ["sound", "set"], "not a sound"),
            ("huge.png", TestMedia.png(width: 700, height: 700, seed: 2), ["images", "add"], "limit"),
            ("empty.png", [], ["images", "add"], "empty"),
        ]
        for (name, bytes, command, words) in cases {
            let result = try await storyteller(command + [project, "1-1", write(bytes, named: name, in: files), "--socket", daemon.socket])
            #expect(result.status == 1, "\(name) was taken")
            #expect(result.errors.lowercased().contains(words.lowercased()), "\(name): \(result.errors)")
        }
        // A shot the project does not have, an offset that is not decimal seconds,
        // a sound cleared that was never set: refused or a no-op, nothing stored.
        let png = write(picture, named: "ok.png", in: files)
        let missingShot = try daemon.client.upload("POST", "/v1/projects/\(project)/shots/99@00000000000000aa/images", file: png)
        #expect(missingShot.status == 404)
        let shotIDText = try #require((try await daemon.json("shots", "list", project) as? [[String: Any]])?.first?["id"] as? String)
        let hexOffset = try daemon.client.upload("PUT", "/v1/projects/\(project)/shots/\(shotIDText)/sound?offset=0x10", file: png)
        #expect(hexOffset.status == 400)
        let cleared = try await daemon.cli("sound", "clear", project, "1-1")
        #expect(cleared.status == 0 && cleared.output.contains("had no sound"), "\(cleared.output)")
        // A 2 GiB file (sparse: it takes no disk) is refused at once, from its announced length.
        let huge = files.path + "/huge.png"
        _ = FileManager.default.createFile(atPath: huge, contents: Data(picture))
        let handle = try #require(FileHandle(forWritingAtPath: huge))
        try handle.truncate(atOffset: 2 << 30)
        try handle.close()
        let started = ContinuousClock.now
        let refused = try await storyteller(["images", "add", project, "1-1", huge, "--socket", daemon.socket])
        #expect(refused.status == 1 && refused.errors.contains("2 GiB, over the limit"), "\(refused.errors)")
        #expect(ContinuousClock.now - started < .seconds(20), "the CLI stopped sending once refused")
        // An upload cut in the middle of its body.
        // Close-on-exec: a program another test starts meanwhile must not keep
        // the connection open after this test closes it.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, byte) in daemon.socket.utf8.enumerated() { raw[i] = byte } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(connected == 0)
        let shotID = try #require((try await daemon.json("shots", "list", project) as? [[String: Any]])?.first?["id"] as? String)
        let head = "POST /v1/projects/\(project)/shots/\(shotID)/images HTTP/1.1\r\nHost: x\r\nContent-Length: 500000\r\n\r\n"
        let partial = Array(head.utf8) + Array(picture.prefix(20_000))
        _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
        // The daemon is done with it: the upload saw its end, or the request its connection gone before it was read.
        let handled = ["an upload ended before its last byte", "malformed HTTP on the control socket", "refused a control request"]
        try await eventually("the daemon handled the cut upload") {
            let log = daemon.daemon.output + daemon.daemon.errors
            return handled.contains { log.contains($0) }
        }
        // Nothing of any of them is kept, nothing is half-applied, and the daemon is fine.
        let status = try await daemon.json("media", "status") as? [String: Any] ?? [:]
        #expect(status["stored"] as? Int == 0)
        let blobs = daemon.home.path + "/blobs"
        let kept = (FileManager.default.enumerator(atPath: blobs + "/complete")?.allObjects as? [String] ?? []).filter { $0.count == 64 }
        #expect(kept.isEmpty, "\(kept)")
        try await eventually("no upload is left in the blob store's scratch directory") {
            (try FileManager.default.contentsOfDirectory(atPath: blobs + "/tmp")).isEmpty
        }
        let layers = try await daemon.json("layers", "list", project, "1-1") as? [[String: Any]] ?? []
        #expect(layers.isEmpty, "a refused upload added a layer: \(layers)")
        #expect(try await daemon.cli("images", "add", project, "1-1", write(picture, named: "good.png", in: files)).status == 0)
    }

    @Test func aReaderCannotAddMediaToTheProjectItWasShownAndGetsItsMedia() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        let project = try await boardWithAShot(on: a, "Look only")
        let picture = TestMedia.png(width: 300, height: 200, seed: 4)
        #expect(try await a.cli("images", "add", project, "1-1", write(picture, named: "ref.png", in: files)).status == 0)
        #expect(try await a.cli("share", project, bID, "--read-only").status == 0)
        try await eventually("b holds the project and its image") {
            try await media(project, on: b).first?["state"] as? String == "complete"
        }
        let refused = try await b.cli(
            "images", "add", project, "1-1", write(TestMedia.png(width: 10, height: 10, seed: 9), named: "mine.png", in: files))
        #expect(refused.status == 1 && refused.errors.contains("read-only"), "\(refused.errors)")
        let stored = try await b.json("media", "status") as? [String: Any] ?? [:]
        #expect(stored["stored"] as? Int == 1, "the reader stored only what it was shown")
    }

    @Test func aTransferCutBySIGKILLResumesFromTheChunksItHeld() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        // a sends slowly (4 MB/s), so the kill lands in the middle.
        let a = try await StartedDaemon.start(name: "a", environment: ["STORYTELLER_MAX_SEND_KBPS": "32000"])
        defer { a.stop() }
        var b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        let project = try await boardWithAShot(on: a, "Resume")
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try b.client.get("/v1/projects/\(project)").status == 200 }
        let picture = TestMedia.png(ofAbout: 12 << 20, seed: 21)
        #expect(try await a.cli("images", "add", project, "1-1", write(picture, named: "big.png", in: files)).status == 0)
        var heldBeforeKill = 0
        try await eventually("b holds a third of it", timeout: .seconds(60)) {
            heldBeforeKill = await (try media(project, on: b).first?["heldBytes"] as? Int) ?? 0
            return heldBeforeKill > picture.count / 3
        }
        b.daemon.kill()
        b = try await StartedDaemon.start(in: b.home, name: "b")
        let heldAfterRestart = await (try media(project, on: b).first?["heldBytes"] as? Int) ?? 0
        #expect(heldAfterRestart >= heldBeforeKill * 9 / 10, "the chunks held before the kill were kept (\(heldAfterRestart) of \(heldBeforeKill))")
        try await eventually("b holds all of it", timeout: .seconds(60)) {
            try await media(project, on: b).first?["state"] as? String == "complete"
        }
        let got = files.path + "/got.png"
        #expect(try await b.cli("media", "get", project, sha256(picture), "--out", got).status == 0)
        #expect(FileManager.default.contents(atPath: got).map { Array($0) } == picture)
    }
}
