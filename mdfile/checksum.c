/*
 * vfdswmr_checksum(): the first four bytes of SHA-256 (OpenSSL EVP), read
 * little-endian.
 *
 * Invariants: the only global state is the EVP_MD fetched once (under
 * pthread_once) and freed only when this code is unloaded (HDF5 unloads the
 * driver plugins at exit), so any number of threads may call
 * vfdswmr_checksum() at once. Each call uses its own digest
 * context. If OpenSSL cannot compute a digest at all (no SHA-256 provider,
 * or out of memory inside EVP_Digest) the process aborts: returning a made-up
 * value would let damaged metadata pass, or make every check fail.
 */
#include "checksum.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "le.h"

static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static const EVP_MD *sha256_md;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
static EVP_MD *sha256_fetched; /* owned: freed at unload */
#endif

/* Fetching explicitly once avoids OpenSSL 3's implicit fetch (a locked
 * provider look-up) on every call; older or odd configurations fall back to
 * the built-in method object. */
static void
sha256_init(void)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    sha256_md = sha256_fetched = EVP_MD_fetch(NULL, "SHA2-256", NULL);
#endif
    if (sha256_md == NULL)
        sha256_md = EVP_sha256();
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
/* A plugin that is unloaded would otherwise leak the fetched method. */
__attribute__((destructor)) static void
sha256_fini(void)
{
    EVP_MD_free(sha256_fetched);
    sha256_fetched = NULL;
}
#endif

static void
digest_failed(void)
{
    fputs("vfdswmr: SHA-256 (OpenSSL EVP_Digest) failed; cannot compute checksums\n", stderr);
    abort();
}

struct vfdswmr_checksum_stream {
    EVP_MD_CTX *ctx;
};

vfdswmr_checksum_stream_t *
vfdswmr_checksum_begin(void)
{
    vfdswmr_checksum_stream_t *cs = malloc(sizeof *cs);

    pthread_once(&sha256_once, sha256_init);
    if (cs == NULL || (cs->ctx = EVP_MD_CTX_new()) == NULL) {
        free(cs);
        return NULL;
    }
    if (!EVP_DigestInit_ex(cs->ctx, sha256_md, NULL))
        digest_failed();
    return cs;
}

void
vfdswmr_checksum_update(vfdswmr_checksum_stream_t *cs, const void *buf, size_t len)
{
    if (!EVP_DigestUpdate(cs->ctx, buf, len))
        digest_failed();
}

uint32_t
vfdswmr_checksum_end(vfdswmr_checksum_stream_t *cs)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;

    if (!EVP_DigestFinal_ex(cs->ctx, digest, &dlen) || dlen < 4)
        digest_failed();
    EVP_MD_CTX_free(cs->ctx);
    free(cs);
    return vfdswmr_le32_decode(digest);
}

uint32_t
vfdswmr_checksum(const void *buf, size_t len)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;

    pthread_once(&sha256_once, sha256_init);
    if (!EVP_Digest(buf, len, digest, &dlen, sha256_md, NULL) || dlen < 4)
        digest_failed();
    return vfdswmr_le32_decode(digest);
}
