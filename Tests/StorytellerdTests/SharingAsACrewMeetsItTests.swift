import Foundation
import StoryClient
import StoryTestSupport
import Testing

/// Sharing and the trash as a crew meets them (issue 36, items 9 to 11):
/// a folder keeps its id and place when shared and nothing lands in the
/// trash; the trash of a shared folder is listed, restored by path, and
/// things come back where they were, whichever machine deleted or restores
/// them; a share made again after an unshare reaches a connected peer as
/// fast as an edit, and an unshare says what the peer keeps. Real daemons on
/// 127.0.0.1, driven through the CLI.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct SharingAsACrewMeetsItTests {
    @discardableResult
    private func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
        let result = try await storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func startedPair() async throws -> (StartedDaemon, StartedDaemon) { try await StartedDaemon.startedPair() }

    private func role(of project: String, on daemon: StartedDaemon) throws -> String {
        let response = try daemon.client.get("/v1/projects/\(project)?points=false")
        guard response.status == 200, let body = response.json as? [String: Any] else { return "none" }
        return body["role"] as? String ?? "none"
    }

    private func nodes(_ daemon: StartedDaemon) async throws -> [[String: Any]] {
        try #require(try await daemon.json("tree") as? [String: Any])["nodes"] as? [[String: Any]] ?? []
    }

    /// The path of each node of the tree (names joined by `/`), trash or not;
    /// the shared folders a peer shares with this daemon at the top, under their names.
    private func paths(_ daemon: StartedDaemon, inTrash: Bool = false) async throws -> [String] {
        let tree = try #require(try await daemon.json("tree") as? [String: Any])
        var all = tree["nodes"] as? [[String: Any]] ?? []
        var tops: [String: String] = [:]
        for shared in tree["shared"] as? [[String: Any]] ?? [] {
            all += shared["nodes"] as? [[String: Any]] ?? []
            tops["\(shared["id"] as? String ?? ""):root"] = shared["name"] as? String
        }
        var byID: [String: [String: Any]] = [:]
        for node in all { byID[node["id"] as? String ?? ""] = node }
        return all.filter { ($0["inTrash"] as? Bool ?? false) == inTrash }.map { node in
            var names = [node["name"] as? String ?? "?"]
            var parent = node["parent"] as? String
            for _ in 0..<32 {
                guard let id = parent else { break }
                if let top = tops[id] {
                    names.insert(top, at: 0)
                    break
                }
                guard let up = byID[id] else { break }
                names.insert(up["name"] as? String ?? "?", at: 0)
                parent = up["parent"] as? String
            }
            return names.joined(separator: "/")
        }
    }

    @Test func aFolderKeepsItsIdAndPlaceWhenSharedAndNothingGoesToTheTrash() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Before")
        let films = try #require(try await a.json("folders", "create", "Films") as? [String: Any])["id"] as? String
        try await ok(a, "folders", "create", "After")
        try await ok(a, "folders", "create", "Shorts", "--in", "Films")
        try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        let order = try await nodes(a).filter { $0["depth"] as? Int == 0 && $0["inTrash"] as? Bool != true }.compactMap { $0["name"] as? String }
        #expect(order == ["Before", "Films", "After"], "\(order)")

        try await ok(a, "share", "Films", "b")
        try await eventually("b sees the folder, with what it holds") { try await paths(b).contains("Films/Shorts") }
        let after = try await nodes(a)
        let shown = after.filter { $0["depth"] as? Int == 0 && $0["inTrash"] as? Bool != true }
        #expect(shown.compactMap { $0["name"] as? String } == order, "same place among its siblings")
        #expect(shown.first { $0["name"] as? String == "Films" }?["id"] as? String == films, "the same id")
        #expect(!after.contains { $0["inTrash"] as? Bool == true }, "nothing in the trash")
        #expect(!(try await ok(a, "tree", "--trash")).contains("Trash"))
        // The id the CLI printed still names the folder, and so does its name.
        let byID = try #require(try a.client.get("/v1/library/nodes/\(films ?? "")").json as? [String: Any])
        #expect(byID["name"] as? String == "Films" && byID["folder"] != nil, "\(byID)")
        try await ok(a, "folders", "rename", films ?? "", "Films 2026")
        try await ok(a, "folders", "create", "Features", "--in", "Films 2026")
        let renamed = try await paths(a)
        #expect(renamed.contains("Films 2026/Shorts") && renamed.contains("Films 2026/Features"), "\(renamed)")
    }

    @Test func aSharedFoldersTrashIsListedRestoredByPathAndThingsComeBackWhereTheyWere() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        try await ok(a, "folders", "create", "Films")
        try await ok(a, "folders", "create", "Shorts", "--in", "Films")
        let dawn = try await ok(a, "projects", "create", "Dawn", "--folder", "Films/Shorts")
        try await ok(a, "share", "Films", "b")
        try await eventually("b holds Dawn") { try role(of: dawn, on: b) == "editor" }

        // A subfolder of the shared folder, deleted: in the trash, listed, restored by its path.
        try await ok(a, "folders", "delete", "Films/Shorts")
        let trash = try await ok(a, "tree", "--trash")
        #expect(trash.contains("Trash") && trash.contains("Shorts"), "\(trash)")
        try await ok(a, "folders", "restore", "Films/Shorts")
        #expect(try await paths(a).contains("Films/Shorts/Dawn"))

        // A project deleted on b and restored on a comes back in its subfolder, on both.
        try await eventually("b sees Dawn in Films/Shorts") { try await paths(b).contains("Films/Shorts/Dawn") }
        try await ok(b, "projects", "delete", dawn)
        try await eventually("a has Dawn in the trash") {
            ((try await a.json("projects", "list", "--deleted") as? [[String: Any]]) ?? []).contains {
                $0["id"] as? String == dawn && $0["deleted"] as? Bool == true
            }
        }
        try await ok(a, "projects", "restore", dawn)
        for daemon in [a, b] {
            try await eventually("Dawn is back in Films/Shorts") {
                let shown = try await paths(daemon)
                return shown.contains("Films/Shorts/Dawn") && !shown.contains("Films/Dawn")
            }
        }
    }

    @Test func aShareMadeAgainReachesAConnectedPeerAndAnUnshareSaysWhatItKeeps() async throws {
        let (a, b) = try await startedPair()
        defer {
            a.stop()
            b.stop()
        }
        let board = try await ok(a, "projects", "create", "Pitch")
        try await ok(a, "share", "Pitch", "b")
        try await eventually("b may edit Pitch") { try role(of: board, on: b) == "editor" }
        try await ok(a, "unshare", "Pitch", "b")
        try await eventually("b lost Pitch") { try role(of: board, on: b) != "editor" }
        try await ok(a, "share", "Pitch", "b")
        try await eventually("b may edit Pitch again, while connected", timeout: .seconds(20)) { try role(of: board, on: b) == "editor" }
        try await ok(b, "scenes", "add", board, "--title", "From b")
        try await eventually("b's edit reaches a") {
            ((try await a.json("projects", "show", board) as? [String: Any])?["scenes"] as? [[String: Any]] ?? []).contains {
                $0["title"] as? String == "From b"
            }
        }

        // A project b also has through a folder: unsharing it says what b keeps, and b agrees everywhere.
        try await ok(a, "folders", "create", "Films")
        let night = try await ok(a, "projects", "create", "Night Train", "--folder", "Films")
        try await ok(a, "share", "Films", "b")
        try await eventually("b may edit Night Train through the folder") { try role(of: night, on: b) == "editor" }
        // Shared on its own read-only too: that share sets b's role in it.
        try await ok(a, "share", "Night Train", "b", "--read-only")
        try await eventually("b reads Night Train") { try role(of: night, on: b) == "reader" }
        let words = try await ok(a, "unshare", "Night Train", "b")
        #expect(words.contains("keeps") && words.contains("Films"), "\(words)")
        // An edit made after the unshare reaches b: whatever the unshare sent came before it.
        try await ok(a, "scenes", "add", night, "--title", "After")
        try await eventually("b has the edit made after the unshare") {
            ((try await b.json("projects", "show", night) as? [String: Any])?["scenes"] as? [[String: Any]] ?? []).contains {
                $0["title"] as? String == "After"
            }
        }
        #expect(try role(of: night, on: b) == "editor")
        let tree = try await ok(b, "tree")
        #expect(!tree.contains("read-only for you"), "\(tree)")
    }
}
