import StoryCore
import StoryStore

/// The pictures and sounds a project may use on this machine, and where
/// their bytes are. Renders, print sheets, slideshows, replays, animatics
/// and packages all ask here, so one rule holds for every output.
///
/// A blob is used for a project when it is complete here, its reference in
/// that project is proven (the bytes reached this daemon through that
/// project: a reference to a hash alone, say one a peer wrote naming the
/// picture of a private project, draws nothing and exports nothing), its
/// bytes are of the type the reference declares, and they are not kept
/// aside (bytes that are no picture or sound at all). The rest is outlined
/// in panels and left out of sounds, with a reason (`unusable`).
struct ProjectMedia: Sendable {
    let store: Store
    let blobs: BlobStore

    /// Why a reference's bytes are not used for a project, or nil: they are.
    /// - Parameter proven: the project's proven blobs (`Store.provenBlobs(of:)`).
    func unusable(_ media: MediaReference, proven: Set<BlobHash>) async -> String? {
        guard let record = await blobs.record(media.hash), record.isComplete else { return "not on this machine yet" }
        if let problem = record.problem { return "kept aside: \(problem)" }
        guard record.type == media.type else {
            return "its bytes are a \(record.type.fileExtension), not the \(media.type.fileExtension) the project names"
        }
        guard proven.contains(media.hash) else { return "not received for this project yet" }
        return nil
    }

    /// The files of those of `media` the project may use, by hash.
    func files(_ media: some Sequence<MediaReference>, of project: DocumentID) async -> [BlobHash: String] {
        let proven = (try? await store.provenBlobs(of: project)) ?? []
        var files: [BlobHash: String] = [:]
        for reference in media where files[reference.hash] == nil {
            if await unusable(reference, proven: proven) == nil { files[reference.hash] = blobs.completePath(reference.hash) }
        }
        return files
    }

    /// Why each of `media` the project may not use is left out, by hash.
    func leftOut(_ media: some Sequence<MediaReference>, of project: DocumentID) async -> [BlobHash: String] {
        let proven = (try? await store.provenBlobs(of: project)) ?? []
        var reasons: [BlobHash: String] = [:]
        for reference in media where reasons[reference.hash] == nil {
            if let reason = await unusable(reference, proven: proven) { reasons[reference.hash] = reason }
        }
        return reasons
    }
}
