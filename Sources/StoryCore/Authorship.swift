/// A SHA-256 digest held inline (four big-endian words), so chain hashes cost
/// no allocation.
package struct Digest32: Hashable, Sendable, CustomStringConvertible {
    package var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// Reads 32 bytes; nil for any other length.
    package init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        let read = bytes.withContiguousStorageIfAvailable { Digest32(bigEndian: UnsafeRawBufferPointer($0)) }
        self = read ?? Array(bytes).withUnsafeBytes { Digest32(bigEndian: $0) }
    }

    /// The digest in 32 bytes of memory (as SHA-256 writes it). O(1), no allocation.
    package init(bigEndian buffer: UnsafeRawBufferPointer) {
        precondition(buffer.count >= 32, "a digest is 32 bytes")
        w0 = UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        w1 = UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    /// Calls `body` with the 32 bytes, without allocating.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var words = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
        return try Swift.withUnsafeBytes(of: &words, body)
    }

    /// The 32 bytes.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The first eight bytes, little-endian (replica ids are cut from digests this way).
    var firstWordLittleEndian: UInt64 { w0.byteSwapped }

    package var description: String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
}

/// The cryptography documents need: SHA-256, Ed25519 verification and reading
/// a certificate. StoryCore does no cryptography itself; the daemon provides
/// the system OpenSSL's (StoryIdentity's `OpenSSLCrypto`). A class: copying
/// it (as every change received asks for it) is a reference count, where an
/// existential of any type copied through its value witnesses.
package protocol DocumentCrypto: AnyObject, Sendable {
    /// SHA-256 of `prefix` (when given) followed by `bytes`.
    func sha256(_ prefix: Digest32?, _ bytes: ArraySlice<UInt8>) -> Digest32

    /// Whether `signature` is a valid Ed25519 signature of `message` under the
    /// raw 32-byte `publicKey`.
    func isValidSignature(_ signature: ArraySlice<UInt8>, of message: [UInt8], publicKey: [UInt8]) -> Bool

    /// The peer id (SHA-256 of the DER bytes) and the raw Ed25519 public key of
    /// a certificate; nil when the bytes are not a certificate with an Ed25519 key.
    func identity(ofCertificate der: ArraySlice<UInt8>) -> CertificateIdentity?
}

/// Who a certificate names.
package struct CertificateIdentity: Hashable, Sendable {
    package var peer: PeerID
    /// The raw 32-byte Ed25519 public key.
    package var publicKey: [UInt8]

    package init(peer: PeerID, publicKey: [UInt8]) {
        self.peer = peer
        self.publicKey = publicKey
    }
}

/// An identity that can sign: its certificate and a signing function.
/// The daemon makes one from its TLS identity (StoryIdentity's `Identity`).
package struct SigningIdentity: Sendable {
    /// The certificate (DER); its SHA-256 is the peer id.
    package let certificate: [UInt8]
    package let peer: PeerID
    /// The raw Ed25519 public key in the certificate.
    package let publicKey: [UInt8]
    package let crypto: any DocumentCrypto
    private let signer: @Sendable ([UInt8]) -> [UInt8]

    /// - Throws: `DocumentError(.invalidValue)` if the certificate holds no Ed25519 key.
    package init(certificate: [UInt8], crypto: any DocumentCrypto, sign: @escaping @Sendable ([UInt8]) -> [UInt8])
        throws(DocumentError)
    {
        guard let identity = crypto.identity(ofCertificate: certificate[...]) else {
            throw DocumentError(.invalidValue, "the certificate holds no Ed25519 key, which authorship needs")
        }
        self.certificate = certificate
        self.crypto = crypto
        peer = identity.peer
        publicKey = identity.publicKey
        signer = sign
    }

    /// An Ed25519 signature of `message` (64 bytes).
    func sign(_ message: [UInt8]) -> [UInt8] { signer(message) }
}

