import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@testable import StoryStore

@Suite struct StoreDatabaseTests {
    @Test(arguments: 1...Schema.migrations.count)
    func migratesFromEveryEarlierVersion(applied: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        do {
            let old = try StoreDatabase.open(path: path, migrations: applied)
            #expect(try Schema.applied(old.connection) == Schema.migrations.prefix(applied).map(\.id))
            try old.connection.run(
                "INSERT INTO documents (id, kind, name, created) VALUES (?, 1, 'kept', 5)", [DocumentID(high: 1, low: 2).blob])
        }
        let current = try StoreDatabase.open(path: path)
        #expect(try Schema.applied(current.connection) == Schema.migrations.map(\.id))
        #expect(try current.documents().map(\.name) == ["kept"])
        // Documents from before signed authorship are marked for the store's upgrade.
        let upgrade = try current.scalar("SELECT value FROM meta WHERE key = 'legacy_upgrade'")
        #expect((upgrade != nil) == (applied < 3))
        #expect(try current.scalar("PRAGMA user_version")?.integer == Int64(Schema.migrations.count))
    }

    @Test func aDatabaseFromANewerVersionIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        do {
            let database = try StoreDatabase.open(path: path)
            try database.connection.run("INSERT INTO schema_migrations (id, applied) VALUES ('2099-01-01-future', 0)")
            try database.checkpoint()
        }
        let before = contents(path)
        do {
            _ = try StoreDatabase.open(path: path)
            Issue.record("a newer schema was opened")
        } catch let error as StoreError {
            #expect(error.code == .newerSchema)
            #expect(error.path == path)
        }
        #expect(contents(path) == before)
    }

    @Test func documentsChangesAndSnapshotsRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase.open(path: directory.file("store.db"))
        let id = DocumentID(high: 7, low: 7)
        try database.createDocument(id, kind: .project, name: "Night Train", created: 10)
        try database.setDocument(id, name: "Night Train v2")
        #expect(try database.setDocument(id, hidden: true, at: 15))
        #expect(try !database.setDocument(id, hidden: true, at: 16), "already hidden: nothing changes")
        var doc = ProjectDocument(id: id, replica: ReplicaID(5))
        var changes: [EncodedChange] = []
        for index in 0..<5 {
            changes.append(try doc.edit(at: Int64(index)) { try $0.insertScene(at: 0) }.change!)
        }
        try database.connection.transaction { try database.append(changes, to: id) }
        try database.append(changes, to: id)  // duplicates are skipped
        #expect(try database.changeCount(of: id) == 5)
        #expect(try database.changes(of: id).map(\.0) == changes)
        #expect(try database.changes(of: id, notCoveredBy: VersionVector([ReplicaID(5): 3])).map(\.0.seq) == [4, 5])
        try database.saveSnapshot(doc.snapshot(), version: doc.versionVector, of: id, created: 20)
        try database.saveSnapshot(doc.snapshot(), version: doc.versionVector, of: id, created: 21)
        #expect(try database.snapshot(of: id)?.version == doc.versionVector)
        let record = try #require(try database.document(id))
        #expect(record.name == "Night Train v2" && record.isDeleted && record.changeCount == 5)
        #expect(record.isHidden && record.hiddenAt == 15 && !record.isDeletedForEveryone)
        #expect(record.snapshotVersion == doc.versionVector)
        #expect(try database.dropChanges(of: id, coveredBy: VersionVector([ReplicaID(5): 2])) == 2)
        #expect(try database.firstStoredSeq(of: id) == [ReplicaID(5): 3])
        try database.removeDocument(id)
        #expect(try database.documents().isEmpty)
        #expect(try database.changeCount(of: id) == 0)
        #expect(throws: StoreError.self) { try database.setDocument(id, name: "gone") }
    }

    @Test func peersMembersAndAcknowledgedVersions() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase.open(path: directory.file("store.db"))
        let id = DocumentID(high: 1, low: 1)
        let other = DocumentID(high: 2, low: 2)
        try database.createDocument(id, kind: .project, name: nil, created: 1)
        try database.createDocument(other, kind: .project, name: nil, created: 1)
        let peerA = TestIdentities.signing(10).peer
        let pending = (0..<5).map { TestIdentities.signing(20 + $0).peer }
        try database.upsertPeer(PeerRecord(id: peerA, name: "Director", address: "127.0.0.1:7070", state: .configured, added: 1))
        for index in 0..<5 {
            try database.upsertPeer(PeerRecord(id: pending[index], state: .pending, added: Int64(index), lastSeen: Int64(index)))
        }
        try database.prunePendingPeers(keeping: 2)
        #expect(try database.peers().map(\.id) == [peerA, pending[3], pending[4]])
        let (owner, reader) = (TestIdentities.signing(0).peer, TestIdentities.signing(1).peer)
        try database.setMembers([(owner, .owner), (reader, .reader)], of: id)
        try database.setMembers([(owner, .owner), (reader, .editor), (TestIdentities.signing(2).peer, .none)], of: other)
        #expect(try database.members(of: id).map(\.role).sorted() == [.reader, .owner])
        #expect(try database.documents(sharedWith: reader).map(\.role) == [.reader, .editor])
        try database.setMembers([(owner, .owner)], of: id)  // replaced as a whole
        #expect(try database.documents(sharedWith: reader).map(\.document) == [other])
        #expect(try database.members().count == 3, "a role of none is not a member")
        let vector = VersionVector([ReplicaID(9): 4])
        try database.setAcknowledged(vector, of: id, by: peerA, at: 5)
        #expect(try database.acknowledged(id) == [peerA: vector])
        try database.removePeer(peerA)  // cascades to acknowledged versions
        #expect(try database.acknowledged(id).isEmpty)
        #expect(throws: StoreError.self) { try database.removePeer(peerA) }
        try database.removeDocument(other)  // cascades to its members
        #expect(try database.documents(sharedWith: reader).isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        for (name, bytes) in [
            ("text.db", Data("These are my notes, not a database.\n".utf8)),
            ("random.db", Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })),
        ] {
            let path = directory.file(name)
            _ = FileManager.default.createFile(atPath: path, contents: bytes)
            do {
                _ = try StoreDatabase.open(path: path)
                Issue.record("\(name) was opened as a database")
            } catch let error as StoreError {
                #expect(error.code == .notADatabase && error.path == path)
            }
            #expect(contents(path) == bytes)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func aTruncatedOrDamagedDatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        do {
            let database = try StoreDatabase.open(path: path)
            let id = DocumentID(high: 3, low: 3)
            try database.createDocument(id, kind: .project, name: nil, created: 1)
            var doc = ProjectDocument(id: id, replica: ReplicaID(5))
            var changes: [EncodedChange] = []
            for index in 0..<300 {
                changes.append(try doc.edit(at: Int64(index)) { try $0.set(.title, to: .string(String(repeating: "x", count: 400))) }.change!)
            }
            try database.append(changes, to: id)
            try database.checkpoint()
        }
        let good = try #require(contents(path))
        var damaged = good
        // Each page's header and cell pointers (what quick_check reads) after the first.
        for offset in stride(from: 4096, to: damaged.count - 100, by: 4096) {
            for index in offset..<(offset + 64) { damaged[index] ^= 0x5A }
        }
        for (name, bytes) in [("truncated.db", good.prefix(good.count / 2 + 1000)), ("damaged.db", damaged)] {
            let copy = directory.file(name)
            _ = FileManager.default.createFile(atPath: copy, contents: Data(bytes))
            #expect(throws: StoreError.self) { _ = try StoreDatabase.open(path: copy) }
            #expect(contents(copy) == Data(bytes))
        }
    }

    @Test func aPlaceThatCannotHoldTheDatabaseGivesAClearError() throws {
        let directory = try TemporaryDirectory()
        // A "directory" that is a file: fails for every user, root included.
        let file = directory.file("not-a-directory")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        do {
            _ = try StoreDatabase.open(path: file + "/store.db")
            Issue.record("a database was created inside a file")
        } catch let error as StoreError {
            #expect(error.code == .cannotOpen && error.path == file + "/store.db")
        }
        // A read-only directory (permissions do not bind root, so only checked for others).
        if getuid() != 0 {
            let locked = directory.file("locked")
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked)
            #expect(throws: StoreError.self) { _ = try StoreDatabase.open(path: locked + "/store.db") }
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked)
        }
    }
}

extension StoreDatabase {
    func scalar(_ sql: String) throws -> SQLValue? { try connection.scalar(sql) }
}
