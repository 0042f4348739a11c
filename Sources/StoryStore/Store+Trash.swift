import Foundation
package import StoryCore

/// The trash: projects deleted for everyone (document state, mirrored into
/// their records), projects hidden here only, and purging (docs/crdt.md,
/// "Deleting a project").
extension Store {
    /// Runs a change of a document and, in the same transaction, mirrors a
    /// project's deleted flag into its record: listings, sync and the library
    /// never disagree with the document. If the transaction fails after the
    /// document changed in memory, the document is dropped (it loads again
    /// from the database), so memory never holds what the disk lost.
    func changingDocument<T>(_ id: DocumentID, _ body: () throws -> T) throws -> T {
        var changed = false
        let overwritesBefore = (loaded[id] as? ProjectDocument)?.overwrites
        let (value, trashChanged): (T, Bool)
        do {
            (value, trashChanged) = try database.connection.transaction {
                let value = try body()
                changed = true
                guard let document = loaded[id] else { return (value, false) }
                try recordMediaReferences(of: id, in: document)
                try mirrorIndexes(of: id, in: document)
                return (value, try mirrorDeletion(of: id, in: document))
            }
        } catch {
            if changed { unload(id) }
            throw error
        }
        if trashChanged { publish(.trashChanged(id)) }
        if let project = loaded[id] as? ProjectDocument, project.overwrites != (overwritesBefore ?? 0) {
            publish(.fieldsOverwritten(id))
        }
        return value
    }

    /// Writes a project's deleted flag, who deleted it and when into its
    /// record when they differ from it. Returns whether it wrote.
    func mirrorDeletion(of id: DocumentID, in document: any StoredDocument) throws -> Bool {
        guard let project = document as? ProjectDocument else { return false }
        let deletion = project.deletion.map { (by: project.author(of: $0.replica), time: $0.time) }
        return try database.mirrorDeletion(deletion, of: id, seenAt: options.clock.milliseconds)
    }

    /// Hides a document on this machine only, or shows it again; nothing is
    /// synced (a reader's `projects delete`: it may not delete for others).
    /// - Throws: `StoreError(.notFound)` when there is no such document.
    package func setHidden(_ hidden: Bool, of id: DocumentID, at time: Int64) throws {
        if try database.setDocument(id, hidden: hidden, at: time) { publish(.trashChanged(id)) }
    }

    /// Deletes a project for everyone who shares it, or restores it: a
    /// signed change that syncs like any edit (only owners and editors may
    /// make it; every peer refuses anyone else's). Returns whether anything
    /// changed (deleting a deleted project does nothing).
    /// - Throws: `DocumentError(.forbidden)` ("read-only…") when this daemon
    ///   may only read it; `StoreError` for the disk.
    @discardableResult
    package func setDeletedForEveryone(_ deleted: Bool, project id: DocumentID, at time: Int64) throws -> Bool {
        try editProject(id, at: time) { editor in
            if deleted { try editor.deleteProject() } else { try editor.restoreProject() }
        }.change != nil
    }

    // MARK: - Purging

    /// The configured peers the project is shared with that have not
    /// acknowledged the change that deleted it: until they have, purging it
    /// here could lose the delete for them (it may have been made here,
    /// offline). Empty when it is not deleted for everyone, or that change is
    /// no longer stored (compaction keeps a change until every configured
    /// member acknowledged it, so one that is gone reached them all).
    package func peersAwaitingDeletion(of id: DocumentID) throws -> [PeerID] {
        let project = try project(id)
        guard let deletion = project.deletion,
            let seq = try database.storedChangeSeq(of: id, replica: deletion.replica, holding: deletion.operation.counter)
        else { return [] }
        let acknowledged = try database.acknowledged(id)
        let configured = Set(try database.peers().filter { $0.state == .configured }.map(\.id))
        return try database.members(of: id).map(\.peer).filter { peer in
            peer != identity.peer && configured.contains(peer) && (acknowledged[peer]?[deletion.replica] ?? 0) < seq
        }
    }

    /// Projects deleted for everyone whose retention has passed at `now`
    /// (counted from `DocumentRecord.retentionStart`), with the peers each
    /// still waits for (`peersAwaitingDeletion`). Projects only hidden here
    /// are never purged by time: they are alive for the others.
    package func expiredProjects(retention: Int64, now: Int64) throws -> [(record: DocumentRecord, awaiting: [PeerID])] {
        var result: [(DocumentRecord, [PeerID])] = []
        for record in try database.documents(inTrash: true) where record.kind == .project {
            guard let start = record.retentionStart, now - start >= retention else { continue }
            result.append((record, try peersAwaitingDeletion(of: record.id)))
        }
        return result
    }

    /// Purges a project in the trash here: its changes, snapshot, members,
    /// acknowledgements and undo records go, in one transaction, and what it
    /// held is remembered (`purgedDocument`). Local: peers keep their copies.
    /// An offer of it later that brings nothing new is ignored; one with
    /// changes made since is taken back (into the trash if still deleted).
    /// - Throws: `DocumentError(.invalidOperation)` when it is not a project
    ///   in the trash; `StoreError` for the disk (nothing is purged then).
    @discardableResult
    package func purge(_ id: DocumentID, at time: Int64) throws -> PurgedRecord {
        let record = try document(id)
        guard record.kind == .project, record.isDeleted else {
            throw DocumentError(.invalidOperation, "\(record.name ?? id.description) is not a project in the trash; delete it first")
        }
        let version = try storedVersion(of: record)
        try database.connection.transaction { try database.purgeDocument(record, version: version, at: time) }
        unload(id)
        unsnapshotted[id] = nil
        if batchEvents != nil { batchTouched.remove(id) }
        publish(.trashChanged(id))
        // Sessions drop it (it is no longer shared with anyone here).
        publish(.accessChanged(id))
        return PurgedRecord(id: id, kind: record.kind, name: record.name, version: version, wasHidden: record.isHidden, purged: time)
    }

    /// The projects in the trash here (deleted for everyone, or hidden),
    /// without the others. O(documents in the trash).
    package func projectsInTrash() throws -> [DocumentRecord] {
        try database.documents(inTrash: true).filter { $0.kind == .project }
    }

    /// What is remembered of a document purged here (nil: never purged, or
    /// taken back since).
    package func purgedDocument(_ id: DocumentID) throws -> PurgedRecord? { try database.purgedDocument(id) }
}
