import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@testable import StoryStore

@Suite struct BlobStoreTests {
    // MARK: - Local uploads

    @Test func anUploadIsCommittedToItsCompletePathWithItsSHA256() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path)
        let bytes = BlobBytes.random(count: 700_001, seed: 1)
        let upload = try store.beginUpload()
        // Pieces of odd sizes, as a streamed request body comes.
        var offset = 0
        var sizes = SeededGenerator(seed: 9)
        while offset < bytes.count {
            let end = min(bytes.count, offset + sizes.int(1...70_000))
            try upload.write(bytes[offset..<end])
            offset = end
        }
        #expect(FileSystem.size(upload.temporaryPath) == UInt64(bytes.count))
        let (hash, count) = try upload.finish()
        #expect(count == UInt64(bytes.count))
        let record = try await store.commit(upload, type: .png)

        #expect(record == BlobRecord(hash: hash, byteCount: 700_001, type: .png, state: .complete, chunkSize: 256 << 10))
        #expect(record.chunkCount == 3)
        let path = store.completePath(hash)
        #expect(path == directory.path + "/complete/" + hash.description.prefix(2) + "/" + hash.description)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        #expect(hash == BlobBytes.sha256(bytes))
        #expect(hash.description == (try BlobBytes.sha256sum(path)))
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
        #expect(FileSystem.size(upload.temporaryPath) == nil)
        #expect(await store.record(hash) == record)
        #expect(await store.records() == [record])
        // Private to the daemon's user.
        #expect(try BlobFiles.mode(directory.path) == 0o700)
        #expect(try BlobFiles.mode(path) == 0o600)
        #expect(try BlobFiles.mode(directory.path + "/blobs.sqlite3") == 0o600)
        // The manifest is the chunks' SHA-256, computed from the file and kept.
        let manifest = try await store.manifest(hash)
        #expect(manifest == BlobBytes.manifest(of: bytes, chunkSize: 256 << 10))
        #expect(try await store.readChunk(hash, index: 2) == Array(bytes[(512 << 10)...]))
        #expect(try await store.readChunk(hash, index: 0) == Array(bytes[..<(256 << 10)]))
    }

    @Test func theSameBytesUploadedTwiceAreStoredOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path)
        let bytes = BlobBytes.random(count: 5000, seed: 2)
        let first = try await store.commit(try BlobBytes.upload(bytes, to: store), type: .jpeg)
        let again = try BlobBytes.upload(bytes, to: store)
        let temporary = again.temporaryPath
        let second = try await store.commit(again, type: .jpeg)
        #expect(second == first)
        #expect(FileSystem.size(temporary) == nil, "the duplicate's temporary file is deleted")
        #expect(try BlobFiles.all(under: directory.path + "/complete") == [store.completePath(first.hash)])
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
        #expect(await store.records().count == 1)
        // Importing the same bytes from a file is the same blob too.
        let file = directory.file("picture.jpg")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
        #expect(try await store.importFile(atPath: file, type: .jpeg) == first)
        #expect(await store.records().count == 1)
    }

    @Test func anUploadOverTheLimitIsRefusedAndLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(maximumBlobBytes: 1000))
        let upload = try store.beginUpload()
        try upload.write(BlobBytes.random(count: 600, seed: 3))
        let error = #expect(throws: BlobError.self) { try upload.write(BlobBytes.random(count: 401, seed: 4)) }
        #expect(error?.kind == .tooLarge)
        #expect(error?.message == "the file is larger than 1 KB, the limit (blob-max-bytes); nothing was kept")
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
        #expect(try BlobFiles.all(under: directory.path + "/complete").isEmpty)
        #expect(await store.records().isEmpty)
        // The upload is over: nothing more is written, nothing is committed.
        #expect(throws: BlobError.self) { try upload.write([1]) }
        let commitError = await #expect(throws: BlobError.self) { try await store.commit(upload, type: .png) }
        #expect(commitError?.kind == .invalid)
        #expect(await store.records().isEmpty)
        #expect(try BlobFiles.all(under: directory.path).filter { !$0.contains("blobs.sqlite3") }.isEmpty)

        // Exactly the limit is kept.
        let exact = try BlobBytes.upload(BlobBytes.random(count: 1000, seed: 5), to: store)
        #expect(try await store.commit(exact, type: .png).byteCount == 1000)

        // A file over the limit says how large it is.
        let file = directory.file("big.wav")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(BlobBytes.random(count: 2500, seed: 6))))
        let importError = await #expect(throws: BlobError.self) { try await store.importFile(atPath: file, type: .wav) }
        #expect(importError?.kind == .tooLarge)
        #expect(importError?.message == "the file is 2.5 KB, over the limit of 1 KB (blob-max-bytes)")
        #expect(importError?.path == file)
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
    }

    @Test func aDiscardedOrAbandonedUploadLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path)
        let discarded = try BlobBytes.upload(BlobBytes.random(count: 3000, seed: 7), to: store)
        #expect(FileSystem.names(in: directory.path + "/tmp").count == 1)
        discarded.discard()
        discarded.discard()
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
        let error = await #expect(throws: BlobError.self) { try await store.commit(discarded, type: .png) }
        #expect(error?.kind == .invalid)

        do {
            let abandoned = try store.beginUpload()
            try abandoned.write(BlobBytes.random(count: 3000, seed: 8))
            _ = try abandoned.finish()
            #expect(FileSystem.size(abandoned.temporaryPath) == 3000)
        }
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty, "an upload released uncommitted deletes its file")
        #expect(await store.records().isEmpty)
        #expect(try BlobFiles.all(under: directory.path + "/complete").isEmpty)
    }

    // MARK: - Receiving from peers

    /// A blob received from a peer is only what its reference declares; its
    /// bytes are probed when complete: a real sound completes as one, a
    /// picture declared a sound is recorded as the picture it is, and bytes
    /// that are no media are kept aside, with why, also after a reopen.
    @Test func bytesFromAPeerAreProbedWhenCompleteAndKeptAsideWhenTheyAreNoMedia() async throws {
        let directory = try TemporaryDirectory()
        let options = BlobStoreOptions(chunkSize: 64 << 10)
        let cases: [(bytes: [UInt8], declared: MediaType, type: MediaType, keptAside: Bool)] = [
            (TestMedia.wav(seconds: 3), .wav, .wav, false),
            (TestMedia.png(width: 40, height: 30, seed: 3), .wav, .png, false),
            (BlobBytes.random(count: 100_000, seed: 4), .mp3, .mp3, true),
        ]
        do {
            let store = try BlobStore(directory: directory.path, options: options)
            for (bytes, declared, type, keptAside) in cases {
                let hash = BlobBytes.sha256(bytes)
                let manifest = BlobBytes.manifest(of: bytes, chunkSize: 64 << 10)
                _ = try await store.beginPartial(hash, byteCount: UInt64(bytes.count), type: declared, manifest: manifest)
                for index in manifest.indices {
                    _ = try await store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 64 << 10))
                }
                let record = try await store.completePartial(hash)
                #expect(record.type == type && (record.problem != nil) == keptAside, "\(record)")
                #expect(FileManager.default.contents(atPath: store.completePath(hash)) == Data(bytes), "kept, byte for byte")
            }
        }
        let reopened = try BlobStore(directory: directory.path, options: options)
        for (bytes, _, type, keptAside) in cases {
            let record = try #require(await reopened.record(BlobBytes.sha256(bytes)))
            #expect(record.type == type && (record.problem != nil) == keptAside, "after a reopen: \(record)")
        }
        // A file from a package is probed the same way once committed.
        let upload = try reopened.beginUpload()
        let noSound = BlobBytes.random(count: 5_000, seed: 9)
        try upload.write(noSound)
        _ = try await reopened.commit(upload, type: .flac)
        let probed = try await reopened.probeComplete(BlobBytes.sha256(noSound))
        #expect(probed.problem?.contains("not a flac") == true, "\(probed)")
    }

    @Test func aPartialBlobResumesAfterAReopenAndCompletes() async throws {
        let directory = try TemporaryDirectory()
        let options = BlobStoreOptions(chunkSize: 64 << 10)
        let bytes = BlobBytes.random(count: (64 << 10) * 36 + 1234, seed: 10)
        let hash = BlobBytes.sha256(bytes)
        let manifest = BlobBytes.manifest(of: bytes, chunkSize: 64 << 10)
        #expect(manifest.count == 37)
        var random = SeededGenerator(seed: 11)
        let order = Array(0..<37).shuffled(using: &random)
        let firstHalf = Array(order.prefix(18))
        do {
            let store = try BlobStore(directory: directory.path, options: options)
            let begun = try await store.beginPartial(hash, byteCount: UInt64(bytes.count), type: .wav, manifest: manifest)
            #expect(begun.state == .partial(heldChunks: 0, totalChunks: 37))
            #expect(FileSystem.size(directory.path + "/partial/" + hash.description) == UInt64(bytes.count), "made at full length")
            for index in firstHalf {
                #expect(try await !store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 64 << 10)))
            }
            // A held chunk can already be served.
            #expect(try await store.readChunk(hash, index: firstHalf[0]) == BlobBytes.chunk(firstHalf[0], of: bytes, size: 64 << 10))
            let missing = order.dropFirst(18).first!
            let notHeld = await #expect(throws: BlobError.self) { try await store.readChunk(hash, index: missing) }
            #expect(notHeld?.kind == .notFound)
        }
        let store = try BlobStore(directory: directory.path, options: options)
        #expect(await store.record(hash)?.state == .partial(heldChunks: 18, totalChunks: 37))
        #expect(await store.missingChunks(hash) == order.dropFirst(18).sorted())
        // Beginning again with the same manifest keeps what is held.
        let resumed = try await store.beginPartial(hash, byteCount: UInt64(bytes.count), type: .wav, manifest: manifest)
        #expect(resumed.state == .partial(heldChunks: 18, totalChunks: 37))
        let incomplete = await #expect(throws: BlobError.self) { try await store.completePartial(hash) }
        #expect(incomplete?.kind == .invalid)
        var allHeld = false
        for (position, index) in order.dropFirst(18).enumerated() {
            allHeld = try await store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 64 << 10))
            #expect(allHeld == (position == 18))
        }
        #expect(allHeld)
        #expect(await store.missingChunks(hash).isEmpty)
        let record = try await store.completePartial(hash)
        // Random bytes declared a WAV: complete, and kept aside as no sound (the probe at completion).
        #expect(record.problem?.hasPrefix("the bytes are not a wav") == true, "\(record)")
        #expect(
            record
                == BlobRecord(hash: hash, byteCount: UInt64(bytes.count), type: .wav, state: .complete, chunkSize: 64 << 10, problem: record.problem))
        #expect(FileManager.default.contents(atPath: store.completePath(hash)) == Data(bytes))
        #expect(FileSystem.names(in: directory.path + "/partial").isEmpty)
        #expect(try await store.manifest(hash) == manifest)
        #expect(try await store.readChunk(hash, index: 36) == BlobBytes.chunk(36, of: bytes, size: 64 << 10))
        // Complete: chunks are no longer written, begin returns it as it is.
        #expect(try await store.writeChunk(hash, index: 0, bytes: [1, 2, 3]))
        #expect(try await store.beginPartial(hash, byteCount: UInt64(bytes.count), type: .wav, manifest: manifest) == record)
        #expect(try await store.completePartial(hash) == record)
        // And after a reopen too.
        let reopened = try BlobStore(directory: directory.path, options: options)
        #expect(await reopened.record(hash) == record)
    }

    @Test func aChunkThatIsNotItsManifestsIsRefusedAndNotHeld() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
        let bytes = BlobBytes.random(count: 4500, seed: 12)
        let hash = BlobBytes.sha256(bytes)
        _ = try await store.beginPartial(hash, byteCount: 4500, type: .mp3, manifest: BlobBytes.manifest(of: bytes, chunkSize: 1000))
        var flipped = BlobBytes.chunk(2, of: bytes, size: 1000)
        flipped[417] ^= 0x10
        let mismatch = await #expect(throws: BlobError.self) { try await store.writeChunk(hash, index: 2, bytes: flipped) }
        #expect(mismatch?.kind == .chunkMismatch)
        #expect(await store.missingChunks(hash) == [0, 1, 2, 3, 4])
        #expect(try BlobFiles.contents(directory.path + "/partial/" + hash.description)[2000..<3000].allSatisfy { $0 == 0 }, "nothing written")
        // The right bytes at the wrong length are refused too (the last chunk is 500 bytes).
        let long = await #expect(throws: BlobError.self) {
            try await store.writeChunk(hash, index: 4, bytes: BlobBytes.chunk(4, of: bytes, size: 1000) + [0])
        }
        #expect(long?.kind == .chunkMismatch)
        let outOfRange = await #expect(throws: BlobError.self) { try await store.writeChunk(hash, index: 5, bytes: [UInt8]()) }
        #expect(outOfRange?.kind == .invalid)
        let unknown = await #expect(throws: BlobError.self) { try await store.writeChunk(BlobBytes.sha256([9]), index: 0, bytes: [9]) }
        #expect(unknown?.kind == .notFound)
        #expect(await store.record(hash)?.state == .partial(heldChunks: 0, totalChunks: 5))
        #expect(try await !store.writeChunk(hash, index: 2, bytes: BlobBytes.chunk(2, of: bytes, size: 1000)))
        #expect(await store.missingChunks(hash) == [0, 1, 3, 4])
        // A manifest of the wrong length is refused.
        let badManifest = await #expect(throws: BlobError.self) {
            try await store.beginPartial(BlobBytes.sha256([7]), byteCount: 4500, type: .mp3, manifest: [hash])
        }
        #expect(badManifest?.kind == .invalid)
        #expect(await store.record(BlobBytes.sha256([7])) == nil)
    }

    @Test func aFalseManifestFailsTheWholeHashAndResetsThePartialBlob() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1024))
        let wanted = BlobBytes.random(count: 5000, seed: 13)
        let other = BlobBytes.random(count: 5000, seed: 14)
        let hash = BlobBytes.sha256(wanted)
        // A peer announces the wanted blob with the chunk hashes of other bytes, and sends those.
        _ = try await store.beginPartial(hash, byteCount: 5000, type: .flac, manifest: BlobBytes.manifest(of: other, chunkSize: 1024))
        for index in 0..<5 { _ = try await store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: other, size: 1024)) }
        #expect(await store.missingChunks(hash).isEmpty)
        let error = await #expect(throws: BlobError.self) { try await store.completePartial(hash) }
        #expect(error?.kind == .hashMismatch)
        #expect(await store.record(hash)?.state == .partial(heldChunks: 0, totalChunks: 5))
        #expect(await store.missingChunks(hash) == [0, 1, 2, 3, 4])
        #expect(try BlobFiles.contents(directory.path + "/partial/" + hash.description) == [UInt8](repeating: 0, count: 5000))
        #expect(try BlobFiles.all(under: directory.path + "/complete").isEmpty)
        // Another peer's true manifest starts over and completes.
        _ = try await store.beginPartial(hash, byteCount: 5000, type: .flac, manifest: BlobBytes.manifest(of: wanted, chunkSize: 1024))
        for index in (0..<5).reversed() { _ = try await store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: wanted, size: 1024)) }
        #expect(try await store.completePartial(hash).state == .complete)
        #expect(try BlobFiles.contents(store.completePath(hash)) == wanted)
    }

    @Test func aNewManifestResetsAPartialBlobAndTheSameOneKeepsIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 100))
        let bytes = BlobBytes.random(count: 450, seed: 15)
        let hash = BlobBytes.sha256(bytes)
        let manifest = BlobBytes.manifest(of: bytes, chunkSize: 100)
        _ = try await store.beginPartial(hash, byteCount: 450, type: .ogg, manifest: manifest)
        _ = try await store.writeChunk(hash, index: 1, bytes: BlobBytes.chunk(1, of: bytes, size: 100))
        _ = try await store.writeChunk(hash, index: 3, bytes: BlobBytes.chunk(3, of: bytes, size: 100))
        #expect(try await store.beginPartial(hash, byteCount: 450, type: .ogg, manifest: manifest).state == .partial(heldChunks: 2, totalChunks: 5))
        var changed = manifest
        changed[4] = BlobBytes.sha256([1])
        #expect(try await store.beginPartial(hash, byteCount: 450, type: .ogg, manifest: changed).state == .partial(heldChunks: 0, totalChunks: 5))
        #expect(try await store.manifest(hash) == changed)
        #expect(await store.missingChunks(hash) == [0, 1, 2, 3, 4])
    }

    @Test func chunksLostOnDiskAreDroppedAndFetchedAgain() async throws {
        // What a crash between a chunk's write and its reaching the disk leaves:
        // held in the bitmap, other bytes in the file; the store starts again.
        let directory = try TemporaryDirectory()
        let bytes = BlobBytes.random(count: 3500, seed: 16)
        let hash = BlobBytes.sha256(bytes)
        do {
            let before = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
            _ = try await before.beginPartial(hash, byteCount: 3500, type: .png, manifest: BlobBytes.manifest(of: bytes, chunkSize: 1000))
            for index in 0..<4 { _ = try await before.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 1000)) }
        }
        let file = try #require(FileHandle(forWritingAtPath: directory.path + "/partial/" + hash.description))
        try file.seek(toOffset: 1500)
        try file.write(contentsOf: [0, 0, 0])
        try file.close()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
        #expect(await store.missingChunks(hash) == [], "all four chunks are marked held")
        let error = await #expect(throws: BlobError.self) { try await store.completePartial(hash) }
        #expect(error?.kind == .chunkMismatch)
        #expect(await store.missingChunks(hash) == [1])
        #expect(try await store.writeChunk(hash, index: 1, bytes: BlobBytes.chunk(1, of: bytes, size: 1000)))
        #expect(try await store.completePartial(hash).state == .complete)
        #expect(try BlobFiles.contents(store.completePath(hash)) == bytes)
    }

    @Test func anUploadsManifestIsReadyWhenItIsCommitted() async throws {
        // Peers ask for the manifest first: it is hashed as the bytes pass
        // (pieces that straddle chunk boundaries), not by reading the file then.
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
        let bytes = BlobBytes.random(count: 3500, seed: 18)
        let upload = try store.beginUpload()
        for start in stride(from: 0, to: bytes.count, by: 333) { try upload.write(bytes[start..<min(bytes.count, start + 333)]) }
        let record = try await store.commit(upload, type: .png)
        try FileManager.default.removeItem(atPath: store.completePath(record.hash))
        #expect(try await store.manifest(record.hash) == BlobBytes.manifest(of: bytes, chunkSize: 1000))
    }

    @Test func aBlobReceivedOutOfOrderIsCheckedWholeAndAcrossARestart() async throws {
        // The whole blob's hash is fed as chunks come; chunks that come early,
        // or were held before a restart, are read back in order.
        let directory = try TemporaryDirectory()
        let bytes = BlobBytes.random(count: 5500, seed: 17)
        let hash = BlobBytes.sha256(bytes)
        let manifest = BlobBytes.manifest(of: bytes, chunkSize: 1000)
        do {
            let before = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
            _ = try await before.beginPartial(hash, byteCount: 5500, type: .png, manifest: manifest)
            for index in [3, 0, 5] { _ = try await before.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 1000)) }
        }
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
        #expect(await store.missingChunks(hash) == [1, 2, 4])
        for index in [2, 4] { #expect(try await store.writeChunk(hash, index: index, bytes: BlobBytes.chunk(index, of: bytes, size: 1000)) == false) }
        #expect(try await store.writeChunk(hash, index: 1, bytes: BlobBytes.chunk(1, of: bytes, size: 1000)))
        #expect(try await store.completePartial(hash).state == .complete)
        #expect(try BlobFiles.contents(store.completePath(hash)) == bytes)
    }

    @Test func aLocalUploadCompletesAPartialBlobOfTheSameBytes() async throws {
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(chunkSize: 1000))
        let bytes = BlobBytes.random(count: 2500, seed: 17)
        let hash = BlobBytes.sha256(bytes)
        _ = try await store.beginPartial(hash, byteCount: 2500, type: .webp, manifest: BlobBytes.manifest(of: bytes, chunkSize: 1000))
        _ = try await store.writeChunk(hash, index: 0, bytes: BlobBytes.chunk(0, of: bytes, size: 1000))
        let record = try await store.commit(try BlobBytes.upload(bytes, to: store), type: .webp)
        #expect(record.state == .complete && record.hash == hash)
        #expect(FileSystem.names(in: directory.path + "/partial").isEmpty)
        #expect(try BlobFiles.contents(store.completePath(hash)) == bytes)
        #expect(await store.missingChunks(hash).isEmpty)
        #expect(try await store.readChunk(hash, index: 2) == Array(bytes[2000...]))
    }

    @Test func tooLargeABlobFromAPeerIsRefusedInTheUsersWords() async throws {
        #expect(ByteCountText.text(2_100_000_000) == "2.1 GB")
        #expect(ByteCountText.text(1 << 30) == "1 GiB")
        #expect(ByteCountText.text(256 << 10) == "256 KiB")
        #expect(ByteCountText.text(5_000_000) == "5 MB")
        #expect(ByteCountText.text(1) == "1 byte")
        let directory = try TemporaryDirectory()
        let store = try BlobStore(directory: directory.path)
        let hash = BlobBytes.sha256([1, 2, 3])
        let count = BlobRecord.chunkCount(byteCount: 2_100_000_000, chunkSize: 256 << 10)
        let error = await #expect(throws: BlobError.self) {
            try await store.beginPartial(hash, byteCount: 2_100_000_000, type: .wav, manifest: Array(repeating: hash, count: count))
        }
        #expect(error?.kind == .tooLarge)
        #expect(error?.message == "the file is 2.1 GB, over the limit of 1 GiB (blob-max-bytes)")
        #expect(error?.description == "tooLarge: the file is 2.1 GB, over the limit of 1 GiB (blob-max-bytes)")
        #expect(await store.record(hash) == nil)
        #expect(FileSystem.names(in: directory.path + "/partial").isEmpty)
    }

    // MARK: - Opening

    @Test func openingMendsWhatACrashLeft() async throws {
        let directory = try TemporaryDirectory()
        let options = BlobStoreOptions(chunkSize: 1000)
        let kept = BlobBytes.random(count: 1800, seed: 20)
        let lost = BlobBytes.random(count: 1900, seed: 21)
        let partialBytes = BlobBytes.random(count: 2200, seed: 22)
        let orphanBytes = BlobBytes.random(count: 700, seed: 23)
        let partialHash = BlobBytes.sha256(partialBytes)
        let (keptRecord, lostRecord): (BlobRecord, BlobRecord)
        do {
            let store = try BlobStore(directory: directory.path, options: options)
            keptRecord = try await store.commit(try BlobBytes.upload(kept, to: store), type: .png)
            lostRecord = try await store.commit(try BlobBytes.upload(lost, to: store), type: .png)
            _ = try await store.beginPartial(
                partialHash, byteCount: 2200, type: .mp3, manifest: BlobBytes.manifest(of: partialBytes, chunkSize: 1000))
            _ = try await store.writeChunk(partialHash, index: 1, bytes: BlobBytes.chunk(1, of: partialBytes, size: 1000))
        }
        // Leftovers: an upload cut short, a directory in tmp/, a deleted file of
        // a complete blob and of a partial one, files without rows.
        #expect(FileManager.default.createFile(atPath: directory.path + "/tmp/upload-1-2", contents: Data([1, 2, 3])))
        try FileManager.default.createDirectory(atPath: directory.path + "/tmp/stray", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: directory.path + "/tmp/stray/x", contents: Data([4])))
        try FileManager.default.removeItem(
            atPath: directory.path + "/complete/" + lostRecord.hash.description.prefix(2) + "/" + lostRecord.hash.description)
        try FileManager.default.removeItem(atPath: directory.path + "/partial/" + partialHash.description)
        let orphan = BlobBytes.sha256(orphanBytes)
        let orphanFolder = directory.path + "/complete/" + orphan.description.prefix(2)
        try FileManager.default.createDirectory(atPath: orphanFolder, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: orphanFolder + "/" + orphan.description, contents: Data(orphanBytes)))
        #expect(FileManager.default.createFile(atPath: directory.path + "/partial/" + orphan.description, contents: Data(orphanBytes)))

        let store = try BlobStore(directory: directory.path, options: options)
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty)
        #expect(await store.record(keptRecord.hash) == keptRecord)
        #expect(try BlobFiles.contents(store.completePath(keptRecord.hash)) == kept)
        #expect(await store.record(lostRecord.hash) == nil, "a complete row whose file is gone is removed")
        #expect(await store.record(partialHash)?.state == .partial(heldChunks: 0, totalChunks: 3))
        #expect(await store.missingChunks(partialHash) == [0, 1, 2])
        #expect(await store.record(orphan) == nil)
        #expect(try BlobFiles.all(under: directory.path + "/complete") == [store.completePath(keptRecord.hash)])
        #expect(FileSystem.names(in: directory.path + "/partial").isEmpty)
        // The rows themselves were mended, not just the memory.
        let connection = try Connection(path: directory.path + "/blobs.sqlite3")
        #expect(try connection.scalar("SELECT count(*) FROM blobs")?.integer == 2)
        #expect(try connection.scalar("SELECT held FROM blobs WHERE hash = ?", [.blob(partialHash.bytes)])?.blob == [0])
        // The partial blob is received anew.
        for index in 0..<3 { _ = try await store.writeChunk(partialHash, index: index, bytes: BlobBytes.chunk(index, of: partialBytes, size: 1000)) }
        #expect(try await store.completePartial(partialHash).state == .complete)
    }

    @Test func theDatabaseHasTheDocumentedSchemaInWriteAheadLogging() throws {
        let directory = try TemporaryDirectory()
        _ = try BlobStore(directory: directory.path)
        let connection = try Connection(path: directory.path + "/blobs.sqlite3")
        #expect(try connection.scalar("PRAGMA journal_mode")?.text == "wal")
        let columns = try connection.query("PRAGMA table_info(blobs)") { $0.text(1) ?? "" }
        #expect(columns == ["hash", "size", "type", "state", "chunk_size", "held", "manifest", "created", "unreferenced_since", "problem"])
        #expect(try Schema.applied(connection) == BlobDatabase.migrations.map(\.id))
        for name in ["complete", "partial", "tmp"] { #expect(try BlobFiles.mode(directory.path + "/" + name) == 0o700) }
    }

    // MARK: - Garbage collection

    @Test(arguments: TestSeeds.seeds(count: 5, base: 100))
    func garbageCollectionNeverDeletesAReferencedBlobAndDeletesExpiredOnesAtOnce(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 1_000_000)
        let grace: Int64 = 10_000
        let options = BlobStoreOptions(chunkSize: 64, garbageGrace: .milliseconds(grace), clock: clock.clock)
        var store = try BlobStore(directory: directory.path, options: options)
        var random = SeededGenerator(seed: seed)
        let pool = (0..<10).map { BlobBytes.random(count: 50 + $0 * 37, seed: seed &* 100 &+ UInt64($0)) }
        let hashes = pool.map(BlobBytes.sha256)
        // The model: blob → when a collection first found it unreferenced.
        var present: [BlobHash: Int64?] = [:]
        var referenced: Set<BlobHash> = []
        var collections = 0
        var deletions = 0
        for step in 0..<250 {
            let index = random.int(0...pool.count - 1)
            let hash = hashes[index]
            switch random.int(0...99) {
            case 0..<20:
                // A local upload: referenced anew until the next collection.
                _ = try await store.commit(try BlobBytes.upload(pool[index], to: store), type: .png)
                present[hash] = .some(nil)
            case 20..<28:
                // From a peer: a partial blob, perhaps completed.
                let bytes = pool[index]
                let record = try await store.beginPartial(
                    hash, byteCount: UInt64(bytes.count), type: .png, manifest: BlobBytes.manifest(of: bytes, chunkSize: 64))
                if present[hash] == nil { present[hash] = .some(nil) }
                if random.chance(0.5), !record.isComplete {
                    for chunk in 0..<record.chunkCount {
                        _ = try await store.writeChunk(hash, index: chunk, bytes: BlobBytes.chunk(chunk, of: bytes, size: 64))
                    }
                    _ = try await store.completePartial(hash)
                }
            case 28..<45: referenced.insert(hash)
            case 45..<60: referenced.remove(hashes[random.int(0...pool.count - 1)])
            case 60..<80:
                clock.advance(by: random.chance(0.2) ? grace : Int64(random.int(0...4000)))
            case 80..<97:
                let now = clock.milliseconds
                let expected = Set(
                    present.compactMap { hash, since in since.flatMap { now - $0 > grace ? hash : nil } }.filter { !referenced.contains($0) })
                let deleted = try await store.collectGarbage(referenced: referenced)
                #expect(Set(deleted) == expected, "seed \(seed) step \(step)")
                #expect(deleted.count == Set(deleted).count)
                #expect(Set(deleted).isDisjoint(with: referenced), "seed \(seed) step \(step): a referenced blob was deleted")
                for hash in Array(present.keys) {
                    if expected.contains(hash) {
                        present[hash] = nil
                    } else if referenced.contains(hash) {
                        present[hash] = .some(nil)
                    } else if present[hash]! == nil {
                        present[hash] = .some(now)
                    }
                }
                collections += 1
                deletions += deleted.count
            default:
                // A restart keeps when each blob was first found unreferenced.
                store = try BlobStore(directory: directory.path, options: options)
            }
            let stored = await store.records()
            #expect(Set(stored.map(\.hash)) == Set(present.keys), "seed \(seed) step \(step)")
            for record in stored where record.isComplete {
                #expect(FileSystem.size(store.completePath(record.hash)) == record.byteCount)
            }
        }
        #expect(collections > 20 && deletions > 0, "the sequence exercised collection (\(collections) collections, \(deletions) deletions)")
        // Whatever is left and unreferenced goes once its grace has passed, and
        // nothing referenced ever does.
        _ = try await store.collectGarbage(referenced: referenced)
        clock.advance(by: grace + 1)
        let last = try await store.collectGarbage(referenced: referenced)
        #expect(Set(last) == Set(present.keys).subtracting(referenced))
        #expect(Set(await store.records().map(\.hash)) == Set(present.keys).intersection(referenced))
        let leftovers = try BlobFiles.all(under: directory.path + "/complete") + FileSystem.names(in: directory.path + "/partial")
        #expect(leftovers.count == Set(present.keys).intersection(referenced).count)
    }

    @Test func aBlobIsDeletedOnlyAfterTheGracePeriodFromTheFirstCollectionThatFoundItUnreferenced() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock(milliseconds: 0)
        let store = try BlobStore(directory: directory.path, options: BlobStoreOptions(garbageGrace: .seconds(7 * 86400), clock: clock.clock))
        let bytes = BlobBytes.random(count: 100, seed: 30)
        let hash = try await store.commit(try BlobBytes.upload(bytes, to: store), type: .png).hash
        clock.advance(by: 30 * 86_400_000)
        #expect(try await store.collectGarbage(referenced: []).isEmpty, "first found unreferenced now")
        clock.advance(by: 7 * 86_400_000)
        #expect(try await store.collectGarbage(referenced: []).isEmpty, "exactly the grace is not longer than it")
        #expect(try await store.collectGarbage(referenced: [hash]).isEmpty)
        clock.advance(by: 7 * 86_400_000 + 1)
        #expect(try await store.collectGarbage(referenced: []).isEmpty, "referenced again in between: the grace starts over")
        clock.advance(by: 7 * 86_400_000 + 1)
        #expect(try await store.collectGarbage(referenced: []) == [hash])
        #expect(await store.record(hash) == nil)
        #expect(FileSystem.size(store.completePath(hash)) == nil)
    }

    // MARK: - Size and speed

    @Test func aLargeBlobTravelsChunkByChunkInBoundedMemory() async throws {
        let directory = try TemporaryDirectory()
        let source = try BlobStore(directory: directory.path + "/source")
        let target = try BlobStore(directory: directory.path + "/target")
        let megabytes = 48
        let clock = ContinuousClock()
        let upload = try source.beginUpload()
        var piece = BlobBytes.random(count: 1 << 20, seed: 40)
        var started = clock.now
        for index in 0..<megabytes {
            piece[0] = UInt8(index)
            try upload.write(piece)
        }
        let record = try await source.commit(upload, type: .wav)
        let uploadTime = clock.now - started
        #expect(record.byteCount == UInt64(megabytes << 20))
        #expect(record.hash.description == (try BlobBytes.sha256sum(source.completePath(record.hash))))

        started = clock.now
        let manifest = try await source.manifest(record.hash)
        let manifestTime = clock.now - started
        _ = try await target.beginPartial(record.hash, byteCount: record.byteCount, type: .wav, manifest: manifest)
        var chunkTime = Duration.zero
        var readTime = Duration.zero
        for index in 0..<record.chunkCount {
            let readStart = clock.now
            let chunk = try await source.readChunk(record.hash, index: index)
            let writeStart = clock.now
            readTime += writeStart - readStart
            let done = try await target.writeChunk(record.hash, index: index, bytes: chunk)
            chunkTime += clock.now - writeStart
            #expect(done == (index == record.chunkCount - 1))
        }
        started = clock.now
        #expect(try await target.completePartial(record.hash).state == .complete)
        let completeTime = clock.now - started
        #expect(try BlobBytes.sha256sum(target.completePath(record.hash)) == record.hash.description)
        if ProcessInfoShim.verbose {
            func rate(_ time: Duration) -> String {
                let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
                return "\(Int(Double(megabytes) * 1.048576 / seconds)) MB/s"
            }
            print(
                "blob \(megabytes) MiB: upload+commit \(uploadTime) (\(rate(uploadTime))), manifest \(manifestTime), "
                    + "readChunk total \(readTime) (\(rate(readTime))), writeChunk total \(chunkTime) (\(rate(chunkTime)), "
                    + "\(chunkTime / record.chunkCount) per 256 KiB chunk), completePartial \(completeTime) (\(rate(completeTime)))")
        }
    }
}

