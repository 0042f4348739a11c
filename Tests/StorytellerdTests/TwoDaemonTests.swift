import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StoryStore
import StoryTestSupport
import Synchronization
import Testing

/// Two real daemons on 127.0.0.1 driven through the CLI: pausing and resuming
/// sync, projects arriving in "Incoming", SIGTERM in the middle of a sync
/// batch, and `storyteller demo`.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct TwoDaemonTests {
    /// Pairs two daemons through the CLI (each trusts the other and dials it).
    func pair(_ a: StartedDaemon, _ b: StartedDaemon) async throws -> (aID: String, bID: String) {
        let (aID, bID) = (try a.peerID(), try b.peerID())
        #expect(try await a.cli("peers", "add", bID, "--address", "127.0.0.1:\(try b.port())", "--name", "b").status == 0)
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())", "--name", "a").status == 0)
        return (aID, bID)
    }

    func connected(_ daemon: StartedDaemon) throws -> Int {
        (try daemon.client.get("/v1/status").json as? [String: Any])?["peersConnected"] as? Int ?? -1
    }

    /// A project as a daemon shows it, less what differs by machine (its own role).
    func projectBody(_ id: String, on daemon: StartedDaemon) throws -> Data? {
        let response = try daemon.client.get("/v1/projects/\(id)")
        guard response.status == 200, var body = response.json as? [String: Any] else { return nil }
        body["role"] = nil
        body["readOnly"] = nil
        return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
    }

    /// Every visible stroke of a project: id → its flat points.
    private func strokes(_ id: String, on daemon: StartedDaemon) throws -> [String: [Double]] {
        guard let body = try daemon.client.get("/v1/projects/\(id)").json as? [String: Any] else { return [:] }
        var result: [String: [Double]] = [:]
        for scene in body["scenes"] as? [[String: Any]] ?? [] {
            for shot in scene["shots"] as? [[String: Any]] ?? [] {
                for layer in shot["layers"] as? [[String: Any]] ?? [] {
                    for stroke in layer["strokes"] as? [[String: Any]] ?? [] {
                        result[stroke["id"] as? String ?? ""] = stroke["points"] as? [Double] ?? []
                    }
                }
            }
        }
        return result
    }

    /// `watch` says when a peer has everything of a project: an edit made
    /// here is then on the other machine.
    @Test func theEventStreamSaysWhenAPeerHasCaughtUp() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        let project = try await a.cli("projects", "create", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try projectBody(project, on: b) != nil }
        // Lines of the stream, and the first peer.caughtUp once the edit is under way.
        let seen = Mutex<(lines: [String], edited: Bool, caughtUp: String?)>(([], false, nil))
        let client = a.client
        let watcher = Task {
            _ = try? await offThePool {
                try client.stream("/v1/events?project=\(project)") { line in
                    seen.withLock { state in
                        state.lines.append(line)
                        if state.edited && line.contains("peer.caughtUp") { state.caughtUp = line }
                        return state.caughtUp == nil
                    }
                }
            }
        }
        try await eventually("the stream is open") { !seen.withLock { $0.lines.isEmpty } }
        seen.withLock { $0.edited = true }
        #expect(try await a.cli("scenes", "add", project, "--title", "Dawn").status == 0)
        try await eventually("a says b caught up") { seen.withLock { $0.caughtUp } != nil }
        let event = try #require(seen.withLock { $0.caughtUp })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(event.utf8)) as? [String: Any])
        #expect(json["peer"] as? String == bID && json["document"] as? String == project)
        // (That caught up means the edit is there is LiveSyncTests.aPeerThatHasEverythingIsReportedCaughtUp.)
        _ = await watcher.result
    }

    /// Found by a new user: after a merge overruled their move, `undo`
    /// silently deleted the shot they had just added. Now it says the move
    /// was overruled and by whom, does nothing, and `--older` reaches the
    /// shot; the stacks survive a restart.
    @Test func undoAfterAMergeSaysTheLastEditWasOverruledAndTheHistorySurvivesARestart() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (_, bID) = try await pair(a, b)
        func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
            let result = try await storyteller(arguments + ["--socket", daemon.socket])
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let project = try await ok(a, "projects", "create", "Harbour")
        for title in ["Dock", "Storm", "Lighthouse"] { _ = try await ok(a, "scenes", "add", project, "--title", title) }
        for _ in 0..<2 { _ = try await ok(a, "shots", "add", project, "Dock") }
        _ = try await ok(a, "share", project, bID)
        try await eventually("b has the project") { try projectBody(project, on: b) == projectBody(project, on: a) }

        // Apart: a adds a shot and moves 1-1 to scene 2; b moves 1-1 to scene 3, later in Lamport order.
        _ = try await ok(a, "peers", "pause", "b")
        try await eventually("they are apart") { try connected(a) == 0 && connected(b) == 0 }
        _ = try await ok(a, "shots", "add", project, "Dock", "--caption", "New angle")
        _ = try await ok(a, "shots", "move", project, "1-1", "--scene", "Storm", "--to", "0")
        for take in 0..<6 { _ = try await ok(b, "shots", "set", project, "1-2", "--caption", "take \(take)") }
        _ = try await ok(b, "shots", "move", project, "1-1", "--scene", "3", "--to", "0")
        _ = try await ok(a, "peers", "resume", "b")
        try await eventually("they merge") { try projectBody(project, on: a) == projectBody(project, on: b) }
        let merged = try await ok(a, "shots", "list", project)
        #expect(merged.contains("New angle") && merged.contains("3-1"), "b's move won: \(merged)")

        let overruled = try await ok(a, "undo", project)
        #expect(overruled.contains("nothing undone: your last edit (moved shot 1-1 to scene 2 (now 2-1)) was overruled by b"), "\(overruled)")
        #expect(overruled.contains("storyteller undo --older"))
        #expect(try await ok(a, "shots", "list", project).contains("New angle"), "the added shot is still there")

        let older = try await ok(a, "undo", project, "--older")
        #expect(older.contains("passed over: moved shot 1-1 to scene 2 (now 2-1)") && older.contains("undid: added shot 1-3"), "\(older)")
        #expect(!(try await ok(a, "shots", "list", project).contains("New angle")))
        let json = try #require(try await JSONSerialization.jsonObject(with: Data(try ok(a, "undo", project, "--json").utf8)) as? [String: Any])
        #expect(json["undone"] as? Bool == true && json["summary"] as? String == "added shot 1-2" && json["overruled"] as? Bool == false)

        // A restart keeps both stacks.
        #expect(try await a.daemon.terminate() == 0)
        let again = try await StartedDaemon.start(in: a.home, name: "a")
        defer { again.daemon.kill() }
        #expect(try await ok(again, "redo", project) == "redid: added shot 1-2", "the redo stack came back")
        #expect(try await ok(again, "redo", project) == "redid: added shot 1-3")
        #expect(try await ok(again, "shots", "list", project).contains("New angle"))
        #expect(try await ok(again, "undo", project) == "undid: added shot 1-3")
    }

    @Test func pausedPeersWaitAndMergeOnResumeAndSharedProjectsArriveInIncoming() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (aID, bID) = try await pair(a, b)
        try await eventually("the two connect") { try connected(a) == 1 && connected(b) == 1 }

        let project = try await a.cli("projects", "create", "Shared").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let scene = try await a.cli("scenes", "add", project).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("share", project, bID).status == 0)
        try await eventually("b has the project") { try projectBody(project, on: b) == projectBody(project, on: a) }
        // b files it in Incoming (a's own folders are not revealed).
        let tree = try await b.cli("tree").output
        #expect(tree.contains("Incoming/") && tree.contains("  Shared  \(project.prefix(7))"), "\(tree)")
        // b sent a nothing of it, yet knows a has it all: what a's offer said it had counts as
        // acknowledged (b had said "a never synced", every change "to send").
        let received = try await b.cli("status", "--wait", "--timeout", "30")
        #expect(received.status == 0 && received.output.contains("sync with a:      in sync"), "\(received)")
        #expect(received.output.range(of: "Shared +[0-9]+ +a in sync +\(project.prefix(7))", options: .regularExpression) != nil, "\(received)")
        // So do changes a sends later: b records that a has them as it stores them (b had
        // said "a 1 behind" after each, since a never acknowledges what it sent itself).
        #expect(try await a.cli("scenes", "add", project, "--title", "Later").status == 0)
        try await eventually("b has the new scene") { try projectBody(project, on: b) == projectBody(project, on: a) }
        let later = try await b.cli("status", "--wait", "--timeout", "30")
        #expect(later.status == 0 && later.output.contains("sync with a:      in sync"), "\(later)")

        let paused = try #require(try await a.json("peers", "pause", bID) as? [String: Any])
        #expect(paused["id"] as? String == bID && paused["paused"] as? Bool == true)
        try await eventually("the connection is closed") { try connected(a) == 0 && connected(b) == 0 }
        #expect(try await a.cli("shots", "add", project, scene).status == 0)
        #expect(try await b.cli("scenes", "set", project, scene, "--title", "From b").status == 0)
        // A positive marker: b dials again (its backoff starts at half a second) and a refuses it.
        let refusal = "but sync with it is paused; closing"
        try await eventually("a refused b's dialing while paused") { a.daemon.errors.contains(refusal) }
        #expect(try connected(a) == 0, "a refuses b's dialing while paused")
        #expect(try projectBody(project, on: a) != projectBody(project, on: b), "nothing crossed while paused")
        let pausedStatus = try await a.cli("status").output
        #expect(pausedStatus.range(of: "  b [1-9][0-9]* behind \\(offline\\)", options: .regularExpression) != nil, "peers by name: \(pausedStatus)")

        // A restart keeps the pause: a comes back on a new port; b is told
        // it, dials it there, and is refused (a positive marker).
        #expect(try await a.daemon.terminate() == 0)
        let again = try await StartedDaemon.start(in: a.home, name: "a")
        defer { again.daemon.kill() }
        #expect(try await again.cli("peers").output.contains("paused by you"))
        #expect(try await b.cli("peers", "set", aID, "--address", "127.0.0.1:\(try again.port())").status == 0)
        try await eventually("a refused b's dialing after its restart") { again.daemon.errors.contains(refusal) }
        #expect(try connected(again) == 0, "still paused after the restart")

        #expect(try await again.cli("peers", "resume", bID).status == 0)
        #expect(try await (again.json("peers") as? [[String: Any]])?.first?["paused"] as? Bool == false)
        try await eventually("they merge after resuming") {
            let (left, right) = (try projectBody(project, on: again), try projectBody(project, on: b))
            guard let left, left == right, let body = try JSONSerialization.jsonObject(with: left) as? [String: Any],
                let scenes = body["scenes"] as? [[String: Any]]
            else { return false }
            return scenes.first?["title"] as? String == "From b" && (scenes.first?["shots"] as? [Any])?.count == 1
        }
        let waited = try await again.cli("status", "--wait", "--timeout", "30")
        #expect(waited.status == 0, "status --wait ends when b is in sync: \(waited.errors)")
        #expect(waited.output.contains("sync with b:      in sync") && waited.output.contains("b in sync"), "\(waited.output)")
        #expect(waited.output.range(of: "Shared +[0-9]+ +b in sync +\(project.prefix(7))", options: .regularExpression) != nil, "\(waited.output)")
        #expect(try await again.cli("peers", "pause", "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA").status == 1)

        // A member b is not paired with (it syncs through a) is named as one, not as a peer
        // b "never synced" with (as every other member of a crew's folder was).
        let third = try Identity.generate(commonName: "third").peerID.description
        #expect(try await again.cli("peers", "add", third, "--name", "third").status == 0)
        #expect(try await again.cli("share", project, "third").status == 0)
        try await eventually("b knows the third member") { try await b.cli("status").output.contains(String(third.prefix(7))) }
        let members = try await b.cli("status").output
        #expect(members.contains("\(third.prefix(7)) (a member, not paired here)") && !members.contains("never synced"), "\(members)")
    }

    /// Every stroke of a project as stored in a daemon's database (read with
    /// the store directly, after the daemon stopped): id → the stroke.
    private func storedStrokes(_ project: DocumentID, in home: TemporaryDirectory) async throws -> [OpID: StrokeView] {
        let store = try Store(path: home.path + "/storyteller.sqlite", identity: try TestIdentities.signing(in: home.path + "/identity"))
        guard (try? await store.document(project)) != nil else { return [:] }
        var result: [OpID: StrokeView] = [:]
        for shot in try await store.project(project).view.shots {
            for layer in shot.layers {
                for stroke in layer.strokes { result[stroke.id] = stroke }
            }
        }
        return result
    }

    /// SIGTERM to the receiving daemon while a large initial sync is in
    /// flight: it exits 0 within the bound, keeps what it committed (whole
    /// strokes only), and after a restart finishes the sync with nothing lost.
    @Test func sigtermDuringASyncBatchIsACleanExitAndNothingIsLost() async throws {
        // a's database is seeded directly (fast): 800 changes of one long stroke
        // each, ~6 MB encoded, so the initial sync takes a dozen 512 KiB batches.
        let aHome = try TemporaryDirectory()
        let big: DocumentID
        let changes = 800
        do {
            let store = try Store(path: aHome.path + "/storyteller.sqlite", identity: try TestIdentities.signing(in: aHome.path + "/identity"))
            big = try await store.createDocument(kind: .project, name: "Big", at: 1)
            let layer = try await store.editProject(big, at: 2) { editor in
                let scene = try editor.insertScene(at: 0)
                let shot = try editor.insertShot(in: scene, at: 0)
                return try editor.insertLayer(in: shot, at: 0)
            }.value
            var random = SystemRandomNumberGenerator()
            for index in 0..<changes {
                let points = (0..<2_000).map { _ in
                    Point(x: Double.random(in: 0...1, using: &random), y: Double.random(in: 0...1, using: &random), pressure: 0.5)
                }
                _ = try await store.editProject(big, at: 3 + Int64(index)) { try $0.addStroke(to: layer, brush: Brush(), points: points) }
            }
        }
        let a = try await StartedDaemon.start(in: aHome, name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }

        // b has work of its own that must survive.
        let own = try await b.cli("projects", "create", "B's own").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let ownScene = try await b.cli("scenes", "add", own).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let ownShot = try await b.cli("shots", "add", own, ownScene).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let ownLayer = try await b.cli("layers", "add", own, ownShot).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await b.cli("strokes", "add", own, ownLayer, "--points", "[0.5,0.5,1]").status == 0)
        let ownBefore = try #require(try projectBody(own, on: b))

        // Watch b's events; SIGTERM b as soon as the first batch from a is stored.
        let (aID, bID) = try await pair(a, b)
        let client = b.client
        let seen = Lines()
        let watcher = Task { () throws -> ControlClient.Response? in
            try await offThePool {
                try client.stream("/v1/events") { line in
                    seen.append(line)
                    return !line.contains(#""origin":"peer""#)
                }
            }
        }
        try await eventually("b's stream is open") { seen.all.contains { $0.contains("hello") } }
        #expect(try await a.cli("share", big.description, bID).status == 0)
        try await eventually("the first batch from a reaches b", timeout: .seconds(60)) {
            seen.all.contains { $0.contains(#""origin":"peer""#) }
        }
        let stopped = ContinuousClock.now
        #expect(try await b.daemon.terminate() == 0, "a clean exit: \(b.daemon.errors.suffix(2_000))")
        #expect(ContinuousClock.now - stopped < .seconds(25), "within the shutdown bound")
        _ = try await watcher.value
        #expect(b.daemon.errors.contains("stopped"))
        #expect(try await a.daemon.terminate() == 0)

        // What b committed is whole strokes that a has; its own project is untouched.
        let all = try await storedStrokes(big, in: aHome)
        #expect(all.count == changes)
        let partial = try await storedStrokes(big, in: b.home)
        #expect(partial.allSatisfy { id, stroke in all[id] == stroke }, "every stroke b has is whole and a's")
        print("strokes on b when SIGTERM arrived mid-sync: \(partial.count) of \(all.count)")
        #expect(partial.count < all.count, "the SIGTERM came in the middle of the sync (\(partial.count) of \(all.count))")
        let bAlone = try await StartedDaemon.start(in: b.home, name: "b")
        defer { bAlone.daemon.kill() }
        #expect(try projectBody(own, on: bAlone) == ownBefore, "b's own work is intact")

        // a back (on a new port, as is b): the sync finishes, nothing lost or duplicated.
        let aAgain = try await StartedDaemon.start(in: aHome, name: "a")
        defer { aAgain.daemon.kill() }
        #expect(try await aAgain.cli("peers", "add", bID, "--address", "127.0.0.1:\(try bAlone.port())").status == 0)
        #expect(try await bAlone.cli("peers", "add", aID, "--address", "127.0.0.1:\(try aAgain.port())").status == 0)
        // The status's per-document sync state says when b has all of a's changes.
        func changesOf(_ daemon: StartedDaemon) throws -> Int? {
            let status = try daemon.client.get("/v1/status").json as? [String: Any]
            let documents = status?["sync"] as? [[String: Any]] ?? []
            return documents.first { $0["id"] as? String == big.description }?["changes"] as? Int
        }
        let total = try #require(try changesOf(aAgain))
        #expect(total == changes + 3, "the founding change, the scene/shot/layer change, the share and one per stroke")
        try await eventually("b catches up", timeout: .seconds(90)) { try changesOf(bAlone) == total }
        let aStatus = try #require(try aAgain.client.get("/v1/status").json as? [String: Any])
        let aSync = try #require((aStatus["sync"] as? [[String: Any]])?.first { $0["id"] as? String == big.description })
        try await eventually("a sees b acknowledge everything") {
            let status = try aAgain.client.get("/v1/status").json as? [String: Any]
            let document = (status?["sync"] as? [[String: Any]])?.first { $0["id"] as? String == big.description }
            return (document?["peers"] as? [[String: Any]])?.first?["behind"] as? Int == 0
        }
        #expect((aSync["peers"] as? [[String: Any]])?.first?["peer"] as? String == bID)
        #expect(try await bAlone.daemon.terminate() == 0)
        #expect(try await aAgain.daemon.terminate() == 0)
        #expect(try await storedStrokes(big, in: b.home) == all, "b has every stroke of a, each once")
    }

    private func library(_ daemon: StartedDaemon) async throws -> (id: String, nodes: [[String: Any]]) {
        let body = try #require(try await daemon.json("tree") as? [String: Any])
        return (body["id"] as? String ?? "", body["nodes"] as? [[String: Any]] ?? [])
    }

    /// Sharing the library shares the projects it lists (so it reveals only
    /// what it shares) and the projects filed in it later; the recipient shows
    /// it beside its own library and never files its own projects in it.
    @Test func aSharedLibrarySharesItsProjectsAndIsNeverAdopted() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let local = try await b.cli("projects", "create", "Ben's sketches").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let bLibrary = try await library(b).id
        let (_, bID) = try await pair(a, b)
        #expect(try await a.cli("folders", "create", "Films").status == 0)
        let film = try await a.cli("projects", "create", "Night Train", "--folder", "Films").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let shared = try #require(try await a.json("share", "library", bID) as? [String: Any])
        #expect(shared["mode"] as? String == "read-write")
        let aLibrary = try await library(a).id

        func sharedLibraries(_ daemon: StartedDaemon) async throws -> [[String: Any]] {
            (try await daemon.json("tree") as? [String: Any])?["shared"] as? [[String: Any]] ?? []
        }
        try await eventually("b shows a's library beside its own, with a's folder and project") {
            guard let theirs = try await sharedLibraries(b).first, theirs["id"] as? String == aLibrary else { return false }
            let nodes = theirs["nodes"] as? [[String: Any]] ?? []
            let folder = nodes.first { $0["name"] as? String == "Films" }
            let entry = nodes.first { $0["project"] as? String == film }
            return entry?["parent"] as? String == folder?["id"] as? String && entry?["available"] as? Bool == true
        }
        // The library's project came with it (shared as the library is), as an editor.
        #expect((try await b.json("projects", "show", film) as? [String: Any])?["role"] as? String == "editor")
        // b keeps its own library, and its own project stays out of a's.
        #expect(try await library(b).id == bLibrary)
        #expect(try await library(b).nodes.contains { $0["project"] as? String == local })
        // A positive marker from b's side: an edit b makes to the shared
        // project reaches a, over the connection its own project would have
        // gone over, after it.
        #expect(try await b.cli("scenes", "add", film, "--title", "From b").status == 0)
        try await eventually("b's edit of the shared project reaches a") { try await a.cli("scenes", "list", film).output.contains("From b") }
        #expect(try await !a.cli("tree").output.contains("Ben's sketches"), "nothing of b's reached a")
        #expect(try a.client.get("/v1/projects/\(local)").status == 404)
        // A project created in the shared library later follows it.
        let later = try await a.cli("projects", "create", "Day Train", "--folder", "Films").output.trimmingCharacters(in: .whitespacesAndNewlines)
        try await eventually("the later project reaches b") { try b.client.get("/v1/projects/\(later)").status == 200 }
        // The tree says whose library it is.
        let sharedTree = try await b.cli("tree").output
        #expect(sharedTree.contains("Library/  (shared by a (\(try await a.cli("id").output.prefix(7))), you may edit)"), "\(sharedTree)")
        // Unsharing the library takes back what it shared.
        let listed = try #require(try a.client.get("/v1/library/shares").json as? [[String: Any]])
        #expect(listed.compactMap { $0["peer"] as? String } == [bID])
        #expect(try await a.cli("unshare", "library", bID).status == 0)
        try await eventually("b is told it is no longer a member") {
            (try await b.json("projects", "show", film) as? [String: Any])?["role"] as? String == "none"
        }
        let refused = try b.client.post("/v1/projects/\(film)/edits", json: #"{"ops": [{"op": "scene.add"}]}"#)
        #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("read_only"))
        // The choice survives a restart.
        #expect(try await b.daemon.terminate() == 0)
        let again = try await StartedDaemon.start(in: b.home, name: "b")
        defer { again.daemon.kill() }
        #expect(try await library(again).id == bLibrary)
    }

    /// `storyteller demo` runs the whole mission and leaves nothing behind.
    @Test func theDemoConvergesAndCleansUp() async throws {
        let result = try await storyteller(["demo"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.contains("[7/7] merged"))
        let lines = result.output.split(separator: "\n").map(String.init)
        let offlineA = try #require(lines.first { $0.hasPrefix("ana, offline:") })
        let offlineB = try #require(lines.first { $0.hasPrefix("ben, offline:") })
        let merged = try #require(lines.first { $0.hasPrefix("merged:") })
        #expect(offlineA.contains("Reaction | Wide, dawn | Close-up"), "ana moved Reaction first")
        #expect(offlineB.contains("Wide | Reaction | Close-up"), "ben moved it second")
        let order = merged.dropFirst("merged:".count).split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(order) == ["Wide, dawn", "Reaction", "Close-up"], "each shot exactly once: \(order)")
        #expect(result.output.contains("5 of 5 strokes on ana, 5 of 5 on ben"))
        #expect(result.output.contains("notes: Ben: hold two beats longer"))
        // The temporary directory is gone and no daemon is left running.
        let firstStep = try #require(result.errors.split(separator: "\n").first { $0.hasPrefix("[1/7]") })
        let directory = String(try #require(firstStep.split(separator: " ").last))
        #expect(directory.contains("storyteller-demo."))
        #expect(!FileManager.default.fileExists(atPath: directory))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { Int($0) != nil }.filter { pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            return command.contains(directory)
        }
        #expect(leftovers.isEmpty, "no demo daemon outlives the demo")
    }
}
