/// A change's place in its author's sequence: who made it and which of
/// theirs it is. Whether a write is in another change's causal past is
/// decided on these, never on Lamport counters (which order but do not
/// tell concurrency).
struct ChangeDot: Hashable, Sendable {
    var replica: ReplicaID
    var seq: UInt64
}

/// The change whose operations are being applied: set on the state before
/// each change (`ReplicatedState.begin`), read by the text fields that keep
/// what a concurrent write overwrote.
struct WriteContext: Sendable {
    /// Nil for operations applied to a bare state (tests).
    var dot: ChangeDot?
    /// The change's causal past (its full version vector, itself included);
    /// nil for a local edit, which has seen everything this replica holds.
    var past: VersionVector?

    /// A local edit that has not said which change it is (tests that apply
    /// operations to a bare state).
    static let local = WriteContext(dot: nil, past: nil)

    /// Whether the write made by the change `dot` was known to this change.
    /// A write of unknown origin (a snapshot of format 1 or 2) counts as known.
    func hasSeen(_ dot: ChangeDot?) -> Bool {
        guard let dot, let past else { return true }
        return dot.seq <= past[dot.replica]
    }
}

/// One text field of one object.
struct FieldSlot: Hashable, Comparable, Sendable {
    var object: OpID
    var key: FieldKey

    static func < (lhs: FieldSlot, rhs: FieldSlot) -> Bool {
        lhs.object != rhs.object ? lhs.object < rhs.object : lhs.key.rawValue < rhs.key.rawValue
    }
}

/// One write of a text field that is still open: the value kept, or one it
/// overwrote concurrently.
struct FieldWrite: Hashable, Sendable {
    var value: FieldValue
    var stamp: OpID
    /// The change that made it (nil: unknown, from an old snapshot).
    var dot: ChangeDot?
    /// Wall time of that change on its author's clock (milliseconds since 1970).
    var time: Int64

    /// Which of two concurrent writes people call the later one: the later
    /// wall time, then the larger stamp (counter, then replica), the order
    /// of a hybrid logical clock. Only writes that have not seen each other
    /// are ever compared this way: a write that has seen another replaces it
    /// whatever the clocks say (`FieldWrites.after`).
    func isLater(than other: FieldWrite) -> Bool {
        time != other.time ? time > other.time : stamp > other.stamp
    }
}

/// What a text field remembers beyond its register: the change that wrote
/// the kept value, and the values written concurrently with it that it
/// overwrote (a multi-value register whose latest write, by
/// `FieldWrite.isLater`, is the register's value; docs/crdt.md,
/// "Overwritten values").
///
/// A write removes every open write in its causal past and adds itself, so
/// the open writes are the same on every replica whatever the order of
/// delivery; a write that has seen all of them leaves none: the conflict is
/// resolved (and is then only in the history). The value shown is the latest
/// of the open writes by wall time: of two people who edited a caption
/// without seeing each other's edit, the one who wrote last wins where
/// clocks are sane, and a write made after seeing another always wins over
/// it, whatever the clocks.
struct FieldWrites: Hashable, Sendable {
    /// The change that wrote the register's value, and its time.
    var keptBy: ChangeDot?
    var keptAt: Int64
    /// Overwritten values still open, latest first (`FieldWrite.isLater`), at most `maximumOverwritten`.
    var overwritten: [FieldWrite] = []

    /// Overwritten values kept per field. At most one write per replica can
    /// be open at once (a replica's writes follow each other), so this is
    /// only reached when more than 16 machines wrote one field concurrently;
    /// the earliest ones are then dropped.
    static let maximumOverwritten = 16

    /// The fields that keep overwritten values: every text of a project,
    /// scene, shot or layer.
    static func isTracked(_ key: FieldKey) -> Bool {
        switch key {
        case .title, .description, .caption, .notes, .name, .dialogue, .action: true
        default: false
        }
    }

    /// Keeps the `maximumOverwritten` latest, latest first.
    static func bounded(_ writes: [FieldWrite]) -> [FieldWrite] {
        Array(writes.sorted { $0.isLater(than: $1) }.prefix(maximumOverwritten))
    }

    /// The open writes given the register they belong to.
    func openWrites(kept register: Register<FieldValue>) -> [FieldWrite] {
        [FieldWrite(value: register.value, stamp: register.stamp, dot: keptBy, time: keptAt)] + overwritten
    }

    /// The field once its open writes are `open`: the latest is kept, the
    /// others are overwritten. Nil when there are none.
    static func keeping(_ open: [FieldWrite]) -> (record: FieldWrites, kept: FieldWrite)? {
        guard let kept = open.max(by: { $1.isLater(than: $0) }) else { return nil }
        let others = open.filter { $0.stamp != kept.stamp }
        return (FieldWrites(keptBy: kept.dot, keptAt: kept.time, overwritten: bounded(others)), kept)
    }

    /// The record after a write `write` made by the change `context`, given the
    /// field's register before it (nil: never written), and the write the
    /// field then shows (the register's new value).
    static func after(
        _ write: FieldWrite, in context: WriteContext, current: Register<FieldValue>?, record: FieldWrites?
    ) -> (record: FieldWrites, kept: FieldWrite) {
        guard let current else { return (FieldWrites(keptBy: write.dot, keptAt: write.time), write) }
        let record = record ?? FieldWrites(keptBy: nil, keptAt: 0)
        // What the write has seen it replaces; what it has not seen stays
        // open beside it (it was written concurrently: neither saw the other,
        // since changes apply in causal order).
        let open = record.openWrites(kept: current).filter { !context.hasSeen($0.dot) } + [write]
        return keeping(open)!
    }

    /// The record of a field after merging two replicas' states: the open
    /// writes of both, less those that the other side had seen (and so
    /// replaced); `ours` and `theirs` are the two sides' version vectors.
    /// Also returns the write the field shows.
    static func merged(
        mine: (Register<FieldValue>, FieldWrites?)?, theirs: (Register<FieldValue>, FieldWrites?)?,
        ours: VersionVector, theirsVector: VersionVector
    ) -> (record: FieldWrites, kept: FieldWrite)? {
        func open(_ side: (Register<FieldValue>, FieldWrites?)?) -> [FieldWrite] {
            guard let (register, record) = side else { return [] }
            return (record ?? FieldWrites(keptBy: nil, keptAt: 0)).openWrites(kept: register)
        }
        let a = open(mine)
        let b = open(theirs)
        let inA = Set(a.map(\.stamp))
        let inB = Set(b.map(\.stamp))
        let top = (a + b).max { $1.isLater(than: $0) }?.stamp
        func survives(_ write: FieldWrite, otherVector: VersionVector, otherKnowsField: Bool) -> Bool {
            // A write of unknown origin (an old snapshot, a copy's baseline) is
            // kept as the winner, or when the other side never had the field.
            guard let dot = write.dot else { return write.stamp == top || !otherKnowsField }
            return dot.seq > otherVector[dot.replica]
        }
        var result = a.filter { inB.contains($0.stamp) || survives($0, otherVector: theirsVector, otherKnowsField: theirs != nil) }
        result += b.filter { !inA.contains($0.stamp) && survives($0, otherVector: ours, otherKnowsField: mine != nil) }
        return keeping(result)
    }
}

extension FieldKey {
    /// Whether a value this field held that a concurrent write overwrote is
    /// kept (`ProjectDocument.fieldConflicts`): every text field.
    package var keepsOverwrittenValues: Bool { FieldWrites.isTracked(self) }
}
