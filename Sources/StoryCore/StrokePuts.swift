/// What a stroke put did, by the state of its stroke before it: a put is how
/// a restore, an undone erase, a restyle, a lasso move and a duplicated
/// shot's copies are all written (`Operation.putStroke`), and history tells
/// them apart only by what was there.
package enum StrokePutKind: Sendable, Equatable {
    /// The stroke was erased: the put brought it back.
    case restored
    /// The layer had no such stroke: the put copied one in (duplicating a shot).
    case copied
}

/// Follows stroke puts through changes in causal order and says which ones
/// restored or copied a stroke (the rest changed a stroke that was shown).
/// A stroke the changes have not mentioned yet is looked up in `before`, the
/// state before the first of them, decoded only when it is needed.
package struct StrokePutTracker {
    private struct Slot: Hashable {
        let layer: OpID
        let key: OpID
    }

    /// Whether each stroke the changes mentioned is erased now.
    private var erased: [Slot: Bool] = [:]
    /// Layers the changes added: they had no strokes before.
    private var addedLayers: Set<OpID> = []
    private var before: (() -> ProjectDocument?)?
    private var loaded: ProjectDocument?

    /// `before`: the document before the first change (nil when there is
    /// none to ask, or it cannot be read: a stroke not mentioned is then
    /// taken as shown, unless its layer was added by the changes).
    package init(before: @escaping () -> ProjectDocument?) {
        self.before = before
    }

    /// The puts of `change` that restored or copied a stroke, by the put's own
    /// operation id; then the change counts as applied.
    package mutating func kinds(in change: Change) -> [OpID: StrokePutKind] {
        var kinds: [OpID: StrokePutKind] = [:]
        for (index, operation) in change.operations.enumerated() {
            switch operation {
            case .insert(.layer, _, _):
                addedLayers.insert(change.opID(at: index))
            case .addStroke(let layer, _, _):
                erased[Slot(layer: layer, key: change.opID(at: index))] = false
            case .eraseStroke(let layer, let key):
                erased[Slot(layer: layer, key: key)] = true
            case .putStroke(let layer, let key, _):
                let slot = Slot(layer: layer, key: key)
                switch erased[slot] ?? stateBefore(slot) {
                case true?: kinds[change.opID(at: index)] = .restored
                case nil: kinds[change.opID(at: index)] = .copied
                case false?: break
                }
                erased[slot] = false
            default:
                continue
            }
        }
        return kinds
    }

    /// The puts of `changes` (in causal order) that restored or copied a stroke.
    package mutating func kinds(in changes: some Sequence<Change>) -> [OpID: StrokePutKind] {
        var kinds: [OpID: StrokePutKind] = [:]
        for change in changes { kinds.merge(self.kinds(in: change)) { $1 } }
        return kinds
    }

    /// Whether the stroke was erased before the first change; nil if its layer had none.
    private mutating func stateBefore(_ slot: Slot) -> Bool? {
        if addedLayers.contains(slot.layer) { return nil }
        if let before {
            loaded = before()
            self.before = nil
        }
        guard let loaded else { return false }
        return loaded.state.strokeMap(of: slot.layer)[slot.key]?.isErased
    }
}

extension ProjectHistory {
    /// The stroke puts of the logged changes that restored or copied a
    /// stroke, by the put's operation id (`StrokePutTracker`), followed from
    /// the oldest base. O(operations), and one decode of that base if a put
    /// meets a stroke the log had not mentioned.
    package func strokePutKinds() -> [OpID: StrokePutKind] {
        let base = bases.first
        var tracker = StrokePutTracker { try? base?.document() }
        return tracker.kinds(in: changes.lazy.map(\.change))
    }
}
