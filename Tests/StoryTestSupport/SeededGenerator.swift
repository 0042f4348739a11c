/// A deterministic random generator (SplitMix64) so that every randomized test
/// replays exactly from the seed it prints on failure.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly random element, or nil if empty.
    package mutating func pick<C: Collection>(_ collection: C) -> C.Element? {
        collection.randomElement(using: &self)
    }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }

    /// An integer in the range.
    package mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }
}

/// The seed base of randomized tests: `STORYTELLER_SEED` replays one failure.
package enum TestSeeds {
    /// Seeds to run: `count` from the base, or just the one in `STORYTELLER_SEED`.
    package static func seeds(count: Int, base: UInt64 = 1) -> [UInt64] {
        if let text = environment("STORYTELLER_SEED"), let seed = UInt64(text) { return [seed] }
        return (0..<UInt64(count)).map { base &+ $0 }
    }

    /// How many scenarios a property test runs: `STORYTELLER_PROPERTY_SCENARIOS`
    /// (the long mode) or the given CI default.
    package static func scenarioCount(default value: Int) -> Int {
        environment("STORYTELLER_PROPERTY_SCENARIOS").flatMap(Int.init) ?? value
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether tests print their statistics (`STORYTELLER_TEST_VERBOSE=1`).
package enum ProcessInfoShim {
    package static var verbose: Bool { getenv("STORYTELLER_TEST_VERBOSE").map { String(cString: $0) == "1" } ?? false }
}
