/// Changes held back until the changes they depend on arrive: per replica,
/// by sequence number. A replica's changes apply in sequence and each only
/// once its dependencies are in (`ReplicaCore.integrate`), so what arrives
/// early waits here, across calls and senders, bounded by the caller's
/// `HeldBackLimits`. Everything here passed admission (`ReplicaCore+Admission`):
/// re-deliveries are gone and, in a signed document, chains and signatures
/// were checked on arrival.
struct CausalBuffer: Sendable {
    private var held: [ReplicaID: [UInt64: HeldChange]] = [:]

    var isEmpty: Bool { held.isEmpty }

    /// The replicas with something held.
    var replicas: Dictionary<ReplicaID, [UInt64: HeldChange]>.Keys { held.keys }

    /// Changes held.
    var count: Int { held.values.reduce(0) { $0 + $1.count } }

    /// Bytes held.
    var bytes: Int { held.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.encoded.bytes.count } } }

    /// Bytes held that came from `origin`.
    func bytes(from origin: ChangeOrigin) -> Int {
        held.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + ($1.origin == origin ? $1.encoded.bytes.count : 0) } }
    }

    /// The change `seq` of `replica`, if held.
    subscript(replica: ReplicaID, seq: UInt64) -> HeldChange? { held[replica]?[seq] }

    /// How many changes of `replica` after `seq` are held.
    func count(of replica: ReplicaID, after seq: UInt64) -> Int { held[replica]?.keys.filter { $0 > seq }.count ?? 0 }

    /// Holds `changes` of `replica` (by sequence number), keeping a change already held.
    mutating func hold(_ changes: [UInt64: HeldChange], of replica: ReplicaID) {
        guard !changes.isEmpty else { return }
        held[replica, default: [:]].merge(changes) { a, _ in a }
    }

    /// Takes the change `seq` of `replica` out (it applied).
    mutating func remove(_ replica: ReplicaID, seq: UInt64) {
        held[replica]?[seq] = nil
        if held[replica]?.isEmpty == true { held[replica] = nil }
    }

    /// Drops the change `seq` of `replica` and every later one of it: it can
    /// never apply, and they depend on it.
    mutating func drop(_ replica: ReplicaID, from seq: UInt64) {
        held[replica] = held[replica]?.filter { $0.key < seq }
        if held[replica]?.isEmpty == true { held[replica] = nil }
    }

    /// Keeps only the changes of `replica` after `seq` (a snapshot brought the
    /// rest), or none of them.
    mutating func keep(_ replica: ReplicaID, after seq: UInt64?) {
        guard let seq else {
            held[replica] = nil
            return
        }
        held[replica] = held[replica]?.filter { $0.key > seq }
        if held[replica]?.isEmpty == true { held[replica] = nil }
    }

    /// Forgets what came from `origin` (a peer that went away; whoever has
    /// those changes sends them again).
    mutating func drop(from origin: ChangeOrigin) {
        held = held.compactMapValues { changes in
            let left = changes.filter { $0.value.origin != origin }
            return left.isEmpty ? nil : left
        }
    }

    /// Drops copies of changes `vector` covers (they arrived again and applied).
    mutating func dropCovered(by vector: VersionVector) {
        guard !held.isEmpty else { return }
        held = held.compactMapValues { changes in
            let left = changes.filter { $0.key > vector[$0.value.change.replica] }
            return left.isEmpty ? nil : left
        }
    }
}
