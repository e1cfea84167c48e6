/*
 * A metadata file made by hand, for what an attacker or a damaged disk
 * hands recovery: n entries of `len` bytes each (one metadata range over
 * the whole image), images at distinct places of a sparse file (holes, so
 * zeros), the index after them; every checksum `sum` but the last entry's,
 * which is `last_sum`. Tick 5, max_lag 3. *eoa gets the snapshot's end of
 * allocation (the HDF5 file's size it names). Used by test_recover and
 * bench_recover (links mdfile/ and common/libvfdswmr_base.la). Returns 0,
 * or -1 with errno.
 */
#ifndef VFDSWMR_TESTS_CRAFTMD_H
#define VFDSWMR_TESTS_CRAFTMD_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "format.h"
#include "io.h"

static int
craft_md(const char *md, uint32_t page_size, uint32_t n, uint32_t len, uint32_t sum, uint32_t last_sum,
         uint64_t hdf5_id, uint64_t *eoa)
{
    vfdswmr_mdentry_t *e = calloc(n, sizeof *e);
    vfdswmr_mdrange_t *r = calloc(n, sizeof *r);
    uint64_t step = vfdswmr_pages(len, page_size), end = 2 + n * step;
    uint8_t hdr[VFDSWMR_MDHDR_SIZE], *idx = NULL;
    int fd = -1, rc = -1;

    if (e == NULL || r == NULL) {
        errno = ENOMEM;
        goto done;
    }
    for (uint32_t k = 0; k < n; k++) {
        e[k] = (vfdswmr_mdentry_t){.hdf5_page = 1 + k * step,
                                   .md_page = 2 + k * step,
                                   .length = len,
                                   .checksum = k + 1 < n ? sum : last_sum,
                                   .range_first = k,
                                   .nranges = 1};
        r[k] = (vfdswmr_mdrange_t){0, len};
    }
    vfdswmr_mdidx_t ix = {.session = 9, .tick = 5, .nentries = n, .entries = e, .nranges = n, .ranges = r};
    vfdswmr_mdhdr_t h = {.page_size = page_size,
                         .session = 9,
                         .tick = 5,
                         .epoch = 5,
                         .index_offset = end * page_size,
                         .index_length = vfdswmr_mdidx_size(n, n),
                         .eoa = (1 + n * step) * page_size,
                         .tick_len = 1,
                         .max_lag = 3,
                         .hdf5_id = hdf5_id};
    *eoa = h.eoa;
    if ((idx = malloc(h.index_length)) == NULL) {
        errno = ENOMEM;
        goto done;
    }
    vfdswmr_mdidx_encode(&ix, idx);
    vfdswmr_mdhdr_encode(&h, hdr);
    if ((fd = open(md, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0 || vfdswmr_pwrite_all(fd, hdr, sizeof hdr, 0) < 0 ||
        vfdswmr_pwrite_all(fd, idx, h.index_length, h.index_offset) < 0)
        goto done;
    rc = 0;
done:
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    free(idx);
    free(e);
    free(r);
    return rc;
}

#endif
