/*
 * libFuzzer target for vfdswmr_kept_decode() (the kept old bytes list).
 *
 * Input: byte 0 is a mode (bit 0: reseal -- recompute the checksum where the
 * list's count says it ends, so mutated inputs reach the field checks), the
 * rest is the buffer handed to the decoder, copied to an allocation of
 * exactly its size; the decoder gets the data_min readers pass
 * (VFDSWMR_KEPT_DATA_OFFSET) and an allocation of exactly VFDSWMR_KEPT_MAX
 * entries. Invariants checked (abort() otherwise): a list that decodes
 * re-encodes to the same bytes, and its entries are what the format allows
 * (length >= 1, ticks non-decreasing and <= VFDSWMR_TICK_MAX, both ranges
 * inside [0, 2^63), copies at or after data_min); a failed decode leaves the
 * header zeroed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"
#include "kept.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The entries of a list that decoded are valid ones. */
static int
kept_valid(const vfdswmr_kepthdr_t *h, const vfdswmr_keptent_t *e, uint64_t data_min)
{
    const uint64_t top = UINT64_C(1) << 63;

    if (h->count > VFDSWMR_KEPT_MAX)
        return 0;
    for (uint32_t i = 0; i < h->count; i++)
        if (e[i].len == 0 || e[i].tick > VFDSWMR_TICK_MAX || (i && e[i].tick < e[i - 1].tick) || e[i].addr >= top ||
            e[i].len > top - e[i].addr || e[i].data < data_min || e[i].data >= top || e[i].len > top - e[i].data)
            return 0;
    return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint64_t data_min = VFDSWMR_KEPT_DATA_OFFSET;
    vfdswmr_kepthdr_t h;
    vfdswmr_keptent_t *e;
    uint8_t *buf, *out;
    size_t len, sealed = 0;

    if (size < 1)
        return 0;
    if (size > 1 + VFDSWMR_KEPT_HDR_SIZE) {
        uint32_t n = (uint32_t)vfdswmr_le_decode(data + 1 + 16, 4);
        if (n <= VFDSWMR_KEPT_MAX && vfdswmr_kept_size(n) <= size - 1)
            sealed = vfdswmr_kept_size(n);
    }
    buf = fuzz_input(data, size, 1, sealed ? sealed : 1, &len);
    if ((e = malloc(VFDSWMR_KEPT_MAX * sizeof *e)) == NULL)
        abort();
    if (vfdswmr_kept_decode(buf, len, data_min, &h, e) == VFDSWMR_MD_OK) {
        size_t n = vfdswmr_kept_size(h.count);
        if (!kept_valid(&h, e, data_min))
            abort();
        if ((out = malloc(n)) == NULL)
            abort();
        vfdswmr_kept_encode(&h, e, out);
        if (n > len || memcmp(out, buf, n) != 0)
            abort();
        free(out);
    }
    else if ((h.session | h.count) != 0)
        abort();
    free(e);
    free(buf);
    return 0;
}
