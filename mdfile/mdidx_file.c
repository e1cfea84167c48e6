/* A metadata file's index read in place; see mdidx_file.h. */
#include "mdidx_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "checksum.h"
#include "io.h"
#include "le.h"
#include "mdreader.h"

/* Bytes per window: whole entries and whole ranges (the image's entries
 * start at VFDSWMR_MDIDX_HEAD, its ranges 32 n bytes later: both 8-byte
 * aligned, and windows start where a read starts). */
#define WIN ((size_t)64 * 1024)
_Static_assert(WIN % VFDSWMR_MDIDX_ENTRY == 0 && WIN % VFDSWMR_MDIDX_RANGE == 0, "window size");

enum { W_ENTRIES, W_RANGES };

/* n bytes of the image from offset at, through window w: a pointer into it,
 * or NULL (errno; EIO when the file is shorter than it was). n <= WIN. */
static const uint8_t *
image_at(vfdswmr_mdidx_file_t *f, int w, uint64_t at, size_t n)
{
    ssize_t got;
    size_t want;

    VFDSWMR_ASSERT(n <= WIN && at + n <= f->length);
    if (at >= f->win_at[w] && at + n <= f->win_at[w] + f->win_len[w])
        return f->win[w] + (at - f->win_at[w]);
    want = f->length - at < WIN ? (size_t)(f->length - at) : WIN;
    f->win_len[w] = 0;
    got = vfdswmr_pread_upto(f->fd, f->win[w], want, f->offset + at);
    if (got < 0)
        return NULL;
    if ((size_t)got < n) {
        errno = EIO;
        return NULL;
    }
    f->win_at[w] = at;
    f->win_len[w] = (size_t)got;
    return f->win[w];
}

static uint64_t
entry_at(uint32_t i)
{
    return VFDSWMR_MDIDX_HEAD + (uint64_t)i * VFDSWMR_MDIDX_ENTRY;
}

static uint64_t
range_at(const vfdswmr_mdidx_file_t *f, uint32_t k)
{
    return VFDSWMR_MDIDX_HEAD + (uint64_t)f->head.nentries * VFDSWMR_MDIDX_ENTRY + (uint64_t)k * VFDSWMR_MDIDX_RANGE;
}

/* Does the image lie partly in a hole of the file (lseek SEEK_HOLE)? A
 * written index never does: every 32 bytes of entries and every 8 of
 * ranges hold a nonzero field (md_page, length), so no file system stores
 * a block of it as a hole, and a crafted index of holes is refused before
 * its stated bytes are hashed. False where the file system cannot tell. */
static bool
has_hole(const vfdswmr_mdidx_file_t *f)
{
    off_t h = lseek(f->fd, (off_t)f->offset, SEEK_HOLE);

    return h >= 0 && (uint64_t)h < f->offset + f->length;
}

/* The checksum over the whole image but its last 4 bytes, against those. */
static vfdswmr_mderr_t
check_sum(vfdswmr_mdidx_file_t *f)
{
    vfdswmr_checksum_stream_t *cs = vfdswmr_checksum_begin();
    uint64_t body = f->length - 4;
    const uint8_t *p;
    uint32_t stored;

    if (cs == NULL) {
        errno = ENOMEM;
        return VFDSWMR_MD_ENOMEM;
    }
    for (uint64_t at = 0; at < body; at += WIN) {
        size_t n = body - at < WIN ? (size_t)(body - at) : WIN;
        if (NULL == (p = image_at(f, W_ENTRIES, at, n))) {
            int saved = errno;
            vfdswmr_checksum_end(cs);
            errno = saved;
            return VFDSWMR_MD_EIO;
        }
        vfdswmr_checksum_update(cs, p, n);
    }
    if (NULL == (p = image_at(f, W_RANGES, body, 4))) {
        int saved = errno;
        vfdswmr_checksum_end(cs);
        errno = saved;
        return VFDSWMR_MD_EIO;
    }
    stored = vfdswmr_le32_decode(p);
    return vfdswmr_checksum_end(cs) == stored ? VFDSWMR_MD_OK : VFDSWMR_MD_ECHECKSUM;
}

/* Every entry in order, then every entry's ranges: vfdswmr_mdidx_decode's
 * checks (format.h, "piece by piece"). */
