import StoryTestSupport
import Testing

@testable import StoryCore

/// Named versions: a last-writer-wins register per name in the project document.
@Suite struct VersionNameTests {
    static let names = ["client review 2", "lock", "before the rewrite"]

    /// Replicas name and unname versions concurrently, exchange changes in
    /// random partial orders and merge snapshots; after a full sync all hold
    /// the same names, each the write with the greatest operation id, and a
    /// snapshot carries them.
    @Test(arguments: TestSeeds.seeds(count: 60, base: 9100))
    func concurrentNamesConvergeToTheLastWriter(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var docs = (0..<random.int(2...5)).map { ProjectDocument(id: Board.documentID, replica: ReplicaID(UInt64($0) + 1)) }
        var writes: [String: (id: OpID, version: VersionVector?)] = [:]
        for _ in 0..<random.int(10...40) {
            let r = random.int(0...(docs.count - 1))
            switch random.int(0...9) {
            case 0..<5:
                let name = random.pick(Self.names)!
                let version: VersionVector? = random.chance(0.75) ? docs[r].versionVector : nil
                let change = try docs[r].edit(at: Int64(random.int(0...1000))) { try $0.nameVersion(name, as: version) }.change
                let decoded = try #require(try change?.decoded())
                let id = decoded.opID(at: 0)
                if writes[name].map({ $0.id < id }) ?? true { writes[name] = (id, version) }
            case 5, 6:
                try docs[r].edit(at: 5) { try $0.set(.title, to: .string("t\(random.int(0...9))")) }
            case 7, 8:
                let other = random.int(0...(docs.count - 1))
                guard case .changes(let all) = docs[other].changes(since: VersionVector()), other != r else { continue }
                var chosen = all.filter { _ in random.chance(0.6) }
                chosen.shuffle(using: &random)
                if !chosen.isEmpty { try docs[r].apply(batch: ChangeBatch.encode(chosen)[...]) }
            default:
                let other = random.int(0...(docs.count - 1))
                if other != r { try docs[r].merge(snapshot: docs[other].snapshot()) }
            }
        }
        try WireSync.syncAll(&docs)
        let expected = writes.compactMap { name, write in write.version.map { (name, $0) } }.sorted { $0.0 < $1.0 }
        for doc in docs {
            #expect(doc.versionNames.map(\.name) == expected.map(\.0))
            #expect(doc.versionNames.map(\.version) == expected.map(\.1))
        }
        let loaded = try ProjectDocument(snapshot: docs[0].snapshot(), replica: ReplicaID(99))
        #expect(loaded.versionNames == docs[0].versionNames)
        var merged = ProjectDocument(id: Board.documentID, replica: ReplicaID(98))
        for doc in docs.reversed() { try merged.merge(snapshot: doc.snapshot()) }
        #expect(merged.versionNames == docs[0].versionNames)
    }

    @Test func theOperationRoundTripsThroughTheCodec() throws {
        let vector = VersionVector([ReplicaID(7): 3, ReplicaID(9): 12])
        for operation in [Operation.nameVersion(name: "client review 2", version: vector), .nameVersion(name: "lock", version: nil)] {
            let change = Change(
                replica: ReplicaID(7), seq: 4, startCounter: 40, wallTime: 1000, dependencies: VersionVector([ReplicaID(9): 12]),
                operations: [operation])
            #expect(try change.encoded().decoded().operations == [operation])
        }
    }

    @Test func badNamesAndLibrariesAreRefused() throws {
        var doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        for name in ["", "   ", "tab\tbed", String(repeating: "x", count: 101)] {
            #expect(throws: DocumentError.self) { try doc.edit(at: 1) { try $0.nameVersion(name, as: VersionVector()) } }
        }
        #expect(doc.versionVector.isEmpty, "nothing was made")
        var library = LibraryDocument(id: Board.documentID, replica: ReplicaID(1))
        let change = Change(
            replica: ReplicaID(2), seq: 1, startCounter: 10, wallTime: 1, dependencies: VersionVector(),
            operations: [.nameVersion(name: "x", version: nil)])
        #expect(throws: DocumentError.self) { try library.apply([(change.encoded(), change)]) }
    }

    /// An older write that arrives late changes nothing; a later one wins.
    @Test func theLastWriterWinsPerName() throws {
        var a = ProjectDocument(id: Board.documentID, replica: ReplicaID(1))
        var b = ProjectDocument(id: Board.documentID, replica: ReplicaID(2))
        try a.edit(at: 1) { try $0.set(.title, to: .string("one")) }
        try a.edit(at: 2) { try $0.nameVersion("review", as: VersionVector([ReplicaID(1): 1])) }
        try WireSync.exchange(&a, &b)
        try b.edit(at: 3) { try $0.nameVersion("review", as: nil) }
        try a.edit(at: 4) { try $0.set(.title, to: .string("two")) }
        try WireSync.exchange(&a, &b)
        #expect(a.versionNames.isEmpty && b.versionNames.isEmpty, "taken away after it was seen")
        let now = a.versionVector
        try a.edit(at: 5) { try $0.nameVersion("review", as: now) }
        try WireSync.exchange(&a, &b)
        #expect(b.versionNames.map(\.version) == [now])
    }
}
