/// The part of a document that operations change: a project or a library.
protocol ReplicatedState: Sendable {
    associatedtype JournalEntry: Sendable

    init()

    /// Applies one operation, checking it first; records what it changed.
    mutating func apply(_ op: Operation, id: OpID, time: Int64, journal: inout [JournalEntry]) throws(DocumentError)

    /// Undoes journal entries, newest first.
    mutating func rollback(_ journal: [JournalEntry])

    /// Joins another state into this one.
    mutating func merge(_ other: Self)

    /// Joins another replica's state covering `theirs` into this one covering
    /// `ours`; `known` is the last operation counter of each replica whose
    /// changes this state holds (every operation of that replica up to it is in).
    mutating func merge(_ other: Self, ours: VersionVector, theirs: VersionVector, known: [ReplicaID: UInt64])

    /// Says which change the operations applied next belong to.
    mutating func begin(_ context: WriteContext)

    /// Replaces the point blobs of local strokes by the same bytes inside the
    /// encoded change, so the document and its change log share one copy.
    mutating func adoptPoints(_ blobs: [(id: OpID, bytes: ArraySlice<UInt8>)])

    /// Moves the point blobs of `replica`'s changes in `moved` (ascending by
    /// counter): those of a change's operations `counters` that lie inside
    /// its `old` bytes (the same storage, not merely equal bytes) to the same
    /// place in `new`: the change log packed the changes they came in.
    mutating func movePoints(of replica: ReplicaID, moved: [MovedChange])
}

extension ReplicatedState {
    mutating func adoptPoints(_ blobs: [(id: OpID, bytes: ArraySlice<UInt8>)]) {}

    mutating func movePoints(of replica: ReplicaID, moved: [MovedChange]) {}

    mutating func merge(_ other: Self, ours: VersionVector, theirs: VersionVector, known: [ReplicaID: UInt64]) { merge(other) }

    mutating func begin(_ context: WriteContext) {}
}

extension ProjectState: ReplicatedState {}
extension LibraryState: ReplicatedState {}
