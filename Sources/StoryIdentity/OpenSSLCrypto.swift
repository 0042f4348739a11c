import COpenSSL
package import StoryCore
import Synchronization

/// The cryptography documents use, from the system OpenSSL: SHA-256,
/// Ed25519 verification and reading certificates.
package final class OpenSSLCrypto: DocumentCrypto, @unchecked Sendable {
    // Fetched once and only used for reading afterwards, which OpenSSL allows
    // from any thread.
    private let sha256: OpaquePointer

    /// The one instance (the digest is fetched once per process).
    package static let shared = OpenSSLCrypto()

    private init() {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else { preconditionFailure("OpenSSL has no SHA-256") }
        sha256 = digest
    }

    deinit {
        EVP_MD_free(sha256)
        keys.withLock { for (_, key) in $0 { EVP_PKEY_free(key) } }
    }

    package func sha256(_ prefix: Digest32?, _ bytes: ArraySlice<UInt8>) -> Digest32 {
        // Once per change received (the hash chain): on a context on the stack
        // (`st_sha256_after`), without the allocations of the one-shot SHA256.
        var output: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &output) { digest in
            let out = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
            bytes.withUnsafeBytes { source in
                let input = source.baseAddress?.assumingMemoryBound(to: UInt8.self)
                if let prefix {
                    prefix.withUnsafeBytes { st_sha256_after($0.baseAddress!.assumingMemoryBound(to: UInt8.self), input, source.count, out) }
                } else {
                    st_sha256_after(nil, input, source.count, out)
                }
            }
        }
        return withUnsafeBytes(of: &output) { Digest32(bigEndian: $0) }
    }

    package func isValidSignature(_ signature: ArraySlice<UInt8>, of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        OpenSSLErrors.drain()
        defer { OpenSSLErrors.drain() }
        guard let key = key(publicKey) else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return signature.withUnsafeBufferPointer { signatureBytes in
            EVP_DigestVerify(context, signatureBytes.baseAddress, 64, message, message.count) == 1
        }
    }

    /// Public keys made ready for verification (a handful of authors per
    /// document sign most changes); a reference is handed out per use.
    private let keys = Mutex<[[UInt8]: OpaquePointer]>([:])

    private func key(_ raw: [UInt8]) -> OpaquePointer? {
        keys.withLock { keys in
            if let key = keys[raw] {
                EVP_PKEY_up_ref(key)
                return key
            }
            guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count) else { return nil }
            if keys.count >= 1_024 {
                for (_, old) in keys { EVP_PKEY_free(old) }
                keys.removeAll()
            }
            keys[raw] = key
            EVP_PKEY_up_ref(key)
            return key
        }
    }

    package func identity(ofCertificate der: ArraySlice<UInt8>) -> CertificateIdentity? {
        OpenSSLErrors.drain()
        defer { OpenSSLErrors.drain() }
        let bytes = Array(der)
        let certificate: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let certificate else { return nil }
        defer { X509_free(certificate) }
        // The whole input must be the certificate: trailing bytes would let two
        // spellings of one key give two peer ids.
        guard i2d_X509(certificate, nil) == Int32(bytes.count) else { return nil }
        guard let key = X509_get0_pubkey(certificate), EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 else { return nil }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32 else { return nil }
        return CertificateIdentity(peer: PeerID(certificateDER: bytes), publicKey: raw)
    }
}
