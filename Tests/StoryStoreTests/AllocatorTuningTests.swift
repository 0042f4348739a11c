import StoryStore
import Testing

@Suite struct AllocatorTuningTests {
    /// glibc takes both thresholds (it refuses an mmap threshold past its
    /// maximum, 32 MB on 64 bits, and then the daemon would keep its defaults).
    @Test func glibcTakesTheThresholds() {
        #expect(AllocatorTuning.mmapThreshold <= 32 << 20)
        #expect(AllocatorTuning.apply(environment: [:]))
    }

    /// Malloc's own tunables in the environment win: nothing is set over them.
    @Test func mallocTunablesInTheEnvironmentWin() {
        #expect(!AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"]))
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=512"]))
    }
}