// MARK: - Helpers

/// Bytes for blob tests and what they hash to.
enum BlobBytes {
    static func random(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<min(8, count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    /// SHA-256 as StoryIdentity's one-shot OpenSSL call computes it (not the store's stream).
    static func sha256(_ bytes: [UInt8]) -> BlobHash { OpenSSLCrypto.shared.sha256(nil, bytes[...]) }

    /// What `sha256sum` prints for a file.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    static func chunk(_ index: Int, of bytes: [UInt8], size: Int) -> [UInt8] {
        Array(bytes[index * size..<min(bytes.count, (index + 1) * size)])
    }

    static func manifest(of bytes: [UInt8], chunkSize: Int) -> [BlobHash] {
        stride(from: 0, to: bytes.count, by: chunkSize).map { sha256(Array(bytes[$0..<min(bytes.count, $0 + chunkSize)])) }
    }

    /// An upload of `bytes`, finished.
    static func upload(_ bytes: [UInt8], to store: BlobStore) throws -> BlobUpload {
        let upload = try store.beginUpload()
        try upload.write(bytes)
        _ = try upload.finish()
        return upload
    }
}

/// Looking at the store's files.
enum BlobFiles {
    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }

    static func contents(_ path: String) throws -> [UInt8] {
        try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
    }

    /// Every regular file under a directory (full paths, sorted).
    static func all(under path: String) throws -> [String] {
        let enumerator = try #require(FileManager.default.enumerator(atPath: path))
        return enumerator.compactMap { $0 as? String }.map { path + "/" + $0 }.filter { FileSystem.size($0) != nil }.sorted()
    }
}