/// The author of this replica's local changes: an identity and the nonce that
/// binds a replica id to it (`ReplicaID = SHA-256(peer, nonce)`, cut to 64 bits).
/// A new nonce gives a new replica id for the same identity (after a restore,
/// or when a peer proves the old id is used by another copy).
package struct LocalAuthor: Sendable {
    package let identity: SigningIdentity
    package let nonce: UInt64
    package let replica: ReplicaID

    /// The author with this nonce, or nil if the nonce derives the reserved replica id.
    package init?(identity: SigningIdentity, nonce: UInt64) {
        let replica = Authorship.replicaID(peer: identity.peer, nonce: nonce, crypto: identity.crypto)
        guard replica != .reserved else { return nil }
        self.identity = identity
        self.nonce = nonce
        self.replica = replica
    }

    /// An author with a fresh random nonce.
    package static func fresh(identity: SigningIdentity) -> LocalAuthor {
        var generator = SystemRandomNumberGenerator()
        while true {
            if let author = LocalAuthor(identity: identity, nonce: generator.next()) { return author }
        }
    }

    var peer: PeerID { identity.peer }
    var crypto: any DocumentCrypto { identity.crypto }

    var declaration: AuthorDeclaration { AuthorDeclaration(certificate: identity.certificate, nonce: nonce) }

    var record: AuthorRecord {
        AuthorRecord(peer: identity.peer, publicKey: identity.publicKey, certificate: identity.certificate, nonce: nonce)
    }
}

/// What the first change of a replica in a document says about its author:
/// the certificate and the nonce the replica id derives from.
package struct AuthorDeclaration: Hashable, Sendable {
    package var certificate: [UInt8]
    package var nonce: UInt64

    package init(certificate: [UInt8], nonce: UInt64) {
        self.certificate = certificate
        self.nonce = nonce
    }

    /// The largest certificate a declaration may carry.
    static let maximumCertificateBytes = 4096
}

/// A replica's author as a document knows it (from its declaration).
struct AuthorRecord: Hashable, Sendable {
    var peer: PeerID
    var publicKey: [UInt8]
    var certificate: [UInt8]
    var nonce: UInt64
}

/// The newest change of a replica that a document applied: its sequence
/// number, chain hash and signature (which signs that hash).
struct ChainHead: Hashable, Sendable {
    var seq: UInt64
    var hash: Digest32
    /// The author's signature of `hash`; nil when the head is a change inside
    /// a run whose signed end is still held back (its hash is authentic, but
    /// only the run's end proves it to a third party).
    var signature: [UInt8]?
}

