/*
 * libFuzzer target for vfdswmr_updater_decode(): whole updater files
 * (seeded with tests/fixtures/ud). Input byte 0 is the mode of fuzz.h (bit 0
 * reseals the updater header); the file follows. A decoded updater must have
 * every image inside the buffer (ASan checks the reads) and checksums that
 * match; a failed decode must leave nothing allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"
#include "updater.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vfdswmr_updater_t u;
    uint8_t *buf;
    size_t len;

    if (size < 1)
        return 0;
    buf = fuzz_input(data, size, 1, VFDSWMR_UDHDR_SIZE, &len);
    if (vfdswmr_updater_decode(buf, len, &u) == VFDSWMR_MD_OK) {
        for (size_t i = 0; i < u.plan.nimages; i++)
            if (vfdswmr_checksum(u.plan.images[i].image, u.plan.images[i].length) != u.plan.images[i].checksum)
                abort();
        /* the images of index and header lie in the buffer: ASan checks these reads */
        if (!(u.hdr.flags & VFDSWMR_UD_CREATE_ONLY)) {
            volatile uint32_t sink = vfdswmr_checksum(u.plan.header_image, VFDSWMR_MDHDR_SIZE) ^
                                     vfdswmr_checksum(u.plan.index_image, u.plan.index_len);
            (void)sink;
        }
        vfdswmr_updater_free(&u);
    }
    else if (u.images != NULL)
        abort();
    free(buf);
    return 0;
}
