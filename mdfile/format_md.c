/*
 * Encoder and decoder of the metadata file header ("VHDR") and of the
 * metadata file index ("VIDX") (byte layouts: docs/FORMAT.md), the one
 * search of an index's entries, the index slots, and where an index image
 * may go (also checked for the updater change list, format_ud.c).
 *
 * Invariants:
 * - integers go through the cursors of format_codec.h only; no struct is
 *   ever copied to or from a buffer;
 * - a decoder reads buf[i] only for i < len, and only after checking len;
 * - decoders check in the order format.h documents: length, signature,
 *   checksum, version, then the fields in the order of docs/FORMAT.md
 *   ("Decoder checks"); every product or sum of values read from a buffer is
 *   checked for overflow before it is computed;
 * - on failure a decoder's output is all zero (entries NULL, nothing left
 *   allocated); on success entries is malloc'd, or NULL when there are none;
 * - an encoder writes exactly the structure's size (format.h), which
 *   invariant builds assert (common/check.h).
 */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "format_codec.h"

static const uint8_t MAGIC_VHDR[MAGIC_LEN] = {'V', 'H', 'D', 'R'};
static const uint8_t MAGIC_VIDX[MAGIC_LEN] = {'V', 'I', 'D', 'X'};

/* ---- metadata file index ------------------------------------------------ */

/* Fixed part: signature, session, tick, nentries, nranges. */
#define MDIDX_FIXED VFDSWMR_MDIDX_HEAD
#define MDIDX_ENTRY VFDSWMR_MDIDX_ENTRY
#define MDIDX_RANGE VFDSWMR_MDIDX_RANGE
#define MDIDX_MIN   (MDIDX_FIXED + CKSUM_LEN)
/* The largest index length: UINT32_MAX entries and UINT32_MAX ranges. */
#define MDIDX_MAX ((uint64_t)MDIDX_MIN + (uint64_t)(MDIDX_ENTRY + MDIDX_RANGE) * UINT32_MAX)

size_t
vfdswmr_mdidx_size(uint32_t n, uint32_t m)
{
    return MDIDX_MIN + (size_t)n * MDIDX_ENTRY + (size_t)m * MDIDX_RANGE;
}

/* True when len is vfdswmr_mdidx_size(n, m) for some n, m < 2^32: every
 * multiple of 8 from 32 up to the size of UINT32_MAX of both is one. */
static bool
mdidx_length_ok(uint64_t len)
{
    return len >= MDIDX_MIN && (len - MDIDX_MIN) % MDIDX_RANGE == 0 && len <= MDIDX_MAX;
}

void
vfdswmr_mdidx_head_encode(uint64_t session, uint64_t tick, uint32_t n, uint32_t m, uint8_t out[VFDSWMR_MDIDX_HEAD])
{
    uint8_t *p = put_magic(out, MAGIC_VIDX);

    p = put64(p, session);
    p = put64(p, tick);
    p = put32(p, n);
    p = put32(p, m);
    VFDSWMR_ASSERT(p == out + VFDSWMR_MDIDX_HEAD);
}

void
vfdswmr_mdidx_entry_encode(const vfdswmr_mdentry_t *e, uint8_t out[VFDSWMR_MDIDX_ENTRY])
{
    uint8_t *p = out;

    p = put64(p, e->hdf5_page);
    p = put64(p, e->md_page);
    p = put32(p, e->length);
    p = put32(p, e->checksum);
    p = put32(p, e->range_first);
    p = put32(p, e->nranges);
    VFDSWMR_ASSERT(p == out + VFDSWMR_MDIDX_ENTRY);
}

void
vfdswmr_mdidx_range_encode(const vfdswmr_mdrange_t *r, uint8_t out[VFDSWMR_MDIDX_RANGE])
{
    put32(put32(out, r->offset), r->length);
}

