import COpenSSL
import StoryCore
package import StoryIdentity

/// The ALPN protocol every Storyteller connection must negotiate.
package let storytellerALPN = "storyteller/1"

/// ALPN wire form (length-prefixed) in storage that lives for the process, as
/// the server's selection callback hands OpenSSL a pointer into it. Written
/// once when first used and only read afterwards.
nonisolated(unsafe) private let alpnWire: UnsafeMutableBufferPointer<UInt8> = {
    let bytes = [UInt8(storytellerALPN.utf8.count)] + Array(storytellerALPN.utf8)
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
    _ = buffer.initialize(from: bytes)
    return buffer
}()

/// An OpenSSL context for both roles: TLS 1.3 only, our certificate and key,
/// a certificate required from the peer, ALPN `storyteller/1`.
///
/// Certificates are self-signed, so OpenSSL's chain verification is accepted
/// as is; who the peer is gets decided after the handshake from its `PeerID`.
/// Owns its `SSL_CTX*`.
package final class TLSContext: @unchecked Sendable {
    // Configured once in init and only read afterwards (SSL_new), which
    // OpenSSL allows from several threads.
    let handle: OpaquePointer
    package let identity: Identity

    package init(identity: Identity) throws(TLSError) {
        guard let method = TLS_method(), let context = SSL_CTX_new(method) else {
            throw TLSError.fromQueue(.internalError, "cannot make a TLS context")
        }
        handle = context
        self.identity = identity
        guard st_SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION) == 1,
            st_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION) == 1,
            SSL_CTX_use_certificate(context, identity.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, identity.key) == 1,
            SSL_CTX_check_private_key(context) == 1
        else {
            throw TLSError.fromQueue(.internalError, "cannot configure the TLS context")
        }
        // A certificate is required; any self-signed one passes OpenSSL's check.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }
        // Client side: offer storyteller/1 (returns 0 on success).
        guard SSL_CTX_set_alpn_protos(context, alpnWire.baseAddress, UInt32(alpnWire.count)) == 0 else {
            throw TLSError.fromQueue(.internalError, "cannot set ALPN")
        }
        // Server side: a client that offers no ALPN at all never reaches the
        // selection below, so refuse it here with the same alert (docs/protocol.md).
        SSL_CTX_set_client_hello_cb(
            context,
            { ssl, alert, _ in
                var data: UnsafePointer<UInt8>?
                var length = 0
                guard SSL_client_hello_get0_ext(ssl, UInt32(TLSEXT_TYPE_application_layer_protocol_negotiation), &data, &length) == 1
                else {
                    alert?.pointee = SSL_AD_NO_APPLICATION_PROTOCOL
                    return SSL_CLIENT_HELLO_ERROR
                }
                return SSL_CLIENT_HELLO_SUCCESS
            }, nil)
        // Server side: accept only storyteller/1, else a fatal no_application_protocol alert.
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, offered, offeredLength, _ in
                var selected: UnsafeMutablePointer<UInt8>?
                let result = SSL_select_next_proto(
                    &selected, outLength, alpnWire.baseAddress, UInt32(alpnWire.count), offered, offeredLength)
                guard result == OPENSSL_NPN_NEGOTIATED, let selected else { return SSL_TLSEXT_ERR_ALERT_FATAL }
                out?.pointee = UnsafePointer(selected)
                return SSL_TLSEXT_ERR_OK
            }, nil)
    }

    deinit {
        SSL_CTX_free(handle)
    }
}
