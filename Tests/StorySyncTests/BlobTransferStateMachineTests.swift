import StoryCore
import StoryStore
import StoryTestSupport
import Testing

@testable import StorySync

/// Blob fetching's decisions without a store, a clock or a socket: the
/// source, the window, timeouts, bad chunks, refusals and their backoff.
@Suite struct BlobTransferStateMachineTests {
    static let alice = PeerID(digest: (0..<32).map { UInt8($0) })!
    static let bob = PeerID(digest: (0..<32).map { UInt8(255 - $0) })!
    static let film = DocumentID(high: 0xF11, low: 1)
    static let other = DocumentID(high: 0xF11, low: 2)
    static let hash = BlobHash(Array(repeating: 0x5A, count: 32))!
    /// 10 chunks of 100 bytes, the last of 50.
    static let media = MediaReference(hash: hash, type: .png, byteCount: 950)
    static let manifest = Message.BlobManifest(
        hash: hash, byteCount: 950, type: .png, chunkSize: 100, chunks: (0..<10).map { BlobHash(Array(repeating: UInt8($0), count: 32))! })
    static let start = ContinuousClock.now

    static func machine(window: Int = 4) -> BlobTransferStateMachine {
        BlobTransferStateMachine(limits: .init(window: window))
    }

    /// A machine fetching `media` from alice with its manifest stored and nothing held.
    static func fetching(window: Int = 4) -> BlobTransferStateMachine {
        var machine = machine(window: window)
        machine.start(media, documents: [film], source: alice, document: film, isVerifying: false, now: start)
        do {
            let answer = machine.manifestArrived(manifest, from: alice)
            #expect(answer == .store)
        }
        machine.manifestStored(manifest, from: alice, missing: Array(0..<10))
        return machine
    }

    @Test func aHolderIsPreferredAndAPeerThatFailedIsSkippedUntilItsWaitIsOver() {
        var machine = Self.machine()
        let links = [(peer: Self.alice, documents: [Self.film]), (peer: Self.bob, documents: [Self.film])]
        // Neither is known to hold it: the order is stable (by peer id).
        let first = machine.chooseSource(Self.hash, documents: [Self.film], links: links, now: Self.start)
        #expect(first?.document == Self.film)
        let notFirst = first?.peer == Self.alice ? Self.bob : Self.alice
        machine.peerHas([Self.hash], notFirst)
        #expect(machine.chooseSource(Self.hash, documents: [Self.film], links: links, now: Self.start)?.peer == notFirst)
        machine.giveUp(Self.hash, on: notFirst, now: Self.start)
        #expect(machine.chooseSource(Self.hash, documents: [Self.film], links: links, now: Self.start)?.peer == first?.peer)
        // After retryAfter (30 s) it may be asked again; a link sharing no referencing document never is.
        _ = machine.expire(now: Self.start + .seconds(31))
        #expect(machine.chooseSource(Self.hash, documents: [Self.film], links: links, now: Self.start + .seconds(31))?.peer == notFirst)
        #expect(machine.chooseSource(Self.hash, documents: [Self.other], links: links, now: Self.start) == nil)
    }

    @Test func refusalsWaitTwiceAsLongEachTimeUpToTheRetryLimit() {
        var machine = Self.machine()
        machine.start(Self.media, documents: [Self.film], source: Self.alice, document: Self.film, isVerifying: false, now: Self.start)
        do {
            let answer = machine.refused(Self.hash, by: Self.alice, now: Self.start)
            #expect(answer, "the transfer from alice ended")
        }
        #expect(machine.failures[Self.hash]?[Self.alice] == Self.start + .seconds(2))
        do {
            let answer = machine.refused(Self.hash, by: Self.alice, now: Self.start)
            #expect(!answer, "no transfer was left to end")
        }
        #expect(machine.failures[Self.hash]?[Self.alice] == Self.start + .seconds(4))
        for _ in 0..<6 { _ = machine.refused(Self.hash, by: Self.alice, now: Self.start) }
        #expect(machine.failures[Self.hash]?[Self.alice] == Self.start + .seconds(30))
        // Saying it has the blob clears the refusals: the next one waits 2 s again.
        machine.peerHas([Self.hash], Self.alice)
        #expect(machine.failures[Self.hash]?[Self.alice] == nil)
        _ = machine.refused(Self.hash, by: Self.alice, now: Self.start)
        #expect(machine.failures[Self.hash]?[Self.alice] == Self.start + .seconds(2))
        #expect(machine.holders[Self.hash]?.contains(Self.alice) != true, "a refusal is not holding")
    }

