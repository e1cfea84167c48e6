/*
 * libFuzzer target for vfdswmr_udhdr_decode().
 *
 * Input: byte 0 is a mode (bit 0: recompute the header's checksum before
 * decoding, so that mutated inputs reach the field checks), the rest is the
 * buffer handed to the decoder, copied to an allocation of exactly its size
 * so that AddressSanitizer catches any read past it.
 * Invariants checked (abort() otherwise): a header that decodes re-encodes to
 * the same 56 bytes; a failed decode leaves the output zeroed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vfdswmr_udhdr_t h;
    uint8_t out[VFDSWMR_UDHDR_SIZE];
    uint8_t *buf;
    size_t len;

    if (size < 1)
        return 0;
    buf = fuzz_input(data, size, 1, VFDSWMR_UDHDR_SIZE, &len);
    if (vfdswmr_udhdr_decode(buf, len, &h) == VFDSWMR_MD_OK) {
        vfdswmr_udhdr_encode(&h, out);
        if (memcmp(out, buf, sizeof out) != 0)
            abort();
    }
    else if ((h.flags | h.page_size | h.session | h.sequence | h.tick | h.cl_offset | h.cl_length) != 0) {
        abort();
    }
    free(buf);
    return 0;
}
