import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@Suite struct HashTests {
    /// The chain hash and the blob hash are SHA-256 of an optional 32-byte
    /// prefix and the bytes: checked against the `openssl dgst` command on
    /// the same bytes, across the block boundaries (55, 56, 64 bytes), an
    /// empty input, an input read from the middle of an array, and a large one.
    @Test(.requires("openssl")) func theHashIsTheSHA256TheOpenSSLCommandComputes() async throws {
        var random = SeededGenerator(seed: 256)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hash-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = try #require(Digest32((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }))
        for length in [0, 1, 23, 55, 56, 63, 64, 65, 1_000, 3 << 20] {
            let padded = (0..<(length + 10)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let bytes = padded[5..<(5 + length)]
            for withPrefix in [false, true] {
                let file = directory.appendingPathComponent("\(length)-\(withPrefix)")
                try Data((withPrefix ? prefix.bytes : []) + Array(bytes)).write(to: file)
                let expected = try await programOutput("/usr/bin/openssl", ["dgst", "-sha256", "-r", file.path]).prefix(64)
                #expect(expected.count == 64)
                let digest = OpenSSLCrypto.shared.sha256(withPrefix ? prefix : nil, bytes)
                #expect(digest.description == String(expected), "\(length) bytes, prefix \(withPrefix)")
            }
        }
    }
}
