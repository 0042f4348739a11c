import COpenSSL
package import StoryCore

/// SHA-256 fed piece by piece, over the system OpenSSL (EVP). Owns its
/// `EVP_MD_CTX` and frees it in `deinit`; the pointer never leaves this type.
/// Not thread-safe: one user at a time (an upload, or the blob store's actor).
package final class SHA256Stream {
    private let context: OpaquePointer

    /// A stream ready for its first bytes.
    package init() {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL cannot allocate a digest context") }
        self.context = context
        reset()
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Starts over, forgetting the bytes fed so far.
    func reset() {
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { preconditionFailure("OpenSSL has no SHA-256") }
    }

    /// Feeds bytes.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else { preconditionFailure("SHA-256 update failed") }
    }

    /// Feeds bytes of any collection (without a copy when it is contiguous).
    package func update(contentsOf bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The digest of everything fed since the last reset; the stream is reset.
    package func finalize() -> BlobHash {
        var output: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &output) { digest in
            var length: UInt32 = 0
            guard EVP_DigestFinal_ex(context, digest.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1, length == 32 else {
                preconditionFailure("SHA-256 final failed")
            }
        }
        reset()
        return withUnsafeBytes(of: &output) { Digest32(bigEndian: $0) }
    }

    /// The digest of `bytes` (the stream is left reset).
    package func digest(of bytes: some Collection<UInt8>) -> BlobHash {
        reset()
        update(contentsOf: bytes)
        return finalize()
    }
}