    @Test func theWindowKeepsFourChunksInFlightInOrder() {
        var machine = Self.fetching()
        #expect(machine.transfers[Self.hash]?.heldBytes == 0)
        let first = machine.nextRequest(Self.hash, now: Self.start)
        #expect(first?.chunks == [0, 1, 2, 3])
        #expect(first?.source == Self.alice && first?.document == Self.film && first?.chunkSize == 100)
        do {
            let answer = machine.nextRequest(Self.hash, now: Self.start)
            #expect(answer == nil, "the window is full")
        }
        do {
            let answer = machine.chunkArrived(Self.hash, index: 1, byteCount: 100, from: Self.alice)
            #expect(answer != nil)
        }
        do {
            let answer = machine.chunkArrived(Self.hash, index: 1, byteCount: 100, from: Self.alice)
            #expect(answer == nil, "a duplicate is dropped")
        }
        do {
            let answer = machine.chunkArrived(Self.hash, index: 2, byteCount: 100, from: Self.bob)
            #expect(answer == nil, "not asked of bob")
        }
        do {
            let answer = machine.chunkArrived(Self.hash, index: 7, byteCount: 100, from: Self.alice)
            #expect(answer == nil, "not asked for")
        }
        do {
            let answer = machine.nextRequest(Self.hash, now: Self.start)?.chunks
            #expect(answer == [4])
        }
    }

    @Test func aResumedTransferAsksOnlyForWhatIsMissingAndCountsWhatIsHeld() {
        var machine = Self.machine()
        machine.start(Self.media, documents: [Self.film], source: Self.alice, document: Self.film, isVerifying: false, now: Self.start)
        machine.manifestStored(Self.manifest, from: Self.alice, missing: [3, 9])
        #expect(machine.transfers[Self.hash]?.heldBytes == 950 - 100 - 50)
        do {
            let answer = machine.nextRequest(Self.hash, now: Self.start)?.chunks
            #expect(answer == [3, 9])
        }
        #expect(machine.holders[Self.hash] == [Self.alice])
    }

    @Test func progressIsReportedEveryTenthAndNotForTheLastChunk() {
        var machine = Self.fetching(window: 10)
        _ = machine.nextRequest(Self.hash, now: Self.start)
        var reports: [UInt64] = []
        for index in 0..<10 {
            let size = index == 9 ? 50 : 100
            _ = machine.chunkArrived(Self.hash, index: UInt32(index), byteCount: size, from: Self.alice)
            if let held = machine.chunkHeld(Self.hash, byteCount: size, isLast: index == 9) { reports.append(held) }
        }
        #expect(reports == [100, 200, 300, 400, 500, 600, 700, 800, 900])
        #expect(machine.transfers[Self.hash]?.isDone == true)
        do {
            let answer = machine.finished(Self.hash)?.received
            #expect(answer == 950)
        }
        #expect(machine.transfers.isEmpty)
    }

