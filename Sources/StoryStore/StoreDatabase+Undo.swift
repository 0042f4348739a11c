import StoryCore

/// The stored undo history (table `undo_records`).
extension StoreDatabase {
    /// Every stored undo record of a document: session, stack, position, bytes.
    func undoRecords(of document: DocumentID) throws -> [(session: String, stack: UndoStack, position: UInt64, bytes: [UInt8])] {
        try connection.query(
            "SELECT session, stack, position, record FROM undo_records WHERE doc = ? ORDER BY session, stack, position", [document.blob]
        ) { row in
            (row.text(0) ?? "", row.int64(1) == 1 ? .redo : .undo, UInt64(bitPattern: row.int64(2)), row.bytes(3))
        }
    }

    /// Writes what changed in a document's undo history, in one transaction.
    func apply(_ changes: [UndoStorageChange], to document: DocumentID) throws {
        guard !changes.isEmpty else { return }
        try connection.transaction {
            for change in changes {
                switch change {
                case .push(let session, let stack, let position, let record), .replace(let session, let stack, let position, let record):
                    try connection.run(
                        "INSERT OR REPLACE INTO undo_records (doc, session, stack, position, record) VALUES (?, ?, ?, ?, ?)",
                        [document.blob, .text(session), .integer(Int64(stack.rawValue)), .integer(Int64(bitPattern: position)), .blob(record)])
                case .remove(let session, let stack, let position):
                    try connection.run(
                        "DELETE FROM undo_records WHERE doc = ? AND session = ? AND stack = ? AND position = ?",
                        [document.blob, .text(session), .integer(Int64(stack.rawValue)), .integer(Int64(bitPattern: position))])
                case .clear(let session, let stack):
                    try connection.run(
                        "DELETE FROM undo_records WHERE doc = ? AND session = ? AND stack = ?",
                        [document.blob, .text(session), .integer(Int64(stack.rawValue))])
                }
            }
        }
    }
}
