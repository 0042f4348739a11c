import Foundation
import NIOPosix
import StoryAPI
import StoryClient
import StoryCore
import StoryStore
import StoryTestSupport
import Testing

/// Sharing a folder of the library with other machines: everything in it,
/// and whatever later goes in, follows; what leaves it, leaves; rights hold.
/// Real daemons on 127.0.0.1, driven through the CLI.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct FolderShareTests {
    /// Runs the CLI and expects success; its output, trimmed.
    @discardableResult
    private func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
        let result = try await storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Pairs daemons both ways under the given names.
    private func pair(_ a: StartedDaemon, _ aName: String, _ b: StartedDaemon, _ bName: String) async throws {
        try await ok(a, "peers", "add", try b.peerID(), "--address", "127.0.0.1:\(try b.port())", "--name", bName)
        try await ok(b, "peers", "add", try a.peerID(), "--address", "127.0.0.1:\(try a.port())", "--name", aName)
    }

    /// Two daemons, a and b, paired both ways.
    private func startedPair() async throws -> (StartedDaemon, StartedDaemon) { try await StartedDaemon.startedPair() }

    /// This daemon's role in a project (`none` when it does not have it).
    private func role(of project: String, on daemon: StartedDaemon) throws -> String {
        let response = try daemon.client.get("/v1/projects/\(project)?points=false")
        guard response.status == 200, let body = response.json as? [String: Any] else { return "none" }
        return body["role"] as? String ?? "none"
    }

    /// Names of the projects a daemon's tree shows under a shared folder named `folder`.
    private func sharedTree(_ daemon: StartedDaemon) async throws -> [String: [String]] {
        let library = try #require(try await daemon.json("tree") as? [String: Any])
        var result: [String: [String]] = [:]
        for shared in library["shared"] as? [[String: Any]] ?? [] {
            let nodes = shared["nodes"] as? [[String: Any]] ?? []
            result[shared["name"] as? String ?? "?"] = nodes.filter { $0["inTrash"] as? Bool != true }.compactMap { $0["name"] as? String }
        }
        return result
    }

    @Test func aSharedFolderTakesInWhatGoesInAndLetsGoWhatLeaves() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }

        try await ok(a, "folders", "create", "Films")
        try await ok(a, "folders", "create", "Shorts", "--in", "Films")
        let night = try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        let dawn = try await ok(a, "projects", "create", "Dawn", "--folder", "Films/Shorts")
        let secret = try await ok(a, "projects", "create", "Private")
        // Dawn is also shared with b on its own: it stays when it leaves the folder.
        try await ok(a, "share", "Dawn", "b")

        #expect(try await ok(a, "share", "Films", "b").contains("shared folder Films with b"))
        try await eventually("b holds the folder's projects") {
            try role(of: night, on: b) == "editor" && role(of: dawn, on: b) == "editor"
        }
        try await eventually("b sees the folder under its name, with its nesting") {
            let tree = try await sharedTree(b)
            return tree["Films"].map { Set($0) == ["Shorts", "Night Train", "Dawn"] } ?? false
        }
        #expect(try role(of: secret, on: b) == "none", "what is not in the folder stays here")
        let bTree = try await ok(b, "tree")
        #expect(bTree.contains("Films/  (shared by a") && bTree.contains("  Shorts/") && bTree.contains("    Dawn  "), "\(bTree)")
        // a still sees its folder where it was (now a shared folder).
        #expect(try await ok(a, "tree").contains("Films/  (shared folder)"))

        // Created in it, moved into it: they follow.
        let sequel = try await ok(a, "projects", "create", "Night Train II", "--folder", "Films/Shorts")
        let loose = try await ok(a, "projects", "create", "Loose")
        try await ok(a, "folders", "move", "Loose", "--to", "Films")
        try await eventually("what went in reached b") { try role(of: sequel, on: b) == "editor" && role(of: loose, on: b) == "editor" }

        // b, an editor of the folder, files its own project in it: a gets it.
        let fromB = try await ok(b, "projects", "create", "From b", "--folder", "Films")
        try await eventually("b's project reached a") { try role(of: fromB, on: a) == "editor" }

        // Moved out: b loses it, unless it has it another way (Dawn was shared directly).
        try await ok(a, "folders", "move", "Films/Night Train", "--to", "root")
        try await ok(a, "folders", "move", "Films/Shorts/Dawn", "--to", "root")
        try await eventually("b lost what left the folder") { try role(of: night, on: b) == "none" }
        #expect(try role(of: dawn, on: b) == "editor", "shared directly too: it stays")
        let why = try #require(try await a.json("shares", "list", "--peer", "b") as? [[String: Any]])
        #expect(why.first { $0["document"] as? String == dawn }?["via"] as? [String] == ["direct"])
        #expect(why.first { $0["document"] as? String == sequel }?["via"] as? [String] == ["folder Films"])
        #expect(why.first { $0["document"] as? String == night } == nil)
        let table = try await ok(a, "shares")
        #expect(table.contains("Films/") && table.contains("folder Films"), "\(table)")

        // Unsharing the folder takes it and what b has only through it.
        try await ok(a, "unshare", "Films", "b")
        try await eventually("b lost the folder's projects") { try role(of: sequel, on: b) == "none" && role(of: loose, on: b) == "none" }
        #expect(try role(of: dawn, on: b) == "editor")
        #expect(try role(of: fromB, on: b) == "owner", "b keeps what it owns")
    }

    /// Where a project's entry is in a shared folder, as a daemon's tree shows it: the names of its folders.
    private func folderPath(of name: String, on daemon: StartedDaemon) async throws -> [String] {
        let library = try #require(try await daemon.json("tree") as? [String: Any])
        let nodes =
            (library["nodes"] as? [[String: Any]] ?? [])
            + (library["shared"] as? [[String: Any]] ?? []).flatMap { $0["nodes"] as? [[String: Any]] ?? [] }
        var byID: [String: [String: Any]] = [:]
        for node in nodes { byID[node["id"] as? String ?? ""] = node }
        for shared in library["shared"] as? [[String: Any]] ?? [] {
            byID["\(shared["id"] as? String ?? ""):root"] = ["name": shared["name"] as? String ?? "?", "parent": ""]
        }
        let entries = nodes.filter { $0["name"] as? String == name && $0["kind"] as? String == "project" && $0["inTrash"] as? Bool != true }
        guard entries.count == 1, var parent = entries[0]["parent"] as? String else { return ["\(entries.count) entries"] }
        var path: [String] = []
        while let folder = byID[parent] {
            path.insert(folder["name"] as? String ?? "?", at: 0)
            parent = folder["parent"] as? String ?? ""
        }
        return path
    }

    /// What a daemon's tree (`storyteller tree --json`, which is `GET /v1/library`)
    /// lists inside the shared folder named `folder`, in order: each name
    /// indented by its depth below the folder. The sharer shows the folder's
    /// contents in place under its entry; a recipient under the folder's name.
    private func contents(of folder: String, on daemon: StartedDaemon) async throws -> [String] {
        let library = try #require(try await daemon.json("tree") as? [String: Any])
        func lines(_ nodes: [[String: Any]], below depth: Int) -> [String] {
            nodes.filter { $0["inTrash"] as? Bool != true }.map {
                String(repeating: "  ", count: ($0["depth"] as? Int ?? 0) - depth) + ($0["name"] as? String ?? "?")
            }
        }
        if let shared = (library["shared"] as? [[String: Any]] ?? []).first(where: { $0["name"] as? String == folder }) {
            return lines(shared["nodes"] as? [[String: Any]] ?? [], below: 0)
        }
        let nodes = library["nodes"] as? [[String: Any]] ?? []
        guard let entry = nodes.firstIndex(where: { $0["name"] as? String == folder && $0["inTrash"] as? Bool != true }) else { return [] }
        let depth = nodes[entry]["depth"] as? Int ?? 0
        let inside = nodes[(entry + 1)...].prefix { ($0["depth"] as? Int ?? 0) > depth }
        return lines(Array(inside), below: depth + 1)
    }

    @Test func theRecipientSeesTheSharedFolderInTheSendersOrderThroughReorders() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        // Made in an order that is neither alphabetical nor the order shown.
        try await ok(a, "folders", "create", "Shows")
        try await ok(a, "folders", "create", "Reel 3", "--in", "Shows")
        try await ok(a, "projects", "create", "Zeta", "--folder", "Shows")
        try await ok(a, "folders", "create", "Reel 1", "--in", "Shows")
        try await ok(a, "projects", "create", "Alpha", "--folder", "Shows/Reel 1")
        try await ok(a, "projects", "create", "Mid", "--folder", "Shows")
        try await ok(a, "folders", "create", "Reel 2", "--in", "Shows", "--index", "1")
        let made = ["Reel 3", "Reel 2", "Zeta", "Reel 1", "  Alpha", "Mid"]
        #expect(try await contents(of: "Shows", on: a) == made)

        try await ok(a, "share", "Shows", "b")
        #expect(try await contents(of: "Shows", on: a) == made, "sharing keeps the order on the sender")
        try await eventually("b shows the folder in a's order") { try await contents(of: "Shows", on: b) == made }
        let text = try await ok(b, "tree").split(separator: "\n").map(String.init)
        let shown = made.map { name in
            text.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name.trimmingCharacters(in: .whitespaces)) } ?? -1
        }
        #expect(shown == shown.sorted() && !shown.contains(-1), "the text tree lists them in that order too:\n\(text.joined(separator: "\n"))")

        // The sender reorders and moves within the folder: the recipient follows.
        try await ok(a, "folders", "reorder", "Shows/Mid", "0")
        try await ok(a, "folders", "move", "Shows/Zeta", "--to", "Shows/Reel 2")
        try await ok(a, "folders", "reorder", "Shows/Reel 1", "1")
        let reordered = ["Mid", "Reel 1", "  Alpha", "Reel 3", "Reel 2", "  Zeta"]
        #expect(try await contents(of: "Shows", on: a) == reordered)
        try await eventually("b follows a's reorder") { try await contents(of: "Shows", on: b) == reordered }
        // And the other way: b, an editor of the folder, reorders; a follows.
        try await ok(b, "folders", "reorder", "Shows/Reel 3", "0")
        let fromB = ["Reel 3", "Mid", "Reel 1", "  Alpha", "Reel 2", "  Zeta"]
        try await eventually("a follows b's reorder") {
            let (onA, onB) = (try await contents(of: "Shows", on: a), try await contents(of: "Shows", on: b))
            return onA == fromB && onB == fromB
        }
    }

    @Test func concurrentMovesInASharedFolderEndInOnePlaceOnBoth() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Films")
        for name in ["Left", "Right"] { try await ok(a, "folders", "create", name, "--in", "Films") }
        let project = try await ok(a, "projects", "create", "Wanderer", "--folder", "Films")
        try await ok(a, "share", "Films", "b")
        try await eventually("b has the folder") {
            let (role, path) = (try role(of: project, on: b), try await folderPath(of: "Wanderer", on: b))
            return role == "editor" && path == ["Films"]
        }
        try await ok(a, "peers", "pause", "b")
        try await eventually("they are apart") { try TwoDaemonTests().connected(a) == 0 && TwoDaemonTests().connected(b) == 0 }
        try await ok(a, "folders", "move", "Films/Wanderer", "--to", "Films/Left")
        try await ok(b, "folders", "move", "Films/Wanderer", "--to", "Films/Right")
        try await ok(a, "peers", "resume", "b")
        try await eventually("both show it in one and the same folder") {
            let (left, right) = await (try folderPath(of: "Wanderer", on: a), try folderPath(of: "Wanderer", on: b))
            return left == right && (left == ["Films", "Left"] || left == ["Films", "Right"])
        }
    }

    @Test func anUnshareMadeWhileThePeerIsAwayHoldsWhenItComesBack() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Films")
        let project = try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        try await ok(a, "share", "Films", "b")
        try await eventually("b has it") { try role(of: project, on: b) == "editor" }
        try await ok(a, "peers", "pause", "b")
        try await eventually("they are apart") { try TwoDaemonTests().connected(a) == 0 && TwoDaemonTests().connected(b) == 0 }
        try await ok(a, "unshare", "Films", "b")
        // b edits while it does not know yet; when they meet, b learns it left,
        // and a does not sync that document with it any more.
        try await ok(b, "scenes", "add", project, "--title", "Late")
        try await ok(a, "peers", "resume", "b")
        try await eventually("b learns it left") { try role(of: project, on: b) == "none" }
        let body = try #require(try await a.json("projects", "show", project) as? [String: Any])
        #expect((body["scenes"] as? [Any])?.isEmpty == true, "b's edit made after its rights were taken never lands on a")
    }

    @Test func aSharedFolderDeletedGoesToEveryonesTrashAndComesBackForAll() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Films")
        let project = try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        try await ok(a, "share", "Films", "b")
        try await eventually("b has the folder") { try await sharedTree(b)["Films"] != nil }
        func deleted(_ daemon: StartedDaemon) async throws -> Bool? {
            let library = try #require(try await daemon.json("tree") as? [String: Any])
            guard let folder = (library["shared"] as? [[String: Any]] ?? []).first(where: { $0["name"] as? String == "Films" }) else { return nil }
            return folder["deletedAt"] != nil
        }
        try await ok(a, "folders", "delete", "Films")
        try await eventually("b sees it in the trash") { try await deleted(b) == true }
        #expect(!(try await ok(b, "tree").contains("Films/")))
        #expect(try await ok(b, "tree", "--trash").contains("Films/  (a shared folder, deleted for everyone)"))
        #expect(try await ok(a, "tree", "--trash").contains("Trash\n  Films/"))
        #expect(try role(of: project, on: b) == "editor", "the projects in it are not gone")
        // b, an editor, brings it back for everyone; a's entry follows out of the trash.
        try await ok(b, "folders", "restore", "Films")
        try await eventually("a's entry is back") { try await ok(a, "tree").hasPrefix("Films/  (shared folder)") }
        #expect(try await deleted(b) == false)
    }

    @Test func aReadOnlyFolderShareMakesEveryProjectInItReadOnlyThere() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let c = try await StartedDaemon.start(name: "c")
        defer { c.stop() }
        try await pair(a, "a", c, "client")
        try await ok(a, "folders", "create", "Review")
        let board = try await ok(a, "projects", "create", "Pitch", "--folder", "Review")
        try await ok(a, "scenes", "add", board, "--title", "Opening")
        try await ok(a, "share", "Review", "client", "--read-only")
        try await eventually("the client holds it as a reader") { try role(of: board, on: c) == "reader" }
        let later = try await ok(a, "projects", "create", "Pitch v2", "--folder", "Review")
        try await eventually("what is added later is read-only there too") { try role(of: later, on: c) == "reader" }
        // Its edits are refused where it is made, before anything is stored.
        let edit = try await storyteller(["scenes", "add", board, "--title", "Mine", "--socket", c.socket])
        #expect(edit.status == 1 && edit.errors.contains("read"), "\(edit.errors)")
        let create = try await storyteller(["projects", "create", "Sneak", "--folder", "Review", "--socket", c.socket])
        #expect(create.status == 1, "a reader cannot file into the folder: \(create.errors)")
    }

    @Test func aFolderShareMadeReadOnlyMakesItsProjectsReadOnlyToo() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Shows")
        try await ok(a, "folders", "create", "Night Train", "--in", "Shows")
        let board = try await ok(a, "projects", "create", "Pitch", "--folder", "Shows/Night Train")
        let loose = try await ok(a, "projects", "create", "Loose", "--folder", "Shows")
        let direct = try await ok(a, "projects", "create", "Direct", "--folder", "Shows")
        try await ok(a, "share", "Direct", "b")
        try await ok(a, "share", "Shows", "b")
        try await eventually("b edits all of it") {
            try [board, loose, direct].allSatisfy { try role(of: $0, on: b) == "editor" }
        }
        // The share turns read-only: what b has only through it turns read-only with it.
        try await ok(a, "share", "Shows", "b", "--read-only")
        try await eventually("b only reads the folder's projects now") {
            try role(of: board, on: b) == "reader" && role(of: loose, on: b) == "reader"
        }
        #expect(try role(of: direct, on: b) == "editor", "shared directly read-write: that share still holds")
        let edit = try await storyteller(["scenes", "add", board, "--title", "Mine", "--socket", b.socket])
        #expect(edit.status == 1 && edit.errors.contains("read"), "\(edit.errors)")
        let why = try #require(try await a.json("shares", "list", "--peer", "b") as? [[String: Any]])
        #expect(why.first { $0["document"] as? String == board }?["role"] as? String == "reader", "\(why)")
        // And back: read-write again raises them again.
        try await ok(a, "share", "Shows", "b")
        try await eventually("b edits them again") { try role(of: board, on: b) == "editor" && role(of: loose, on: b) == "editor" }
    }

    @Test func offersWaitForAUserWhenThePeerIsNotTrustedToShareFreely() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        #expect(try await ok(b, "peers", "set", "a", "--auto-accept", "off").contains("wait in `storyteller shares pending`"))
        let peers = try #require(try await b.json("peers") as? [[String: Any]])
        #expect(peers.first?["autoAccept"] as? Bool == false)

        let first = try await ok(a, "projects", "create", "Offered")
        let second = try await ok(a, "projects", "create", "Unwanted")
        try await ok(a, "share", first, "b")
        try await ok(a, "share", second, "b")
        try await eventually("both wait on b") {
            let pending = try await ok(b, "shares", "pending")
            return pending.contains("Unwanted") && pending.contains("Offered")
        }
        #expect(try role(of: first, on: b) == "none", "nothing is taken before a user says so")

        #expect(try await ok(b, "shares", "accept", "Offered").contains("accepted Offered"))
        try await eventually("the accepted one syncs") { try role(of: first, on: b) == "editor" }
        #expect(try await ok(b, "shares", "decline", "Unwanted").contains("declined Unwanted"))
        #expect(!(try await ok(b, "shares", "pending").contains("Unwanted")))
        // The peer offering it again (a reconnect) is ignored.
        try await ok(b, "peers", "pause", "a")
        try await ok(b, "peers", "resume", "a")
        // A positive marker that must come after the reconnect's offers: an
        // edit a makes now reaches b only over the new connection, after
        // a advertised (and so offered) everything on it.
        try await ok(a, "scenes", "add", first, "--title", "After the reconnect")
        try await eventually("a's edit after the reconnect reached b") { try await ok(b, "scenes", "list", first).contains("After the reconnect") }
        let pendingNow = try await ok(b, "shares", "pending")
        let secondRole = try role(of: second, on: b)
        #expect(!pendingNow.contains("Unwanted") && secondRole == "none")
        let unknown = try await storyteller(["shares", "accept", "Nothing", "--socket", b.socket])
        #expect(unknown.status == 64 && unknown.errors.contains("no offer 'Nothing'"))
    }
}

