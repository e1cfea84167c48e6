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

#endif
