import Foundation
import StoryAPI
import Testing

/// Sharing a folder of the library with other machines: everything in it,
/// and whatever later goes in, follows; what leaves it, leaves; rights hold.
/// Real daemons on 127.0.0.1, driven through the CLI.
@Suite(.serialized) struct FolderShareTests {
    /// Runs the CLI and expects success; its output, trimmed.
    @discardableResult
    private func ok(_ daemon: StartedDaemon, _ arguments: String...) throws -> String {
        let result = try storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Pairs daemons both ways under the given names.
    private func pair(_ a: StartedDaemon, _ aName: String, _ b: StartedDaemon, _ bName: String) throws {
        try ok(a, "peers", "add", try b.peerID(), "--address", "127.0.0.1:\(try b.port())", "--name", bName)
        try ok(b, "peers", "add", try a.peerID(), "--address", "127.0.0.1:\(try a.port())", "--name", aName)
    }

    /// This daemon's role in a project (`none` when it does not have it).
    private func role(of project: String, on daemon: StartedDaemon) throws -> String {
        let response = try daemon.client.get("/v1/projects/\(project)?points=false")
        guard response.status == 200, let body = response.json as? [String: Any] else { return "none" }
        return body["role"] as? String ?? "none"
    }

    /// Names of the projects a daemon's tree shows under a shared folder named `folder`.
    private func sharedTree(_ daemon: StartedDaemon) throws -> [String: [String]] {
        let library = try #require(try daemon.json("tree") as? [String: Any])
        var result: [String: [String]] = [:]
        for shared in library["shared"] as? [[String: Any]] ?? [] {
            let nodes = shared["nodes"] as? [[String: Any]] ?? []
            result[shared["name"] as? String ?? "?"] = nodes.filter { $0["inTrash"] as? Bool != true }.compactMap { $0["name"] as? String }
        }
        return result
    }

    @Test func aSharedFolderTakesInWhatGoesInAndLetsGoWhatLeaves() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        try pair(a, "a", b, "b")

        try ok(a, "folders", "create", "Films")
        try ok(a, "folders", "create", "Shorts", "--in", "Films")
        let night = try ok(a, "projects", "create", "Night Train", "--folder", "Films")
        let dawn = try ok(a, "projects", "create", "Dawn", "--folder", "Films/Shorts")
        let secret = try ok(a, "projects", "create", "Private")
        // Dawn is also shared with b on its own: it stays when it leaves the folder.
        try ok(a, "share", "Dawn", "b")

        #expect(try ok(a, "share", "Films", "b").contains("shared folder Films with b"))
        try await eventually("b holds the folder's projects") {
            try role(of: night, on: b) == "editor" && role(of: dawn, on: b) == "editor"
        }
        try await eventually("b sees the folder under its name, with its nesting") {
            let tree = try sharedTree(b)
            return tree["Films"].map { Set($0) == ["Shorts", "Night Train", "Dawn"] } ?? false
        }
        #expect(try role(of: secret, on: b) == "none", "what is not in the folder stays here")
        let bTree = try ok(b, "tree")
        #expect(bTree.contains("Films/  (shared by a") && bTree.contains("  Shorts/") && bTree.contains("    Dawn  "), "\(bTree)")
        // a still sees its folder where it was (now a shared folder).
        #expect(try ok(a, "tree").contains("Films/  (shared folder)"))

        // Created in it, moved into it: they follow.
        let sequel = try ok(a, "projects", "create", "Night Train II", "--folder", "Films/Shorts")
        let loose = try ok(a, "projects", "create", "Loose")
        try ok(a, "folders", "move", "Loose", "--to", "Films")
        try await eventually("what went in reached b") { try role(of: sequel, on: b) == "editor" && role(of: loose, on: b) == "editor" }

        // b, an editor of the folder, files its own project in it: a gets it.
        let fromB = try ok(b, "projects", "create", "From b", "--folder", "Films")
        try await eventually("b's project reached a") { try role(of: fromB, on: a) == "editor" }

        // Moved out: b loses it, unless it has it another way (Dawn was shared directly).
        try ok(a, "folders", "move", "Films/Night Train", "--to", "root")
        try ok(a, "folders", "move", "Films/Shorts/Dawn", "--to", "root")
        try await eventually("b lost what left the folder") { try role(of: night, on: b) == "none" }
        #expect(try role(of: dawn, on: b) == "editor", "shared directly too: it stays")
        let why = try #require(try a.json("shares", "list", "--peer", "b") as? [[String: Any]])
        #expect(why.first { $0["document"] as? String == dawn }?["via"] as? [String] == ["direct"])
        #expect(why.first { $0["document"] as? String == sequel }?["via"] as? [String] == ["folder Films"])
        #expect(why.first { $0["document"] as? String == night } == nil)
        let table = try ok(a, "shares")
        #expect(table.contains("Films/") && table.contains("folder Films"), "\(table)")

        // Unsharing the folder takes it and what b has only through it.
        try ok(a, "unshare", "Films", "b")
        try await eventually("b lost the folder's projects") { try role(of: sequel, on: b) == "none" && role(of: loose, on: b) == "none" }
        #expect(try role(of: dawn, on: b) == "editor")
        #expect(try role(of: fromB, on: b) == "owner", "b keeps what it owns")
    }

