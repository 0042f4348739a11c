import Foundation
import NIOPosix
import StoryClient
import StoryCore
import StoryIdentity
import StorySync
import StoryTestSupport
import StoryWireClient
import Testing

/// A peer given a folder read-only that writes to it anyway, built in the
/// test from the library types (a modified daemon: it signs with its own
/// key, gives itself rights, claims another replica). The folder is shared
/// by the daemon a, through `storyteller share FOLDER`, read-only with the
/// hostile peer and read-write with c; the hostile peer reaches c, a third
/// daemon that would relay an editor's changes on to a. Every daemon decides
/// from the access lists it holds, which the folder share wrote into the
/// folder and each of its projects as signed changes: c refuses as a does,
/// also when an editor (an accomplice) relays the reader's changes, nothing
/// of it is stored anywhere, and the honest daemons keep syncing.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct HostileFolderPeerTests {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Runs the CLI and expects success; its output, trimmed.
    @discardableResult
    private func ok(_ daemon: StartedDaemon, _ arguments: String...) async throws -> String {
        let result = try await storyteller(arguments + ["--socket", daemon.socket])
        #expect(result.status == 0, "\(arguments): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A document's entry in a daemon's status: its changes, and each configured member's role.
    private func status(of document: String, on daemon: StartedDaemon) throws -> (changes: Int, roles: [String: String])? {
        let status = try daemon.client.get("/v1/status").json as? [String: Any]
        guard let entry = (status?["sync"] as? [[String: Any]] ?? []).first(where: { $0["id"] as? String == document }) else { return nil }
        var roles: [String: String] = [:]
        for peer in entry["peers"] as? [[String: Any]] ?? [] { roles[peer["peer"] as? String ?? "?"] = peer["role"] as? String }
        return (entry["changes"] as? Int ?? -1, roles)
    }

    /// Opens a session to `port` as `identity`, takes what the daemon
    /// advertises to it (asking for everything of each), and returns the
    /// advertisements and the changes of each document it was sent.
    private func copies(from port: Int, as identity: Identity, of documents: [DocumentID]) async throws -> [DocumentID: [(EncodedChange, Change)]] {
        try await ProtocolClient.session(to: port, as: identity, group: Self.group) { peer in
            var result: [DocumentID: [(EncodedChange, Change)]] = [:]
            for document in documents {
                let advertised = try await peer.expect("an advertise of \(document)") {
                    if case .advertise(let ad) = $0 { ad.document == document } else { false }
                }
                guard case .advertise(let ad) = advertised else { continue }
                #expect(ad.role == .reader, "the daemon says the peer is a reader of \(document)")
                try await peer.send(.advertise(.init(document: document, kind: ad.kind, name: "", role: .reader, version: VersionVector())))
                try await peer.expect("the changes of \(document)") { if case .changes(document, _) = $0 { true } else { false } }
                try await peer.settle()
                result[document] = try peer.changes(of: document)
            }
            return result
        }
    }

    /// Sends `changes` of `document` and expects the daemon to refuse them as forbidden and close the connection.
    private func expectRefused(_ changes: [EncodedChange], of document: DocumentID, at port: Int, as identity: Identity, _ attack: String)
        async throws
    {
        try await ProtocolClient.session(to: port, as: identity, group: Self.group) { peer in
            try await peer.send(changes, of: document)
            let refusal = try await peer.expect("an error for \(attack)") { if case .error = $0 { true } else { false } }
            guard case .error(let code, let message) = refusal else { return }
            #expect(code == SyncError.Code.forbidden.rawValue, "\(attack): \(message)")
            #expect(await peer.waitUntilClosed(), "the daemon kept the connection open after \(attack)")
        }
    }

    @Test func aReadOnlyFolderPeersWritesAreRefusedByAThirdPeerAsByTheSharer() async throws {
        let a = try await StartedDaemon.start(name: "a")
        defer { a.stop() }
        let c = try await StartedDaemon.start(name: "c")
        defer { c.stop() }
        let hostile = try Identity.generate(commonName: "hostile")
        let h = hostile.peerID.description
        // Its accomplice, given the folder read-write: a relay whose own rights are not the author's.
        let relay = try Identity.generate(commonName: "relay")
        let r = relay.peerID.description
        try await ok(a, "peers", "add", try c.peerID(), "--address", "127.0.0.1:\(try c.port())", "--name", "c")
        try await ok(c, "peers", "add", try a.peerID(), "--address", "127.0.0.1:\(try a.port())", "--name", "a")
        // Both know the hostile peer (a crew member's laptop); neither dials it.
        try await ok(a, "peers", "add", h, "--name", "h")
        try await ok(c, "peers", "add", h, "--name", "h")
        try await ok(a, "peers", "add", r, "--name", "r")
        try await ok(c, "peers", "add", r, "--name", "r")

        try await ok(a, "folders", "create", "Shows")
        try await ok(a, "folders", "create", "Night Train", "--in", "Shows")
        let board = try await ok(a, "projects", "create", "Pitch", "--folder", "Shows/Night Train")
        try await ok(a, "scenes", "add", board, "--title", "Opening")
        try await ok(a, "share", "Shows/Night Train", "c")
        try await ok(a, "share", "Shows/Night Train", "h", "--read-only")
        try await ok(a, "share", "Shows/Night Train", "r")
        let library = try #require(try await a.json("tree") as? [String: Any])
        let entry = try #require((library["nodes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "Night Train" })
        let folderText = try #require(entry["folder"] as? String)
        let (project, folder) = (try #require(DocumentID(board)), try #require(DocumentID(folderText)))

        // c holds the folder and its project read-write, and knows from them that h only reads.
        try await eventually("c holds both, knowing h a reader") {
            guard let onC = try status(of: board, on: c), let folderOnC = try status(of: folderText, on: c) else { return false }
            let onA = try status(of: board, on: a)?.changes
            return onC.roles[h] == "reader" && folderOnC.roles[h] == "reader" && onC.roles[r] == "editor" && onC.changes == onA
        }
        #expect(try status(of: board, on: c)?.roles[try a.peerID()] == "owner")

        // The hostile peer takes its copies from c, as a reader would.
        let taken = try await copies(from: try c.port(), as: hostile, of: [project, folder])
        let signer = try hostile.signingIdentity
        var mine = ProjectDocument(id: project, author: LocalAuthor(identity: signer, nonce: 1)!)
        let projectChanges = try #require(taken[project])
        try mine.apply(batch: ChangeBatch.encode(projectChanges.map(\.0))[...])
        var mineFolder = LibraryDocument(id: folder, author: LocalAuthor(identity: signer, nonce: 1)!)
        try mineFolder.apply(batch: ChangeBatch.encode(try #require(taken[folder]).map(\.0))[...])
        #expect(mine.role(of: hostile.peerID) == .reader && mineFolder.role(of: hostile.peerID) == .reader)
        let title = (try await a.json("projects", "show", board) as? [String: Any])?["title"] as? String
        let owner = try #require(projectChanges.first?.1.replica, "the founding change is the owner's")

        let before = (try status(of: board, on: a)?.changes, try status(of: board, on: c)?.changes)
        let folderBefore = (try status(of: folderText, on: a)?.changes, try status(of: folderText, on: c)?.changes)
        let attacks: [(String, DocumentID, [EncodedChange])] = [
            // A reader's edit, signed by itself.
            (
                "a reader's edit of the project", project,
                try { () throws -> [EncodedChange] in
                    var copy = mine
                    copy.pretendToBeAnEditor()
                    return [try copy.edit(at: 9) { try $0.set(.title, to: .string("Hijacked")) }.change!]
                }()
            ),
            // Rights it gives itself, then an edit on them.
            (
                "a promotion of itself", project,
                try { () throws -> [EncodedChange] in
                    var copy = mine
                    let promotion = try copy.forge([.setAccess(peer: hostile.peerID, role: .editor)], at: 9)
                    copy.pretendToBeAnEditor()
                    return [promotion, try copy.edit(at: 10) { try $0.set(.title, to: .string("Hijacked")) }.change!]
                }()
            ),
            // A change as the owner's replica, signed with its own key.
            (
                "a change claiming the owner's replica", project,
                [
                    Change(
                        replica: owner, seq: mine.nextHeader(of: owner).seq, startCounter: mine.nextHeader(of: owner).counter, wallTime: 9,
                        dependencies: VersionVector(), operations: [.setField(object: .root, key: .title, value: .string("Hijacked"))]
                    ).forgedEncoding(signedBy: signer)
                ]
            ),
            // The folder itself: a subfolder of its own.
            (
                "a reader's edit of the folder", folder,
                try { () throws -> [EncodedChange] in
                    var copy = mineFolder
                    copy.pretendToBeAnEditor()
                    return [try copy.edit(at: 9) { try $0.createFolder(named: "Hijacked") }.change!]
                }()
            ),
        ]
        for (attack, document, changes) in attacks {
            try await expectRefused(changes, of: document, at: try c.port(), as: hostile, "\(attack), sent to c")
        }
        // Relayed by an editor (the accomplice, a member with write rights),
        // the reader's changes are still the reader's: refused all the same.
        for (attack, document, changes) in [attacks[0], attacks[3]] {
            try await expectRefused(changes, of: document, at: try c.port(), as: relay, "\(attack), relayed to c by an editor")
        }
        // The sharer refuses the same (the reader's edit and the claim of its replica).
        for (attack, document, changes) in [attacks[0], attacks[2]] {
            try await expectRefused(changes, of: document, at: try a.port(), as: hostile, "\(attack), sent to a")
        }

        // Nothing of it landed anywhere; the honest daemons sync on (c's edit reaches a).
        #expect(try status(of: board, on: a)?.changes == before.0 && status(of: board, on: c)?.changes == before.1)
        #expect(try status(of: folderText, on: a)?.changes == folderBefore.0 && status(of: folderText, on: c)?.changes == folderBefore.1)
        try await ok(c, "scenes", "add", board, "--title", "From c")
        try await eventually("c's edit reaches a") {
            let scenes = (try await a.json("projects", "show", board) as? [String: Any])?["scenes"] as? [[String: Any]] ?? []
            return scenes.contains { $0["title"] as? String == "From c" }
        }
        for daemon in [a, c] {
            let body = try #require(try await daemon.json("projects", "show", board) as? [String: Any])
            #expect(body["title"] as? String == title && title != "Hijacked")
            #expect(!(try await ok(daemon, "tree").contains("Hijacked")))
        }
        #expect(try status(of: board, on: a)?.changes == status(of: board, on: c)?.changes)
    }

    /// An editor of a shared folder files the id of the owner's private
    /// project into the folder (one signed library change, which the folder's
    /// access list lets it make). The entry grants nothing: it shows as
    /// unavailable to the owner, and the owner's next shares of the folder
    /// (with the planter, read-write, and with a third daemon, read-only)
    /// share what the folder really holds and not the private project; each
    /// share's answer lists exactly what was shared and names the planted
    /// entry with why it was left.
    @Test func aProjectFiledIntoASharedFolderByAnEditorWhoWasNeverGivenItIsSharedWithNobody() async throws {
        let (a, c) = try await StartedDaemon.startedPair("a", "c")
        defer {
            a.stop()
            c.stop()
        }
        let hostile = try Identity.generate(commonName: "hostile")
        let h = hostile.peerID.description
        try await ok(c, "peers", "set", try a.peerID(), "--auto-accept", "on")
        try await ok(a, "peers", "add", h, "--name", "h")

        try await ok(a, "folders", "create", "Shows")
        let pitch = try await ok(a, "projects", "create", "Pitch", "--folder", "Shows")
        let secret = try await ok(a, "projects", "create", "Secret diary")
        try await ok(a, "share", "Shows", "h")
        let tree = try #require(try await a.json("tree") as? [String: Any])
        let entry = try #require((tree["nodes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "Shows" })
        let folderText = try #require(entry["folder"] as? String)
        let folder = try #require(DocumentID(folderText))
        let secretID = try #require(DocumentID(secret))

        // The planter takes its copy of the folder, as the editor it is, and files the private project into it.
        let taken = try await ProtocolClient.session(to: try a.port(), as: hostile, group: Self.group) { peer in
            let advertised = try await peer.expect("an advertise of the folder") {
                if case .advertise(let ad) = $0 { ad.document == folder } else { false }
            }
            guard case .advertise(let ad) = advertised else { return [(EncodedChange, Change)]() }
            #expect(ad.role == .editor)
            try await peer.send(.advertise(.init(document: folder, kind: ad.kind, name: "", role: .editor, version: VersionVector())))
            try await peer.expect("the folder's changes") { if case .changes(folder, _) = $0 { true } else { false } }
            try await peer.settle()
            return try peer.changes(of: folder)
        }
        var mine = LibraryDocument(id: folder, author: LocalAuthor(identity: try hostile.signingIdentity, nonce: 1)!)
        try mine.apply(batch: ChangeBatch.encode(taken.map(\.0))[...])
        #expect(mine.localRole == .editor)
        let edit = try mine.edit(at: 9) { try $0.createProjectEntry(named: "Secret diary", document: secretID) }
        let plant = try #require(edit.change)
        let folderStatus = try status(of: folder.description, on: a)
        let before = try #require(folderStatus).changes
        let version = mine.versionVector
        try await ProtocolClient.session(to: try a.port(), as: hostile, group: Self.group) { peer in
            try await peer.expect("an advertise of the folder") { if case .advertise(let ad) = $0 { ad.document == folder } else { false } }
            try await peer.send(.advertise(.init(document: folder, kind: 2, name: "", role: .editor, version: version)))
            try await peer.send([plant], of: folder)
            try await eventually("a stores the editor's change to the folder") { try status(of: folder.description, on: a)?.changes == before + 1 }
        }

        // The owner sees the planted entry, unavailable, and saying why.
        let after = try #require(try await a.json("tree") as? [String: Any])
        let planted = try #require((after["nodes"] as? [[String: Any]] ?? []).first { $0["project"] as? String == secret && $0["library"] != nil })
        #expect(planted["available"] as? Bool == false)
        #expect((planted["unavailable"] as? String)?.contains(String(h.prefix(7))) == true, "\(planted)")
        let words = try await ok(a, "tree")
        #expect(words.contains("Secret diary  ") && words.contains("unavailable: filed by"), "\(words)")

        // The next shares of the folder share what it holds, and not the planted project.
        for (peer, mode) in [(try c.peerID(), "read-only"), (h, "read-write")] {
            let result = try await storyteller(
                ["share", "Shows", peer, "--json", "--socket", a.socket] + (mode == "read-only" ? ["--read-only"] : []))
            #expect(result.status == 0, "\(result.errors)")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            let shared = (body["shared"] as? [[String: Any]] ?? []).compactMap { $0["document"] as? String }
            let left = body["notShared"] as? [[String: Any]] ?? []
            #expect(shared == [pitch], "\(mode) share with \(peer.prefix(7)): \(body)")
            #expect(left.count == 1 && left.first?["document"] as? String == secret, "\(body)")
            #expect((left.first?["reason"] as? String)?.contains("never given it") == true, "\(body)")
        }
        let answer = try await ok(a, "share", "Shows", "c", "--read-only")
        #expect(answer.contains("not shared:") && answer.contains("Secret diary"), "\(answer)")
        // The private project stays private: a alone is its member.
        let secretStatus = try status(of: secret, on: a)
        let members = try #require(secretStatus).roles
        #expect(members.isEmpty, "the private project is shared with \(members)")
        // c receives the folder and Pitch (a positive marker), never the private project.
        try await eventually("c receives Pitch") {
            ((try await c.json("projects") as? [[String: Any]]) ?? []).contains { $0["id"] as? String == pitch }
        }
        let onC = (try await c.json("projects") as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(!onC.contains(secret))
        #expect(try status(of: secret, on: c) == nil)
    }

    /// A paired peer advertises hundreds of made-up projects. Taken at once
    /// (auto-accept on), none shows anywhere (list, library, status) until
    /// its founding change arrives and checks out: none does. Kept for a user
    /// (auto-accept off), at most 200 wait; the rest are dropped, oldest
    /// first, and `shares pending` says how many. The daemon serves on.
    @Test func anOfferFloodShowsNothingAndTheOffersWaitingAreBounded() async throws {
        let a = try await StartedDaemon.start(name: "a", ["--no-discovery"])
        defer { a.stop() }
        let taker = try Identity.generate(commonName: "flood taken")
        let keeper = try Identity.generate(commonName: "flood kept")
        try await ok(a, "peers", "add", taker.peerID.description, "--name", "taken")
        try await ok(a, "peers", "set", taker.peerID.description, "--auto-accept", "on")
        try await ok(a, "peers", "add", keeper.peerID.description, "--name", "kept")
        let own = try await ok(a, "projects", "create", "Own board")
        var random = SeededGenerator(seed: 36)
        for identity in [taker, keeper] {
            let made = (0..<600).map { _ in DocumentID(high: random.next(), low: random.next()) }
            try await ProtocolClient.session(to: try a.port(), as: identity, group: Self.group) { peer in
                for (index, document) in made.enumerated() {
                    try await peer.send(
                        .advertise(.init(document: document, kind: 1, name: "Free money \(index)", role: .owner, version: VersionVector())))
                }
                // A ping answered after the last advertise: every offer was handled.
                try await peer.send(.ping(99))
                try await peer.expect("the pong after the offers", timeout: .seconds(180)) { if case .pong(99) = $0 { true } else { false } }
            }
        }
        let projects = try #require(try await a.json("projects") as? [[String: Any]])
        #expect(projects.compactMap { $0["id"] as? String } == [own], "\(projects.count) projects listed")
        #expect(!(try await ok(a, "tree")).contains("Free money"))
        let status = try #require(try a.client.get("/v1/status").json as? [String: Any])
        #expect(status["projects"] as? Int == 1)
        #expect(!((status["sync"] as? [[String: Any]]) ?? []).contains { ($0["name"] as? String)?.hasPrefix("Free money") == true })
        let pending = try #require(try await a.json("shares", "pending") as? [[String: Any]])
        #expect(pending.count == 200, "\(pending.count) offers wait")
        #expect(pending.allSatisfy { $0["peer"] as? String == keeper.peerID.description })
        // The newest were kept.
        #expect(pending.contains { $0["name"] as? String == "Free money 599" } && !pending.contains { $0["name"] as? String == "Free money 0" })
        let words = try await ok(a, "shares", "pending")
        #expect(words.contains("400 older offer(s) from kept were dropped"), "\(words)")
        try await ok(a, "scenes", "add", own)
    }
}
