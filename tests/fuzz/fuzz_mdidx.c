/*
 * libFuzzer target for vfdswmr_mdidx_decode().
 *
 * Input: byte 0 is a mode (bit 0: recompute the trailing checksum before
 * decoding, so that mutated inputs reach the field checks; bit 1: use bytes
 * 1-4 as the page size as they are, else as a selector of a valid one,
 * 512 << (value % 22)); bytes 1-4 are the page size (little-endian); the rest
 * is the index, copied to an allocation of exactly its size so that
 * AddressSanitizer catches any read past it.
 * Invariants checked (abort() otherwise): an index that decodes re-encodes to
 * the same bytes; a failed decode leaves no entries and a zero count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"

#define PREFIX 5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vfdswmr_mdidx_t idx;
    uint32_t page_size;
    uint8_t *buf, *out;
    size_t len;

    if (size < PREFIX)
        return 0;
    page_size = fuzz_page_size(data);
    buf = fuzz_input(data, size, PREFIX, 0, &len);
    if (vfdswmr_mdidx_decode(buf, len, page_size, &idx) == VFDSWMR_MD_OK) {
        if (vfdswmr_mdidx_size(idx.nentries) != len || (out = malloc(len)) == NULL)
            abort();
        vfdswmr_mdidx_encode(&idx, out);
        if (memcmp(out, buf, len) != 0)
            abort();
        free(out);
        free(idx.entries);
    } else if (idx.entries != NULL || idx.nentries != 0) {
        abort();
    }
    free(buf);
    return 0;
}
