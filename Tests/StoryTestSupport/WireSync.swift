package import StoryCore

/// Moves changes between documents the way daemons do: version vectors and
/// change batches are encoded to bytes and decoded on the other side.
package enum WireSync {
    /// The encoded batch of what `source` has and `target` lacks (nil if nothing).
    package static func batch(from source: ProjectDocument, to target: VersionVector) throws -> [UInt8]? {
        let vector = try VersionVector(decoding: target.encoded()[...])
        guard case .changes(let changes) = source.changes(since: vector) else {
            throw SyncTestError.snapshotRequired
        }
        return changes.isEmpty ? nil : ChangeBatch.encode(changes)
    }

    /// Both directions of a full exchange between two project replicas.
    package static func exchange(_ a: inout ProjectDocument, _ b: inout ProjectDocument) throws {
        try send(from: a, to: &b)
        try send(from: b, to: &a)
    }

    /// Both directions of a full exchange between two library replicas.
    package static func exchange(_ a: inout LibraryDocument, _ b: inout LibraryDocument) throws {
        for (source, targetIsB) in [(a, true), (b, false)] {
            let vector = targetIsB ? b.versionVector : a.versionVector
            guard case .changes(let changes) = source.changes(since: vector) else { throw SyncTestError.snapshotRequired }
            guard !changes.isEmpty else { continue }
            let bytes = ChangeBatch.encode(changes)
            if targetIsB { try b.apply(batch: bytes[...]) } else { try a.apply(batch: bytes[...]) }
        }
    }

    /// Sends what `target` lacks: changes, or a snapshot when the source's log
    /// no longer reaches back far enough (as the sync protocol does).
    /// Brings `target` (a copy of the same library) up to `source`.
    package static func send(from source: LibraryDocument, to target: inout LibraryDocument) throws {
        switch source.changes(since: try VersionVector(decoding: target.versionVector.encoded()[...])) {
        case .changes(let changes):
            if !changes.isEmpty { try target.apply(batch: ChangeBatch.encode(changes)[...]) }
        case .snapshotRequired:
            try target.merge(snapshot: source.snapshot())
        }
    }

    package static func send(from source: ProjectDocument, to target: inout ProjectDocument) throws {
        switch source.changes(since: try VersionVector(decoding: target.versionVector.encoded()[...])) {
        case .changes(let changes):
            if !changes.isEmpty { try target.apply(batch: ChangeBatch.encode(changes)[...]) }
        case .snapshotRequired:
            try target.merge(snapshot: source.snapshot())
        }
    }

    /// Both directions of a full exchange between two replicas of an array.
    package static func exchange(_ docs: inout [ProjectDocument], _ i: Int, _ j: Int) throws {
        guard i != j else { return }
        try send(from: docs[i], to: &docs[j])
        try send(from: docs[j], to: &docs[i])
    }

    /// Both directions of a full exchange between two libraries of an array
    /// (a snapshot when changes were overtaken by one).
    package static func exchange(_ docs: inout [LibraryDocument], _ i: Int, _ j: Int) throws {
        guard i != j else { return }
        for (source, target) in [(i, j), (j, i)] {
            switch docs[source].changes(since: docs[target].versionVector) {
            case .changes(let changes):
                if !changes.isEmpty { try docs[target].apply(batch: ChangeBatch.encode(changes)[...]) }
            case .snapshotRequired:
                try docs[target].merge(snapshot: docs[source].snapshot())
            }
        }
    }

    /// Syncs every replica with the first, twice, so all end with the same state.
    package static func syncAll(_ docs: inout [ProjectDocument]) throws {
        guard docs.count > 1 else { return }
        for _ in 0..<2 {
            for i in 1..<docs.count { try exchange(&docs, 0, i) }
        }
    }

    /// Syncs every library with the first, twice.
    package static func syncAll(_ docs: inout [LibraryDocument]) throws {
        guard docs.count > 1 else { return }
        for _ in 0..<2 {
            for i in 1..<docs.count { try exchange(&docs, 0, i) }
        }
    }

    /// Every change a document holds, decoded (for inspecting operations).
    package static func allChanges(of doc: ProjectDocument) throws -> [Change] {
        guard case .changes(let changes) = doc.changes(since: VersionVector()) else { throw SyncTestError.snapshotRequired }
        return try changes.map { try $0.decoded() }
    }
}

/// Failures of the sync helpers.
package enum SyncTestError: Error {
    case snapshotRequired
}

/// Random stroke points inside the frame.
package func randomPoints(_ count: Int, using generator: inout SeededGenerator) -> [Point] {
    var x = Double.random(in: 0.2...0.8, using: &generator)
    var y = Double.random(in: 0.2...0.8, using: &generator)
    return (0..<count).map { _ in
        x = min(max(x + Double.random(in: -0.01...0.01, using: &generator), 0), 1)
        y = min(max(y + Double.random(in: -0.01...0.01, using: &generator), 0), 1)
        return Point(x: x, y: y, pressure: Double.random(in: 0...1, using: &generator))
    }
}