    @Test func aReadOnlyFolderShareMakesEveryProjectInItReadOnlyThere() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let c = try await StartedDaemon.start(name: "c")
        defer { c.stop() }
        try pair(a, "a", c, "client")
        try ok(a, "folders", "create", "Review")
        let board = try ok(a, "projects", "create", "Pitch", "--folder", "Review")
        try ok(a, "scenes", "add", board, "--title", "Opening")
        try ok(a, "share", "Review", "client", "--read-only")
        try await eventually("the client holds it as a reader") { try role(of: board, on: c) == "reader" }
        let later = try ok(a, "projects", "create", "Pitch v2", "--folder", "Review")
        try await eventually("what is added later is read-only there too") { try role(of: later, on: c) == "reader" }
        // Its edits are refused where it is made, before anything is stored.
        let edit = try storyteller(["scenes", "add", board, "--title", "Mine", "--socket", c.socket])
        #expect(edit.status == 1 && edit.errors.contains("read"), "\(edit.errors)")
        let create = try storyteller(["projects", "create", "Sneak", "--folder", "Review", "--socket", c.socket])
        #expect(create.status == 1, "a reader cannot file into the folder: \(create.errors)")
    }

    @Test func offersWaitForAUserWhenThePeerIsNotTrustedToShareFreely() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b")
        defer { b.stop() }
        try pair(a, "a", b, "b")
        #expect(try ok(b, "peers", "set", "a", "--auto-accept", "off").contains("wait in `storyteller shares pending`"))
        let peers = try #require(try b.json("peers") as? [[String: Any]])
        #expect(peers.first?["autoAccept"] as? Bool == false)

        let first = try ok(a, "projects", "create", "Offered")
        let second = try ok(a, "projects", "create", "Unwanted")
        try ok(a, "share", first, "b")
        try ok(a, "share", second, "b")
        try await eventually("both wait on b") { try ok(b, "shares", "pending").contains("Unwanted") && ok(b, "shares", "pending").contains("Offered") }
        #expect(try role(of: first, on: b) == "none", "nothing is taken before a user says so")

        #expect(try ok(b, "shares", "accept", "Offered").contains("accepted Offered"))
        try await eventually("the accepted one syncs") { try role(of: first, on: b) == "editor" }
        #expect(try ok(b, "shares", "decline", "Unwanted").contains("declined Unwanted"))
        #expect(!(try ok(b, "shares", "pending").contains("Unwanted")))
        // The peer offering it again (a reconnect) is ignored.
        try ok(b, "peers", "pause", "a")
        try ok(b, "peers", "resume", "a")
        try await Task.sleep(for: .seconds(1))
        let pendingNow = try ok(b, "shares", "pending")
        let secondRole = try role(of: second, on: b)
        #expect(!pendingNow.contains("Unwanted") && secondRole == "none")
        let unknown = try storyteller(["shares", "accept", "Nothing", "--socket", b.socket])
        #expect(unknown.status == 64 && unknown.errors.contains("no offer 'Nothing'"))
    }
}
