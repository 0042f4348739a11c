import StoryCore
import StoryIdentity
import StoryStore
import StoryTestSupport
import StoryWireClient
import Testing

@testable import StorySync

/// Tags between two real sync stacks over TLS on 127.0.0.1: changes made
/// apart merge as an observed-remove set, the receiving store's tag index
/// follows, and a peer that cannot decode tags is refused at Hello.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct TagSyncTests {
    @Test func tagsMadeApartMergeAndTheReceiversIndexFollows() async throws {
        let a = try await SyncNode("a")
        let b = try await SyncNode("b")
        defer {
            a.remove()
            b.remove()
        }
        try await a.start()
        try await b.start()
        try await a.pair(with: b)
        try await b.pair(with: a)
        let (id, _) = try await makeSharedProject(on: a, with: [b])
        try await eventually("b has the project", nodes: [a, b]) { await inSync(a, b, id) }

        _ = try await a.store.editProject(id, at: 3) { try $0.addTag("Night") }
        try await eventually("b has a's tag") { (try? await b.store.project(id).view.tags) == ["Night"] }
        #expect(try await b.store.projects(taggedWith: "night") == [id], "the change from a peer updates b's index")

        // Apart: b removes the tag it saw while a adds it again; the add survives.
        await a.stop()
        _ = try await b.store.editProject(id, at: 4) { try $0.removeTag("night") }
        #expect(try await b.store.projects(taggedWith: "night").isEmpty)
        _ = try await a.store.editProject(id, at: 5) { try $0.addTag("NIGHT") }
        try await a.start()
        try await eventually("the two merge") { await inSync(a, b, id) }
        #expect(try await a.store.project(id).view.tags == ["NIGHT"])
        #expect(try await b.store.project(id).view == (try await a.store.project(id).view))
        #expect(try await b.store.projects(taggedWith: "Night") == [id])
        await a.stop()
        await b.stop()
    }

    /// Issue 36, item 13 made protocol 5 (which write a text field shows):
    /// a peer still on 4 is refused, told in words to upgrade, and this
    /// daemon says in `peers` which side to upgrade.
    @Test func aPeerOfTheProtocolBeforeTheLatestWriterWinsIsToldToUpgrade() async throws {
        let (a, b, hostile, _, _) = try await HostilePeerTests.setUp()
        defer {
            a.remove()
            b.remove()
        }
        _ = try await HostilePeer.session(to: a.port, as: hostile, helloVersion: 4) { peer in
            try await peer.expect("an error naming the side to upgrade") { message in
                guard case .error(SyncError.Code.protocolVersion.rawValue, let text) = message else { return false }
                return text.contains("newer than your 4: upgrade Storyteller on your machine")
            }
        }
        try await eventually("a says which side to upgrade") {
            await a.manager.upgradeNeeded[hostile.peerID]?.contains("older than this Storyteller's 5: upgrade Storyteller on the peer") == true
        }
        await a.stop()
        await b.stop()
    }

    @Test func aPeerOfTheProtocolBeforeTagsIsRefusedCleanly() async throws {
        let (a, b, hostile, _, _) = try await HostilePeerTests.setUp()
        defer {
            a.remove()
            b.remove()
        }
        try await HostilePeer.session(to: a.port, as: hostile, helloVersion: 3) { peer in
            try await peer.expectRefusal(.protocolVersion)
        }
        await a.stop()
        await b.stop()
    }
}
