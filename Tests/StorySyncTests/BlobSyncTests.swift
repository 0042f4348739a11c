import Foundation
import StoryCore
import StoryIdentity
import StoryMedia
import StoryStore
import StoryTestSupport
import StoryWireClient
import Synchronization
import Testing

@testable import StorySync

/// Images and sounds between real sync stacks over TLS on 127.0.0.1: a blob
/// a shared project references reaches the peers that share it, byte for
/// byte; a bad copy on one peer is fetched again from another; nobody gets a
/// blob of a project not shared with it; an old peer is refused cleanly.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct BlobSyncTests {
    /// Stores `bytes` on `node` as `images add` does, and puts it in a new image layer of `shot`.
    static func addImage(_ bytes: [UInt8], to project: DocumentID, shot: OpID, on node: SyncNode, at time: Int64 = 10) async throws -> MediaReference
    {
        let file = node.directory + "/upload-\(UUID())"
        _ = FileManager.default.createFile(atPath: file, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let info = try MediaProbe.probe(BytesMediaSource(bytes))
        let record = try await node.blobs.importFile(atPath: file, type: info.type)
        let media = MediaReference(
            hash: record.hash, type: info.type, byteCount: record.byteCount, pixelWidth: info.pixelWidth, pixelHeight: info.pixelHeight)
        _ = try await node.store.editProject(project, at: time) { editor in
            let layer = try editor.insertLayer(in: shot, at: 0)
            try editor.set(.image, to: .media(media), on: layer)
        }
        // The bytes were uploaded into this project (as the control API records).
        try await node.store.proveBlobReference(media.hash, in: project)
        return media
    }

    /// The bytes of a complete blob on a node, or nil.
    static func bytes(of hash: BlobHash, on node: SyncNode) async -> [UInt8]? {
        guard case .complete? = await node.blobs.record(hash)?.state else { return nil }
        return FileManager.default.contents(atPath: node.blobs.completePath(hash)).map { Array($0) }
    }

    static func shot(of project: DocumentID, on node: SyncNode) async throws -> OpID {
        try #require(try await node.store.project(project).view.shots.first?.id)
    }

    @Test func anImageReachesThePeerThatSharesItsProjectByteForByte() async throws {
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
        let (project, _) = try await makeSharedProject(on: a, with: [b])
        try await eventually("b has the project", nodes: [a, b]) { await inSync(a, b, project) }
        // Several chunks (256 KiB each), not a multiple of the chunk size.
        let picture = TestMedia.png(width: 700, height: 500, seed: 3)
        let events = b.manager.blobExchange!.events()
        let seen = Mutex<[BlobEvent]>([])
        let watcher = Task {
            for await event in events {
                seen.withLock { $0.append(event) }
                if case .completed = event { break }
            }
        }
        defer { watcher.cancel() }
        let media = try await Self.addImage(picture, to: project, shot: try await Self.shot(of: project, on: a), on: a)
        try await eventually("b holds the image", timeout: .seconds(30)) { await Self.bytes(of: media.hash, on: b) == picture }
        // What `watch` and the event stream report: started, progress, completed.
        try await eventually("b reported the transfer complete") {
            seen.withLock { $0.contains { if case .completed = $0 { true } else { false } } }
        }
        let reported = seen.withLock { $0 }
        let from = a.identity.peerID
        #expect(reported.first == .started(media.hash, from: from, bytes: UInt64(picture.count)))
        #expect(reported.last == .completed(media.hash, from: from, bytes: UInt64(picture.count)))
        #expect(reported.contains { if case .progressed(media.hash, from, _, UInt64(picture.count)) = $0 { true } else { false } })
        #expect(try await b.store.project(project).view.media == [media])
        // Added again elsewhere, it is stored once and not fetched again.
        let second = try await Self.addImage(picture, to: project, shot: try await Self.shot(of: project, on: a), on: a, at: 20)
        #expect(second.hash == media.hash)
        try await eventually("b has both layers") { await inSync(a, b, project) }
        #expect(await b.blobs.records().count == 1)
        await a.stop()
        await b.stop()
    }

    @Test func aBadCopyOnOnePeerIsFetchedAgainFromAnother() async throws {
        let a = try await SyncNode("a")
        let b = try await SyncNode("b")
        let c = try await SyncNode("c")
        defer {
            a.remove()
            b.remove()
            c.remove()
        }
        for node in [a, b, c] { try await node.start() }
        for (x, y) in [(a, b), (b, a), (a, c), (c, a), (b, c), (c, b)] { try await x.pair(with: y) }
        let (project, _) = try await makeSharedProject(on: a, with: [b, c])
        try await eventually("b and c have the project") {
            let bHas = await inSync(a, b, project)
            let cHas = await inSync(a, c, project)
            return bHas && cHas
        }
        let picture = TestMedia.png(width: 600, height: 400, seed: 5)
        let media = try await Self.addImage(picture, to: project, shot: try await Self.shot(of: project, on: a), on: a)
        try await eventually("b holds the image", timeout: .seconds(30)) { await Self.bytes(of: media.hash, on: b) == picture }
        try await eventually("c holds the image", timeout: .seconds(30)) { await Self.bytes(of: media.hash, on: c) == picture }
        // c goes away; b's copy goes bad on disk (a flipped byte in its second
        // chunk). A newcomer d, reaching only b and c, asks b first.
        await c.stop()
        let path = b.blobs.completePath(media.hash)
        var damaged = Array(FileManager.default.contents(atPath: path)!)
        damaged[300_000] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        let d = try await SyncNode("d")
        defer { d.remove() }
        try await d.start()
        let failures = d.manager.blobExchange!.events()
        let failedOnB = Mutex(false)
        let watcher = Task {
            for await event in failures {
                if case .failed(media.hash, let peer, _) = event, peer == b.identity.peerID {
                    failedOnB.withLock { $0 = true }
                    return
                }
            }
        }
        defer { watcher.cancel() }
        for (x, y) in [(b, d), (d, b), (c, d), (d, c)] { try await x.pair(with: y) }
        try await a.store.share(project, with: d.identity.peerID, role: .reader, at: 30)
        try await eventually("d gave b's bad copy up", timeout: .seconds(60)) { failedOnB.withLock { $0 } }
        #expect(await Self.bytes(of: media.hash, on: d) == nil, "nothing unverified is kept")
        // c is back: d fetches the good bytes from it.
        try await c.start()
        try await eventually("d holds the image, good bytes only", timeout: .seconds(60)) { await Self.bytes(of: media.hash, on: d) == picture }
        for node in [a, b, c, d] { await node.stop() }
    }

    /// A peer that refuses a blob (it does not hold it yet, or does not yet
    /// know the project is shared with this daemon) is asked again soon,
    /// sooner each time less: a refusal is not the long penalty a bad copy gets.
    @Test func aRefusedBlobIsAskedForAgainSoonNotAfterTheFailurePenalty() async throws {
        var exchange = BlobExchangeConfiguration()
        exchange.retryAfter = .seconds(600)
        exchange.refusalRetryAfter = .milliseconds(200)
        let asked = try await Self.requests(
            toAHolderThat: { peer, hash in
                try await peer.send(.blobUnavailable(hash: hash, reason: "this daemon does not hold it (yet)"))
            }, exchange: exchange)
        #expect(asked >= 3, "asked \(asked) times: a refusal waited out the 600 s failure penalty")
    }

    /// A manifest asked for and never answered (a message lost with a
    /// connection) is asked for again, not waited for forever.
    @Test func anUnansweredManifestRequestIsAskedAgain() async throws {
        var exchange = BlobExchangeConfiguration()
        exchange.chunkTimeout = .milliseconds(300)
        let asked = try await Self.requests(toAHolderThat: { _, _ in }, exchange: exchange)
        #expect(asked >= 3, "asked \(asked) times: an unanswered manifest request was never asked again")
    }

    /// How often a node (with `exchange`) asks a scripted peer for a blob
    /// only that peer may hold, up to 3 times within 30 s; the peer answers
    /// each request with `answer`.
    static func requests(
        toAHolderThat answer: @escaping @Sendable (ProtocolClient, BlobHash) async throws -> Void, exchange: BlobExchangeConfiguration
    ) async throws -> Int {
        let a = try await SyncNode("a", blobExchange: exchange)
        defer { a.remove() }
        try await a.start()
        let holder = try Identity.generate(commonName: "holder")
        try await a.store.addPeer(holder.peerID, name: "holder", at: 1)
        let (project, layer) = try await makeSharedProject(on: a, with: [])
        try await a.store.share(project, with: holder.peerID, role: .editor, at: 3)
        // a's project references a picture a does not hold: only the holder may have it.
        let hash = try #require(BlobHash(Array(repeating: 0x5A, count: 32)))
        let media = MediaReference(hash: hash, type: .png, byteCount: 1_000, pixelWidth: 10, pixelHeight: 10)
        _ = try await a.store.editProject(project, at: 4) { try $0.set(.image, to: .media(media), on: layer) }
        let asked = try await HostilePeer.session(to: a.port, as: holder) { peer in
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "Night Train", role: .editor, version: VersionVector())))
            var answered = 0
            var limit = TestDeadline(.seconds(30))
            while answered < 3, !limit.hasPassed() {
                let asked = peer.messages.filter { if case .blobRequest(let request) = $0 { request.hash == hash } else { false } }.count
                for _ in answered..<max(answered, asked) { try await answer(peer, hash) }
                answered = max(answered, asked)
                try await Task.sleep(for: .milliseconds(20))
            }
            return answered
        }
        await a.stop()
        return asked
    }

    @Test func nobodyGetsABlobOfAProjectNotSharedWithThem() async throws {
        let (a, b, hostile, project, _) = try await HostilePeerTests.setUp()
        defer {
            a.remove()
            b.remove()
        }
        let picture = TestMedia.png(width: 64, height: 64, seed: 7)
        let media = try await Self.addImage(picture, to: project, shot: try await Self.shot(of: project, on: a), on: a)
        // A project of the hostile peer's own, shared with a: a name it can put in a request.
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            // It knows the project's id and the blob's hash, and asks.
            try await peer.send(.blobRequest(.init(document: project, hash: media.hash, manifest: true, chunks: [0])))
            try await peer.expect("a refusal") {
                if case .blobUnavailable(media.hash, _) = $0 { true } else { false }
            }
            #expect(!peer.messages.contains { if case .blobManifest = $0 { true } else if case .blobChunk = $0 { true } else { false } })
            // A hash no document references: the same answer, nothing learned.
            let unknown = BlobHash(Array(repeating: 0xAB, count: 32))!
            try await peer.send(.blobRequest(.init(document: project, hash: unknown, manifest: true, chunks: [])))
            try await peer.expect("a refusal of the unknown hash") {
                if case .blobUnavailable(unknown, _) = $0 { true } else { false }
            }
        }
        try await eventually("b, which shares it, still gets it", timeout: .seconds(30)) { await Self.bytes(of: media.hash, on: b) == picture }
        await a.stop()
        await b.stop()
    }

    /// Knowing a hash grants nothing (docs/protocol.md, "Blobs"): an editor
    /// of a shared project makes it reference the picture a daemon holds only
    /// for a private project of its own, and a hash nobody holds. The daemon
    /// asks for both alike (asking does not tell what it holds), serves
    /// neither, answers both requests the same, never says it has the
    /// picture, and a third member that gets the reference gets no bytes.
    @Test func aHashAloneGrantsNothingAndAskingTellsNothing() async throws {
        let (a, b, hostile, project, _) = try await HostilePeerTests.setUp()
        defer {
            a.remove()
            b.remove()
        }
        // a's private project, with a picture uploaded into it.
        let (secret, _) = try await makeSharedProject(on: a, with: [])
        let picture = TestMedia.png(width: 48, height: 32, seed: 21)
        let media = try await Self.addImage(picture, to: secret, shot: try await Self.shot(of: secret, on: a), on: a)
        // The shared project (b is a member) is shared with the hostile peer too, read-write.
        try await a.store.share(project, with: hostile.peerID, role: .editor, at: 6)
        var copy = try await HostilePeerTests.copy(of: project, from: a, as: hostile)
        let shot = try #require(copy.view.shots.first?.id)
        let unknown = MediaReference(
            hash: BlobHash(Array(repeating: 0xC3, count: 32))!, type: .png, byteCount: UInt64(picture.count), pixelWidth: 48, pixelHeight: 32)
        let change = try #require(
            try copy.edit(at: 9) { editor in
                try editor.set(.image, to: .media(media), on: try editor.insertLayer(in: shot, at: 0))
                try editor.set(.image, to: .media(unknown), on: try editor.insertLayer(in: shot, at: 0))
            }.change)
        let failures = try #require(b.manager.blobExchange).events()
        try await HostilePeer.session(to: a.port, as: hostile) { peer in
            try await peer.expect("an advertise of the shared project") { if case .advertise(let ad) = $0 { ad.document == project } else { false } }
            try await peer.send(.advertise(.init(document: project, kind: 1, name: "", role: .owner, version: VersionVector())))
            try await peer.send([change], of: project)
            // a asks for both, the picture it holds as the hash nobody holds.
            for hash in [media.hash, unknown.hash] {
                try await peer.expect("a's request for \(hash)") {
                    if case .blobRequest(let request) = $0 { request.hash == hash && request.document == project && request.manifest } else { false }
                }
            }
            // Asked for them, it answers both the same, and sends no byte of the picture.
            var reasons: [String] = []
            for hash in [media.hash, unknown.hash] {
                try await peer.send(.blobRequest(.init(document: project, hash: hash, manifest: true, chunks: [0])))
                let refusal = try await peer.expect("a refusal of \(hash)") { if case .blobUnavailable(hash, _) = $0 { true } else { false } }
                if case .blobUnavailable(_, let reason) = refusal { reasons.append(reason) }
            }
            #expect(reasons.count == 2 && reasons[0] == reasons[1], "\(reasons)")
            #expect(
                !peer.messages.contains { message in
                    switch message {
                    case .blobManifest(let manifest): manifest.hash == media.hash
                    case .blobChunk(let hash, _, _): hash == media.hash
                    case .blobHave(_, let hashes): hashes.contains(media.hash)
                    default: false
                    }
                })
        }
        // b, a member of the shared project, gets the reference and asks a: refused, no bytes.
        let refused = Mutex(false)
        let watching = Task {
            for await event in failures {
                if case .failed(media.hash, let peer, _) = event, peer == a.identity.peerID { refused.withLock { $0 = true } }
            }
        }
        defer { watching.cancel() }
        try await eventually("a refuses b the picture", timeout: .seconds(30), nodes: [a, b]) { refused.withLock { $0 } }
        let onB = await b.blobs.record(media.hash)
        #expect(onB?.isComplete != true)
        #expect(try await b.store.blobReferences(of: project).contains { $0.hash == media.hash })
        await a.stop()
        await b.stop()
    }

    @Test func aPeerOfTheProtocolBeforeMediaIsRefusedCleanly() async throws {
        let (a, b, hostile, _, _) = try await HostilePeerTests.setUp()
        defer {
            a.remove()
            b.remove()
        }
        try await HostilePeer.session(to: a.port, as: hostile, helloVersion: 2) { peer in
            try await peer.expectRefusal(.protocolVersion)
        }
        await a.stop()
        await b.stop()
    }
}
