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

#endif
