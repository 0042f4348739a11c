import StoryCore

extension Store {
    /// Runs `body` as one transaction: every edit, apply, share or
    /// acknowledgement in it commits together, with one disk sync instead of
    /// one each (a peer catching up on a thousand projects, sharing a folder
    /// of them). Each operation inside stays all or nothing on its own (a
    /// savepoint): one that throws leaves the others. Events are published
    /// after the commit; if the commit itself fails, the documents touched are
    /// reloaded from the database, so memory never holds what the disk lost.
    /// Batches do not nest: an inner one runs inside the outer.
    package func batch<T: Sendable>(_ body: @Sendable (isolated Store) throws -> T) throws -> T {
        guard batchEvents == nil else { return try body(self) }
        batchEvents = []
        batchTouched = []
        defer {
            batchEvents = nil
            batchTouched = []
        }
        let value: T
        do {
            value = try database.connection.transaction { try body(self) }
        } catch {
            for id in batchTouched { loaded[id] = nil }
            throw error
        }
        let events = batchEvents ?? []
        batchEvents = nil
        for event in events { broadcaster.publish(event) }
        return value
    }
}
