import COpenSSL
package import NIOCore
import StoryCore
import StoryIdentity

/// One TLS connection as a byte transformer: ciphertext in and out through
/// memory BIOs, plaintext in and out through calls. No I/O of its own, so NIO
/// (or a test) moves the bytes. Owns its `SSL*` (which owns the two BIOs).
///
/// Not thread-safe; OpenSSL's error queue is per thread, so every error is
/// read right after the call that failed, with no suspension in between, and
/// the queue is cleared before each call whose result `SSL_get_error` reads:
/// a stale error left by another connection on this thread (or any other
/// OpenSSL call) would otherwise turn a harmless "want read" into a failure.
package final class TLSEngine {
    private let ssl: OpaquePointer
    private let networkIn: OpaquePointer
    private let networkOut: OpaquePointer
    /// Where `SSL_read_ex` decrypts to: one buffer for the connection's life.
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    package let isServer: Bool
    package private(set) var isHandshakeComplete = false

    package init(context: TLSContext, isServer: Bool) throws(TLSError) {
        guard let ssl = SSL_new(context.handle) else { throw TLSError.fromQueue(.internalError, "cannot make a TLS connection") }
        guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError.fromQueue(.internalError, "cannot make memory BIOs")
        }
        SSL_set_bio(ssl, networkIn, networkOut)  // the SSL owns them now
        if isServer { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
        self.ssl = ssl
        self.networkIn = networkIn
        self.networkOut = networkOut
        self.isServer = isServer
    }

    deinit {
        SSL_free(ssl)
    }

    /// Hands ciphertext received from the network to OpenSSL.
    package func receive(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = BIO_write(networkIn, bytes.baseAddress, Int32(bytes.count))
    }

    /// Advances the handshake. Returns true once it is complete.
    /// - Throws: `TLSError(.handshakeFailed)` with OpenSSL's reasons.
    package func handshake() throws(TLSError) -> Bool {
        guard !isHandshakeComplete else { return true }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return true
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return false
        default: throw TLSError.fromQueue(.handshakeFailed, "TLS handshake failed")
        }
    }

    /// Decrypts what has arrived, appending it to `plaintext`; true once the
    /// peer sent close_notify. Decrypts through the connection's one read
    /// buffer: nothing is allocated when nothing arrived.
    /// - Throws: `TLSError(.io)` with OpenSSL's reasons.
    package func readPlaintext(into plaintext: inout ByteBuffer) throws(TLSError) -> Bool {
        while true {
            var count = 0
            ERR_clear_error()
            let status = readBuffer.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
            if status == 1 {
                _ = readBuffer.withUnsafeBytes { plaintext.writeBytes(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                continue
            }
            switch SSL_get_error(ssl, status) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return false
            case SSL_ERROR_ZERO_RETURN: return true
            default: throw TLSError.fromQueue(.io, "cannot decrypt")
            }
        }
    }

    /// Encrypts plaintext; the ciphertext waits in `takeCiphertext()`.
    package func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        var offset = 0
        while offset < bytes.count {
            var written = 0
            ERR_clear_error()
            let status = SSL_write_ex(ssl, bytes.baseAddress! + offset, bytes.count - offset, &written)
            guard status == 1 else { throw TLSError.fromQueue(.io, "cannot encrypt") }
            offset += written
        }
    }

    /// Ciphertext OpenSSL produced, to send to the peer (empty if none).
    package func takeCiphertext() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(networkOut))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32(pending)) }
        return read > 0 ? Array(bytes[0..<Int(read)]) : []
    }

    /// Starts a clean close (close_notify); the alert waits in `takeCiphertext()`.
    package func shutdown() {
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The peer's certificate (DER), if it presented one.
    package var peerCertificateDER: [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        var derPointer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &derPointer)
        guard length > 0, let derPointer else { return nil }
        defer { st_OPENSSL_free(derPointer) }
        return Array(UnsafeBufferPointer(start: derPointer, count: Int(length)))
    }

    /// Certificates the peer sent besides its own (must be none).
    package var extraPeerCertificates: Int {
        let chain = Int(st_sk_X509_num(SSL_get_peer_cert_chain(ssl)))
        // A client's view of the chain includes the server's own certificate.
        return isServer ? chain : max(chain - 1, 0)
    }

    /// The negotiated application protocol.
    package var negotiatedALPN: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated protocol version (e.g. `TLS1_3_VERSION`).
    package var protocolVersion: Int32 { SSL_version(ssl) }
}
