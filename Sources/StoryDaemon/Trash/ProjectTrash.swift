import Logging
import StoryAPI
import StoryCore
import StoryStore

/// The trash (docs/crdt.md, "Deleting a project"): deleting a project for
/// everyone who shares it, or hiding it here when this daemon may only read
/// it; restoring; purging after the retention or by hand; and the library
/// following what is in the trash, whoever put it there.
struct ProjectTrash: Sendable {
    let store: Store
    let library: LibraryService
    let clock: WallClock
    /// How long a project deleted for everyone stays before it is purged here; nil: never.
    let retention: TrashRetention?
    let logger: Logger

    /// How a delete was made.
    enum Scope: Sendable {
        /// A signed change: in the trash on every peer that shares it.
        case everyone
        /// This daemon may only read it: hidden here, nothing synced.
        case thisMachine
    }

    /// Deletes a project: for everyone when this daemon is an owner or
    /// editor of it, else (a reader, or no longer a member) hidden on this
    /// machine only. Its entries in this daemon's library go to the trash.
    func delete(_ id: DocumentID) async throws -> Scope {
        let now = clock.milliseconds
        let scope: Scope = try await store.localRole(of: id).canWrite ? .everyone : .thisMachine
        switch scope {
        case .everyone:
            if try await store.setDeletedForEveryone(true, project: id, at: now) { logger.info("deleted project \(id) for everyone") }
        case .thisMachine:
            try await store.setHidden(true, of: id, at: now)
            logger.info("hid project \(id) on this machine only (it may only read it)")
        }
        await followInLibrary(id)
        return scope
    }

    /// Takes a project out of the trash: restored for everyone if it was
    /// deleted for everyone (an owner's or editor's right), shown again if it
    /// was hidden here. Nothing changes when it may not be restored.
    /// - Throws: `APIError(.readOnly)` when it was deleted for everyone and
    ///   this daemon may only read it.
    func restore(_ id: DocumentID) async throws {
        let record = try await store.document(id)
        if record.isDeletedForEveryone {
            guard try await store.localRole(of: id).canWrite else {
                let by = record.deletedBy.map { " by \($0.short)" } ?? ""
                throw APIError(
                    .readOnly,
                    "read-only: \(record.name ?? id.description) was deleted for everyone\(by); only an owner or editor can restore it, "
                        + "and this machine may only read it")
            }
        }
        let now = clock.milliseconds
        // Both flags in one transaction: restored and shown, or neither.
        try await store.batch { store in
            if record.isDeletedForEveryone { try store.setDeletedForEveryone(false, project: id, at: now) }
            if record.isHidden { try store.setHidden(false, of: id, at: now) }
        }
        await followInLibrary(id)
    }

    /// What a purge did, and the peers it did not wait for.
    struct Purged: Sendable {
        let record: PurgedRecord
        /// Configured peers it is shared with that never acknowledged the delete.
        let awaiting: [PeerID]
    }

    /// Purges a project in the trash here, now. A project deleted for
    /// everyone whose delete some configured peer has not acknowledged yet is
    /// refused unless `force`: purged here, the delete might never reach that
    /// peer, which would keep the project and later offer it back.
    /// - Throws: `APIError(.conflict)` when it is not in the trash, or peers
    ///   await the delete (naming them) without `force`.
    func purge(_ id: DocumentID, force: Bool) async throws -> Purged {
        let record = try await store.document(id)
        guard record.isDeleted else {
            throw APIError(.conflict, "\(record.name ?? id.description) is not in the trash: delete it first (storyteller projects delete)")
        }
        let awaiting = try await store.peersAwaitingDeletion(of: id)
        guard awaiting.isEmpty || force else {
            throw APIError(
                .conflict,
                "\(awaiting.map(\.short).joined(separator: ", ")) has not received the delete of \(record.name ?? id.description) yet; "
                    + "purged now, it would keep the project and could offer it back: wait until it has (storyteller status), or purge with force")
        }
        let purged = try await store.purge(id, at: clock.milliseconds)
        let early = awaiting.isEmpty ? "" : " before \(awaiting.map(\.short).joined(separator: ", ")) had the delete"
        logger.notice("purged project \(id) (\(record.name ?? "untitled")) from the trash\(early)")
        return Purged(record: purged, awaiting: awaiting)
    }

    // MARK: - Maintenance

