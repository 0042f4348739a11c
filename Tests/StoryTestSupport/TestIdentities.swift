package import StoryCore
package import StoryIdentity
import Synchronization

/// Signing identities for tests: Ed25519 keys and certificates from the
/// system OpenSSL, as a daemon's. Generated once per process and index (a key
/// and certificate take a few milliseconds to make).
package enum TestIdentities {
    private static let cache = Mutex<[Int: Identity]>([:])

    /// The test identity number `index`.
    package static func identity(_ index: Int = 0) -> Identity {
        cache.withLock { cache in
            if let identity = cache[index] { return identity }
            let identity = try! Identity.generate(commonName: "test \(index)")
            cache[index] = identity
            return identity
        }
    }

    /// What a store or a document needs to sign as identity number `index`.
    package static func signing(_ index: Int = 0) -> SigningIdentity {
        try! identity(index).signingIdentity
    }

    /// The identity kept in `directory` (made there on first use), as a daemon keeps its own.
    package static func signing(in directory: String) throws -> SigningIdentity {
        try Identity.loadOrCreate(in: directory).signingIdentity
    }

    /// An author (identity and replica) for documents in memory: identity
    /// `index`, replica nonce `nonce`.
    package static func author(_ index: Int = 0, nonce: UInt64 = 1) -> LocalAuthor {
        LocalAuthor(identity: signing(index), nonce: nonce) ?? LocalAuthor(identity: signing(index), nonce: nonce + 1)!
    }
}
