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

    /// Replaces the point blobs of local strokes by the same bytes inside the
    /// encoded change, so the document and its change log share one copy.
    mutating func adoptPoints(_ blobs: [(id: OpID, bytes: ArraySlice<UInt8>)])
}

extension ReplicatedState {
    mutating func adoptPoints(_ blobs: [(id: OpID, bytes: ArraySlice<UInt8>)]) {}
}

extension ProjectState: ReplicatedState {}
extension LibraryState: ReplicatedState {}
