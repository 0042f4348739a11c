import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct ContentTableTests {
    /// A distinct blob per operation, so a lookup that finds the wrong entry shows.
    private static func blob(_ id: OpID) -> PointsBlob {
        PointsBlob(encoding: [Point(x: Double(id.counter % 1000) / 1000, y: Double(id.replica.rawValue % 7) / 7, pressure: 0.5)])
    }

    /// The table must answer as a dictionary would, whatever the order of
    /// inserts, replacements and removals: mostly appends in counter order per
    /// replica (as changes apply), with late blobs inserted in place (merges),
    /// removals of the newest (rollbacks) and of any, across chunk boundaries.
    @Test(arguments: 0..<12)
    func itAnswersAsADictionaryWouldWhateverTheOrderOfWrites(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var table = ContentTable()
        var model: [OpID: PointsBlob] = [:]
        var next: [UInt64: UInt64] = [:]
        let replicas: [UInt64] = [1, 2, 3, 40, 41]
        for _ in 0..<(3 * ContentTable.chunkSize) {
            let replica = replicas.randomElement(using: &random)!
            let id: OpID
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<14:
                // The next operation of its replica.
                next[replica, default: 0] += UInt64.random(in: 1...3, using: &random)
                id = OpID(counter: next[replica]!, replica: ReplicaID(replica))
            case 14..<16:
                // A late one, anywhere before.
                id = OpID(counter: UInt64.random(in: 1...(next[replica, default: 0] + 1), using: &random), replica: ReplicaID(replica))
            case 16..<18:
                // A removal of any held (or of one never held).
                let victim = model.keys.randomElement(using: &random) ?? OpID(counter: 5, replica: ReplicaID(replica))
                table[victim] = nil
                model[victim] = nil
                continue
            default:
                // The newest of a replica rolled back.
                if let newest = model.keys.filter({ $0.replica == ReplicaID(replica) }).max() {
                    table[newest] = nil
                    model[newest] = nil
                }
                continue
            }
            let blob = Self.blob(id)
            table[id] = blob
            model[id] = blob
        }
        #expect(table.count == model.count)
        #expect(table.isEmpty == model.isEmpty)
        for (id, blob) in model { #expect(table[id] == blob) }
        let iterated = Array(table)
        #expect(iterated.count == model.count)
        #expect(Set(iterated.map(\.key)) == Set(model.keys))
        for (id, blob) in iterated { #expect(model[id] == blob) }
        // Each replica's blobs come in counter order.
        for replica in replicas {
            let counters = iterated.filter { $0.key.replica == ReplicaID(replica) }.map(\.key.counter)
            #expect(counters == counters.sorted())
        }
        // Absent ids: counters between and beyond, and a replica never seen.
        for replica in replicas + [99] {
            for counter in [0, 1, 2, next[replica, default: 0] + 1, UInt64.max] {
                let id = OpID(counter: counter, replica: ReplicaID(replica))
                #expect(table[id] == model[id])
                #expect(table.contains(id) == (model[id] != nil))
            }
        }
    }

    /// The ordered lookup answers as `contains` does, for any ascending walk
    /// over ids (as a snapshot lists its contents: counter, then replica),
    /// held or not, some skipped, across chunk boundaries.
    @Test(arguments: 0..<8)
    func theOrderedLookupAnswersAsContainsDoes(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) + 100)
        var table = ContentTable()
        let replicas: [UInt64] = [1, 2, 40]
        for replica in replicas {
            var counter: UInt64 = 0
            for _ in 0..<(ContentTable.chunkSize + Int.random(in: 0..<(2 * ContentTable.chunkSize), using: &random)) {
                counter += UInt64.random(in: 1...4, using: &random)
                table[OpID(counter: counter, replica: ReplicaID(replica))] = Self.blob(OpID(counter: counter, replica: ReplicaID(replica)))
            }
        }
        // Every id up to beyond the largest counter, of the replicas and of one never seen, each asked or skipped.
        let asked = (1...(4 * 3 * ContentTable.chunkSize + 10)).flatMap { counter in
            (replicas + [7]).sorted().map { OpID(counter: UInt64(counter), replica: ReplicaID($0)) }
        }.filter { _ in Int.random(in: 0..<3, using: &random) > 0 }
        #expect(asked == asked.sorted())
        var lookup = ContentTable.OrderedLookup(table)
        var found = 0
        for id in asked {
            let answer = lookup.contains(id)
            #expect(answer == table.contains(id), "\(id)")
            if answer { found += 1 }
        }
        #expect(found > ContentTable.chunkSize, "the walk found held ids: \(found)")
    }

    @Test func aDictionaryBecomesTheSameTable() {
        var random = SeededGenerator(seed: 7)
        var dictionary: [OpID: PointsBlob] = [:]
        for _ in 0..<2_500 {
            let id = OpID(counter: UInt64.random(in: 1...100_000, using: &random), replica: ReplicaID(UInt64.random(in: 1...4, using: &random)))
            dictionary[id] = Self.blob(id)
        }
        let table = ContentTable(dictionary)
        #expect(table.count == dictionary.count)
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == dictionary)
    }
}