/// The derivations that bind ids to identities, and the chain that lets one
/// signature cover a run of changes (docs/crdt.md, "Authorship").
///
/// - Replica id: SHA-256("storyteller/replica/1" ‖ peer digest ‖ nonce), first 8 bytes.
/// - Document id: SHA-256("storyteller/document/1" ‖ owner digest ‖ salt), first 16 bytes.
/// - Chain: h₀ = SHA-256("storyteller/chain/1" ‖ document ‖ replica);
///   hₙ = SHA-256(hₙ₋₁ ‖ body of change n). The author signs
///   "storyteller/change/1" ‖ hₙ, so one valid signature on change n
///   authenticates changes 1…n of that replica in that document.
package enum Authorship {
    /// Length of an Ed25519 signature.
    package static let signatureBytes = 64
    /// Every change whose sequence number is a multiple of this is checked on
    /// arrival even in the middle of a run, so a sender can always end a batch
    /// at a checked change within this many changes.
    package static let anchorInterval: UInt64 = 256
    /// A change this large is checked on arrival wherever it stands in a run
    /// (its signature is small beside it), so the changes a sender must put
    /// together to reach a checked one stay under 256 × 16 KiB.
    package static let anchorBytes = 16 << 10

    /// Whether a receiver checks this change's signature even inside a run
    /// (and a sender therefore sends it): every `anchorInterval`-th change of a
    /// replica, and every change of `anchorBytes` or more.
    package static func isCheckedInRun(seq: UInt64, bytes: Int) -> Bool {
        seq % anchorInterval == 0 || bytes >= anchorBytes
    }

    static let replicaTag = Array("storyteller/replica/1".utf8)
    static let documentTag = Array("storyteller/document/1".utf8)
    static let chainTag = Array("storyteller/chain/1".utf8)
    static let changeTag = Array("storyteller/change/1".utf8)
    static let baselineTag = Array("storyteller/baseline/1".utf8)

    /// The replica id an identity's nonce derives.
    package static func replicaID(peer: PeerID, nonce: UInt64, crypto: any DocumentCrypto) -> ReplicaID {
        var writer = ByteWriter(capacity: 64)
        writer.write(raw: replicaTag)
        writer.write(raw: peer.digest)
        writer.write(fixed64: nonce)
        return ReplicaID(crypto.sha256(nil, writer.bytes[...]).firstWordLittleEndian)
    }

    /// The id of the document an owner founds with `salt`.
    package static func documentID(owner: PeerID, salt: UInt128, crypto: any DocumentCrypto) -> DocumentID {
        var writer = ByteWriter(capacity: 72)
        writer.write(raw: documentTag)
        writer.write(raw: owner.digest)
        writer.write(fixed64: UInt64(truncatingIfNeeded: salt >> 64))
        writer.write(fixed64: UInt64(truncatingIfNeeded: salt))
        let digest = crypto.sha256(nil, writer.bytes[...])
        return DocumentID(high: digest.w0, low: digest.w1)
    }

    /// h₀ of a replica's chain in a document.
    static func chainStart(document: DocumentID, replica: ReplicaID, crypto: any DocumentCrypto) -> Digest32 {
        var writer = ByteWriter(capacity: 48)
        writer.write(raw: chainTag)
        writer.write(fixed64: document.high)
        writer.write(fixed64: document.low)
        writer.write(fixed64: replica.rawValue)
        return crypto.sha256(nil, writer.bytes[...])
    }

    /// What the author signs for the change whose chain hash is `hash`.
    static func signedMessage(_ hash: Digest32) -> [UInt8] { changeTag + hash.bytes }

    /// The pseudo-replica whose single "change" stands for content a document
    /// was founded with (a copy): no change carries it, so a peer that lacks
    /// it gets a snapshot. No identity can derive it.
    static func baselineReplica(of document: DocumentID, crypto: any DocumentCrypto) -> ReplicaID {
        var writer = ByteWriter(capacity: 40)
        writer.write(raw: baselineTag)
        writer.write(fixed64: document.high)
        writer.write(fixed64: document.low)
        let value = crypto.sha256(nil, writer.bytes[...]).firstWordLittleEndian
        return ReplicaID(value == 0 ? 1 : value)
    }

    /// Checks a declaration: the certificate names an Ed25519 identity, and
    /// the replica id derives from that identity and the nonce.
    /// - Throws: `DocumentError(.unauthenticated)`.
    static func verify(_ declaration: AuthorDeclaration, of replica: ReplicaID, crypto: any DocumentCrypto)
        throws(DocumentError) -> AuthorRecord
    {
        guard let identity = crypto.identity(ofCertificate: declaration.certificate[...]) else {
            throw DocumentError(.unauthenticated, "the author certificate of replica \(replica) is not an Ed25519 certificate")
        }
        guard replicaID(peer: identity.peer, nonce: declaration.nonce, crypto: crypto) == replica else {
            throw DocumentError(.unauthenticated, "replica \(replica) is not bound to the identity \(identity.peer.short) it declares")
        }
        return AuthorRecord(
            peer: identity.peer, publicKey: identity.publicKey, certificate: declaration.certificate, nonce: declaration.nonce)
    }
}
