/*
 * libFuzzer target for vfdswmr_udcl_decode().
 *
 * Input: byte 0 is a mode (bit 0: recompute the trailing checksum before
 * decoding, so that mutated inputs reach the field checks; bit 1: use bytes
 * 1-4 as the page size as they are, else as a selector of a valid one,
 * 512 << (value % 22)); bytes 1-4 are the page size and bytes 5-12 the
 * updater file length (little-endian); the rest is the change list, copied to
 * an allocation of exactly its size so that AddressSanitizer catches any
 * read past it.
 * Invariants checked (abort() otherwise): a change list that decodes
 * re-encodes to the same bytes; a failed decode leaves no entries and a zero
 * count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"

#define PREFIX 13

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vfdswmr_udcl_t cl;
    uint32_t page_size;
    uint64_t file_len;
    uint8_t *buf, *out;
    size_t len;

    if (size < PREFIX)
        return 0;
    page_size = fuzz_page_size(data);
    file_len = vfdswmr_le_decode(data + 5, 8);
    buf = fuzz_input(data, size, PREFIX, 0, &len);
    if (vfdswmr_udcl_decode(buf, len, page_size, file_len, &cl) == VFDSWMR_MD_OK) {
        if (vfdswmr_udcl_size(cl.nentries) != len || (out = malloc(len)) == NULL)
            abort();
        vfdswmr_udcl_encode(&cl, out);
        if (memcmp(out, buf, len) != 0)
            abort();
        free(out);
        free(cl.entries);
    }
    else if (cl.entries != NULL || cl.nentries != 0) {
        abort();
    }
    free(buf);
    return 0;
}
