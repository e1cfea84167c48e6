/*
 * Input conventions shared by the fuzz targets: byte 0 is a mode (bit 0:
 * recompute the structure's trailing checksum so mutated inputs reach the
 * field checks; bit 1: take the page size from bytes 1-4 as it is, else use
 * them to pick a valid one); the structure follows the target's prefix and is
 * copied into an allocation of exactly its size, so that AddressSanitizer
 * catches any read past it.
 */
#ifndef VFDSWMR_FUZZ_H
#define VFDSWMR_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "le.h"

/* The page size of bytes 1-4 of the input (size >= 5). */
static inline uint32_t
fuzz_page_size(const uint8_t *data)
{
    uint32_t ps = (uint32_t)vfdswmr_le_decode(data + 1, 4);
    return (data[0] & 2) ? ps : VFDSWMR_MIN_PAGE_SIZE << (ps % 22);
}

/* A private copy of data[prefix..size), resealed when the mode says so: the
 * checksum in the 4 bytes before `sealed` (0: the end). *len gets its size. */
static inline uint8_t *
fuzz_input(const uint8_t *data, size_t size, size_t prefix, size_t sealed, size_t *len)
{
    uint8_t *buf;

    *len = size - prefix;
    if (sealed == 0)
        sealed = *len;
    if ((buf = malloc(*len ? *len : 1)) == NULL)
        abort();
    memcpy(buf, data + prefix, *len);
    if ((data[0] & 1) && sealed >= 4 && sealed <= *len) {
        vfdswmr_le32_encode(buf + sealed - 4, vfdswmr_checksum(buf, sealed - 4));
    }
    return buf;
}

#endif
