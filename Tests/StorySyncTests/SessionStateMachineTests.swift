import StoryCore
import StoryIdentity
import Testing

@testable import StorySync

@Suite struct SessionStateMachineTests {
    typealias Machine = SyncSessionStateMachine
    let doc = DocumentID(high: 1, low: 1)
    let now = ContinuousClock.now

    let version = Message.protocolVersion

    func machine(peerRole: Role = .editor, documents: [DocumentID]? = nil) -> Machine {
        Machine(
            configuration: .init(localName: "a", pingInterval: .seconds(10), idleTimeout: .seconds(30)),
            documents: (documents ?? [doc]).map { .init(id: $0, kind: 1, peerRole: peerRole) })
    }

    func established(peerRole: Role = .editor) -> Machine {
        var machine = machine(peerRole: peerRole)
        _ = machine.start(now: now)
        _ = machine.receive(.hello(version: version, name: "b", capabilities: []), now: now)
        return machine
    }

    @Test func helloFirstThenAdvertiseEveryDocument() {
        var machine = machine(documents: [doc, DocumentID(high: 2, low: 2)])
        #expect(machine.start(now: now) == [.send(.hello(version: version, name: "a", capabilities: [Message.snapshotPartsCapability]))])
        let actions = machine.receive(.hello(version: version, name: "b", capabilities: ["x"]), now: now)
        #expect(actions == [.advertise(doc), .advertise(DocumentID(high: 2, low: 2))])
        #expect(machine.isEstablished && machine.peerName == "b")
    }

    /// Blobs go only over documents the peer advertised too: until then it may
    /// not know the document is shared with us (a peer that was away when it
    /// was shared), and would refuse, and the blob would wait out a retry.
    @Test func blobsGoOnlyOverDocumentsBothSidesAdvertised() {
        let other = DocumentID(high: 2, low: 2)
        var machine = machine(documents: [doc, other])
        _ = machine.start(now: now)
        _ = machine.receive(.hello(version: version, name: "b", capabilities: []), now: now)
        #expect(machine.documentIDs == [doc, other])
        #expect(machine.mutuallyAdvertisedDocumentIDs.isEmpty)
        let ad = Message.Advertisement(document: other, kind: 1, name: "p", role: .editor, version: VersionVector())
        _ = machine.receive(.advertise(ad), now: now)
        #expect(machine.mutuallyAdvertisedDocumentIDs == [other])
        // A document the peer offered first counts once it is taken.
        let third = DocumentID(high: 3, low: 3)
        let offer = Message.Advertisement(document: third, kind: 1, name: "q", role: .editor, version: VersionVector())
        #expect(machine.receive(.advertise(offer), now: now) == [.offered(offer)])
        #expect(!machine.mutuallyAdvertisedDocumentIDs.contains(third))
        _ = machine.addDocument(.init(id: third, kind: 1, peerRole: .editor))
        #expect(machine.mutuallyAdvertisedDocumentIDs == [other, third])
    }

