import COpenSSL
import Foundation
package import StoryCore

/// This daemon's TLS identity: an Ed25519 key and a long-lived self-signed
/// certificate. Peers know each other by the certificate's `PeerID`.
///
/// Owns its `EVP_PKEY*` and `X509*` and frees them in `deinit`.
package final class Identity: @unchecked Sendable {
    // Immutable after init; OpenSSL objects are only read (certificates and
    // keys are reference-counted and safe to share for reading).
    package let key: OpaquePointer
    package let certificate: OpaquePointer
    /// The certificate, DER-encoded.
    package let certificateDER: [UInt8]
    /// The certificate, PEM-encoded.
    package let certificatePEM: String
    /// Who we are to peers.
    package let peerID: PeerID

    private init(key: OpaquePointer, certificate: OpaquePointer) throws(IdentityError) {
        self.key = key
        self.certificate = certificate
        var derPointer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &derPointer)
        guard length > 0, let derPointer else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw IdentityError.fromQueue(.invalid, "cannot encode the certificate")
        }
        certificateDER = Array(UnsafeBufferPointer(start: derPointer, count: Int(length)))
        st_OPENSSL_free(derPointer)
        certificatePEM = Identity.pem { PEM_write_bio_X509($0, certificate) } ?? ""
        peerID = PeerID(certificateDER: certificateDER)
    }

    deinit {
        EVP_PKEY_free(key)
        X509_free(certificate)
    }

    /// Loads the identity from `directory` (`key.pem`, `cert.pem`), or creates
    /// it there on first start (files 0600 in a directory created 0700).
    /// - Throws: `IdentityError` naming the file at fault.
    package static func loadOrCreate(in directory: String, commonName: String = "storyteller") throws -> Identity {
        let keyPath = directory + "/key.pem"
        let certificatePath = directory + "/cert.pem"
        let manager = FileManager.default
        if manager.fileExists(atPath: keyPath) || manager.fileExists(atPath: certificatePath) {
            return try load(keyPath: keyPath, certificatePath: certificatePath)
        }
        try makeDirectory(directory)
        let identity = try generate(commonName: commonName)
        let keyPEM = pem { PEM_write_bio_PrivateKey($0, identity.key, nil, nil, 0, nil, nil) } ?? ""
        for (path, text) in [(keyPath, keyPEM), (certificatePath, identity.certificatePEM)] {
            guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw IdentityError(.unwritable, "cannot write \(path)")
            }
        }
        return identity
    }

    /// Makes `path` and its missing parents (mode 0700), saying in words
    /// why it cannot (not Foundation's "operation could not be completed").
    private static func makeDirectory(_ path: String) throws(IdentityError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw IdentityError(.unwritable, "\(path) is a file, not a directory") }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw IdentityError(.unwritable, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Loads an identity from PEM files.
    package static func load(keyPath: String, certificatePath: String) throws(IdentityError) -> Identity {
        guard let keyText = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
            throw IdentityError(.unreadable, "cannot read \(keyPath)")
        }
        guard let certificateText = try? String(contentsOfFile: certificatePath, encoding: .utf8) else {
            throw IdentityError(.unreadable, "cannot read \(certificatePath)")
        }
        guard let key = readPEM(keyText, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw IdentityError.fromQueue(.invalid, "\(keyPath) holds no private key")
        }
        guard let certificate = readPEM(certificateText, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            EVP_PKEY_free(key)
            throw IdentityError.fromQueue(.invalid, "\(certificatePath) holds no certificate")
        }
        guard X509_check_private_key(certificate, key) == 1 else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw IdentityError.fromQueue(.invalid, "\(certificatePath) does not belong to the key in \(keyPath)")
        }
        return try Identity(key: key, certificate: certificate)
    }

    /// A new Ed25519 key and a self-signed certificate valid for 100 years.
    package static func generate(commonName: String = "storyteller") throws(IdentityError) -> Identity {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
            throw IdentityError.fromQueue(.internalError, "cannot make a key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var keyPointer: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &keyPointer) == 1, let key = keyPointer else {
            throw IdentityError.fromQueue(.internalError, "cannot generate an Ed25519 key")
        }
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw IdentityError.fromQueue(.internalError, "cannot make a certificate")
        }
        var serial = [UInt8](repeating: 0, count: 16)
        _ = RAND_bytes(&serial, 16)
        serial[0] &= 0x7F  // positive
        let ok =
            X509_set_version(certificate, 2) == 1
            && serial.withUnsafeBufferPointer { bytes in
                guard let number = BN_bin2bn(bytes.baseAddress, 16, nil) else { return false }
                defer { BN_free(number) }
                return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
            }
            && X509_time_adj_ex(X509_getm_notBefore(certificate), -1, 0, nil) != nil
            && X509_time_adj_ex(X509_getm_notAfter(certificate), 36_500, 0, nil) != nil
            && X509_set_pubkey(certificate, key) == 1
            && setCommonName(commonName, on: certificate)
            && X509_sign(certificate, key, nil) > 0  // Ed25519 signs with no digest
        guard ok else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw IdentityError.fromQueue(.internalError, "cannot make a self-signed certificate")
        }
        return try Identity(key: key, certificate: certificate)
    }

    /// Signs `message` with the identity's Ed25519 key (64 bytes).
    package func sign(_ message: [UInt8]) -> [UInt8] {
        OpenSSLErrors.drain()
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let ok =
            EVP_DigestSignInit(context, nil, nil, nil, key) == 1
            && EVP_DigestSign(context, &signature, &length, message, message.count) == 1
        // An Ed25519 key that signed once signs always; failing here is a broken library.
        precondition(ok && length == 64, "Ed25519 signing failed: \(OpenSSLErrors.drain())")
        return signature
    }

    /// What documents need to sign this identity's changes.
    package var signingIdentity: SigningIdentity {
        get throws {
            try SigningIdentity(certificate: certificateDER, crypto: OpenSSLCrypto.shared) { [self] in sign($0) }
        }
    }

    private static func setCommonName(_ name: String, on certificate: OpaquePointer) -> Bool {
        guard let subject = X509_get_subject_name(certificate) else { return false }
        let added = name.withCString { value in
            X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), -1, -1, 0)
        }
        return added == 1 && X509_set_issuer_name(certificate, subject) == 1
    }

    /// Writes something into a memory BIO and returns it as text.
    static func pem(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        var data: UnsafeMutablePointer<CChar>?
        let length = st_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    private static func readPEM(_ text: String, _ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }
}
