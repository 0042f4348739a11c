import Foundation
import StoryCore
import StoryIdentity
import StoryStore
import StoryTestSupport
import StoryWireClient
import Testing

@testable import StorySync

/// The attacks a hostile paired peer tried (issue 10), replayed over real
/// loopback TLS against a daemon's sync stack: each is refused, nothing of it
/// is stored, and honest peers keep syncing afterwards.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct HostilePeerTests {
    /// An honest pair (a owns the project, b edits it) and a hostile identity a knows as a peer.
    static func setUp(storeOptions: StoreOptions = StoreOptions()) async throws -> (
        a: SyncNode, b: SyncNode, hostile: Identity, project: DocumentID, layer: OpID
    ) {
        let a = try await SyncNode("a", storeOptions: storeOptions)
        let b = try await SyncNode("b")
        try await a.start()
        try await b.start()
        try await a.pair(with: b)
        try await b.pair(with: a)
        let (project, layer) = try await makeSharedProject(on: a, with: [b])
        try await eventually("b has the project", nodes: [a, b]) { await inSync(a, b, project) }
        let hostile = try Identity.generate(commonName: "hostile")
        try await a.store.addPeer(hostile.peerID, name: "hostile", at: 5)
        return (a, b, hostile, project, layer)
    }

    /// The hostile peer's own copy of the project, as a member's daemon would hold it.
    static func copy(of project: DocumentID, from node: SyncNode, as identity: Identity, nonce: UInt64 = 1) async throws -> ProjectDocument {
        var mine = ProjectDocument(id: project, author: LocalAuthor(identity: try identity.signingIdentity, nonce: nonce)!)
        try WireSync.send(from: try await node.store.project(project), to: &mine)
        return mine
    }

    /// Honest peers still sync both ways.
    static func honestPeersKeepSyncing(_ a: SyncNode, _ b: SyncNode, _ project: DocumentID, _ layer: OpID) async throws {
        let fromA = try await a.store.editProject(project, at: 50) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(50)) }.value
        let fromB = try await b.store.editProject(project, at: 51) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(51)) }.value
        try await eventually("honest edits still cross") {
            let onA = (try? await a.store.project(project).strokes(in: layer)) ?? []
            let onB = (try? await b.store.project(project).strokes(in: layer)) ?? []
            return onA.contains(fromB) && onB.contains(fromA)
        }
        try await eventually("a and b converge") { await inSync(a, b, project) }
    }

    @Test func anOfferOfADocumentItWasNeverGivenObtainsNothing() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        let before = try await a.store.version(of: project)
        let forged = try await Self.copy(of: project, from: a, as: hostile)
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            // It knows the id (say, from an old share) and offers it as if it were its own.
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "mine", role: .editor, version: VersionVector())))
            try await peer.settle()
            #expect(!peer.received(anythingOf: project), "the daemon sent a project it never shared")
            #expect(!peer.messages.contains { if case .advertise = $0 { true } else { false } })
            // Its changes to it are refused (the connection stays: a refusal, not a broken peer).
            var mine = forged
            mine.pretendToBeAnEditor()
            let change = try mine.edit(at: 9) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(9)) }.change!
            try await peer.send([change], of: project)
            try await peer.expectRefusal(.notShared, closing: false)
        }
        #expect(try await a.store.version(of: project) == before)
        #expect(try await !a.store.members(of: project).contains { $0.peer == hostile.peerID })
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }

    /// Snapshot parts are kept only from whoever could have written the
    /// snapshot, checked at the first part: a reader's are refused before a
    /// byte is kept; so are those of a peer offering a new document whose
    /// snapshot header names another owner. An editor that sends parts and
    /// never the last holds a few megabytes of memory (the rest waits on
    /// disk), given back when it hangs up; honest peers sync on.
    @Test func snapshotPartsAreRefusedAtTheFirstPartFromWhoeverCouldNotHaveWrittenThem() async throws {
        let budget = SnapshotBudget(memoryBytes: 16 << 20, diskBytes: 256 << 20)
        let a = try await SyncNode("a") { $0.snapshotBudget = budget }
        let b = try await SyncNode("b")
        defer {
            a.remove()
            b.remove()
        }
        try await a.start()
        try await b.start()
        try await a.pair(with: b)
        try await b.pair(with: a)
        let (project, layer) = try await makeSharedProject(on: a, with: [b])
        let hostile = try Identity.generate(commonName: "hostile")
        try await a.store.addPeer(hostile.peerID, name: "hostile", at: 5)
        try await a.store.share(project, with: hostile.peerID, role: .reader, at: 6)
        let part = [UInt8](repeating: 0x5A, count: 4 << 20)
        // A reader: refused at its first part.
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.expect("an advertise of the project") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            try await peer.send(.snapshotPart(document: project, kind: 1, total: 512 << 20, offset: 0, bytes: part[...]))
            try await peer.expectRefusal(.forbidden)
        }
        #expect(budget.heldBytes.memory == 0 && budget.heldBytes.disk == 0)
        // A new document it offers, with a snapshot whose header says someone else owns it.
        let stranger = try ProjectDocument.found(by: TestIdentities.author(31), at: 1)
        let foreign = stranger.document.snapshot()
        let offered = stranger.document.id
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.send(.advertise(.init(document: offered, kind: 1, name: "yours", role: .owner, version: VersionVector())))
            try await eventually("a takes the offer") { (try? await a.store.documentIfPresent(offered)) != nil }
            try await peer.send(.snapshotPart(document: offered, kind: 1, total: 512 << 20, offset: 0, bytes: foreign[...]))
            try await peer.expectRefusal(.forbidden)
        }
        #expect(budget.heldBytes.memory == 0 && budget.heldBytes.disk == 0)
        // An editor that never sends the last part: a few megabytes in memory, the rest on disk.
        try await a.store.share(project, with: hostile.peerID, role: .editor, at: 7)
        let mine = try await a.store.snapshot(of: project)
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.expect("an advertise of the project") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            var offset = 0
            for bytes in [mine[...], part[...], part[...], part[...], part[...]] {
                try await peer.send(.snapshotPart(document: project, kind: 1, total: 128 << 20, offset: UInt64(offset), bytes: bytes))
                offset += bytes.count
            }
            let sent = UInt64(offset)
            try await eventually("the parts are kept") { budget.heldBytes.disk > 0 }
            // Held: at most 8 MiB in memory; the disk taken covers the rest of the announced snapshot.
            #expect(budget.heldBytes.memory <= 8 << 20, "\(budget.heldBytes.memory) bytes in memory")
            #expect(budget.heldBytes.disk == (128 << 20) - UInt64(budget.heldBytes.memory) && sent > 16 << 20)
        }
        try await eventually("the parts are let go once the peer hangs up") { budget.heldBytes.memory == 0 && budget.heldBytes.disk == 0 }
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }

    @Test func anUnshareHoldsWhenTheUnsharedPeerComesBack() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        try await a.store.share(project, with: hostile.peerID, role: .editor, at: 6)
        let version = try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.expect("an advertise of the shared project") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            try await peer.expect("the project's changes") { if case .changes(project, _) = $0 { true } else { false } }
            // Unshared while connected: told so (the revocation comes), then nothing more.
            try await a.store.share(project, with: hostile.peerID, role: .none, at: 7)
            try await eventually("the revocation arrives") {
                try peer.changes(of: project).contains { pair in
                    pair.1.operations.contains { if case .setAccess(hostile.peerID, .none) = $0 { true } else { false } }
                }
            }
            var version = VersionVector()
            for (_, change) in try peer.changes(of: project) where change.seq > version[change.replica] { version[change.replica] = change.seq }
            return version
        }
        let after = try await a.store.editProject(project, at: 8) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(8)) }
        // Back, advertising what it has: it is not a member, so it gets nothing new.
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: version)))
            try await peer.settle()
            #expect(!peer.received(anythingOf: project), "an unshared peer got the project again")
        }
        #expect(after.change != nil)
        #expect(try await a.store.members(of: project).allSatisfy { $0.peer != hostile.peerID })
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }

    @Test func forgedAuthorshipAndRightsAreRefusedAndNobodyGetsANewReplicaID() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        try await a.store.share(project, with: hostile.peerID, role: .reader, at: 6)
        let before = try await a.store.version(of: project)
        let (replicaA, replicaB) = (await a.store.replicaID, await b.store.replicaID)
        let copy = try await Self.copy(of: project, from: a, as: hostile)
        let signer = try hostile.signingIdentity
        let attacks: [(String, [EncodedChange])] = [
            // A reader's edit, signed by itself.
            (
                "a reader's edit",
                try { () throws -> [EncodedChange] in
                    var mine = copy
                    mine.pretendToBeAnEditor()
                    return [try mine.edit(at: 9) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(9)) }.change!]
                }()
            ),
            // A change under the daemon's own replica id, with its next sequence number.
            (
                "a change as the daemon itself",
                [
                    Change(
                        replica: replicaA, seq: copy.nextHeader(of: replicaA).seq, startCounter: copy.nextHeader(of: replicaA).counter, wallTime: 9,
                        dependencies: VersionVector(), operations: [.setField(object: .root, key: .title, value: .string("mine"))]
                    ).forgedEncoding(signedBy: signer)
                ]
            ),
            // One pre-empting the honest editor's next change.
            (
                "a change as the editor",
                [
                    Change(
                        replica: replicaB, seq: copy.nextHeader(of: replicaB).seq, startCounter: copy.nextHeader(of: replicaB).counter, wallTime: 9,
                        dependencies: VersionVector(), operations: [.setField(object: .root, key: .title, value: .string("mine"))]
                    ).forgedEncoding(signedBy: signer)
                ]
            ),
            // Rights it gives itself.
            (
                "a promotion of itself",
                try { () throws -> [EncodedChange] in
                    var mine = copy
                    return [try mine.forge([.setAccess(peer: hostile.peerID, role: .editor)], at: 9)]
                }()
            ),
        ]
        for (attack, changes) in attacks {
            try await HostilePeer.session(to: a.port, as: hostile) { peer in
                try await peer.send(changes, of: project)
                try await peer.expectRefusal(.forbidden)
            }
            #expect(try await a.store.version(of: project) == before, "\(attack) changed the project")
        }
        // A snapshot from a reader is refused too, whatever it holds.
        var snapshotted = copy
        snapshotted.pretendToBeAnEditor()
        _ = try snapshotted.edit(at: 10) { try $0.set(.title, to: .string("snapshot title")) }
        let snapshot = snapshotted.snapshot()
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.send(.snapshot(document: project, kind: 1, bytes: snapshot[...]))
            try await peer.expectRefusal(.forbidden)
        }
        // A bare claim of having seen a million of a's changes changes nothing.
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector([replicaA: 1_000_000]))))
            try await peer.send(.ack(document: project, version: VersionVector([replicaA: 1_000_000])))
            try await peer.settle()
        }
        #expect(try await a.store.version(of: project) == before)
        #expect(try await a.store.project(project).view.title == "Night Train")
        let (afterA, afterB) = (await a.store.replicaID, await b.store.replicaID)
        #expect(afterA == replicaA && afterB == replicaB, "no replica id was reissued on a claim")
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }

    @Test func aReadersEditsDoNotReachTheOwnerThroughAnEditor() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        // The editor b makes the hostile identity a reader, and knows it as a peer; a does not talk to it.
        try await b.store.addPeer(hostile.peerID, name: "hostile", at: 5)
        try await b.store.share(project, with: hostile.peerID, role: .reader, at: 6)
        try await eventually("a learns the reader") { try await a.store.project(project).role(of: hostile.peerID) == .reader }
        var mine = try await Self.copy(of: project, from: b, as: hostile)
        mine.pretendToBeAnEditor()
        let change = try mine.edit(at: 9) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(9)) }.change!
        try await HostilePeer.session(to: b.port, as: hostile) { peer in
            try await peer.send([change], of: project)
            try await peer.expectRefusal(.forbidden)
        }
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        #expect(try await a.store.project(project).strokes(in: layer).count == 2, "only the honest strokes")
        let (onA, onB) = (try await a.store.version(of: project), try await b.store.version(of: project))
        #expect(onA[mine.replica] == 0 && onB[mine.replica] == 0)
        await a.stop()
        await b.stop()
    }

    /// A reader of a shared folder (a library document of its own) that
    /// writes to it anyway, through an editor that relays: refused there, and
    /// never reaches the owner; the folder's project is read-only to it too.
    @Test func aReaderOfASharedFolderChangesNothingThroughAnEditor() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        let folder = try await a.store.createDocument(kind: .library, name: "Films", at: 7)
        _ = try await a.store.editLibrary(folder, at: 8) { _ = try $0.createProjectEntry(named: "Night Train", document: project) }
        try await a.store.share(folder, with: b.identity.peerID, role: .editor, at: 9)
        try await eventually("b has the folder") { await inSync(a, b, folder) }
        // b, an editor of the folder, makes the hostile identity a reader of it and of its project.
        try await b.store.addPeer(hostile.peerID, name: "hostile", at: 10)
        try await b.store.share(folder, with: hostile.peerID, role: .reader, at: 11)
        try await b.store.share(project, with: hostile.peerID, role: .reader, at: 11)
        try await eventually("a learns the reader") { try await a.store.library(folder).role(of: hostile.peerID) == .reader }
        var mine = LibraryDocument(id: folder, author: LocalAuthor(identity: try hostile.signingIdentity, nonce: 1)!)
        try WireSync.send(from: try await b.store.library(folder), to: &mine)
        mine.pretendToBeAnEditor()
        let change = try mine.edit(at: 12) { try $0.createFolder(named: "Hijacked") }.change!
        try await HostilePeer.session(to: b.port, as: hostile) { peer in
            try await peer.send([change], of: folder)
            try await peer.expectRefusal(.forbidden)
        }
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        _ = try await b.store.editLibrary(folder, at: 13) { _ = try $0.createFolder(named: "Honest") }
        try await eventually("the folder syncs on between honest peers") {
            (try? await a.store.library(folder).view.nodes.contains { $0.name == "Honest" }) == true
        }
        for node in [a, b] {
            #expect(try await node.store.library(folder).view.nodes.allSatisfy { $0.name != "Hijacked" })
            #expect(try await node.store.version(of: folder)[mine.replica] == 0)
        }
        await a.stop()
        await b.stop()
    }

    @Test func heldBackChangesBeyondTheBoundsCloseTheConnectionAndAreDropped() async throws {
        var options = StoreOptions()
        options.heldBackPerDocument = HeldBackLimits(changes: 30, bytes: 1 << 20)
        let (a, b, hostile, project, layer) = try await Self.setUp(storeOptions: options)
        defer {
            a.remove()
            b.remove()
        }
        try await a.store.share(project, with: hostile.peerID, role: .editor, at: 6)
        // Two replicas of the hostile identity: the second's changes depend on a change of the first that is never sent.
        var first = try await Self.copy(of: project, from: a, as: hostile, nonce: 1)
        var second = try await Self.copy(of: project, from: a, as: hostile, nonce: 2)
        _ = try first.edit(at: 9) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(9)) }
        try WireSync.send(from: first, to: &second)
        let base = second.versionVector
        for index in 0..<40 { _ = try second.edit(at: 10) { try $0.addStroke(to: layer, brush: Brush(), points: stroke(index)) } }
        guard case .changes(let waiting) = second.changes(since: base) else { throw SyncTestError.snapshotRequired }
        let before = try await a.store.version(of: project)
        let secondReplica = second.replica
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            for start in stride(from: 0, to: waiting.count, by: 10) {
                try await peer.send(Array(waiting[start..<min(start + 10, waiting.count)]), of: project)
            }
            try await peer.expectRefusal(.heldBackLimit)
            // Nothing held back was acknowledged.
            for case .ack(project, let version) in peer.messages { #expect(version[secondReplica] == 0) }
        }
        #expect(try await a.store.version(of: project) == before)
        try await eventually("what it left held back is dropped") { await a.store.heldBackBytes == 0 }
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }

    @Test func aStrokeLongerThanTheAPIAllowsIsRefusedAtTheWire() async throws {
        let (a, b, hostile, project, layer) = try await Self.setUp()
        defer {
            a.remove()
            b.remove()
        }
        try await a.store.share(project, with: hostile.peerID, role: .editor, at: 6)
        var mine = try await Self.copy(of: project, from: a, as: hostile)
        let points = (0..<(1 << 20)).map { Point(x: Double($0 % 100) / 100, y: 0.5, pressure: 1) }
        let huge = try mine.forge([.addStroke(layer: layer, brush: Brush(), points: PointsBlob(encoding: points))], at: 9)
        let before = try await a.store.version(of: project)
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.send([huge], of: project)
            try await peer.expectRefusal(.malformed)
        }
        #expect(try await a.store.version(of: project) == before)
        try await Self.honestPeersKeepSyncing(a, b, project, layer)
        await a.stop()
        await b.stop()
    }
}
