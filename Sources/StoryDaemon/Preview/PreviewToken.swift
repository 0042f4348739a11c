/// The secret in a preview's URL: 32 random bytes from the system's CSPRNG
/// (`getrandom`), base64url without padding (43 characters). Whoever has it
/// may see the project; nobody can guess it, and comparing a candidate takes
/// the same time whatever the candidate, so timing does not leak it a byte at a time.
struct PreviewToken: Sendable, CustomStringConvertible {
    private let bytes: [UInt8]

    /// A fresh token.
    init() {
        var generator = SystemRandomNumberGenerator()
        bytes = Array(Self.base64URL((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).utf8)
    }

    var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether `candidate` is this token, in time that depends only on the
    /// candidate's length (not on where it first differs).
    func matches(_ candidate: some StringProtocol) -> Bool {
        let given = Array(candidate.utf8)
        var difference = UInt8(truncatingIfNeeded: given.count ^ bytes.count)
        for index in bytes.indices {
            // A shorter candidate is compared against itself padded with zeros: still every byte is looked at.
            difference |= bytes[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0 && given.count == bytes.count
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for byte in chunk { value = value << 8 | Int(byte) }
            value <<= 8 * (3 - chunk.count)
            for position in 0...chunk.count { output.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
