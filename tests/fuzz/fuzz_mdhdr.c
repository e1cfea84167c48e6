/*
 * libFuzzer target for vfdswmr_mdhdr_decode().
 *
 * Input: byte 0 is a mode (bit 0: recompute the header's checksum before
 * decoding, so that mutated inputs reach the field checks), the rest is the
 * buffer handed to the decoder, copied to an allocation of exactly its size
 * so that AddressSanitizer catches any read past it.
 * Invariants checked (abort() otherwise): a header that decodes re-encodes to
 * the same 72 bytes and obeys the field rules (flags, max_lag, index place);
 * a failed decode leaves the output zeroed.
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
    vfdswmr_mdhdr_t h;
    uint8_t out[VFDSWMR_MDHDR_SIZE];
    uint8_t *buf;
    size_t len;

    if (size < 1)
        return 0;
    buf = fuzz_input(data, size, 1, VFDSWMR_MDHDR_SIZE, &len);
    if (vfdswmr_mdhdr_decode(buf, len, &h) == VFDSWMR_MD_OK) {
        vfdswmr_mdhdr_encode(&h, out);
        if (memcmp(out, buf, sizeof out) != 0)
            abort();
        if ((h.flags & ~(VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED)) != 0 ||
            h.flags == (VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED) || h.max_lag < VFDSWMR_MDHDR_MIN_MAX_LAG ||
            h.index_offset < VFDSWMR_MDHDR_SIZE || h.index_offset % 8 != 0 || h.index_length < 32 ||
            h.index_offset + h.index_length < h.index_offset)
            abort();
    }
    else if ((h.flags | h.page_size | h.session | h.tick | h.index_offset | h.index_length | h.eoa | h.tick_len |
              h.max_lag | h.hdf5_id) != 0) {
        abort();
    }
    free(buf);
    return 0;
}
