import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryStore

/// Taking in a project package goes the way a peer's batch goes: signed
/// changes checked one by one, a snapshot only on the word of an owner or
/// editor, and all or nothing.
@Suite struct StorePackageTests {
    /// An owner's project with strokes on it; `compacted`: snapshotted, so its change log is gone.
    static func board(_ directory: TemporaryDirectory, compacted: Bool) async throws -> (Store, DocumentID) {
        let owner = try Store(path: directory.file("owner.db"), identity: TestIdentities.signing())
        let (id, layer) = try await makeProject(in: owner)
        for seed in 0..<5 {
            _ = try await owner.editProject(id, at: 10 + Int64(seed)) { try $0.addStroke(to: layer, brush: Brush(), points: strokePoints(seed)) }
        }
        if compacted { try await owner.writeSnapshot(of: id, at: 20) }
        return (owner, id)
    }

    @Test func aCompactedLogIsCompletedByTheSnapshotOnTheWordOfItsOwner() async throws {
        let directory = try TemporaryDirectory()
        let (owner, id) = try await Self.board(directory, compacted: true)
        let content = try await owner.packageContent(of: id)
        #expect(content.changeCount < 6, "compaction dropped the log the snapshot covers (\(content.changeCount) left)")
        let other = try Store(path: directory.file("other.db"), identity: TestIdentities.signing(1))
        let imported = try await other.importPackage(
            id, snapshot: content.snapshot, version: content.version, changes: try ChangeBatch.decode(content.changes[...]),
            from: owner.peerID, name: "Board", at: 30)
        #expect(imported.isNew && imported.usedSnapshot && imported.version == content.version)
        #expect(try await other.project(id).view.shots.first?.layers.first?.strokes.count == 5)
        // Again: nothing new, nothing used.
        let again = try await other.importPackage(
            id, snapshot: content.snapshot, version: content.version, changes: [], from: owner.peerID, name: nil, at: 31)
        #expect(!again.isNew && again.newChanges == 0 && !again.usedSnapshot)
    }

    @Test func aSnapshotVouchedForByANonMemberIsRefusedAndNothingIsStored() async throws {
        let directory = try TemporaryDirectory()
        let (owner, id) = try await Self.board(directory, compacted: true)
        let content = try await owner.packageContent(of: id)
        let other = try Store(path: directory.file("other.db"), identity: TestIdentities.signing(1))
        let stranger = TestIdentities.signing(2).peer
        await #expect(throws: DocumentError.self) {
            try await other.importPackage(
                id, snapshot: content.snapshot, version: content.version, changes: try ChangeBatch.decode(content.changes[...]),
                from: stranger, name: "Board", at: 30)
        }
        #expect(try await other.documentIfPresent(id) == nil)
        #expect(try await other.documents().isEmpty)
    }

    @Test func aChangeWithAForgedSignatureIsRefusedAndNothingIsStored() async throws {
        let directory = try TemporaryDirectory()
        let (owner, id) = try await Self.board(directory, compacted: false)
        let content = try await owner.packageContent(of: id)
        var changes = try ChangeBatch.decode(content.changes[...])
        let last = changes.count - 1
        #expect(changes[last].0.signature != nil, "the last change of a replica carries its signature")
        // As a package file would carry it: the batch re-encoded with a signature its author never made.
        changes[last].0 = changes[last].0.withSignature([UInt8](repeating: 7, count: 64))
        changes = try ChangeBatch.decode(ChangeBatch.encode(changes.map(\.0))[...])
        #expect(changes[last].1.signature == [UInt8](repeating: 7, count: 64))
        // The snapshot would be taken on the owner's word (a stranger's here), but the log reaches: it is not even used.
        let other = try Store(path: directory.file("other.db"), identity: TestIdentities.signing(1))
        await #expect(throws: DocumentError.self) {
            try await other.importPackage(
                id, snapshot: content.snapshot, version: content.version, changes: changes, from: TestIdentities.signing(2).peer,
                name: "Board", at: 30)
        }
        #expect(try await other.documentIfPresent(id) == nil)
        // The true log goes in whole, on nobody's word: every change is signed by its author.
        let imported = try await other.importPackage(
            id, snapshot: content.snapshot, version: content.version, changes: try ChangeBatch.decode(content.changes[...]),
            from: TestIdentities.signing(2).peer, name: "Board", at: 31)
        #expect(imported.isNew && !imported.usedSnapshot && imported.newChanges == content.version.totalChanges)
    }

    @Test func aPackageShortOfTheVersionItNamesIsRefusedAndNothingIsStored() async throws {
        let directory = try TemporaryDirectory()
        let (owner, id) = try await Self.board(directory, compacted: false)
        let content = try await owner.packageContent(of: id)
        var changes = try ChangeBatch.decode(content.changes[...])
        changes.removeLast()
        let other = try Store(path: directory.file("other.db"), identity: TestIdentities.signing(1))
        // The log falls short, so the snapshot is used, on the word of someone who may not vouch for it.
        await #expect(throws: DocumentError.self) {
            try await other.importPackage(
                id, snapshot: content.snapshot, version: content.version, changes: changes, from: TestIdentities.signing(2).peer,
                name: "Board", at: 30)
        }
        // A version beyond what the package holds, vouched for by the owner: incomplete.
        var claimed = content.version
        claimed[ReplicaID(7)] = 3
        await #expect(throws: DocumentError.self) {
            try await other.importPackage(
                id, snapshot: content.snapshot, version: claimed, changes: try ChangeBatch.decode(content.changes[...]),
                from: owner.peerID, name: "Board", at: 31)
        }
        #expect(try await other.documents().isEmpty)
    }
}
