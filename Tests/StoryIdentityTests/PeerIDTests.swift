import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@Suite struct PeerIDTests {
    @Test func peerIDsPrintAsEightGroupsOfSevenAndParseBack() throws {
        let id = try #require(PeerID(digest: (0..<32).map { UInt8($0 * 7 % 256) }))
        let text = id.description
        #expect(text.count == 63)
        #expect(text.split(separator: "-").map(\.count) == Array(repeating: 7, count: 8))
        #expect(PeerID(text) == id)
        #expect(PeerID(text.lowercased()) == id)
        #expect(PeerID(text.replacingOccurrences(of: "-", with: " ")) == id)
    }

    @Test func aMistypedCharacterIsRejected() throws {
        let text = try #require(PeerID(digest: Array(repeating: 0xAB, count: 32))).description
        var rejected = 0
        for index in text.indices where text[index] != "-" {
            for replacement in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" where replacement != text[index] {
                var typo = text
                typo.replaceSubrange(index...index, with: String(replacement))
                if PeerID(typo) == nil { rejected += 1 }
            }
        }
        // Every single-character substitution changes a group's Luhn check.
        #expect(rejected == 56 * 31)
        #expect(PeerID("ABC") == nil)
        #expect(PeerID(String(text.dropLast())) == nil)
    }

    @Test func anIdentityIsCreatedOnceAndLoadedAfterwards() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-identity-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Identity.loadOrCreate(in: directory)
        let second = try Identity.loadOrCreate(in: directory)
        #expect(first.peerID == second.peerID)
        #expect(first.certificateDER == second.certificateDER)
        for file in ["key.pem", "cert.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
        #expect(try Identity.generate().peerID != first.peerID)
    }

    @Test(.requires("openssl")) func thePeerIDIsTheSHA256TheOpenSSLToolPrints() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-identity-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try Identity.loadOrCreate(in: directory)
        let output = try await programOutput("/usr/bin/openssl", ["x509", "-in", directory + "/cert.pem", "-noout", "-fingerprint", "-sha256"])
        let hex = output.split(separator: "=").last!.filter(\.isHexDigit)
        #expect(hex.lowercased() == identity.peerID.digest.map { String(format: "%02x", $0) }.joined())
        let text = try await programOutput("/usr/bin/openssl", ["x509", "-in", directory + "/cert.pem", "-noout", "-text"])
        #expect(text.contains("ED25519") && text.contains("CN = storyteller"))
    }

    @Test func mismatchedOrDamagedIdentityFilesGiveClearErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-identity-\(UUID())").path
        let other = directory + "-other"
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: other)
        }
        _ = try Identity.loadOrCreate(in: directory)
        _ = try Identity.loadOrCreate(in: other)
        #expect(throws: IdentityError.self) { try Identity.load(keyPath: directory + "/key.pem", certificatePath: other + "/cert.pem") }
        try "garbage".write(toFile: other + "/key.pem", atomically: true, encoding: .utf8)
        #expect(throws: IdentityError.self) { try Identity.loadOrCreate(in: other) }
    }
}
