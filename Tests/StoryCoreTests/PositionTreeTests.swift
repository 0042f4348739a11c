import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct PositionTreeTests {
    /// `insert` places each new entry in the order directly; a full traversal
    /// (`rebuildOrder`) must agree after every insert, whatever the anchors.
    @Test(arguments: 0..<20)
    func anIncrementalInsertPutsTheEntryWhereTheTraversalDoes(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var tree = PositionTree()
        var ids: [OpID] = []
        // Ids in random order (as entries from other replicas arrive late), so a
        // new entry may sort anywhere among its siblings.
        let counters = Array(1...300).shuffled(using: &random)
        for (step, counter) in counters.enumerated() {
            let id = OpID(counter: UInt64(counter), replica: ReplicaID(UInt64.random(in: 1...3, using: &random)))
            let anchor: Anchor
            switch Int.random(in: 0..<10, using: &random) {
            case 0: anchor = .root
            case 1...3 where !ids.isEmpty: anchor = Anchor(parent: ids.randomElement(using: &random)!, side: .left)
            case 4...6 where !ids.isEmpty: anchor = Anchor(parent: ids.randomElement(using: &random)!, side: .right)
            default:
                // As an editor does: after a random position in the current order.
                let after = tree.order.isEmpty || Bool.random(using: &random) ? tree.order.last : tree.order.randomElement(using: &random)
                anchor = tree.anchor(after: after)
            }
            tree.insert(id, object: id, anchor: anchor)
            ids.append(id)
            var rebuilt = tree
            rebuilt.rebuildOrder()
            #expect(tree.order == rebuilt.order, "seed \(seed), insert \(step)")
            if tree.order != rebuilt.order { return }
        }
        #expect(tree.order.count == 300)
    }
}
