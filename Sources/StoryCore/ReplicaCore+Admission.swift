/// Admission: what a change must prove before a replica takes it. Every
/// arrival is checked against re-delivery (the same bytes, or a copied
/// database); in a signed document, each replica's chain must continue
/// (`Authorship`: declarations bind replicas to identities, signatures cover
/// runs), and when a change applies, its author must have the right to make
/// it at its causal point (the access list). `ReplicaCore.integrate` runs
/// these; the causal buffer (`ReplicaCore.pending`) holds what passed them
/// until its dependencies arrive.
extension ReplicaCore {
    /// Drops re-deliveries from `fresh` and, in a signed document,
    /// authenticates what is new (see `integrate`), in place: what is left are
    /// the new changes in arrival order.
    func admitArrivals(
        _ fresh: inout [HeldChange], origin: ChangeOrigin, report: inout ApplyReport
    ) throws(DocumentError) {
        // The newest sequence number of each replica that arrived in this call:
        // only a change at or below it can repeat one of the call's own. The
        // index of the call's changes is built only when one does (a batch in
        // order, the usual case, spares a hash insert per change).
        // (A list searched linearly: a batch names a handful of replicas, and
        // most of its changes are the previous one's replica, looked at first.)
        var newestArrived: [(replica: ReplicaID, seq: UInt64)] = []
        var lastArrived = -1
        var arrived: [ChangeKey: Int]?
        // The hash of each replica's newest change in the call: the current
        // replica's in `recentHash`, the others' in the table (written when
        // the replica changes, so a batch in runs hashes no key per change).
        var lastHash: [ReplicaID: (seq: UInt64, hash: Digest32)] = [:]
        var recentHash: (replica: ReplicaID, seq: UInt64, hash: Digest32)?
        var declared: [ReplicaID: AuthorRecord] = [:]
        // Re-deliveries, removed at the end (rare: a batch seldom repeats).
        var repeated: Set<Int> = []
        for index in fresh.indices {
            let replica = fresh[index].change.replica
            let seq = fresh[index].change.seq
            if seq <= versionVector[replica] {
                try checkSameAsLogged(fresh[index].encoded)
                report.duplicates += 1
                repeated.insert(index)
                continue
            }
            let key = ChangeKey(replica: replica, seq: seq)
            if lastArrived < 0 || newestArrived[lastArrived].replica != replica {
                lastArrived = newestArrived.firstIndex { $0.replica == replica } ?? -1
                if lastArrived < 0 {
                    newestArrived.append((replica, 0))
                    lastArrived = newestArrived.count - 1
                }
            }
            if seq <= newestArrived[lastArrived].seq, arrived == nil {
                var earlier: [ChangeKey: Int] = [:]
                for other in 0..<index where !repeated.contains(other) {
                    earlier[ChangeKey(replica: fresh[other].change.replica, seq: fresh[other].change.seq)] = other
                }
                arrived = earlier
            }
            if let earlier = pending[replica, seq]?.encoded ?? arrived?[key].map({ fresh[$0].encoded }) {
                guard earlier.bytes == fresh[index].encoded.bytes else {
                    throw DocumentError(
                        .conflict, "two different changes claim sequence number \(seq) of replica \(replica)")
                }
                report.duplicates += 1
                repeated.insert(index)
                continue
            }
            if let crypto {
                if seq == 1 {
                    guard let declaration = fresh[index].change.declaration else {
                        throw DocumentError(.unauthenticated, "the first change of replica \(replica) does not say who its author is")
                    }
                    let record = try Authorship.verify(declaration, of: replica, crypto: crypto)
                    fresh[index].author = record
                    declared[replica] = record
                } else if fresh[index].change.declaration != nil {
                    throw DocumentError(.unauthenticated, "only a replica's first change declares its author (change \(seq) of \(replica))")
                }
                let previous: Digest32
                let last: (seq: UInt64, hash: Digest32)?
                if let recent = recentHash, recent.replica == replica {
                    last = (recent.seq, recent.hash)
                } else {
                    last = lastHash[replica]
                }
                if let last, last.seq == seq - 1 {
                    previous = last.hash
                } else if seq - 1 == versionVector[replica] {
                    if seq == 1 {
                        previous = Authorship.chainStart(document: document, replica: replica, crypto: crypto)
                    } else if let head = heads[replica], head.seq == seq - 1 {
                        previous = head.hash
                    } else {
                        throw DocumentError(
                            .unauthenticated,
                            "replica \(replica) cannot continue here: its earlier changes came without their signatures")
                    }
                } else if let hash = pending[replica, seq - 1]?.hash {
                    previous = hash
                } else {
                    throw DocumentError(
                        .unauthenticated, "change \(seq) of replica \(replica) arrived without change \(seq - 1) before it")
                }
                let hash = crypto.sha256(previous, fresh[index].encoded.body)
                fresh[index].hash = hash
                if let recent = recentHash, recent.replica != replica { lastHash[recent.replica] = (recent.seq, recent.hash) }
                recentHash = (replica, seq, hash)
            }
            fresh[index].origin = origin
            newestArrived[lastArrived].seq = max(newestArrived[lastArrived].seq, seq)
            arrived?[key] = index
        }
        if !repeated.isEmpty { fresh = fresh.indices.filter { !repeated.contains($0) }.map { fresh[$0] } }
        guard let crypto, let author else {
            // An open document has no signatures: any change may end a run.
            for index in fresh.indices { fresh[index].encoded.isAnchor = true }
            return
        }
        // Our own store's changes were checked when stored; its anchors are as stored.
        guard origin != .store else { return }
        // The last change of each replica in the call ends its run. Found
        // walking back: a change followed by one of its own replica does not,
        // and the set is asked only where the replica changes.
        var endsRun = [Bool](repeating: false, count: fresh.count)
        var seen: Set<ReplicaID> = []
        var following: ReplicaID?
        for index in fresh.indices.reversed() where fresh[index].change.replica != following {
            following = fresh[index].change.replica
            endsRun[index] = seen.insert(fresh[index].change.replica).inserted
        }
        for index in fresh.indices {
            // Its fields read where they are: a copy of the change cost a
            // reference count of each of its arrays.
            let replica = fresh[index].change.replica
            let seq = fresh[index].change.seq
            guard endsRun[index] || Authorship.isCheckedInRun(seq: seq, bytes: fresh[index].encoded.bytes.count) else {
                // Covered by a later signature; one sent here anyway is not
                // checked, so it is not kept either, and the change is no anchor
                // here whatever the caller marked it.
                fresh[index].encoded = fresh[index].encoded.withSignature(nil).markedAnchor(false)
                fresh[index].change.signature = nil
                continue
            }
            guard let signature = fresh[index].change.signature else {
                throw DocumentError(
                    .unauthenticated, "change \(seq) of replica \(replica) arrived without the signature it needs")
            }
            guard
                let key = authors[replica]?.publicKey ?? declared[replica]?.publicKey
                    ?? pending[replica, 1]?.author?.publicKey
            else {
                throw DocumentError(.unauthenticated, "replica \(replica) has no known author")
            }
            guard
                crypto.isValidSignature(
                    signature[...], of: Authorship.signedMessage(fresh[index].hash!), publicKey: key)
            else {
                throw DocumentError(.unauthenticated, "change \(seq) of replica \(replica) has a bad signature")
            }
            fresh[index].encoded.isAnchor = true
        }
        if let own = fresh.first(where: { $0.change.replica == author.replica }) {
            // Authenticated above: signed with this identity's key on this replica's chain.
            throw DocumentError(
                .replicaReused,
                "a peer sent change \(own.change.seq) of this replica, signed with this machine's key, which this replica never made: another copy of this database is in use"
            )
        }
    }

