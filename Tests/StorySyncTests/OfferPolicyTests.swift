import StoryCore
import Testing

@testable import StoryStore
@testable import StorySync

/// Offer consent without sockets: every branch of `OfferPolicy.decide`.
@Suite struct OfferPolicyTests {
    static let document = DocumentID(high: 0x0FFE2, low: 7)
    static let replica = ReplicaID(0xA11CE)

    static func offer(kind: UInt8 = 1, seq: UInt64 = 5) -> Message.Advertisement {
        var version = VersionVector()
        version[replica] = seq
        return Message.Advertisement(document: document, kind: kind, name: "Night Train", role: .editor, version: version)
    }

    static func record(_ kind: DocumentKind = .project) -> DocumentRecord {
        DocumentRecord(
            id: document, kind: kind, name: "Night Train", created: 1, isDeletedForEveryone: false, deletedBy: nil, deletedTime: nil,
            deletedSeen: nil, isHidden: false, hiddenAt: nil, changeCount: 3, snapshotVersion: nil, origin: nil)
    }

    static func vector(_ seq: UInt64) -> VersionVector {
        var version = VersionVector()
        version[replica] = seq
        return version
    }

    @Test func aNewDocumentIsTakenOrKeptAsThePeersAutoAcceptSays() {
        #expect(OfferPolicy.decide(Self.offer(), facts: OfferFacts(accepting: true)) == .take(.project))
        #expect(OfferPolicy.decide(Self.offer(kind: 2), facts: OfferFacts(accepting: false)) == .keep(.library))
        #expect(OfferPolicy.decide(Self.offer(kind: 9), facts: OfferFacts(accepting: true)) == .invalid)
    }

    @Test func aDocumentHeldHereIsNeverTakenByAdvertisingIt() {
        let held = OfferFacts(existing: Self.record(), accepting: true)
        #expect(OfferPolicy.decide(Self.offer(), facts: held) == .existing(.project))
        var shared = held
        shared.sharedRole = .reader
        #expect(OfferPolicy.decide(Self.offer(), facts: shared) == .shared(.project, .reader))
    }

    @Test func aPeerThatLostItsRightsWhileAwayIsToldOnce() {
        var facts = OfferFacts(existing: Self.record(), accepting: true)
        facts.farewell = Self.vector(8)
        #expect(OfferPolicy.decide(Self.offer(seq: 5), facts: facts) == .farewell(.project, upTo: Self.vector(8)))
        // It has everything up to the farewell: it knows; nothing more to say.
        #expect(OfferPolicy.decide(Self.offer(seq: 8), facts: facts) == .existingFarewellKnown(.project))
    }

    @Test func aPurgedDocumentComesBackOnlyWithChangesMadeSinceAndADeclinedOneNever() {
        let purged = PurgedRecord(id: Self.document, kind: .project, name: "Night Train", version: Self.vector(5), wasHidden: false, purged: 9)
        var facts = OfferFacts(purged: purged, accepting: true)
        #expect(OfferPolicy.decide(Self.offer(seq: 5), facts: facts) == .purged(purged))
        #expect(OfferPolicy.decide(Self.offer(seq: 6), facts: facts) == .take(.project))
        facts.declined = true
        #expect(OfferPolicy.decide(Self.offer(seq: 6), facts: facts) == .declined)
    }
}
