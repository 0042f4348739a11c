import Foundation
import StoryCore
import StoryStore
import Synchronization

/// What snapshots arriving in parts may hold at once, over every connection
/// of a daemon: bytes in memory (past this, parts go to disk), and bytes on
/// disk (past this, a snapshot is refused and its sender told to try later).
package final class SnapshotBudget: Sendable {
    private struct Held {
        var memory = 0
        var disk: UInt64 = 0
    }

    /// Bytes of parts kept in memory over all connections.
    package let memoryBytes: Int
    /// Bytes of parts kept on disk over all connections.
    package let diskBytes: UInt64
    private let held = Mutex(Held())
    /// Whole snapshots read back and merged one at a time (each is in memory then).
    let merges = SerialGate()

    package init(memoryBytes: Int = 32 << 20, diskBytes: UInt64 = 4 << 30) {
        self.memoryBytes = memoryBytes
        self.diskBytes = diskBytes
    }

    /// Bytes held now (for tests and metrics).
    package var heldBytes: (memory: Int, disk: UInt64) { held.withLock { ($0.memory, $0.disk) } }

    /// Takes up to `wanted` bytes of memory; returns what it got (maybe 0).
    func takeMemory(_ wanted: Int) -> Int {
        held.withLock { held in
            let granted = max(0, min(wanted, memoryBytes - held.memory))
            held.memory += granted
            return granted
        }
    }

    /// Takes `bytes` of disk, or nothing if that would pass the bound.
    func takeDisk(_ bytes: UInt64) -> Bool {
        held.withLock { held in
            guard held.disk + bytes <= diskBytes else { return false }
            held.disk += bytes
            return true
        }
    }

    func give(memory: Int, disk: UInt64) {
        held.withLock { held in
            held.memory -= memory
            held.disk -= disk
        }
    }
}

/// A snapshot arriving in parts, kept until its last part: the first bytes
/// in memory (at most `memoryBytes`, and only what the daemon's
/// `SnapshotBudget` grants), the rest in a file in `directory`, unlinked as
/// soon as it is made (a crash or a peer that hangs up leaves nothing), so a
/// peer that sends a gigabyte and never the last part holds a few megabytes
/// of the daemon's memory. Its header is read as soon as it has arrived
/// (`header`): the session refuses at once a snapshot whose access list does
/// not let its sender send it.
///
/// Used by one session's reader task only (hence `@unchecked Sendable`).
final class SnapshotAssembly: @unchecked Sendable {
    let document: DocumentID
    let kind: UInt8
    let total: UInt64
    private let budget: SnapshotBudget
    private let directory: String
    /// The first bytes, in memory.
    private var head: [UInt8] = []
    /// Memory granted for `head` from the budget, and what `head` may hold
    /// (at least `minimumMemoryBytes`: where the header is read from).
    private let memoryTaken: Int
    private let headCapacity: Int
    /// The spill file (-1: none yet) and what is in it.
    private var file: Int32 = -1
    private var spilled: UInt64 = 0
    /// Disk taken from the budget for the spill file.
    private var diskTaken: UInt64 = 0
    /// The header, once read from the first bytes.
    private(set) var header: SnapshotSummary?
    /// Why the first bytes are no snapshot header, if they are not.
    private(set) var headerError: String?

    /// Bytes received so far.
    var received: UInt64 { UInt64(head.count) + spilled }

    /// At most this much of a snapshot is kept in memory per connection.
    static let memoryBytes = 8 << 20
    /// Spilled bytes between two `AllocatorTuning.giveBack()`.
    static let trimEvery: UInt64 = 64 << 20
    /// At least this much is (its header, with its authors, is read from it),
    /// whatever the budget has left.
    static let minimumMemoryBytes = 1 << 20

