/*
 * libFuzzer target for the reader's load protocol, vfdswmr_mdr_load(), over
 * whole metadata files held in memory (seeded with tests/fixtures/md). Input
 * byte 0 is the mode of fuzz.h (bit 0 reseals the header); the file follows.
 * One attempt, no back-off. An accepted snapshot must be consistent: header
 * and index of one session and tick, every entry's image read back through
 * the same io either verifies or reports a checksum/short error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"
#include "mdreader.h"

struct mem {
    const uint8_t *p;
    size_t len;
};

static ssize_t
mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
    const struct mem *m = ctx;
    if (off >= m->len)
        return 0;
    if (len > m->len - off)
        len = (size_t)(m->len - off);
    memcpy(buf, m->p + off, len);
    return (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mem m;
    vfdswmr_mdr_io_t io = {mem_pread, &m};
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdsnap_t s;
    uint8_t *buf, img[1 << 16];

    if (size < 1)
        return 0;
    buf = fuzz_input(data, size, 1, VFDSWMR_MDHDR_SIZE, &m.len);
    m.p = buf;
    vfdswmr_mdr_opts_default(&o);
    o.first_read = 1024;
    o.max_attempts = 1;
    if (vfdswmr_mdr_load(&io, &o, &s, NULL, 0) == VFDSWMR_MD_OK) {
        if (s.idx.session != s.hdr.session || s.idx.tick != s.hdr.tick)
            abort();
        for (uint32_t k = 0; k < s.idx.nentries; k++)
            if (s.idx.entries[k].length <= sizeof img) {
                vfdswmr_mderr_t e = vfdswmr_mdr_read_image(&io, s.hdr.page_size, &s.idx.entries[k], img);
                if (e != VFDSWMR_MD_OK && e != VFDSWMR_MD_ECHECKSUM && e != VFDSWMR_MD_ESHORT)
                    abort();
            }
        vfdswmr_mdsnap_free(&s);
    }
    else if (s.idx.entries != NULL || s.idx.ranges != NULL)
        abort();
    free(buf);
    return 0;
}