void
vfdswmr_mdidx_encode(const vfdswmr_mdidx_t *idx, uint8_t *out)
{
    uint8_t *p = out + VFDSWMR_MDIDX_HEAD;

    vfdswmr_mdidx_head_encode(idx->session, idx->tick, idx->nentries, idx->nranges, out);
    for (uint32_t i = 0; i < idx->nentries; i++, p += VFDSWMR_MDIDX_ENTRY)
        vfdswmr_mdidx_entry_encode(&idx->entries[i], p);
    for (uint32_t k = 0; k < idx->nranges; k++, p += VFDSWMR_MDIDX_RANGE)
        vfdswmr_mdidx_range_encode(&idx->ranges[k], p);
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_mdidx_size(idx->nentries, idx->nranges));
    seal(out, p);
}

vfdswmr_mderr_t
vfdswmr_mdidx_entry_decode(const uint8_t *p, uint32_t page_size, vfdswmr_mdentry_t *e, uint64_t *hdf5_end)
{
    uint64_t md_end;

    e->hdf5_page = take64(&p);
    e->md_page = take64(&p);
    e->length = take32(&p);
    e->checksum = take32(&p);
    e->range_first = take32(&p);
    e->nranges = take32(&p);
    if (e->md_page == 0 || e->length == 0 || !span_ok(e->md_page, e->length, page_size, &md_end) ||
        !span_ok(e->hdf5_page, e->length, page_size, hdf5_end))
        return VFDSWMR_MD_EENTRY;
    return VFDSWMR_MD_OK;
}

void
vfdswmr_mdidx_walk_begin(vfdswmr_mdidx_walk_t *w, uint32_t page_size, uint32_t nranges)
{
    *w = (vfdswmr_mdidx_walk_t){.page_size = page_size, .nranges = nranges};
}

/* The next entry at p: its own fields (EENTRY), order and overlap in the
 * HDF5 file (EUNSORTED, EOVERLAP), and its share of the ranges (ERANGE). */
