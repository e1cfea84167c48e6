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
 * the same bytes, and each entry's ranges lie in its image, sorted and
 * disjoint; a failed decode leaves no entries, no ranges and zero counts;
 * the same bytes read in place from a file (mdfile/mdidx_file.c, crash
 * recovery's reader) get the same verdict, and when valid the same entries
 * and ranges, by index and by page search.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checksum.h"
#include "format.h"
#include "fuzz.h"
#include "io.h"
#include "mdidx_file.h"

#define PREFIX 5

/* The in-place reader against the decoder's verdict err and index idx. */
static void
in_place(const uint8_t *buf, size_t len, uint32_t page_size, vfdswmr_mderr_t err, const vfdswmr_mdidx_t *idx)
{
    int fd = memfd_create("fuzz_mdidx", 0);
    vfdswmr_mdhdr_t h = {.page_size = page_size, .index_offset = 0, .index_length = len};
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdentry_t e;
    vfdswmr_mdrange_t r;

    if (fd < 0 || vfdswmr_pwrite_all(fd, buf, len, 0) < 0)
        abort();
    if (vfdswmr_mdidx_file_open(&f, fd, &h) != err)
        abort();
    if (err == VFDSWMR_MD_OK) {
        if (f.head.nentries != idx->nentries || f.head.nranges != idx->nranges || f.head.tick != idx->tick ||
            f.head.session != idx->session)
            abort();
        for (uint32_t i = 0; i < idx->nentries; i++) {
            if (vfdswmr_mdidx_file_entry(&f, i, &e) < 0 || memcmp(&e, &idx->entries[i], sizeof e) != 0)
                abort();
            for (uint32_t k = 0; k < e.nranges; k++)
                if (vfdswmr_mdidx_file_range(&f, &e, k, &r) < 0 ||
                    memcmp(&r, &idx->ranges[e.range_first + k], sizeof r) != 0)
                    abort();
            const vfdswmr_mdentry_t *m = vfdswmr_mdidx_find(idx, page_size, idx->entries[i].hdf5_page);
            if (vfdswmr_mdidx_file_find(&f, idx->entries[i].hdf5_page, &e) != 1 || memcmp(&e, m, sizeof e) != 0)
                abort();
        }
    }
    vfdswmr_mdidx_file_close(&f);
    close(fd);
}

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
    vfdswmr_mderr_t err = vfdswmr_mdidx_decode(buf, len, page_size, &idx);
    in_place(buf, len, page_size, err, &idx);
    if (err == VFDSWMR_MD_OK) {
        uint64_t owned = 0;
        if (vfdswmr_mdidx_size(idx.nentries, idx.nranges) != len || (out = malloc(len)) == NULL)
            abort();
        for (uint32_t i = 0; i < idx.nentries; i++) {
            const vfdswmr_mdentry_t *e = &idx.entries[i];
            uint64_t end = 0;
            if (e->range_first != owned)
                abort();
            for (uint32_t k = e->range_first; k < e->range_first + e->nranges; k++) {
                const vfdswmr_mdrange_t *r = &idx.ranges[k];
                if (r->length == 0 || r->offset < end || (uint64_t)r->offset + r->length > e->length)
                    abort();
                end = (uint64_t)r->offset + r->length;
            }
            owned += e->nranges;
        }
        if (owned != idx.nranges)
            abort();
        vfdswmr_mdidx_encode(&idx, out);
        if (memcmp(out, buf, len) != 0)
            abort();
        free(out);
        vfdswmr_mdidx_free(&idx);
    }
    else if (idx.entries != NULL || idx.nentries != 0 || idx.ranges != NULL || idx.nranges != 0) {
        abort();
    }
    free(buf);
    return 0;
}