    @Test func badChunksAreAskedForAgainThenThePeerIsGivenUp() {
        var machine = Self.fetching()
        _ = machine.nextRequest(Self.hash, now: Self.start)
        for attempt in 1...4 {
            _ = machine.chunkArrived(Self.hash, index: 0, byteCount: 100, from: Self.alice)
            do {
                let answer = machine.chunkMismatched(Self.hash, index: 0)
                #expect(answer == .askAgain, "bad chunk \(attempt)")
            }
            do {
                let answer = machine.nextRequest(Self.hash, now: Self.start)?.chunks
                #expect(answer == [0])
            }
        }
        _ = machine.chunkArrived(Self.hash, index: 0, byteCount: 100, from: Self.alice)
        do {
            let answer = machine.chunkMismatched(Self.hash, index: 0)
            #expect(answer == .giveUp(badChunks: 5))
        }
        do {
            let answer = machine.giveUp(Self.hash, on: Self.alice, now: Self.start)
            #expect(answer)
        }
        #expect(machine.transfers.isEmpty)
    }

    @Test func lateChunksAndUnansweredManifestsAreAskedForAgain() {
        var machine = Self.fetching()
        machine.start(
            MediaReference(hash: BlobHash(Array(repeating: 0x77, count: 32))!, type: .wav, byteCount: 10), documents: [Self.film],
            source: Self.bob, document: Self.film, isVerifying: false, now: Self.start)
        _ = machine.nextRequest(Self.hash, now: Self.start)
        _ = machine.chunkArrived(Self.hash, index: 0, byteCount: 100, from: Self.alice)
        #expect(machine.nextCheck(now: Self.start) == .seconds(20))
        let early = machine.expire(now: Self.start + .seconds(19))
        #expect(early.manifests.isEmpty && early.chunks.isEmpty)
        let late = machine.expire(now: Self.start + .seconds(21))
        #expect(late.chunks == [Self.hash])
        #expect(late.manifests == [BlobHash(Array(repeating: 0x77, count: 32))!])
        // Asked again: the three that were late and the next one, the window full again.
        do {
            let answer = machine.nextRequest(Self.hash, now: Self.start + .seconds(21))?.chunks.sorted()
            #expect(answer == [1, 2, 3, 4])
        }
        do {
            let answer = machine.expire(now: Self.start + .seconds(22)).manifests.isEmpty
            #expect(answer, "the manifest was asked again at 21 s")
        }
    }

    @Test func aManifestThatDoesNotMatchTheReferenceIsRejectedAndOneFromAnotherPeerIgnored() {
        var machine = Self.machine()
        machine.start(Self.media, documents: [Self.film], source: Self.alice, document: Self.film, isVerifying: false, now: Self.start)
        do {
            let answer = machine.manifestArrived(Self.manifest, from: Self.bob)
            #expect(answer == .ignore)
        }
        var bigger = Self.manifest
        bigger.byteCount = 951
        do {
            let answer = machine.manifestArrived(bigger, from: Self.alice)
            #expect(answer == .reject)
        }
        var sound = Self.manifest
        sound.type = .wav
        do {
            let answer = machine.manifestArrived(sound, from: Self.alice)
            #expect(answer == .reject)
        }
        do {
            let answer = machine.manifestArrived(Self.manifest, from: Self.alice)
            #expect(answer == .store)
        }
    }

    @Test func verifyingChecksTheChunkCountAndMarksADifference() {
        var machine = Self.machine()
        machine.start(Self.media, documents: [Self.film], source: Self.alice, document: Self.film, isVerifying: true, now: Self.start)
        var short = Self.manifest
        short.chunks.removeLast()
        do {
            let answer = machine.manifestArrived(short, from: Self.alice)
            #expect(answer == .reject)
        }
        do {
            let answer = machine.manifestArrived(Self.manifest, from: Self.alice)
            #expect(answer == .verify)
        }
        do {
            let answer = machine.nextRequest(Self.hash, now: Self.start)?.chunks
            #expect(answer == [0, 1, 2, 3])
        }
        _ = machine.chunkArrived(Self.hash, index: 0, byteCount: 100, from: Self.alice)
        do {
            let answer = machine.chunkCompared(Self.hash, from: Self.alice, matchesHeld: true)
            #expect(answer)
        }
        #expect(machine.transfers[Self.hash]?.differs == false)
        _ = machine.chunkArrived(Self.hash, index: 1, byteCount: 100, from: Self.alice)
        do {
            let answer = machine.chunkCompared(Self.hash, from: Self.alice, matchesHeld: false)
            #expect(answer)
        }
        #expect(machine.transfers[Self.hash]?.differs == true)
    }

