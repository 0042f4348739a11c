#ifndef STORYTELLER_COPENSSL_SHIM_H
#define STORYTELLER_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>

/* Wrappers for OpenSSL macros that Swift cannot import. Names are prefixed so
   they never collide with the real symbols. */

static inline int st_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int st_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long st_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline void st_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/* BIO_get_mem_data is a macro around BIO_ctrl. */
static inline long st_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/* The peer's certificate chain length check needs the stack macros. */
static inline int st_sk_X509_num(const STACK_OF(X509) *stack) {
    return stack == NULL ? 0 : sk_X509_num(stack);
}

/* SHA-256 of an optional 32-byte prefix followed by bytes, on a context on
   the stack. OpenSSL 3's one-shot SHA256() fetches the digest and allocates a
   context three times per call; a change's chain hash is taken once per
   change received, so it uses the low-level API (deprecated in OpenSSL 3, not
   removed; its output is the same FIPS 180-4 digest). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void st_sha256_after(const unsigned char *prefix, const unsigned char *bytes, size_t count,
                                   unsigned char *digest) {
    SHA256_CTX context;
    SHA256_Init(&context);
    if (prefix != NULL) SHA256_Update(&context, prefix, 32);
    if (count > 0) SHA256_Update(&context, bytes, count);
    SHA256_Final(digest, &context);
}
#pragma GCC diagnostic pop

#endif