    init(document: DocumentID, kind: UInt8, total: UInt64, budget: SnapshotBudget, directory: String) {
        self.document = document
        self.kind = kind
        self.total = total
        self.budget = budget
        self.directory = directory
        memoryTaken = budget.takeMemory(Int(min(total, UInt64(Self.memoryBytes))))
        headCapacity = max(memoryTaken, Int(min(total, UInt64(Self.minimumMemoryBytes))))
    }

    deinit {
        if file >= 0 { close(file) }
        budget.give(memory: memoryTaken, disk: diskTaken)
    }

    /// Keeps a part.
    /// - Throws: `SyncError(.internalError)` when the spill file cannot be
    ///   written, or the daemon's disk bound for parts is reached.
    func append(_ bytes: ArraySlice<UInt8>) throws(SyncError) {
        var rest = bytes
        if head.count < headCapacity {
            let room = headCapacity - head.count
            head.append(contentsOf: rest.prefix(room))
            rest = rest.dropFirst(room)
        }
        if header == nil && headerError == nil { readHeader() }
        guard !rest.isEmpty else { return }
        if file < 0 {
            // What does not fit in memory goes to disk: all of the rest, taken from the budget at once.
            let needed = total - UInt64(head.count)
            guard budget.takeDisk(needed) else {
                throw SyncError(.internalError, "the receiver is holding as many snapshots as it takes at once; try again later")
            }
            diskTaken = needed
            try FileManager.default.createDirectoryIfNeeded(directory)
            let path = directory + "/snapshot-\(document)-\(UInt64.random(in: 0...UInt64.max))"
            file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard file >= 0 else { throw SyncError(.internalError, "the receiver cannot keep the snapshot: \(String(cString: strerror(errno)))") }
            unlink(path)
        }
        let failure: Int32? = rest.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = pwrite(file, buffer.baseAddress! + done, buffer.count - done, off_t(spilled) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return n == 0 ? ENOSPC : errno }
                done += n
            }
            return nil
        }
        if let failure { throw SyncError(.internalError, "the receiver cannot keep the snapshot: \(String(cString: strerror(failure)))") }
        let before = spilled
        spilled += UInt64(rest.count)
        // Parts pass through as buffers of a few megabytes, freed once written:
        // the holes they leave in the allocator's arenas are given back now and
        // then, so a peer streaming a gigabyte leaves the daemon's memory as it was.
        if before / Self.trimEvery != spilled / Self.trimEvery { AllocatorTuning.giveBack() }
    }

    /// Reads the header from the bytes in memory, once they hold it.
    private func readHeader() {
        do {
            header = try SnapshotSummary(readingPrefix: head[...])
        } catch  where error.code == .truncated {
            return
        } catch {
            headerError = error.message
        }
    }

    /// Whether the header should have been read by now (the bytes in memory
    /// are all there will be, or all of it arrived) and was not.
    var headerIsOverdue: Bool { header == nil && (received >= total || (head.count >= headCapacity && spilled > 0)) }

    /// The whole snapshot, once every part arrived (read back from disk).
    /// - Throws: `SyncError(.internalError)` when the spill file cannot be read.
    func whole() throws(SyncError) -> [UInt8] {
        guard spilled > 0 else { return head }
        var bytes = head
        bytes.reserveCapacity(Int(total))
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < spilled {
            let wanted = Int(min(UInt64(buffer.count), spilled - offset))
            let n = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress!, wanted, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SyncError(.internalError, "the receiver cannot read back the snapshot: \(String(cString: strerror(errno)))") }
            bytes.append(contentsOf: buffer[..<n])
            offset += UInt64(n)
        }
        return bytes
    }
}

extension FileManager {
    /// Makes a directory (mode 0700) unless it exists.
    /// - Throws: `SyncError(.internalError)` when it cannot.
    func createDirectoryIfNeeded(_ path: String) throws(SyncError) {
        var isDirectory: ObjCBool = false
        if fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        do {
            try createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SyncError(.internalError, "the receiver cannot make \(path): \(error)")
        }
    }
}
