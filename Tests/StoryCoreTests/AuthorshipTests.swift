import StoryTestSupport
import Testing

@testable import StoryCore

/// Signed documents: who founded a document, who may change it, and that no
/// change can claim another author, whoever relays it (docs/crdt.md,
/// "Authorship and access"). Identities are real Ed25519 keys and
/// certificates (the system OpenSSL, as the daemon's).
@Suite struct AuthorshipTests {
    /// A project founded by identity 0 with a scene, a shot and a layer.
    static func founded() throws -> (doc: ProjectDocument, layer: OpID) {
        var doc = try ProjectDocument.found(by: TestIdentities.author(0), at: 1).document
        let layer = try doc.edit(at: 2) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        return (doc, layer)
    }

    /// Identity `index`'s replica of a document, caught up with `source`.
    static func replica(_ index: Int, of source: ProjectDocument, nonce: UInt64 = 1) throws -> ProjectDocument {
        var doc = ProjectDocument(id: source.id, author: TestIdentities.author(index, nonce: nonce))
        try WireSync.send(from: source, to: &doc)
        return doc
    }

    static func peer(_ index: Int) -> PeerID { TestIdentities.signing(index).peer }

    static func points(_ seed: Int) -> [Point] {
        (0..<20).map { Point(x: Double($0) / 20, y: Double(seed % 17) / 17, pressure: 0.5) }
    }

    /// Expects `body` to throw a `DocumentError` with `code`.
    static func expectRefusal(_ code: DocumentError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected a \(code) refusal", sourceLocation: sourceLocation)
        } catch let error as DocumentError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a \(code) refusal, got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aDocumentsIdDerivesFromItsOwnerSoNobodyElseCanFoundIt() throws {
        let (owner, _) = try Self.founded()
        #expect(owner.owner == Self.peer(0) && owner.localRole == .owner && owner.isFounded)
        guard case .genesis(let salt) = try owner.changes(since: VersionVector()).list[0].decoded().operations[0] else {
            Issue.record("the first change does not found the document")
            return
        }
        #expect(Authorship.documentID(owner: Self.peer(0), salt: salt, crypto: TestIdentities.signing().crypto) == owner.id)
        // Identity 1 claims the same document with a founding change of its own.
        var claimant = ProjectDocument(id: owner.id, author: TestIdentities.author(1))
        let forged = try claimant.forge([.genesis(salt: salt)], at: 3)
        var fresh = ProjectDocument(id: owner.id, author: TestIdentities.author(2))
        Self.expectRefusal(.forbidden) { try fresh.apply([(forged, try forged.decoded())]) }
        var copy = owner
        Self.expectRefusal(.forbidden) { try copy.apply([(forged, try forged.decoded())]) }
        // Nothing changes a refused founding: the real one still applies.
        try WireSync.send(from: owner, to: &fresh)
        #expect(fresh.owner == Self.peer(0) && fresh.view == owner.view)
    }

