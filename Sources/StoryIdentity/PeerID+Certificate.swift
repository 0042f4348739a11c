import COpenSSL
package import StoryCore

extension PeerID {
    /// The id of a certificate given as DER bytes: its SHA-256.
    package init(certificateDER der: some Collection<UInt8>) {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        Array(der).withUnsafeBufferPointer { input in _ = SHA256(input.baseAddress, input.count, &digest) }
        self.init(digest: digest)!
    }
}
