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

static inline uint64_t
fuzz_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The page size of bytes 1-4 of the input (size >= 5). */
static inline uint32_t
fuzz_page_size(const uint8_t *data)
{
    uint32_t ps = (uint32_t)fuzz_le(data + 1, 4);
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
        uint32_t c = vfdswmr_checksum(buf, sealed - 4);
        for (int i = 0; i < 4; i++)
            buf[sealed - 4 + i] = (uint8_t)(c >> (8 * i));
    }
    return buf;
}

#endif