    /// Purges what the retention says is due: projects deleted for everyone
    /// longer than it (once every configured peer they are shared with has
    /// the delete), and nodes of this daemon's library that have been in its
    /// trash longer than it. Failures are logged; the next pass tries again.
    func purgeExpired() async {
        guard let retention else { return }
        let now = clock.milliseconds
        do {
            for (record, awaiting) in try await store.expiredProjects(retention: retention.milliseconds, now: now) {
                guard awaiting.isEmpty else {
                    logger.debug(
                        "project \(record.id) is due for purging but waits until \(awaiting.map(\.short).joined(separator: ", ")) has the delete")
                    continue
                }
                do {
                    try await store.purge(record.id, at: now)
                    logger.notice("purged project \(record.id) (\(record.name ?? "untitled")): deleted for everyone more than \(retention) ago")
                } catch {
                    // Restored meanwhile, or the disk failed: the others go on, the next pass looks again.
                    logger.error("cannot purge project \(record.id): \(error)")
                }
            }
        } catch {
            logger.error("cannot find the projects due for purging: \(error)")
        }
        do {
            let count = try await purgeExpiredLibraryNodes(retention: retention, now: now)
            if count > 0 { logger.notice("purged \(count) library node(s) in the trash for more than \(retention)") }
        } catch {
            logger.error("purging the library's trash failed: \(error)")
        }
    }

    /// Purges the nodes in this daemon's library trash (with what they hold)
    /// that went there longer than the retention ago (their `updatedAt`, which
    /// the move into the trash raised), unless a project they list is still in
    /// this machine's trash: its entry waits for it, so a restore of the
    /// project can still bring the entry back. Only the library's owner does
    /// this (the library here is this daemon's own), so no two timers race.
    /// Returns how many nodes were purged.
    func purgeExpiredLibraryNodes(retention: TrashRetention, now: Int64) async throws -> Int {
        let libraryID = try await library.id()
        let view = try await store.library(libraryID).view
        let expired = view.children(of: .trash).filter { now - $0.updatedAt >= retention.milliseconds }
        guard !expired.isEmpty else { return 0 }
        var children: [OpID: [LibraryNodeView]] = [:]
        for node in view.nodes { children[node.parent, default: []].append(node) }
        let waiting = Set(try await store.projectsInTrash().map(\.id))
        func holdsWaitingProject(_ node: LibraryNodeView) -> Bool {
            var stack = [node]
            while let next = stack.popLast() {
                if let document = next.document, waiting.contains(document) { return true }
                stack += children[next.id] ?? []
            }
            return false
        }
        let due = expired.filter { !holdsWaitingProject($0) }.map(\.id)
        guard !due.isEmpty else { return 0 }
        _ = try await store.editLibrary(libraryID, at: now) { editor in
            for node in due where editor.isInTrash(node) == true { try editor.purge(node) }
        }
        return due.count
    }

    // MARK: - The library follows the trash

    /// Follows the store's trash events (local deletes, and deletes and
    /// restores arriving from peers) until the stream ends. First, the
    /// projects in the trash take their entries along, in case the daemon
    /// stopped between a delete and its library edit.
    func run() async {
        let events = await store.events(lossless: true)
        do {
            for record in try await store.projectsInTrash() { await followInLibrary(record.id) }
        } catch {
            logger.error("cannot list the projects in the trash: \(error)")
        }
        for await event in events {
            switch event {
            case .trashChanged(let id): await followInLibrary(id)
            // A shared folder deleted or restored (here or by a peer): its entries follow.
            case .documentChanged(let id, _, _): await library.followFolderTrash(id)
            default: continue
            }
        }
    }

    /// Puts the project's entries in the libraries here (the main one and
    /// shared folders) in the trash if
    /// the project is in the trash here, or back where they were (entries
    /// directly in the trash) if not. One library edit, on the store's
    /// actor, so two calls cannot both move an entry. A purged project's
    /// entries stay where they are (in the trash).
    func followInLibrary(_ id: DocumentID) async {
        do {
            guard let record = try await store.documentIfPresent(id), record.kind == .project else { return }
            let inTrash = record.isDeleted
            // The main library and the shared folders this daemon may edit (every
            // editor of a shared folder does the same move: they converge).
            for libraryID in try await library.set().views.keys.sorted() {
                guard try await store.localRole(of: libraryID) >= .editor else { continue }
                let entries = try await store.library(libraryID).entries(for: id)
                guard !entries.isEmpty else { continue }
                _ = try await store.editLibrary(libraryID, at: clock.milliseconds) { editor in
                    for entry in entries {
                        switch (inTrash, editor.isInTrash(entry)) {
                        case (true, false): try editor.delete(entry)
                        case (false, true) where editor.parent(of: entry) == .trash: try editor.restore(entry)
                        default: continue
                        }
                    }
                }
            }
        } catch {
            logger.error("cannot move the library entries of project \(id) with it to or from the trash: \(error)")
        }
    }
}
