/*
 * Checksums of the metadata file and updater file formats: the first four
 * bytes of the SHA-256 digest (OpenSSL EVP), read as a little-endian 32-bit
 * value. Every checksum field of every structure uses this function.
 *
 * Error contract: none can occur (the digest is computed in memory; an
 * OpenSSL failure aborts, since no checksum could be trusted after it).
 */
#ifndef VFDSWMR_MDFILE_CHECKSUM_H
#define VFDSWMR_MDFILE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

uint32_t vfdswmr_checksum(const void *buf, size_t len);

/* The same checksum over bytes given in pieces (a large image read in
 * parts, in bounded memory): begin, update with each piece in order, end
 * (which frees the state). vfdswmr_checksum_begin returns NULL only when
 * out of memory. */
typedef struct vfdswmr_checksum_stream vfdswmr_checksum_stream_t;
vfdswmr_checksum_stream_t *vfdswmr_checksum_begin(void);
void vfdswmr_checksum_update(vfdswmr_checksum_stream_t *cs, const void *buf, size_t len);
uint32_t vfdswmr_checksum_end(vfdswmr_checksum_stream_t *cs);

#endif
