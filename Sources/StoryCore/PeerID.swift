/// The identity of a peer: the SHA-256 of its certificate (DER), shown as
/// base32 in dash-separated groups with check characters, after Syncthing's
/// device ids: 52 base32 characters in four runs of 13, each followed by a
/// Luhn mod 32 check character, written as eight groups of seven.
/// A mistyped character makes `init?(_:)` fail.
package struct PeerID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 bytes of the certificate's SHA-256.
    package let digest: [UInt8]

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Wraps a 32-byte digest.
    package init?(digest: [UInt8]) {
        guard digest.count == 32 else { return nil }
        self.digest = digest
    }

    /// Parses the dashed form (case-insensitive; dashes and spaces ignored).
    /// Returns nil for anything but 56 base32 characters with valid checks.
    package init?(_ text: some StringProtocol) {
        let characters = text.uppercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        guard characters.count == 56 else { return nil }
        var data: [UInt8] = []
        for group in 0..<4 {
            let chunk = Array(characters[(group * 14)..<(group * 14 + 13)])
            guard let check = PeerID.luhnCheck(chunk), check == characters[group * 14 + 13] else { return nil }
            data += chunk
        }
        guard let digest = PeerID.base32Decode(data), digest.count == 32 else { return nil }
        self.digest = digest
    }

    /// What is wrong with text meant as a peer id, in words a person can act
    /// on (nil: it is one): a character peer ids never use (and what it was
    /// likely read for), a count that is not 56, or the two groups whose
    /// check character says one of their characters is mistyped.
    package static func mistake(in text: some StringProtocol) -> String? {
        guard PeerID(text) == nil else { return nil }
        let characters = Array(text.uppercased().unicodeScalars.filter { $0 != "-" && $0 != " " })
        for (index, scalar) in characters.enumerated() where !(scalar.isASCII && alphabet.contains(UInt8(scalar.value))) {
            let hint: String
            switch scalar {
            case "0": hint = " (O?)"
            case "1": hint = " (I?)"
            case "8": hint = " (B?)"
            case "9": hint = " (g?)"
            default: hint = ""
            }
            return "character \(index + 1), '\(scalar)'\(hint), is not used in peer ids: they use the letters A to Z and the digits 2 to 7"
        }
        guard characters.count == 56 else {
            return "it has \(characters.count) letters and digits; a peer id has 56, in eight groups of seven"
        }
        let bytes = characters.map { UInt8($0.value) }
        for half in 0..<4 {
            let chunk = Array(bytes[(half * 14)..<(half * 14 + 13)])
            guard PeerID.luhnCheck(chunk) != bytes[half * 14 + 13] else { continue }
            return
                "groups \(half * 2 + 1) and \(half * 2 + 2) (characters \(half * 14 + 1) to \(half * 14 + 14)) hold a mistyped character: the last of them, a check character, does not match the others"
        }
        return "it does not decode as a peer id"
    }

    /// `XXXXXXX-XXXXXXX-…` (eight groups of seven).
    package var description: String {
        let encoded = PeerID.base32Encode(digest)  // 52 characters
        var withChecks: [UInt8] = []
        for group in 0..<4 {
            let chunk = Array(encoded[(group * 13)..<(group * 13 + 13)])
            withChecks += chunk + [PeerID.luhnCheck(chunk)!]
        }
        return stride(from: 0, to: 56, by: 7).map { String(decoding: withChecks[$0..<($0 + 7)], as: UTF8.self) }
            .joined(separator: "-")
    }

    /// The first group, for logs.
    package var short: String { String(description.prefix(7)) }

    package static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.digest.lexicographicallyPrecedes(rhs.digest) }

    /// Luhn mod 32 over base32 code points (Syncthing's `luhnBase32`).
    static func luhnCheck(_ characters: [UInt8]) -> UInt8? {
        var factor = 1
        var sum = 0
        for character in characters {
            guard let codepoint = alphabet.firstIndex(of: character) else { return nil }
            var addend = factor * codepoint
            factor = factor == 2 ? 1 : 2
            addend = addend / 32 + addend % 32
            sum += addend
        }
        return alphabet[(32 - sum % 32) % 32]
    }

    static func base32Encode(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                result.append(alphabet[(buffer >> bits) & 31])
            }
        }
        if bits > 0 { result.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return result
    }

    static func base32Decode(_ characters: [UInt8]) -> [UInt8]? {
        var result: [UInt8] = []
        var buffer = 0
        var bits = 0
        for character in characters {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                result.append(UInt8(truncatingIfNeeded: buffer >> bits))
            }
        }
        // Leftover bits must be zero, so every id has exactly one spelling.
        guard buffer & ((1 << bits) - 1) == 0 else { return nil }
        return result
    }
}
