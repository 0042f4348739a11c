import CMalloc
import Foundation

/// How this process's allocator (glibc's malloc) hands memory back to the
/// system: set once when a daemon starts (`storytellerd`), and by the
/// benchmarks, so that they measure what the daemon does.
///
/// glibc's defaults keep memory a daemon no longer uses. Swift's tasks run on
/// a pool of threads, which allocate from glibc's per-thread arenas; the free
/// space at the top of such an arena is given back only past the trim
/// threshold, and `malloc_trim` never trims it. The trim threshold itself
/// grows each time a large block (one that was mapped on its own) is freed,
/// up to 64 MB, with the mmap threshold (up to 32 MB). After the medium
/// trace, 30 MB of the 132 MB a benchmark process held was such free space
/// (`malloc_info`); a sync's burst leaves the same in a daemon.
///
/// Fixed thresholds: blocks under 8 MB come from the arenas (a fresh mapping
/// for each large buffer made the sync 25–35 % slower: its pages fault in
/// every time), and an arena gives back the free space at its top once it
/// passes 8 MB (at 2 MB, a large initial sync took twice as long: its
/// buffers of a few megabytes were given back and faulted in again each
/// time). Measured (docs/performance.md, "The allocator's thresholds"): RSS
/// of 3 replicas of the medium trace 132 → 111 MB, peak 211 → 188 MB, with
/// the sync, the merge and a large initial sync as fast.
package enum AllocatorTuning {
    /// Blocks this large or larger are mapped on their own.
    package static let mmapThreshold = 8 << 20
    /// Free space at the top of an arena past this is given back.
    package static let trimThreshold = 8 << 20

    /// Gives the free pages inside every arena back to the system
    /// (`malloc_trim(0)`: `madvise` on whole free pages, wherever they are).
    /// For bursts of large short-lived buffers from a peer (snapshot parts),
    /// whose holes the thresholds above leave in the arenas. O(arenas' size).
    package static func giveBack() { _ = malloc_trim(0) }

    /// Sets both thresholds, unless the environment sets malloc's own tunables
    /// (`GLIBC_TUNABLES=glibc.malloc.…`, which then win). Returns whether it set them.
    @discardableResult
    package static func apply(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.") == true { return false }
        return mallopt(M_MMAP_THRESHOLD, Int32(mmapThreshold)) == 1 && mallopt(M_TRIM_THRESHOLD, Int32(trimThreshold)) == 1
    }
}