static vfdswmr_mderr_t
check_arrays(vfdswmr_mdidx_file_t *f)
{
    vfdswmr_mdidx_walk_t w;
    vfdswmr_mdentry_t e;
    vfdswmr_mdrange_t r;
    vfdswmr_mderr_t err;
    const uint8_t *p;

    vfdswmr_mdidx_walk_begin(&w, f->page_size, f->head.nranges);
    for (uint32_t i = 0; i < f->head.nentries; i++) {
        if (NULL == (p = image_at(f, W_ENTRIES, entry_at(i), VFDSWMR_MDIDX_ENTRY)))
            return VFDSWMR_MD_EIO;
        if ((err = vfdswmr_mdidx_walk_entry(&w, p, &e)) != VFDSWMR_MD_OK) {
            f->bad_entry = i;
            f->bad_at = entry_at(i);
            return err;
        }
    }
    if ((err = vfdswmr_mdidx_walk_end(&w)) != VFDSWMR_MD_OK)
        return err;
    for (uint32_t i = 0; i < f->head.nentries; i++) {
        uint64_t next = 0;
        if (vfdswmr_mdidx_file_entry(f, i, &e) < 0) /* walked above: fails only if the file changed */
            return VFDSWMR_MD_EIO;
        for (uint32_t k = 0; k < e.nranges; k++) {
            if (NULL == (p = image_at(f, W_RANGES, range_at(f, e.range_first + k), VFDSWMR_MDIDX_RANGE)))
                return VFDSWMR_MD_EIO;
            if ((err = vfdswmr_mdidx_range_decode(p, &e, &next, &r)) != VFDSWMR_MD_OK) {
                f->bad_entry = i;
                f->bad_at = range_at(f, e.range_first + k);
                return err;
            }
        }
    }
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_mdidx_file_open(vfdswmr_mdidx_file_t *f, int fd, const vfdswmr_mdhdr_t *h)
{
    vfdswmr_mderr_t err;
    const uint8_t *p;
    struct stat st;

    memset(f, 0, sizeof *f);
    f->bad_entry = UINT32_MAX;
    f->fd = fd;
    f->offset = h->index_offset;
    f->length = h->index_length;
    f->page_size = h->page_size;
    if (NULL == (f->win[0] = malloc(WIN)) || NULL == (f->win[1] = malloc(WIN))) {
        errno = ENOMEM;
        return VFDSWMR_MD_ENOMEM;
    }
    if (fstat(fd, &st) < 0)
        return VFDSWMR_MD_EIO;
    /* the header decoder saw to it that offset + length does not overflow */
    if (f->length > VFDSWMR_MDIDX_MAX_LEN || f->offset + f->length > (uint64_t)st.st_size || has_hole(f))
        return VFDSWMR_MD_EBOUNDS;
    if (f->length < VFDSWMR_MDIDX_HEAD)
        return vfdswmr_mdidx_head_check(NULL, f->length);
    if (NULL == (p = image_at(f, W_ENTRIES, 0, VFDSWMR_MDIDX_HEAD)))
        return VFDSWMR_MD_EIO;
    if ((err = vfdswmr_mdidx_head_check(p, f->length)) != VFDSWMR_MD_OK || (err = check_sum(f)) != VFDSWMR_MD_OK)
        return err;
    if (NULL == (p = image_at(f, W_ENTRIES, 0, VFDSWMR_MDIDX_HEAD)))
        return VFDSWMR_MD_EIO;
    if ((err = vfdswmr_mdidx_head_decode(p, f->length, f->page_size, &f->head)) != VFDSWMR_MD_OK)
        return err;
    return check_arrays(f);
}

void
vfdswmr_mdidx_file_wrap(vfdswmr_mdidx_file_t *f, const vfdswmr_mdidx_t *idx, uint32_t page_size)
{
    memset(f, 0, sizeof *f);
    f->bad_entry = UINT32_MAX;
    f->fd = -1;
    f->mem = idx;
    f->page_size = page_size;
    f->head = (vfdswmr_mdidx_t){
        .session = idx->session, .tick = idx->tick, .nentries = idx->nentries, .nranges = idx->nranges};
}

int
vfdswmr_mdidx_file_entry(vfdswmr_mdidx_file_t *f, uint32_t i, vfdswmr_mdentry_t *e)
{
    const uint8_t *p;
    uint64_t end;

    VFDSWMR_ASSERT(i < f->head.nentries);
    if (f->mem) {
        *e = f->mem->entries[i];
        return 0;
    }
    if (NULL == (p = image_at(f, W_ENTRIES, entry_at(i), VFDSWMR_MDIDX_ENTRY)))
        return -1;
    if (vfdswmr_mdidx_entry_decode(p, f->page_size, e, &end) != VFDSWMR_MD_OK ||
        (uint64_t)e->range_first + e->nranges > f->head.nranges) {
        errno = EIO; /* not what was checked at open */
        return -1;
    }
    return 0;
}

int
vfdswmr_mdidx_file_range(vfdswmr_mdidx_file_t *f, const vfdswmr_mdentry_t *e, uint32_t k, vfdswmr_mdrange_t *r)
{
    const uint8_t *p;
    uint64_t next = 0;

    VFDSWMR_ASSERT(k < e->nranges);
    if (f->mem) {
        *r = f->mem->ranges[e->range_first + k];
        return 0;
    }
    if (NULL == (p = image_at(f, W_RANGES, range_at(f, e->range_first + k), VFDSWMR_MDIDX_RANGE)))
        return -1;
    if (vfdswmr_mdidx_range_decode(p, e, &next, r) != VFDSWMR_MD_OK) {
        errno = EIO; /* not what was checked at open */
        return -1;
    }
    return 0;
}

int
vfdswmr_mdidx_file_find(vfdswmr_mdidx_file_t *f, uint64_t page, vfdswmr_mdentry_t *e)
{
    uint32_t lo = 0, hi = f->head.nentries;

    if (f->mem) {
        const vfdswmr_mdentry_t *m = vfdswmr_mdidx_find(f->mem, f->page_size, page);
        if (m)
            *e = *m;
        return m != NULL;
    }
    /* vfdswmr_mdidx_search's bisection, over entries read in place: the
     * first entry ending after page; it covers page when it starts at or
     * before it (entries are sorted and disjoint: checked at open) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (vfdswmr_mdidx_file_entry(f, mid, e) < 0)
            return -1;
        if (e->hdf5_page + vfdswmr_pages(e->length, f->page_size) <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == f->head.nentries || vfdswmr_mdidx_file_entry(f, lo, e) < 0)
        return lo == f->head.nentries ? 0 : -1;
    return e->hdf5_page <= page;
}

void
vfdswmr_mdidx_file_close(vfdswmr_mdidx_file_t *f)
{
    free(f->win[0]);
    free(f->win[1]);
    f->win[0] = f->win[1] = NULL;
}