    @Test func onlyMembersWithWriteRightsChangeADocumentWhoeverRelaysIt() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.reader, for: Self.peer(1), at: 3)
        try owner.setAccess(.editor, for: Self.peer(2), at: 3)
        var reader = try Self.replica(1, of: owner)
        var editor = try Self.replica(2, of: owner)
        #expect(reader.localRole == .reader && editor.localRole == .editor && reader.members.count == 3)
        // A reader's daemon refuses its own edits before anything is made.
        let version = reader.versionVector
        Self.expectRefusal(.forbidden) { try reader.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(1)) } }
        #expect(reader.versionVector == version)
        // A hostile reader forging a signed edit is refused by every member.
        var hostile = reader
        hostile.pretendToBeAnEditor()
        _ = try hostile.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(2)) }
        for target in [owner, editor] {
            var target = target
            Self.expectRefusal(.forbidden) { try WireSync.send(from: hostile, to: &target) }
        }
        // So is a non-member's.
        var outsider = try Self.replica(3, of: owner)
        outsider.pretendToBeAnEditor()
        _ = try outsider.edit(at: 6) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(3)) }
        Self.expectRefusal(.forbidden) { try WireSync.send(from: outsider, to: &owner) }
        // An editor's edit is taken by the owner, and by the reader when the owner relays it.
        let stroke = try editor.edit(at: 7) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(4)) }.value
        try WireSync.send(from: editor, to: &owner)
        try WireSync.send(from: owner, to: &reader)
        #expect(reader.strokes(in: layer) == [stroke] && owner.strokes(in: layer) == [stroke])
        // A reader may relay what an editor signed: each change is checked by its author.
        var late = ProjectDocument(id: owner.id, author: TestIdentities.author(4))
        try WireSync.send(from: reader, to: &late)
        #expect(late.strokes(in: layer) == [stroke] && late.localRole == .none)
    }

    @Test func anEditorGivesRightsButOnlyTheOwnerTakesThem() throws {
        var (owner, _) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        var editor = try Self.replica(1, of: owner)
        try editor.setAccess(.reader, for: Self.peer(2), at: 4)
        try editor.setAccess(.editor, for: Self.peer(2), at: 5)
        Self.expectRefusal(.forbidden) { try editor.setAccess(.reader, for: Self.peer(2), at: 6) }
        Self.expectRefusal(.forbidden) { try editor.setAccess(.none, for: Self.peer(0), at: 6) }
        Self.expectRefusal(.forbidden) { try owner.setAccess(.none, for: Self.peer(0), at: 6) }
        try WireSync.send(from: editor, to: &owner)
        #expect(owner.role(of: Self.peer(2)) == .editor)
        // A hostile editor forging a revocation of the owner's choice is refused.
        var hostile = editor
        _ = try hostile.forge([.setAccess(peer: Self.peer(2), role: .none)], at: 7)
        Self.expectRefusal(.forbidden) { try WireSync.send(from: hostile, to: &owner) }
        #expect(owner.role(of: Self.peer(2)) == .editor)
        // The owner takes rights away; it holds until someone entitled gives them again.
        try owner.setAccess(.none, for: Self.peer(2), at: 8)
        #expect(owner.role(of: Self.peer(2)) == .none && !owner.members.contains { $0.peer == Self.peer(2) })
    }

    @Test func aChangeCannotClaimAnotherAuthorOrPreEmptAReplicasNextChange() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        try owner.setAccess(.editor, for: Self.peer(2), at: 3)
        var honest = try Self.replica(1, of: owner)
        var hostile = try Self.replica(2, of: owner)
        _ = try honest.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(1)) }
        try WireSync.send(from: honest, to: &owner)
        try WireSync.send(from: owner, to: &hostile)
        // The hostile editor writes a change under the honest editor's replica,
        // with its next sequence number, signed with its own key.
        let header = (seq: honest.versionVector[honest.replica] + 1, counter: hostile.replicaState.core.clock + 1)
        let claim = Change(
            replica: honest.replica, seq: header.seq, startCounter: header.counter, wallTime: 5,
            dependencies: VersionVector(), operations: [.setField(object: .root, key: .title, value: .string("mine now"))])
        let signed = claim.forgedEncoding(signedBy: TestIdentities.signing(2))
        for target in [owner, honest] {
            var target = target
            Self.expectRefusal(.unauthenticated) { try target.apply([(signed, try signed.decoded())]) }
        }
        // The honest editor's own next change still applies everywhere: sync between honest peers goes on.
        _ = try honest.edit(at: 6) { try $0.set(.title, to: .string("Night Train")) }
        try WireSync.send(from: honest, to: &owner)
        #expect(owner.view.title == "Night Train")
        // Nor can a change be replayed into another document: its chain starts from the document's id.
        var other = try ProjectDocument.found(by: TestIdentities.author(0), at: 7).document
        try other.setAccess(.editor, for: Self.peer(1), at: 8)
        Self.expectRefusal(.unauthenticated) {
            try other.apply(try honest.changes(since: VersionVector()).list.filter { $0.replica == honest.replica }.map { ($0, try $0.decoded()) })
        }
    }

    @Test func rightsAreCheckedAtTheChangesCausalPoint() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        var editor = try Self.replica(1, of: owner)
        // Concurrently: the owner takes the editor's rights, the editor draws.
        try owner.setAccess(.none, for: Self.peer(1), at: 4)
        let concurrent = try editor.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(1)) }.value
        try WireSync.exchange(&owner, &editor)
        #expect(owner.strokes(in: layer) == [concurrent], "made before the editor knew: kept")
        #expect(editor.localRole == .none)
        Self.expectRefusal(.forbidden) { try editor.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(2)) } }
        // After it knew, a forged edit is refused.
        editor.pretendToBeAnEditor()
        _ = try editor.edit(at: 6) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(3)) }
        Self.expectRefusal(.forbidden) { try WireSync.send(from: editor, to: &owner) }
        #expect(owner.strokes(in: layer) == [concurrent])
    }

    @Test func oneSignatureCoversARunAndSendersEndRunsOnCheckedChanges() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        var editor = try Self.replica(1, of: owner)
        for index in 0..<300 {
            _ = try editor.edit(at: Int64(10 + index)) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(index)) }
        }
        let run = editor.changes(since: owner.versionVector).list
        #expect(run.count == 300)
        func tampered(_ position: Int) throws -> [EncodedChange] {
            var changes = run
            var signature = try #require(changes[position].signature)
            signature[signature.count - 1] ^= 1
            changes[position] = changes[position].withSignature(signature)
            return changes
        }
        // A bad signature at the end of the run, or at an anchor (every 256th), is refused.
        let anchorPosition = run.firstIndex { $0.seq % Authorship.anchorInterval == 0 }!
        for position in [299, anchorPosition] {
            var copy = owner
            Self.expectRefusal(.unauthenticated) { try copy.apply(try tampered(position).map { ($0, try $0.decoded()) }) }
        }
        // One in the middle is covered by the last one's signature (one check for the run)…
        let middle = anchorPosition + 3
        try owner.apply(try tampered(middle).map { ($0, try $0.decoded()) })
        #expect(owner.strokes(in: layer).count == 300)
        // …and the owner, relaying in small batches, never ends a run on it.
        guard case .changes(let relayed) = owner.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        // It keeps the signatures it checked (the run's end and the anchor), not the ones it took on trust.
        let kept = relayed.filter { $0.replica == editor.replica && $0.signature != nil }.map(\.seq)
        #expect(kept == [run[anchorPosition].seq, 300])
        #expect(relayed.filter { $0.replica == editor.replica }.allSatisfy { ($0.signature != nil) == $0.isAnchor })
        let batches = ChangeBatch.split(relayed, targetBytes: 600)
        // Runs of its changes end at 256 and 300, however small the batches asked for.
        let ends = batches.compactMap { $0.last { $0.replica == editor.replica }?.seq }
        #expect(ends == [run[anchorPosition].seq, 300])
        for batch in batches {
            let last = Dictionary(batch.map { ($0.replica, $0) }, uniquingKeysWith: { $1 })
            let unchecked = last.values.filter { !$0.isAnchor }
            #expect(unchecked.isEmpty, "a batch ends a run on an unchecked change")
        }
        var reader = ProjectDocument(id: owner.id, author: TestIdentities.author(2))
        for batch in batches { try reader.apply(batch: ChangeBatch.encode(batch)[...]) }
        #expect(reader.view == owner.view)
    }

    @Test func unsignedAndWronglyDeclaredChangesAreRefused() throws {
        var (owner, _) = try Self.founded()
        let unsigned = Change(
            replica: ReplicaID(42), seq: 1, startCounter: 50, wallTime: 0, dependencies: VersionVector(),
            operations: [.setField(object: .root, key: .title, value: .string("x"))])
        Self.expectRefusal(.unauthenticated) { try owner.apply([(unsigned.encoded(), unsigned)]) }
        // A declaration whose nonce does not derive the replica id.
        var editor = ProjectDocument(id: owner.id, author: TestIdentities.author(1))
        editor.pretendToBeAnEditor()
        let first = try editor.edit(at: 2) { try $0.set(.title, to: .string("y")) }.change!
        var decoded = try first.decoded()
        decoded.declaration?.nonce += 1
        decoded.signature = nil
        let reencoded = decoded.encodedSharingPoints(sign: { _ in [UInt8](repeating: 1, count: 64) }).change
        Self.expectRefusal(.unauthenticated) { try owner.apply([(reencoded, try reencoded.decoded())]) }
    }

    @Test func aSnapshotCarriesAuthorshipThatIsChecked() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        var editor = try Self.replica(1, of: owner)
        _ = try editor.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(1)) }
        var fresh = ProjectDocument(id: owner.id, author: TestIdentities.author(2))
        try fresh.merge(snapshot: editor.snapshot())
        #expect(fresh.owner == Self.peer(0) && fresh.view == editor.view && fresh.role(of: Self.peer(1)) == .editor)
        // The editor's later changes continue the chains the snapshot carried.
        _ = try editor.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(2)) }
        try WireSync.send(from: editor, to: &fresh)
        #expect(fresh.view == editor.view)
        // An owner that does not derive the id, or a head its author did not sign, is refused.
        var wrongOwner = editor
        wrongOwner.replicaState.core.access.salt = 7
        var badHead = editor
        badHead.replicaState.core.heads[editor.replica]!.signature![0] ^= 1
        for bytes in [wrongOwner.snapshot(), badHead.snapshot()] {
            var target = ProjectDocument(id: owner.id, author: TestIdentities.author(3))
            #expect(throws: DocumentError.self) { try target.merge(snapshot: bytes) }
            #expect(!target.isFounded && target.view.scenes.isEmpty, "nothing of a refused snapshot stays")
        }
    }

    @Test func aChangeSignedAsThisReplicaThatItNeverMadeProvesACopy() throws {
        let (owner, _) = try Self.founded()
        // Two databases with one identity and one replica nonce: a copied data directory.
        var original = try Self.replica(0, of: owner, nonce: 99)
        var copy = try Self.replica(0, of: owner, nonce: 99)
        _ = try copy.edit(at: 5) { try $0.set(.title, to: .string("from the copy")) }
        Self.expectRefusal(.replicaReused) { try WireSync.send(from: copy, to: &original) }
        #expect(original.view.title != "from the copy")
    }

    @Test func theWireKeepsTheControlAPIsLimits() throws {
        let layer = OpID(counter: 5, replica: ReplicaID(1))
        let long = Change(
            replica: ReplicaID(1), seq: 1, startCounter: 10, wallTime: 0, dependencies: VersionVector(),
            operations: [
                .addStroke(
                    layer: layer, brush: Brush(),
                    points: PointsBlob(encoding: (0...Change.maximumStrokePoints).map { _ in Point(x: 0.5, y: 0.5, pressure: 1) }))
            ])
        #expect(throws: CodecError.self) { try Change(decoding: long.encoded().bytes) }
        let many = Change(
            replica: ReplicaID(1), seq: 1, startCounter: 10, wallTime: 0, dependencies: VersionVector(),
            operations: Array(repeating: .setDeleted(object: layer, isDeleted: true), count: Change.maximumOperations + 1))
        #expect(throws: CodecError.self) { try Change(decoding: many.encoded().bytes) }
        var (owner, _) = try Self.founded()
        Self.expectRefusal(.invalidValue) {
            try owner.edit(at: 3) { editor in for index in 0...Change.maximumOperations { try editor.set(.title, to: .string("\(index)")) } }
        }
    }

    @Test func heldBackChangesAreBounded() throws {
        var (owner, layer) = try Self.founded()
        try owner.setAccess(.editor, for: Self.peer(1), at: 3)
        try owner.setAccess(.editor, for: Self.peer(2), at: 3)
        var one = try Self.replica(1, of: owner)
        var two = try Self.replica(2, of: owner)
        _ = try one.edit(at: 4) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(1)) }
        try WireSync.send(from: one, to: &two)
        for index in 0..<5 { _ = try two.edit(at: 5) { try $0.addStroke(to: layer, brush: Brush(), points: Self.points(index)) } }
        let waiting = two.changes(since: one.versionVector).list.map { ($0, try! $0.decoded()) }
        let limits = HeldBackLimits(changes: 4, bytes: 1 << 20)
        Self.expectRefusal(.limitExceeded) { try owner.apply(waiting, limits: limits) }
        #expect(owner.pendingChangeCount == 0)
        try owner.apply(Array(waiting.prefix(4)), limits: limits)
        #expect(owner.pendingChangeCount == 4)
        Self.expectRefusal(.limitExceeded) { try owner.apply(Array(waiting.suffix(1)), limits: HeldBackLimits(changes: 100, bytes: 100)) }
        #expect(owner.pendingChangeCount == 4, "the refused call left the buffer as it was")
        try WireSync.send(from: one, to: &owner)
        try owner.apply(waiting)
        #expect(owner.pendingChangeCount == 0 && owner.strokes(in: layer).count == 6)
    }
}

extension ChangesSince {
    var list: [EncodedChange] {
        if case .changes(let changes) = self { return changes }
        return []
    }
}
