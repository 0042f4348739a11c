import StoryCore
import Testing

@testable import StorySync

@Suite struct SessionStateMachineTests {
    typealias Machine = SyncSessionStateMachine
    let doc = DocumentID(high: 1, low: 1)
    let now = ContinuousClock.now

    func machine(acceptsTheirChanges: Bool = true, documents: [DocumentID]? = nil) -> Machine {
        Machine(
            configuration: .init(localName: "a", pingInterval: .seconds(10), idleTimeout: .seconds(30)),
            documents: (documents ?? [doc]).map { .init(id: $0, kind: 1, acceptsTheirChanges: acceptsTheirChanges) })
    }

    func established(acceptsTheirChanges: Bool = true) -> Machine {
        var machine = machine(acceptsTheirChanges: acceptsTheirChanges)
        _ = machine.start(now: now)
        _ = machine.receive(.hello(version: 1, name: "b", capabilities: []), now: now)
        return machine
    }

    @Test func helloFirstThenAdvertiseEveryDocument() {
        var machine = machine(documents: [doc, DocumentID(high: 2, low: 2)])
        #expect(machine.start(now: now) == [.send(.hello(version: 1, name: "a", capabilities: []))])
        let actions = machine.receive(.hello(version: 1, name: "b", capabilities: ["x"]), now: now)
        #expect(actions == [.advertise(doc), .advertise(DocumentID(high: 2, low: 2))])
        #expect(machine.isEstablished && machine.peerName == "b")
    }

    @Test func anotherProtocolVersionIsRefusedWithAnError() {
        var machine = machine()
        _ = machine.start(now: now)
        let actions = machine.receive(.hello(version: 2, name: "b", capabilities: []), now: now)
        guard case .send(.error(let code, _)) = actions.first, case .close(let error) = actions.last else {
            Issue.record("expected an error and a close, got \(actions)")
            return
        }
        #expect(code == SyncError.Code.protocolVersion.rawValue && error?.code == .protocolVersion)
        #expect(machine.isClosed)
    }

    @Test func anythingButHelloFirstIsAProtocolError() {
        var machine = machine()
        _ = machine.start(now: now)
        let actions = machine.receive(.ack(document: doc, version: VersionVector()), now: now)
        #expect(actions.contains(.close(SyncError(.malformed, "expected hello, got ack \(doc) {}"))))
        var twice = established()
        #expect(twice.receive(.hello(version: 1, name: "b", capabilities: []), now: now).last == .close(SyncError(.malformed, "a second hello")))
    }

    @Test func anAdvertiseAsksForWhatThePeerLacksAndPushesFollow() {
        var machine = established()
        #expect(machine.documentChanged(doc).isEmpty)  // not before the peer advertised
        let vector = VersionVector([ReplicaID(7): 3])
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", acceptsChanges: true, version: vector)
        #expect(machine.receive(.advertise(ad), now: now) == [.sync(doc)])
        #expect(machine.knownVersion(of: doc) == vector)
        machine.sent(doc, upTo: VersionVector([ReplicaID(9): 4]))
        #expect(machine.knownVersion(of: doc) == VersionVector([ReplicaID(7): 3, ReplicaID(9): 4]))
        #expect(machine.documentChanged(doc) == [.sync(doc)])
    }

    @Test func aPeerThatDoesNotAcceptOurChangesGetsNoPushes() {
        var machine = established()
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", acceptsChanges: false, version: VersionVector())
        #expect(machine.receive(.advertise(ad), now: now).isEmpty)
        #expect(machine.documentChanged(doc).isEmpty)
    }

    @Test func changesAreAppliedThenAcknowledged() {
        var machine = established()
        let batch: ArraySlice<UInt8> = [1, 2, 3]
        #expect(machine.receive(.changes(document: doc, batch: batch), now: now) == [.apply(doc, batch: batch)])
        let version = VersionVector([ReplicaID(5): 2])
        #expect(machine.applied(doc, received: version, version: version) == [.send(.ack(document: doc, version: version))])
        #expect(machine.knownVersion(of: doc) == version)  // never echoed back
    }

    @Test func changesToAReadOnlyShareAreRefusedAndNeverApplied() {
        var machine = established(acceptsTheirChanges: false)
        let actions = machine.receive(.changes(document: doc, batch: [1]), now: now)
        #expect(!actions.contains { if case .apply = $0 { true } else { false } })
        #expect(actions.first == .send(.error(code: SyncError.Code.readOnly.rawValue, message: "\(doc) is shared with you read-only")))
        #expect(machine.isEstablished)  // a refusal, not a broken connection
        let snapshot = machine.receive(.snapshot(document: doc, kind: 1, bytes: [1]), now: now)
        #expect(!snapshot.contains { if case .mergeSnapshot = $0 { true } else { false } })
    }

    @Test func changesToAnUnsharedDocumentAreRefused() {
        var machine = established()
        let other = DocumentID(high: 9, low: 9)
        let actions = machine.receive(.changes(document: other, batch: [1]), now: now)
        #expect(actions.first == .send(.error(code: SyncError.Code.notShared.rawValue, message: "\(other) is not shared with you")))
    }

    @Test func anOfferedDocumentIsTakenThenSynced() {
        var machine = established()
        let other = DocumentID(high: 3, low: 3)
        let ad = Message.Advertisement(document: other, kind: 2, name: "Crew library", acceptsChanges: true, version: VersionVector([ReplicaID(4): 8]))
        #expect(machine.receive(.advertise(ad), now: now) == [.offered(ad)])
        #expect(machine.addDocument(.init(id: other, kind: 2, acceptsTheirChanges: true)) == [.advertise(other), .sync(other)])
        #expect(machine.knownVersion(of: other) == VersionVector([ReplicaID(4): 8]))
    }

    @Test func acknowledgementsAreRecordedAndPingsAnswered() {
        var machine = established()
        let version = VersionVector([ReplicaID(1): 1])
        #expect(machine.receive(.ack(document: doc, version: version), now: now) == [.recordAcknowledged(doc, version)])
        #expect(machine.receive(.ping(42), now: now) == [.send(.pong(42))])
    }

    @Test func aQuietPeerIsPingedAndASilentOneDropped() {
        var machine = established()
        #expect(machine.tick(now: now + .seconds(5)).isEmpty)
        #expect(machine.tick(now: now + .seconds(11)) == [.send(.ping(1))])
        #expect(machine.tick(now: now + .seconds(12)).isEmpty)  // one ping per interval
        let actions = machine.tick(now: now + .seconds(31))
        #expect(actions.last == .close(SyncError(.timeout, "nothing received for 30.0 seconds")))
    }

    @Test func goodbyeAndErrorsClose() {
        var machine = established()
        #expect(machine.receive(.goodbye(reason: "bye"), now: now).last == .close(nil))
        var other = established()
        let actions = other.receive(.error(code: SyncError.Code.internalError.rawValue, message: "disk full"), now: now)
        #expect(actions.last == .close(SyncError(.internalError, "disk full")))
        var refused = established()
        #expect(refused.receive(.error(code: SyncError.Code.readOnly.rawValue, message: "no"), now: now).count == 1)
        #expect(refused.isEstablished)
        var leaving = established()
        #expect(leaving.close(reason: "shutting down") == [.send(.goodbye(reason: "shutting down")), .close(nil)])
    }
}
