#ifndef HERALD_COPENSSL_SHIM_H
#define HERALD_COPENSSL_SHIM_H
/* Only the OpenSSL 3 APIs: deprecated ones are invisible, so they cannot creep in. */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509.h>

/* Macro expressions Swift cannot import. */
static inline int herald_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int herald_EVP_PKEY_KEYPAIR(void) { return EVP_PKEY_KEYPAIR; }
static inline void herald_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline OSSL_PARAM herald_OSSL_PARAM_END(void) { OSSL_PARAM end = OSSL_PARAM_END; return end; }

/* Parameter names and values as C strings with static storage. OSSL_PARAM_BLD_push_* keeps the
   key (and utf8 value) pointer until OSSL_PARAM_BLD_to_param, so a Swift String bridged for the
   duration of one call would dangle by then. */
static inline const char *herald_PARAM_RSA_N(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *herald_PARAM_RSA_E(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *herald_PARAM_GROUP_NAME(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *herald_PARAM_PUB_KEY(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *herald_CURVE_P256(void) { return "prime256v1"; }
static inline const char *herald_PARAM_MAC_DIGEST(void) { return OSSL_MAC_PARAM_DIGEST; }
static inline const char *herald_PARAM_AEAD_TAG(void) { return OSSL_CIPHER_PARAM_AEAD_TAG; }
#endif
