import Foundation
import Hummingbird
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore

/// What requests name, found or refused in the user's words: peer and
/// project ids, stored projects (now or at a version), configured peers,
/// objects in a project, the pictures and sounds an edit may use. Every
/// controller that takes an id holds one.
struct ResourceLookup: Sendable {
    let store: Store
    let identity: Identity
    /// Which of a project's pictures and sounds it may use here (one rule
    /// for every output; the controllers that draw or send media use it).
    var media: ProjectMedia { ProjectMedia(store: store, blobs: blobs) }
    /// Images' and sounds' bytes (whether an edit's media are held here).
    let blobs: BlobStore
    /// "now" in a request's times.
    let clock: WallClock

    /// A peer id in a request.
    func peerID(_ text: String) throws(APIError) -> PeerID {
        guard let id = PeerID(text) else {
            throw APIError(.badRequest, "'\(text)' is not a peer id (8 groups of 7 characters, with check characters)")
        }
        return id
    }

    func documentID(_ text: String) throws(APIError) -> DocumentID {
        guard let id = DocumentID(text) else { throw APIError(.badRequest, "'\(text)' is not a project or folder id (32 hex digits)") }
        return id
    }

    /// A project id that names a stored project.
    @inline(never)
    func existingProject(_ text: String) async throws -> DocumentID {
        try await projectRecord(try documentID(text)).id
    }

    /// What each peer is called here, for words people read ("made bob an
    /// editor"): its name, else the name it announced, else its short id;
    /// this daemon is "this machine".
    func peerNames() async -> @Sendable (PeerID) -> String {
        var names: [PeerID: String] = [:]
        for peer in (try? await store.peers()) ?? [] {
            if let name = peer.name ?? peer.announcedName { names[peer.id] = PrintableText.escaped(name) }
        }
        let (known, me) = (names, identity.peerID)
        return { peer in peer == me ? "this machine" : known[peer] ?? peer.short }
    }

    /// The record of a stored project; a store failure is a 5xx, only a missing project a 404.
    @inline(never)
    func projectRecord(_ id: DocumentID) async throws -> DocumentRecord {
        do {
            let record = try await store.document(id)
            guard record.kind == .project else { throw APIError(.notFound, "no project \(id)") }
            guard !record.isAwaitingFounding else {
                throw APIError(.notFound, "project \(id) was offered by a peer and has not arrived yet (storyteller status shows when it syncs)")
            }
            return record
        } catch let error as StoreError where error.code == .notFound {
            throw APIError(.notFound, "no project \(id)")
        }
    }

    /// A peer this daemon has configured (added, or accepted).
    func configuredPeer(_ text: String) async throws -> PeerID {
        let peer = try peerID(text)
        guard try await store.peers().contains(where: { $0.id == peer && $0.state == .configured }) else {
            throw APIError(.notFound, "no configured peer \(peer): add it first")
        }
        return peer
    }

    /// An object id in a path (a shot's or a layer's).
    func objectID(_ text: String, _ what: String) throws(APIError) -> OpID {
        guard let id = OpID(text) else { throw APIError(.badRequest, "'\(text)' is not a \(what) id") }
        return id
    }

    /// Checks that the media an edit sets is a blob this daemon holds, as the
    /// reference describes it: a client cannot point a document at bytes
    /// nobody has.
    func checkMediaIsHeld(_ operations: [API.EditOperation]) async throws {
        for case .set(_, let key, .media(let media)) in operations {
            guard let record = await blobs.record(media.hash), case .complete = record.state else {
                throw APIError(.notFound, "'\(key)' names blob \(media.hash), which this machine does not hold; upload the file instead")
            }
            if let problem = record.problem { throw APIError(.unsupportedMedia, "'\(key)': blob \(media.hash) is kept aside: \(problem)") }
            guard record.byteCount == media.byteCount, record.type == media.type else {
                throw APIError(.badRequest, "'\(key)': blob \(media.hash) is a \(record.type) of \(record.byteCount) bytes, not what the value says")
            }
        }
    }

    /// `complete`, `partial`, `missing` or `kept-aside` for a project (its
    /// proven blobs: `proven`), the bytes held for it, and why kept aside.
    func blobState(_ media: MediaReference, proven: Set<BlobHash>) async -> (state: String, held: UInt64, problem: String?) {
        let record = await blobs.record(media.hash)
        switch record?.state {
        case .complete?:
            if let problem = record?.problem { return ("kept-aside", media.byteCount, problem) }
            if let record, record.type != media.type {
                return (
                    "kept-aside", media.byteCount,
                    "its bytes are a \(record.type.fileExtension), not the \(media.type.fileExtension) the project names"
                )
            }
            // Bytes held for another project count for this one once received for it too.
            return proven.contains(media.hash) ? ("complete", media.byteCount, nil) : ("missing", 0, nil)
        case .partial(let held, let total)?:
            let bytes = total == 0 ? 0 : UInt64(Double(media.byteCount) * Double(held) / Double(total))
            return ("partial", bytes, nil)
        case nil: return ("missing", 0, nil)
        }
    }

