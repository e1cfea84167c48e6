/*
 * libFuzzer target for vfdswmr_rawlog_decode() (the raw-data write log).
 *
 * Input: byte 0 is a mode (bit 0: reseal -- recompute the checksum where the
 * log's count says it ends, so mutated inputs reach the field checks), the
 * rest is the buffer handed to the decoder, copied to an allocation of
 * exactly its size. Invariants checked (abort() otherwise): a log that
 * decodes re-encodes to the same bytes; a failed decode leaves the output
 * zeroed and no ranges.
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
    vfdswmr_rawloghdr_t h;
    vfdswmr_rawrange_t *r;
    uint8_t *buf, *out;
    size_t len, sealed = 0;

    if (size < 1)
        return 0;
    if (size > 1 + VFDSWMR_RAWLOG_HDR_SIZE) {
        uint32_t n = (uint32_t)vfdswmr_le_decode(data + 1 + 32, 4);
        if (n <= VFDSWMR_RAWLOG_MAX && vfdswmr_rawlog_size(n) <= size - 1)
            sealed = vfdswmr_rawlog_size(n);
    }
    buf = fuzz_input(data, size, 1, sealed ? sealed : 1, &len);
    if (vfdswmr_rawlog_decode(buf, len, &h, &r) == VFDSWMR_MD_OK) {
        size_t n = vfdswmr_rawlog_size(h.count);
        if ((out = malloc(n)) == NULL)
            abort();
        vfdswmr_rawlog_encode(&h, r, out);
        if (n > len || memcmp(out, buf, n) != 0)
            abort();
        free(out);
        free(r);
    }
    else if (r != NULL || (h.session | h.first_tick | h.last_tick | h.count) != 0)
        abort();
    free(buf);
    return 0;
}