    /// Checks that the author of `change` may make it at the causal point
    /// `vector` (which includes the change itself), and records its access
    /// operations: the founding change first, then write rights, then each
    /// `setAccess` against the list as it stands before it.
    /// - Throws: `DocumentError(.forbidden)`; the list is then as it was only if the caller restores it.
    mutating func admit(
        _ change: Change, by author: AuthorRecord, at vector: VersionVector, report: inout ApplyReport
    ) throws(DocumentError) {
        var first = 0
        if case .genesis(let salt) = change.operations.first {
            guard !access.isFounded else {
                throw DocumentError(.forbidden, "change \(change.seq) of \(change.replica) founds a document that already has an owner")
            }
            guard change.seq == 1, change.dependencies.isEmpty else {
                throw DocumentError(.forbidden, "a founding change must be its author's first and depend on nothing")
            }
            guard let crypto, Authorship.documentID(owner: author.peer, salt: salt, crypto: crypto) == document else {
                throw DocumentError(.forbidden, "the founding change does not derive this document's id: \(author.peer.short) does not own it")
            }
            access.owner = author.peer
            access.ownerReplica = change.replica
            access.salt = salt
            report.accessChanged = true
            first = 1
        }
        let role = access.role(of: author.peer, at: vector)
        guard role.canWrite else {
            let why = access.isFounded ? "is \(role == .none ? "not a member" : "a \(role)") of this document" : "changes a document with no owner"
            throw DocumentError(.forbidden, "\(author.peer.short) \(why) and may not change it (change \(change.seq) of \(change.replica))")
        }
        for index in first..<change.operations.count {
            switch change.operations[index] {
            case .genesis:
                throw DocumentError(.forbidden, "only a document's first operation founds it")
            case .setAccess(let target, let newRole):
                try access.check(newRole, for: target, by: author.peer, at: vector)
                access.add(
                    AccessGrant(id: change.opID(at: index), seq: change.seq, author: author.peer, target: target, role: newRole))
                report.accessChanged = true
            default:
                continue
            }
        }
    }
}