    @Test func aDisconnectEndsThatPeersTransfersOnly() {
        var machine = Self.fetching()
        let soundHash = BlobHash(Array(repeating: 0x42, count: 32))!
        machine.start(
            MediaReference(hash: soundHash, type: .wav, byteCount: 10), documents: [Self.film], source: Self.bob, document: Self.film,
            isVerifying: false, now: Self.start)
        do {
            let answer = machine.detached(Self.alice)
            #expect(answer == [Self.hash])
        }
        #expect(Set(machine.transfers.keys) == [soundHash])
        do {
            let answer = machine.replacedLink(to: Self.bob)
            #expect(answer == [soundHash])
        }
        #expect(machine.transfers.isEmpty)
    }

    /// Random arrivals, losses, timeouts and refusals: the window is never
    /// exceeded, a chunk is never both missing and outstanding, and every
    /// transfer that keeps its peer ends with every chunk received once.
    @Test(arguments: 0..<40) func randomArrivalsNeverOverfillTheWindowAndEveryChunkArrivesOnce(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var machine = Self.fetching(window: 3)
        var now = Self.start
        var received: [UInt32: Int] = [:]
        var inFlight: [UInt32] = []
        var gaveUp = false
        for _ in 0..<2_000 {
            guard let transfer = machine.transfers[Self.hash], !transfer.isDone else { break }
            #expect(transfer.outstanding.count <= 3)
            #expect(Set(transfer.missing).isDisjoint(with: transfer.outstanding.keys), "seed \(seed)")
            if let request = machine.nextRequest(Self.hash, now: now) { inFlight += request.chunks }
            now += .seconds(Int64(random.next() % 8))
            switch random.next() % 10 {
            case 0 where !inFlight.isEmpty:
                inFlight.remove(at: Int(random.next() % UInt64(inFlight.count)))  // lost on the way
            case 1 where !inFlight.isEmpty:
                let index = inFlight[Int(random.next() % UInt64(inFlight.count))]
                if machine.chunkArrived(Self.hash, index: index, byteCount: 100, from: Self.alice) != nil {
                    inFlight.removeAll { $0 == index }
                    if case .giveUp = machine.chunkMismatched(Self.hash, index: index) {
                        do {
                            let answer = machine.giveUp(Self.hash, on: Self.alice, now: now)
                            #expect(answer)
                        }
                        gaveUp = true
                    }
                }
            default:
                guard !inFlight.isEmpty else {
                    for hash in machine.expire(now: now).chunks { #expect(hash == Self.hash) }
                    continue
                }
                let index = inFlight.removeFirst()
                if machine.chunkArrived(Self.hash, index: index, byteCount: 100, from: Self.alice) != nil {
                    received[index, default: 0] += 1
                    _ = machine.chunkHeld(Self.hash, byteCount: 100, isLast: false)
                }
            }
        }
        if let transfer = machine.transfers[Self.hash] {
            #expect(transfer.isDone, "seed \(seed): \(transfer.missing.count) missing, \(transfer.outstanding.count) outstanding")
            #expect(received.keys.sorted() == Array(0..<10), "seed \(seed)")
            #expect(received.values.allSatisfy { $0 == 1 }, "seed \(seed): each chunk stored once")
        } else {
            // Only more than four bad chunks end it, and alice waits before she is asked again.
            #expect(gaveUp, "seed \(seed)")
            #expect(machine.failures[Self.hash]?[Self.alice] == now + .seconds(30), "seed \(seed)")
        }
    }
}