    /// The members of a document other than this daemon.
    func shares(of id: DocumentID) async throws -> [API.Share] {
        try await store.members(of: id).filter { $0.peer != identity.peerID }.map {
            API.Share(
                project: id.description, peer: $0.peer.description, mode: (ShareMode(role: $0.role) ?? .readOnly).rawValue,
                role: $0.role.description)
        }
    }

    /// A time in a request (`API.parseTime`), "now" being the daemon's clock.
    func parseTime(_ text: String) -> Int64? {
        API.parseTime(text, now: Date(timeIntervalSince1970: Double(clock.milliseconds) / 1000))
    }

    // MARK: - The past

    /// The project now (`at` nil), or as it was at the version `at` names:
    /// read-only, a document of its own that nothing writes back. Returns
    /// the shown version's id with it (nil for now).
    /// - Throws: `APIError` `unknown_version`, `history_compacted` or `bad_request`, in the user's words.
    func projectDocument(_ id: DocumentID, at text: String?) async throws -> (document: ProjectDocument, version: String?) {
        guard let text else { return (try await store.project(id), nil) }
        let history = try await store.projectHistory(id)
        let vector = try resolveVersion(text, in: history, names: try await store.project(id).versionNames)
        do {
            let document = try history.document(at: vector)
            return (document, document.versionVector.shortID)
        } catch let error as HistoryError {
            throw Self.apiError(error, history: history, asked: text)
        }
    }

    /// The version `text` names: a name given with `versions tag`, a version
    /// id from `history` (or a unique prefix of 4 or more of its digits),
    /// `now`, or a time (the changes made at or before it).
    func resolveVersion(_ text: String, in history: ProjectHistory, names: [VersionName]) throws(APIError) -> VersionVector {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let named = names.first(where: { $0.name == trimmed }) ?? names.first(where: { $0.name.lowercased() == trimmed.lowercased() }),
            let version = named.version
        {
            return version
        }
        let word = trimmed.lowercased()
        if word == "now" { return history.current }
        if (4...8).contains(word.count), word.allSatisfy(\.isHexDigit) {
            var known = Set(history.versions().map(\.vector))
            known.insert(history.current)
            for base in history.bases { known.insert(base.versionVector) }
            for named in names { if let version = named.version { known.insert(version) } }
            let matches = known.filter { $0.shortID.hasPrefix(word) }
            if matches.count == 1 { return matches.first! }
            if matches.count > 1 {
                throw APIError(.badRequest, "'\(text)' is the start of \(matches.count) version ids; give more of its digits")
            }
            // Perhaps a version from before what this machine still has.
            if !history.oldestVersion.isEmpty, API.parseTime(text) == nil {
                let compacted = Self.apiError(HistoryError(.compacted, ""), history: history, asked: text)
                throw APIError(.historyCompacted, "no version \(text) among those this machine still has: \(compacted.message)")
            }
        }
        if let time = parseTime(text) {
            do {
                return try history.vector(at: time)
            } catch {
                throw Self.apiError(error, history: history, asked: API.isoTime(milliseconds: time))
            }
        }
        throw APIError(
            .unknownVersion,
            "no version '\(text)' in this project's history: give a version id from `storyteller history`, a name from `storyteller versions list`, a time such as 2026-11-25T14:00, or now"
        )
    }

    /// A version the history cannot show, in the user's words.
    static func apiError(_ error: HistoryError, history: ProjectHistory, asked: String) -> APIError {
        switch error.code {
        case .compacted:
            let oldest = history.oldestVersion
            let when = history.bases.first?.updatedAt.map { API.isoTime(milliseconds: $0) }
            return APIError(
                .historyCompacted,
                "history before \(when ?? "version \(oldest.shortID)") was compacted on this machine; "
                    + "the oldest version it can show is \(oldest.shortID)\(when.map { " (\($0))" } ?? "")")
        case .beforeProject:
            let first = history.createdAt.map { " (its first change is from \(API.isoTime(milliseconds: $0)))" } ?? ""
            return APIError(.unknownVersion, "the project did not exist yet at \(asked)\(first)")
        default:
            return APIError(.unknownVersion, "version \(asked) holds changes this machine has not received")
        }
    }
}