vfdswmr_mderr_t
vfdswmr_mdidx_walk_entry(vfdswmr_mdidx_walk_t *w, const uint8_t *p, vfdswmr_mdentry_t *e)
{
    page_run_t run = {w->run_next, VFDSWMR_MD_EOVERLAP};
    uint64_t hdf5_end;
    vfdswmr_mderr_t err;

    if ((err = vfdswmr_mdidx_entry_decode(p, w->page_size, e, &hdf5_end)) != VFDSWMR_MD_OK)
        return err;
    if (w->seen > 0 && e->hdf5_page <= w->prev_page)
        return VFDSWMR_MD_EUNSORTED;
    if ((err = run_add(&run, e->hdf5_page, hdf5_end)) != VFDSWMR_MD_OK)
        return err;
    if (e->range_first != w->next_range || e->nranges > w->nranges - w->next_range)
        return VFDSWMR_MD_ERANGE;
    w->next_range += e->nranges;
    w->run_next = run.next;
    w->prev_page = e->hdf5_page;
    w->seen++;
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_mdidx_walk_end(const vfdswmr_mdidx_walk_t *w)
{
    return w->next_range == w->nranges ? VFDSWMR_MD_OK : VFDSWMR_MD_ERANGE;
}

vfdswmr_mderr_t
vfdswmr_mdidx_range_decode(const uint8_t *p, const vfdswmr_mdentry_t *e, uint64_t *next, vfdswmr_mdrange_t *r)
{
    r->offset = take32(&p);
    r->length = take32(&p);
    if (r->length == 0 || r->offset < *next || (uint64_t)r->offset + r->length > e->length)
        return VFDSWMR_MD_ERANGE;
    *next = (uint64_t)r->offset + r->length;
    return VFDSWMR_MD_OK;
}

/* The ranges of entry e, at p: each nonempty, inside the image, after the
 * end of the one before. */
static vfdswmr_mderr_t
mdranges_decode(const uint8_t *p, const vfdswmr_mdentry_t *e, vfdswmr_mdrange_t *r)
{
    uint64_t next = 0;
    vfdswmr_mderr_t err = VFDSWMR_MD_OK;

    for (uint32_t k = 0; k < e->nranges && err == VFDSWMR_MD_OK; k++)
        err = vfdswmr_mdidx_range_decode(p + (size_t)k * VFDSWMR_MDIDX_RANGE, e, &next, &r[k]);
    return err;
}

vfdswmr_mderr_t
vfdswmr_mdidx_head_check(const uint8_t *buf, uint64_t len)
{
    if (len < MDIDX_MIN)
        return VFDSWMR_MD_ESHORT;
    return memcmp(buf, MAGIC_VIDX, MAGIC_LEN) == 0 ? VFDSWMR_MD_OK : VFDSWMR_MD_EMAGIC;
}

/* Counts: nentries must fit in len (ECOUNT), then nranges in what is left
 * (ECOUNT), and together they must account for exactly len bytes (ELENGTH).
 * len >= MDIDX_MIN already holds. */
static vfdswmr_mderr_t
mdidx_check_counts(const uint8_t *buf, uint64_t len, uint32_t *n, uint32_t *m)
{
    uint64_t room = len - MDIDX_MIN;

    *n = vfdswmr_le32_decode(buf + 20);
    *m = vfdswmr_le32_decode(buf + 24);
    if (*n > room / MDIDX_ENTRY)
        return VFDSWMR_MD_ECOUNT;
    room -= (uint64_t)*n * MDIDX_ENTRY;
    if (*m > room / MDIDX_RANGE)
        return VFDSWMR_MD_ECOUNT;
    if ((uint64_t)MDIDX_MIN + (uint64_t)*n * MDIDX_ENTRY + (uint64_t)*m * MDIDX_RANGE != len)
        return VFDSWMR_MD_ELENGTH;
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_mdidx_head_decode(const uint8_t *buf, uint64_t len, uint32_t page_size, vfdswmr_mdidx_t *v)
{
    const uint8_t *p = buf + MAGIC_LEN;
    vfdswmr_mderr_t err;

    *v = (vfdswmr_mdidx_t){0};
    if (!vfdswmr_page_size_valid(page_size))
        return VFDSWMR_MD_EPAGESIZE;
    if ((err = mdidx_check_counts(buf, len, &v->nentries, &v->nranges)) != VFDSWMR_MD_OK) {
        v->nentries = v->nranges = 0;
        return err;
    }
    v->session = take64(&p);
    v->tick = take64(&p);
    return VFDSWMR_MD_OK;
}

/* Entries, then the ranges, into v (counts already checked). */
static vfdswmr_mderr_t
mdidx_decode_arrays(const uint8_t *buf, uint32_t page_size, vfdswmr_mdidx_t *v)
{
    const uint8_t *ranges_at = buf + MDIDX_FIXED + (size_t)v->nentries * MDIDX_ENTRY;
    vfdswmr_mdidx_walk_t w;
    vfdswmr_mderr_t err = VFDSWMR_MD_OK;

    if ((v->nentries && NULL == (v->entries = calloc(v->nentries, sizeof *v->entries))) ||
        (v->nranges && NULL == (v->ranges = calloc(v->nranges, sizeof *v->ranges))))
        return VFDSWMR_MD_ENOMEM;
    vfdswmr_mdidx_walk_begin(&w, page_size, v->nranges);
    for (uint32_t i = 0; i < v->nentries && err == VFDSWMR_MD_OK; i++)
        err = vfdswmr_mdidx_walk_entry(&w, buf + MDIDX_FIXED + (size_t)i * MDIDX_ENTRY, &v->entries[i]);
    if (err == VFDSWMR_MD_OK)
        err = vfdswmr_mdidx_walk_end(&w);
    for (uint32_t i = 0; i < v->nentries && err == VFDSWMR_MD_OK; i++) {
        const vfdswmr_mdentry_t *e = &v->entries[i];
        if (e->nranges) /* else ranges may be NULL */
            err = mdranges_decode(ranges_at + (size_t)e->range_first * MDIDX_RANGE, e, v->ranges + e->range_first);
    }
    return err;
}

vfdswmr_mderr_t
vfdswmr_mdidx_decode(const uint8_t *buf, size_t len, uint32_t page_size, vfdswmr_mdidx_t *idx)
{
    vfdswmr_mdidx_t v = {0};
    vfdswmr_mderr_t err;

    *idx = v;
    if ((err = check_frame(buf, len, var_frame(len, MDIDX_MIN), MAGIC_VIDX)) != VFDSWMR_MD_OK)
        return err;
    if ((err = vfdswmr_mdidx_head_decode(buf, len, page_size, &v)) != VFDSWMR_MD_OK)
        return err;
    if ((err = mdidx_decode_arrays(buf, page_size, &v)) != VFDSWMR_MD_OK) {
        vfdswmr_mdidx_free(&v);
        return err;
    }
    *idx = v;
    return VFDSWMR_MD_OK;
}

void
vfdswmr_mdidx_free(vfdswmr_mdidx_t *idx)
{
    free(idx->entries);
    free(idx->ranges);
    idx->entries = NULL;
    idx->ranges = NULL;
    idx->nentries = idx->nranges = 0;
}

uint32_t
vfdswmr_mdidx_search(const vfdswmr_mdentry_t *entries, uint32_t n, uint32_t page_size, uint64_t page)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const vfdswmr_mdentry_t *e = &entries[mid];
        if (e->hdf5_page + vfdswmr_pages(e->length, page_size) <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const vfdswmr_mdentry_t *
vfdswmr_mdidx_find(const vfdswmr_mdidx_t *idx, uint32_t page_size, uint64_t page)
{
    uint32_t k = vfdswmr_mdidx_search(idx->entries, idx->nentries, page_size, page);

    /* entries do not overlap: the first one ending after page covers it
     * when it starts at or before it */
    return k < idx->nentries && idx->entries[k].hdf5_page <= page ? &idx->entries[k] : NULL;
}

uint64_t
vfdswmr_mdidx_slot_size(uint32_t reserved_pages, uint32_t page_size)
{
    uint64_t reserved = (uint64_t)reserved_pages * page_size;

    if (reserved <= VFDSWMR_MDHDR_SIZE)
        return 0;
    return (reserved - VFDSWMR_MDHDR_SIZE) / 2 / 8 * 8;
}

uint64_t
vfdswmr_mdidx_slot_offset(unsigned slot, uint32_t reserved_pages, uint32_t page_size)
{
    return VFDSWMR_MDHDR_SIZE + (slot ? vfdswmr_mdidx_slot_size(reserved_pages, page_size) : 0);
}

/* Declared in format_codec.h: the updater change list checks it too. */
vfdswmr_mderr_t
vfdswmr_mdidx_check_place(uint64_t offset, uint64_t length)
{
    if (offset < VFDSWMR_MDHDR_SIZE || offset % 8 != 0)
        return VFDSWMR_MD_EBOUNDS;
    if (!mdidx_length_ok(length))
        return VFDSWMR_MD_ELENGTH;
    if (offset > UINT64_MAX - length)
        return VFDSWMR_MD_EBOUNDS;
    return VFDSWMR_MD_OK;
}

/* ---- metadata file header ----------------------------------------------- */

/* Earlier versions of the header: version 1, 56 bytes; version 2, 72
 * bytes (no epoch); each with its checksum in its last 4 bytes. */
static const struct {
    uint16_t version;
    size_t size;
} MDHDR_OLD[] = {{1, 56}, {2, 72}};

void
vfdswmr_mdhdr_encode(const vfdswmr_mdhdr_t *h, uint8_t out[VFDSWMR_MDHDR_SIZE])
{
    uint8_t *p = put_magic(out, MAGIC_VHDR);

    p = put16(p, VFDSWMR_FORMAT_VERSION);
    p = put16(p, h->flags);
    p = put32(p, h->page_size);
    p = put64(p, h->session);
    p = put64(p, h->tick);
    p = put64(p, h->index_offset);
    p = put64(p, h->index_length);
    p = put64(p, h->eoa);
    p = put32(p, h->tick_len);
    p = put32(p, h->max_lag);
    p = put64(p, h->hdf5_id);
    p = put64(p, h->epoch);
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + VFDSWMR_MDHDR_SIZE);
    seal(out, p);
}

/* A whole, intact header of an earlier format version: refused as such
 * (EVERSION) rather than reported as a checksum mismatch, which a reader
 * would retry. */
static bool
is_old_header(const uint8_t *buf, size_t len)
{
    const uint8_t *p = buf + MAGIC_LEN;
    uint16_t version = take16(&p);

    for (size_t i = 0; i < sizeof MDHDR_OLD / sizeof MDHDR_OLD[0]; i++) {
        size_t n = MDHDR_OLD[i].size;
        if (version == MDHDR_OLD[i].version && len >= n &&
            vfdswmr_le32_decode(buf + n - CKSUM_LEN) == vfdswmr_checksum(buf, n - CKSUM_LEN))
            return true;
    }
    return false;
}

static vfdswmr_mderr_t
check_mdhdr_fields(const vfdswmr_mdhdr_t *h)
{
    if ((h->flags & ~(VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED)) != 0)
        return VFDSWMR_MD_ERESERVED;
    if ((h->flags & VFDSWMR_MDHDR_FINAL) && (h->flags & VFDSWMR_MDHDR_FAILED))
        return VFDSWMR_MD_EFLAGS;
    if (!vfdswmr_page_size_valid(h->page_size))
        return VFDSWMR_MD_EPAGESIZE;
    if (h->max_lag < VFDSWMR_MDHDR_MIN_MAX_LAG || h->epoch > h->tick || h->tick > VFDSWMR_TICK_MAX)
        return VFDSWMR_MD_EFIELD;
    return vfdswmr_mdidx_check_place(h->index_offset, h->index_length);
}

bool
vfdswmr_hdf5_id_foreign(const vfdswmr_mdhdr_t *h, uint64_t actual)
{
    if (actual == 0 || h->hdf5_id == actual)
        return false;
    return h->hdf5_id != 0 || h->tick != 0 || h->index_length != vfdswmr_mdidx_size(0, 0);
}

vfdswmr_mderr_t
vfdswmr_mdhdr_decode(const uint8_t *buf, size_t len, vfdswmr_mdhdr_t *h)
{
    vfdswmr_mdhdr_t v = {0};
    const uint8_t *p;
    vfdswmr_mderr_t err;

    *h = v;
    if (len >= MAGIC_LEN + 2 && memcmp(buf, MAGIC_VHDR, MAGIC_LEN) == 0 && is_old_header(buf, len))
        return VFDSWMR_MD_EVERSION;
    if ((err = check_frame(buf, len, VFDSWMR_MDHDR_SIZE, MAGIC_VHDR)) != VFDSWMR_MD_OK)
        return err;
    p = buf + MAGIC_LEN;
    if ((err = check_version(take16(&p))) != VFDSWMR_MD_OK)
        return err;
    v.flags = take16(&p);
    v.page_size = take32(&p);
    v.session = take64(&p);
    v.tick = take64(&p);
    v.index_offset = take64(&p);
    v.index_length = take64(&p);
    v.eoa = take64(&p);
    v.tick_len = take32(&p);
    v.max_lag = take32(&p);
    v.hdf5_id = take64(&p);
    v.epoch = take64(&p);
    if ((err = check_mdhdr_fields(&v)) != VFDSWMR_MD_OK)
        return err;
    *h = v;
    return VFDSWMR_MD_OK;
}
