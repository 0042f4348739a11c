import Foundation
import StoryCore

/// What the store needs of a project or library document.
protocol StoredDocument: Sendable {
    /// What kind of document this type is.
    static var kind: DocumentKind { get }
    var id: DocumentID { get }
    var versionVector: VersionVector { get }
    var isFounded: Bool { get }
    var isLegacy: Bool { get }
    var localRole: Role { get }
    var members: [(peer: PeerID, role: Role)] { get }
    var heldBackBytes: Int { get }
    func role(of peer: PeerID) -> Role
    func heldBackBytes(from origin: ChangeOrigin) -> Int
    func snapshot() -> [UInt8]
    func changes(since other: VersionVector) -> ChangesSince
    mutating func apply(
        _ received: consuming ReceivedChanges, origin: ChangeOrigin, limits: HeldBackLimits?,
        beforeCommit: (ApplyReport) throws -> Void
    ) throws -> ApplyReport
    mutating func merge(snapshot bytes: [UInt8]) throws -> [any Error]
    mutating func setAccess(_ role: Role, for peer: PeerID, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws
        -> EncodedChange
    mutating func undo(session: String, older: Bool, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> UndoOutcome
    mutating func redo(session: String, older: Bool, at time: Int64, beforeCommit: (EncodedChange) throws -> Void) throws -> UndoOutcome
    var recordsUndoStorage: Bool { get set }
    mutating func takeUndoStorageChanges() -> [UndoStorageChange]
    mutating func restoreUndo(session: String, stack: UndoStack, records: [(position: UInt64, bytes: [UInt8])]) throws(CodecError)
    mutating func compactChangeLog(upTo horizon: VersionVector)
    mutating func dropHeldBack(from origin: ChangeOrigin)
}

extension ProjectDocument: StoredDocument {
    static var kind: DocumentKind { .project }
}

extension LibraryDocument: StoredDocument {
    static var kind: DocumentKind { .library }
}

/// A document that can be founded and take another's content (a copy).
protocol CopyableDocument: StoredDocument {
    static func found(
        by author: LocalAuthor, at time: Int64, salt: UInt128, beforeCommit: (DocumentID, EncodedChange) throws -> Void
    ) throws -> (document: Self, change: EncodedChange)
    mutating func adoptContent(of other: Self)
}

extension ProjectDocument: CopyableDocument {}
extension LibraryDocument: CopyableDocument {}