/// A folder of a thousand projects shared with a new peer at once, its
/// catch-up cut by a SIGKILL of either side: after a restart it resumes and
/// completes, nothing lost or doubled, every project acknowledged, and
/// nothing outside the folder sent.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct FolderCatchUpTests {
    /// Projects in the shared folder `Shows/Night Train` (half of them in its subfolder `Reel 2`).
    static let projects = 1_000
    /// Projects of a's library outside it, which must never reach b.
    static let outside = 3

    /// Project changes a daemon holds, from its status (only those shared with `peer`, when given).
    private func changes(_ daemon: StartedDaemon, sharedWith peer: String? = nil) throws -> Int {
        try projectsInStatus(daemon).filter { project in
            peer.map { peer in (project["peers"] as? [[String: Any]] ?? []).contains { $0["peer"] as? String == peer } } ?? true
        }.reduce(0) { $0 + ($1["changes"] as? Int ?? 0) }
    }

    private func projectsInStatus(_ daemon: StartedDaemon) throws -> [[String: Any]] {
        let status = try daemon.client.get("/v1/status").json as? [String: Any]
        return (status?["sync"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "project" }
    }

    private func projectCount(_ daemon: StartedDaemon) throws -> Int {
        (try daemon.client.get("/v1/projects").json as? [Any])?.count ?? -1
    }

    /// Whether `sender` has heard `peer` acknowledge every change of every project of the folder.
    private func acknowledgedEverything(_ sender: StartedDaemon, by peer: String) throws -> Bool {
        let shared = try projectsInStatus(sender).compactMap { project -> [String: Any]? in
            (project["peers"] as? [[String: Any]] ?? []).first { $0["peer"] as? String == peer }
        }
        return shared.count == Self.projects && shared.allSatisfy { $0["behind"] as? Int == 0 }
    }

    /// a with its library written straight into its database (fast, and no
    /// load on the machine while other tests run): `Shows/Night Train` holding
    /// the projects (one stroke each), half of them in `Shows/Night Train/Reel 2`,
    /// and a few projects elsewhere. The daemon opens that library when it starts.
    private func seeded() async throws -> StartedDaemon {
        let home = try TemporaryDirectory()
        do {
            let store = try Store(path: home.path + "/storyteller.sqlite", identity: try TestIdentities.signing(in: home.path + "/identity"))
            let points = (0..<40).map { Point(x: 0.1 + Double($0) / 100, y: 0.5, pressure: 1) }
            let (inside, elsewhere) = (Self.projects, Self.outside)
            try await store.batch { store in
                var boards: [(DocumentID, String)] = []
                for index in 0..<(inside + elsewhere) {
                    let name = index < inside ? "Board \(index)" : "Elsewhere \(index - inside)"
                    let id = try store.createDocument(kind: .project, name: name, at: 1)
                    _ = try store.editProject(id, at: 2) { editor in
                        let scene = try editor.insertScene(at: 0)
                        let shot = try editor.insertShot(in: scene, at: 0)
                        let layer = try editor.insertLayer(in: shot, at: 0)
                        _ = try editor.addStroke(to: layer, brush: Brush(), points: points)
                    }
                    boards.append((id, name))
                }
                let library = try store.createDocument(kind: .library, name: "Library", at: 1)
                let entries = boards
                _ = try store.editLibrary(library, at: 3) { editor in
                    let shows = try editor.createFolder(named: "Shows")
                    let night = try editor.createFolder(named: "Night Train", in: shows)
                    let reel = try editor.createFolder(named: "Reel 2", in: night)
                    for (index, (id, name)) in entries.enumerated() {
                        let folder = index >= inside ? OpID.root : index < inside / 2 ? night : reel
                        _ = try editor.createProjectEntry(named: name, document: id, in: folder)
                    }
                }
                try store.setSetting("library", to: library.description)
            }
        }
        return try await StartedDaemon.start(in: home, name: "a")
    }

    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    @Test(arguments: ["receiver", "sender"])
    func aFolderCatchUpCutBySIGKILLResumesAndCompletes(killed side: String) async throws {
        let started = ContinuousClock.now
        var a = try await seeded()
        defer { a.stop() }
        var b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        let (aID, bID) = (try a.peerID(), try b.peerID())
        let ready = ContinuousClock.now
        // b reaches a through a proxy that holds the connection after 256 KiB
        // from a (of about 700): the catch-up stops in the middle
        // however fast the machine, and the SIGKILL comes then. a does not dial b.
        let proxy = try await CuttingProxy(to: try a.port(), cutAfter: 256 << 10, stall: true, group: Self.group)
        #expect(try await a.cli("peers", "add", bID, "--name", "b").status == 0)
        #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(proxy.port)", "--name", "a").status == 0)
        let share = try await a.cli("share", "Shows/Night Train", "b")
        #expect(share.status == 0 && share.output.contains("shared folder Shows/Night Train with b"), "\(share.errors)")
        let shared = ContinuousClock.now
        try await eventually("part of the folder reached b, and the proxy holds", timeout: .seconds(60)) { try proxy.isCut && changes(b) > 0 }
        if side == "receiver" {
            b.daemon.kill()
            let partial = try await storedChanges(in: b.home)
            #expect(partial > 0 && partial < 3 * Self.projects, "cut in the middle (\(partial) changes)")
            b = try await StartedDaemon.start(in: b.home, name: "b")
            #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())").status == 0)
        } else {
            let partial = try changes(b)
            a.daemon.kill()
            #expect(partial > 0 && partial < 3 * Self.projects, "cut in the middle (\(partial) changes)")
            a = try await StartedDaemon.start(in: a.home, name: "a")
            #expect(try await b.cli("peers", "add", aID, "--address", "127.0.0.1:\(try a.port())").status == 0)
        }
        await proxy.close()
        let resumed = ContinuousClock.now
        // Every project's changes, the shares (one signed change each) among them.
        let total = try changes(a, sharedWith: bID)
        #expect(total >= 3 * Self.projects)
        try await eventually("b holds all of it", timeout: .seconds(120)) { try changes(b) == total && projectCount(b) == Self.projects }
        let held = ContinuousClock.now
        try await eventually("a heard b acknowledge all of it", timeout: .seconds(60)) { try acknowledgedEverything(a, by: bID) }
        let acknowledged = ContinuousClock.now
        // Nothing doubled, nothing from outside the folder: each project has its one stroke on b.
        let listed = try #require(try b.client.get("/v1/projects").json as? [[String: Any]])
        #expect(listed.allSatisfy { ($0["name"] as? String)?.hasPrefix("Board ") == true }, "only the folder's projects reached b")
        let strokes = listed.prefix(20).map { project -> Int in
            let body = (try? b.client.get("/v1/projects/\(project["id"] as? String ?? "")").json) as? [String: Any]
            let shots = (body?["scenes"] as? [[String: Any]] ?? []).flatMap { $0["shots"] as? [[String: Any]] ?? [] }
            return shots.flatMap { $0["layers"] as? [[String: Any]] ?? [] }.reduce(0) { $0 + (($1["strokes"] as? [Any])?.count ?? 0) }
        }
        #expect(strokes.allSatisfy { $0 == 1 }, "\(strokes)")
        // b shows the folder under its name, with its subfolder and every project.
        let tree = try #require(try await b.json("tree") as? [String: Any])
        let folder = try #require((tree["shared"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "Night Train" })
        let nodes = folder["nodes"] as? [[String: Any]] ?? []
        #expect(nodes.filter { $0["kind"] as? String == "project" }.count == Self.projects)
        #expect(nodes.contains { $0["kind"] as? String == "folder" && $0["name"] as? String == "Reel 2" })
        if ProcessInfoShim.verbose {
            print(
                "folder catch-up, \(side) killed: daemons \(ready - started), share \(shared - ready), cut and restart \(resumed - shared), "
                    + "rest held \(held - resumed), acknowledged \(acknowledged - held), in all \(ContinuousClock.now - started)")
        }
    }

    /// Project changes stored in a stopped daemon's database.
    private func storedChanges(in home: TemporaryDirectory) async throws -> Int {
        let store = try Store(path: home.path + "/storyteller.sqlite", identity: try TestIdentities.signing(in: home.path + "/identity"))
        var total = 0
        for record in try await store.documents() where record.kind == .project {
            total += Int(try await store.storedVersion(of: record.id).totalChanges)
        }
        return total
    }
}