    @Test func aSnapshotInPartsIsHandedOverPartByPartAndTheLastSaysItIsWhole() {
        var machine = established()
        let bytes: [UInt8] = Array(0..<200).map { UInt8($0) }
        for offset in stride(from: 0, to: 150, by: 50) {
            let part = machine.receive(
                .snapshotPart(document: doc, kind: 1, total: 200, offset: UInt64(offset), bytes: bytes[offset..<offset + 50]), now: now)
            #expect(
                part == [
                    .keepSnapshotPart(
                        doc, kind: 1, total: 200, bytes: bytes[offset..<offset + 50], isFirst: offset == 0, isLast: false, senderMayWrite: true)
                ], "nothing is merged before the last part")
        }
        let last = machine.receive(.snapshotPart(document: doc, kind: 1, total: 200, offset: 150, bytes: bytes[150...]), now: now)
        #expect(last == [.keepSnapshotPart(doc, kind: 1, total: 200, bytes: bytes[150...], isFirst: false, isLast: true, senderMayWrite: true)])
        // The next snapshot starts afresh.
        let again = machine.receive(.snapshotPart(document: doc, kind: 1, total: 2, offset: 0, bytes: [9, 9]), now: now)
        #expect(again == [.keepSnapshotPart(doc, kind: 1, total: 2, bytes: [9, 9], isFirst: true, isLast: true, senderMayWrite: true)])
    }

    /// A reader could not have written a snapshot: its first part (or a
    /// snapshot in one frame) closes the connection before a byte is kept.
    /// A document taken from the peer and not founded yet has no role for it:
    /// the parts go on, marked for the driver to check the snapshot's header.
    @Test func aReadersSnapshotIsRefusedAtItsFirstPartAndAnUnfoundedOnesIsMarkedForItsHeader() {
        var reader = established(peerRole: .reader)
        let refused = reader.receive(.snapshotPart(document: doc, kind: 1, total: 1 << 20, offset: 0, bytes: [1, 2, 3]), now: now)
        guard case .close(let error)? = refused.last else {
            Issue.record("a reader's part was taken: \(refused)")
            return
        }
        #expect(error?.code == .forbidden)
        #expect(!refused.contains { if case .keepSnapshotPart = $0 { true } else { false } })
        var whole = established(peerRole: .reader)
        guard case .close(let single)? = whole.receive(.snapshot(document: doc, kind: 1, bytes: [1, 2, 3]), now: now).last else {
            Issue.record("a reader's snapshot was taken")
            return
        }
        #expect(single?.code == .forbidden)
        var unfounded = established(peerRole: .none)
        #expect(
            unfounded.receive(.snapshotPart(document: doc, kind: 1, total: 4, offset: 0, bytes: [1, 2]), now: now)
                == [.keepSnapshotPart(doc, kind: 1, total: 4, bytes: [1, 2], isFirst: true, isLast: false, senderMayWrite: false)])
    }

    /// A peer that advertises a document again in a session (it shared it
    /// anew after an unshare, having dropped it) hears ours again, once: an
    /// advertisement answering ours is not answered in turn, so two sides
    /// never bounce advertisements back and forth.
    @Test func aSecondAdvertisementIsAnsweredOnceAndNeverBounced() {
        var machine = established()
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", role: .editor, version: VersionVector())
        func advertises(_ actions: [Machine.Action]) -> Bool { actions.contains { if case .advertise(doc) = $0 { true } else { false } } }
        #expect(!advertises(machine.receive(.advertise(ad), now: now)), "its first: we advertised at the hello")
        #expect(advertises(machine.receive(.advertise(ad), now: now)), "its second, nothing from us since: answered")
        #expect(!advertises(machine.receive(.advertise(ad), now: now)), "its answer to our answer: not answered")
        #expect(advertises(machine.receive(.advertise(ad), now: now)), "and again later, once")
    }

    @Test func snapshotPartsOutOfOrderTooLargeOrInterleavedCloseTheConnection() {
        func closes(_ messages: [Message], limit: Int = 1 << 20) -> SyncError? {
            var machine = Machine(
                configuration: .init(localName: "a", maximumSnapshotBytes: limit),
                documents: [doc, DocumentID(high: 2, low: 2)].map { .init(id: $0, kind: 1, peerRole: .editor) })
            _ = machine.start(now: now)
            _ = machine.receive(.hello(version: version, name: "b", capabilities: []), now: now)
            for message in messages {
                if case .close(let error) = machine.receive(message, now: now).last { return error }
            }
            return nil
        }
        let other = DocumentID(high: 2, low: 2)
        #expect(closes([.snapshotPart(document: doc, kind: 1, total: 10, offset: 5, bytes: [1])])?.code == .malformed, "no first part")
        #expect(
            closes([
                .snapshotPart(document: doc, kind: 1, total: 10, offset: 0, bytes: [1]),
                .snapshotPart(document: doc, kind: 1, total: 10, offset: 2, bytes: [1]),
            ])?.code == .malformed, "a gap")
        #expect(
            closes([
                .snapshotPart(document: doc, kind: 1, total: 10, offset: 0, bytes: [1]),
                .snapshotPart(document: doc, kind: 1, total: 11, offset: 1, bytes: [1]),
            ])?.code == .malformed, "another total")
        #expect(
            closes([
                .snapshotPart(document: doc, kind: 1, total: 10, offset: 0, bytes: [1]),
                .snapshotPart(document: other, kind: 1, total: 10, offset: 0, bytes: [1]),
            ])?.code == .malformed, "two at once")
        #expect(closes([.snapshotPart(document: doc, kind: 2, total: 10, offset: 0, bytes: [1])])?.code == .malformed, "another kind")
        #expect(closes([.snapshotPart(document: doc, kind: 1, total: 4_096, offset: 0, bytes: [1])], limit: 1_024)?.code == .frameTooLarge)
        #expect(
            closes([
                .snapshotPart(document: doc, kind: 1, total: 2, offset: 0, bytes: [1]),
                .snapshotPart(document: doc, kind: 1, total: 2, offset: 1, bytes: [1]),
            ]) == nil, "whole and in order")
    }

    @Test func anotherProtocolVersionIsRefusedWithAnError() {
        var machine = machine()
        _ = machine.start(now: now)
        let actions = machine.receive(.hello(version: 1, name: "b", capabilities: []), now: now)
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
        #expect(
            twice.receive(.hello(version: version, name: "b", capabilities: []), now: now).last == .close(SyncError(.malformed, "a second hello")))
    }

    @Test func anAdvertiseAsksForWhatThePeerLacksAndPushesFollow() {
        var machine = established()
        #expect(machine.documentChanged(doc).isEmpty)  // not before the peer advertised
        let vector = VersionVector([ReplicaID(7): 3])
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", role: .editor, version: vector)
        #expect(
            machine.receive(.advertise(ad), now: now) == [.recordAcknowledged(doc, vector), .sync(doc)],
            "an Advertise also says what the peer has stored")
        #expect(machine.knownVersion(of: doc) == vector)
        machine.sent(doc, upTo: VersionVector([ReplicaID(9): 4]), at: now)
        #expect(machine.knownVersion(of: doc) == VersionVector([ReplicaID(7): 3, ReplicaID(9): 4]))
        #expect(machine.documentChanged(doc) == [.sync(doc)])
    }

    @Test func aPeerWithNoRoleHereGetsNothingPushed() {
        // A document taken from this peer whose founding change has not arrived:
        // we only receive from it.
        var machine = established(peerRole: .none)
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", role: .reader, version: VersionVector())
        #expect(machine.receive(.advertise(ad), now: now).isEmpty)
        #expect(machine.documentChanged(doc).isEmpty)
        #expect(machine.receive(.changes(document: doc, batch: [1]), now: now) == [.apply(doc, batch: [1])])
    }

    @Test func changesAreAppliedThenAcknowledged() {
        var machine = established()
        let batch: ArraySlice<UInt8> = [1, 2, 3]
        #expect(machine.receive(.changes(document: doc, batch: batch), now: now) == [.apply(doc, batch: batch)])
        let version = VersionVector([ReplicaID(5): 2])
        #expect(machine.applied(doc, received: version, version: version) == [.send(.ack(document: doc, version: version))])
        #expect(machine.knownVersion(of: doc) == version)  // never echoed back
    }

    @Test func aReaderStillReceivesPushesAndItsChangesGoToTheStoreToBeChecked() {
        // Rights are checked per change by the store (author at its causal point,
        // whoever relays it): a reader may relay an editor's signed changes.
        var machine = established(peerRole: .reader)
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", role: .reader, version: VersionVector())
        #expect(machine.receive(.advertise(ad), now: now) == [.sync(doc)])
        #expect(machine.documentChanged(doc) == [.sync(doc)])
        #expect(machine.receive(.changes(document: doc, batch: [1]), now: now) == [.apply(doc, batch: [1])])
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
        let ad = Message.Advertisement(document: other, kind: 2, name: "Crew library", role: .editor, version: VersionVector([ReplicaID(4): 8]))
        #expect(machine.receive(.advertise(ad), now: now) == [.offered(ad)])
        // Taken: we receive from the peer; nothing to send it until the access list arrives. What
        // the offer said it has is recorded as acknowledged, as any advertisement's version is
        // (else the peer stays "never synced", every change of the document "to send").
        #expect(
            machine.addDocument(.init(id: other, kind: 2, peerRole: .none))
                == [.advertise(other), .recordAcknowledged(other, VersionVector([ReplicaID(4): 8]))])
        #expect(machine.knownVersion(of: other) == VersionVector([ReplicaID(4): 8]))
        // Once its access list says the peer is a member, what it lacks is sent.
        #expect(machine.addDocument(.init(id: other, kind: 2, peerRole: .owner)) == [.advertise(other), .sync(other)])
        #expect(machine.knownVersion(of: other) == VersionVector([ReplicaID(4): 8]))
    }

    @Test func acknowledgementsAreRecordedAndPingsAnswered() {
        var machine = established()
        let version = VersionVector([ReplicaID(1): 1])
        #expect(machine.receive(.ack(document: doc, version: version), now: now) == [.recordAcknowledged(doc, version)])
        #expect(machine.receive(.ping(42), now: now) == [.send(.pong(42))])
    }

    @Test func aPongMeasuresItsPingsRoundTripOnce() {
        var machine = established()
        #expect(machine.tick(now: now + .seconds(11)) == [.send(.ping(1))])
        #expect(machine.receive(.pong(7), now: now + .seconds(12)).isEmpty, "a pong for another ping measures nothing")
        #expect(machine.receive(.pong(1), now: now + .milliseconds(11_250)) == [.measured(.ping, .milliseconds(250))])
        #expect(machine.receive(.pong(1), now: now + .seconds(12)).isEmpty, "a repeated pong is not a second round trip")
    }

    @Test func anAcknowledgementMeasuresEachSendItCoversFromWhenItWasSent() {
        var machine = established()
        let ad = Message.Advertisement(document: doc, kind: 1, name: "p", role: .editor, version: VersionVector())
        _ = machine.receive(.advertise(ad), now: now)
        machine.sent(doc, upTo: VersionVector([ReplicaID(9): 4]), at: now)
        machine.sent(doc, upTo: VersionVector([ReplicaID(9): 8]), at: now + .milliseconds(100))
        // The peer stored the first batch: that one made its round trip, the second has not.
        let first = VersionVector([ReplicaID(9): 4])
        #expect(
            machine.receive(.ack(document: doc, version: first), now: now + .milliseconds(300))
                == [.recordAcknowledged(doc, first), .measured(.acknowledgement, .milliseconds(300))])
        let both = VersionVector([ReplicaID(9): 8])
        #expect(
            machine.receive(.ack(document: doc, version: both), now: now + .milliseconds(400))
                == [.recordAcknowledged(doc, both), .measured(.acknowledgement, .milliseconds(300))])
        #expect(machine.receive(.ack(document: doc, version: both), now: now + .seconds(1)) == [.recordAcknowledged(doc, both)])
    }

    @Test func sendsAPeerNeverAcknowledgesAreBounded() {
        var machine = established()
        for seq in 1...(SyncSessionStateMachine.maximumTimedSends + 10) {
            machine.sent(doc, upTo: VersionVector([ReplicaID(9): UInt64(seq)]), at: now)
        }
        let all = VersionVector([ReplicaID(9): UInt64(SyncSessionStateMachine.maximumTimedSends + 10)])
        let measured = machine.receive(.ack(document: doc, version: all), now: now + .seconds(1)).filter {
            if case .measured = $0 { return true } else { return false }
        }
        #expect(measured.count == SyncSessionStateMachine.maximumTimedSends)
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
