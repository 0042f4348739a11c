import StoryTestSupport
import Testing

@testable import StoryCore

/// The version vector is a sorted array searched by bisection; these tests
/// hold it to a dictionary, the plain model of "replica → highest seq".
@Suite struct VersionVectorTests {
    /// A random model: a few replicas out of a small range, so vectors share
    /// some and differ in others; some seqs zero (absent).
    private static func model(_ random: inout SeededGenerator) -> [ReplicaID: UInt64] {
        var entries: [ReplicaID: UInt64] = [:]
        for _ in 0..<random.int(0...7) {
            entries[ReplicaID(UInt64(random.int(1...12)))] = UInt64(random.int(0...5))
        }
        return entries
    }

    private static func normalized(_ model: [ReplicaID: UInt64]) -> [ReplicaID: UInt64] { model.filter { $0.value > 0 } }

    @Test func everyOperationAgreesWithADictionaryOfTheSameEntries() throws {
        var random = SeededGenerator(seed: 0x5EC7_0125)
        for round in 0..<3_000 {
            var modelA = Self.model(&random)
            let modelB = Self.model(&random)
            var a = VersionVector(modelA)
            let b = VersionVector(modelB)
            #expect(a.entries == Self.normalized(modelA), "round \(round)")
            #expect(a.sortedEntries.map(\.replica) == a.sortedEntries.map(\.replica).sorted(), "round \(round)")

            // Reads, and covering, against the model.
            for replica in (1...12).map({ ReplicaID(UInt64($0)) }) {
                #expect(a[replica] == modelA[replica] ?? 0, "round \(round)")
            }
            let covered = Self.normalized(modelA).allSatisfy { (modelB[$0.key] ?? 0) >= $0.value }
            #expect(a.isCovered(by: b) == covered, "round \(round)")
            #expect(b.covers(a) == covered, "round \(round)")

            // Union: entry-wise maximum.
            var union = Self.normalized(modelA)
            for (replica, seq) in Self.normalized(modelB) { union[replica] = max(union[replica] ?? 0, seq) }
            #expect(a.union(b).entries == union, "round \(round)")
            #expect(a.union(b) == b.union(a), "round \(round)")

            // Writes through the subscript, zero removing the entry.
            for _ in 0..<random.int(0...6) {
                let replica = ReplicaID(UInt64(random.int(1...12)))
                let seq = UInt64(random.int(0...5))
                a[replica] = seq
                modelA[replica] = seq
                #expect(a.entries == Self.normalized(modelA), "round \(round)")
            }
            #expect(a.count == Self.normalized(modelA).count, "round \(round)")
            #expect(a.isEmpty == Self.normalized(modelA).isEmpty, "round \(round)")
            #expect(a.totalChanges == Self.normalized(modelA).values.reduce(0, +), "round \(round)")

            // Equal entries are equal vectors with equal hashes, however they were built.
            let rebuilt = VersionVector(Self.normalized(modelA))
            #expect(rebuilt == a, "round \(round)")
            #expect(rebuilt.hashValue == a.hashValue, "round \(round)")
            #expect(try VersionVector(decoding: a.encoded()[...]) == a, "round \(round)")

            var visited: [(ReplicaID, UInt64)] = []
            a.forEach { visited.append(($0, $1)) }
            #expect(visited.map(\.0) == a.sortedEntries.map(\.replica), "round \(round)")
            #expect(visited.map(\.1) == a.sortedEntries.map(\.seq), "round \(round)")
        }
    }
}
