import Foundation
import StoryCore
import StoryIdentity
import StoryMedia
import StoryTestSupport
import Testing

@testable import StoryStore

/// Garbage collection of blobs against what real documents reference: random
/// image and sound edits, deletes, undos and redos, snapshots with compaction,
/// reopening the store and purging projects, with collections in between and
/// the clock running past the grace period. No blob that any project's state
/// (deleted objects included) or undo history can bring back is ever deleted;
/// a blob only a purged project used is deleted after the grace period.
@Suite struct BlobReferenceTests {
    @Test(arguments: [1, 2, 3, 4])
    func collectionNeverDeletesWhatADocumentCanShow(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let identity = try Identity.generate(commonName: "gc")
        let time = ManualWallClock(milliseconds: 1_700_000_000_000)
        var storeOptions = StoreOptions()
        storeOptions.clock = time.clock
        var store = try Store(path: directory.file("store.db"), identity: try identity.signingIdentity, options: storeOptions)
        var blobOptions = BlobStoreOptions()
        blobOptions.clock = time.clock
        blobOptions.garbageGrace = .seconds(3600)
        let blobs = try BlobStore(directory: directory.file("blobs"), options: blobOptions)
        var random = SeededGenerator(seed: seed)
        // A few pictures and sounds, uploaded as the control API does.
        var media: [MediaReference] = []
        var files: [BlobHash: String] = [:]
        for index in 0..<6 {
            let bytes =
                index % 2 == 0
                ? TestMedia.png(width: 20 + index, height: 10, seed: seed * 10 + UInt64(index)) : TestMedia.wav(seconds: 0.1, seed: UInt64(index))
            let path = directory.file("upload-\(index)")
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let info = try MediaProbe.probe(BytesMediaSource(bytes))
            let record = try await blobs.importFile(atPath: path, type: info.type)
            files[record.hash] = path
            media.append(
                MediaReference(
                    hash: record.hash, type: info.type, byteCount: record.byteCount, pixelWidth: info.pixelWidth, pixelHeight: info.pixelHeight,
                    duration: info.duration))
        }
        var projects: [(id: DocumentID, shot: OpID)] = []
        var purged: Set<DocumentID> = []
        var purgedOnly: [BlobHash: Int64] = [:]
        for step in 0..<160 {
            let now = time.milliseconds
            switch random.int(0...9) {
            case 0 where projects.count < 3, 1 where projects.isEmpty:
                let id = try await store.createDocument(kind: .project, name: "P\(step)", at: now)
                let shot = try await store.editProject(id, at: now) { editor in
                    try editor.insertShot(in: try editor.insertScene(at: 0), at: 0)
                }.value
                projects.append((id, shot))
            case 2, 3, 4:
                guard let (id, shot) = random.pick(projects) else { continue }
                let chosen = random.pick(media)!
                // As the control API does: an edit names only a blob held here
                // (a file collected while nobody used it is uploaded again).
                if await blobs.record(chosen.hash)?.isComplete != true {
                    _ = try await blobs.importFile(atPath: files[chosen.hash]!, type: chosen.type)
                }
                _ = try await store.editProject(id, session: "s", at: now) { editor in
                    if chosen.type.isImage {
                        let layer = try editor.insertLayer(in: shot, at: 0)
                        try editor.set(.image, to: .media(chosen), on: layer)
                    } else {
                        try editor.set(.sound, to: .media(chosen), on: shot)
                    }
                }
            case 5:
                // Take media away: a layer deleted, a sound cleared.
                guard let (id, shot) = random.pick(projects) else { continue }
                let deleteLayer = random.chance(0.5)
                _ = try await store.editProject(id, session: "s", at: now) { editor in
                    if let layer = editor.layers(in: shot).first, deleteLayer {
                        try editor.delete(layer)
                    } else {
                        try editor.set(.sound, to: .null, on: shot)
                    }
                }
            case 6:
                guard let (id, _) = random.pick(projects) else { continue }
                _ = random.chance(0.6) ? try await store.undo(id, session: "s", at: now) : try await store.redo(id, session: "s", at: now)
            case 7:
                // Snapshots and compaction, then a restart of the store.
                for (id, _) in projects {
                    try await store.writeSnapshot(of: id, at: now)
                    try await store.compact(id)
                }
                if random.chance(0.3) {
                    store = try Store(path: directory.file("store.db"), identity: try identity.signingIdentity, options: storeOptions)
                }
            case 8 where projects.count > 1:
                let (id, _) = projects.removeFirst()
                let used = Set(try await store.blobReferences(of: id).map(\.hash))
                try await store.setDeletedForEveryone(true, project: id, at: now)
                _ = try await store.purge(id, at: now)
                purged.insert(id)
                let stillUsed = Set(try await store.referencedBlobs().keys)
                for hash in used where !stillUsed.contains(hash) { purgedOnly[hash] = purgedOnly[hash] ?? now }
            default:
                time.advance(by: Int64(random.int(1...90)) * 60_000)
                let referenced = Set(try await store.referencedBlobs().keys)
                _ = try await blobs.collectGarbage(referenced: referenced)
            }
            // The invariant: whatever a live project holds in its fields, deleted
            // objects included, and whatever its undo stack can bring back, is here.
            for (id, _) in projects {
                let project = try await store.project(id)
                for reference in project.mediaReferences {
                    #expect(await blobs.record(reference.hash)?.isComplete == true, "step \(step): a referenced blob is gone")
                }
            }
            for hash in Set(try await store.referencedBlobs().keys) {
                #expect(await blobs.record(hash)?.isComplete == true, "step \(step): a blob in blob_refs is gone")
            }
        }
        // Only purged projects used these: found unreferenced by a collection,
        // they go with the first collection after the grace period.
        _ = try await blobs.collectGarbage(referenced: Set(try await store.referencedBlobs().keys))
        time.advance(by: 2 * 3600 * 1000)
        _ = try await blobs.collectGarbage(referenced: Set(try await store.referencedBlobs().keys))
        let referenced = Set(try await store.referencedBlobs().keys)
        for hash in purgedOnly.keys where !referenced.contains(hash) {
            #expect(await blobs.record(hash) == nil, "a blob only a purged project used outlived the grace period")
        }
        #expect(!projects.isEmpty)
        _ = purged
    }
}
