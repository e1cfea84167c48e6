/*
 * Encoders and decoders of the metadata file header and index and of the
 * updater file header and change list (byte layouts: docs/FORMAT.md), and
 * the one search of an index's entries.
 *
 * Invariants:
 * - integers are read and written one byte at a time, little-endian, by the
 *   codec of common/le.h (through the put/take cursors below); no struct is
 *   ever copied to or from a buffer, so alignment, padding and host byte
 *   order never matter;
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
#include "checksum.h"
#include "le.h"

_Static_assert(SIZE_MAX / 32 > UINT32_MAX, "vfdswmr_udcl_size() needs a 64-bit size_t");

#define MAGIC_LEN 4
#define CKSUM_LEN 4

static const uint8_t MAGIC_VHDR[MAGIC_LEN] = {'V', 'H', 'D', 'R'};
static const uint8_t MAGIC_VIDX[MAGIC_LEN] = {'V', 'I', 'D', 'X'};
static const uint8_t MAGIC_VUDH[MAGIC_LEN] = {'V', 'U', 'D', 'H'};
static const uint8_t MAGIC_VUCL[MAGIC_LEN] = {'V', 'U', 'C', 'L'};
static const uint8_t MAGIC_VRDM[MAGIC_LEN] = {'V', 'R', 'D', 'M'};
static const uint8_t MAGIC_VRAW[MAGIC_LEN] = {'V', 'R', 'A', 'W'};

/* ---- byte cursors over the little-endian codec (common/le.h) ------------- */

static uint8_t *
put_le(uint8_t *p, uint64_t v, unsigned nbytes)
{
    vfdswmr_le_encode(p, v, nbytes);
    return p + nbytes;
}

static uint8_t *
put16(uint8_t *p, uint16_t v)
{
    return put_le(p, v, 2);
}
static uint8_t *
put32(uint8_t *p, uint32_t v)
{
    return put_le(p, v, 4);
}
static uint8_t *
put64(uint8_t *p, uint64_t v)
{
    return put_le(p, v, 8);
}

static uint8_t *
put_magic(uint8_t *p, const uint8_t magic[MAGIC_LEN])
{
    for (unsigned i = 0; i < MAGIC_LEN; i++)
        p[i] = magic[i];
    return p + MAGIC_LEN;
}

/* Reads nbytes at *p and advances *p past them. */
static uint64_t
take_le(const uint8_t **p, unsigned nbytes)
{
    uint64_t v = vfdswmr_le_decode(*p, nbytes);
    *p += nbytes;
    return v;
}

static uint16_t
take16(const uint8_t **p)
{
    return (uint16_t)take_le(p, 2);
}
static uint32_t
take32(const uint8_t **p)
{
    return (uint32_t)take_le(p, 4);
}
static uint64_t
take64(const uint8_t **p)
{
    return take_le(p, 8);
}

/* Appends the checksum of [start, end) at end. */
static void
seal(uint8_t *start, uint8_t *end)
{
    put32(end, vfdswmr_checksum(start, (size_t)(end - start)));
}

/* ---- checks shared by the decoders ------------------------------------- */

/* The structure occupies buf[0, frame) and ends with its checksum; the caller
 * has len bytes. Checks length, signature and checksum, in this order. */
static vfdswmr_mderr_t
check_frame(const uint8_t *buf, size_t len, size_t frame, const uint8_t magic[MAGIC_LEN])
{
    if (len < frame)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, magic, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (vfdswmr_le32_decode(buf + frame - CKSUM_LEN) != vfdswmr_checksum(buf, frame - CKSUM_LEN))
        return VFDSWMR_MD_ECHECKSUM;
    return VFDSWMR_MD_OK;
}

/* Frame of a variable-length structure: all of buf, but at least `min`
 * bytes (so that a shorter buffer fails the length check). */
static size_t
var_frame(size_t len, size_t min)
{
    return len < min ? min : len;
}

static vfdswmr_mderr_t
check_version(uint16_t version)
{
    return version == VFDSWMR_FORMAT_VERSION ? VFDSWMR_MD_OK : VFDSWMR_MD_EVERSION;
}

/* An array of fixed-size entries: `fixed` bytes (ending with the u32 entry
 * count), the entries, then the checksum. */
typedef vfdswmr_mderr_t (*entry_decoder_t)(const uint8_t *p, void *entries, uint32_t i, void *ctx);
typedef struct entry_array_t {
    size_t fixed;    /* encoded bytes before the first entry */
    size_t enc_size; /* encoded bytes per entry */
    size_t mem_size; /* sizeof the in-memory entry */
    entry_decoder_t decode;
} entry_array_t;

static size_t
array_size(const entry_array_t *a, uint32_t n)
{
    return a->fixed + (size_t)n * a->enc_size + CKSUM_LEN;
}

/* True when len is the encoded size of some entry count. */
static bool
array_length_ok(const entry_array_t *a, uint64_t len)
{
    uint64_t base = array_size(a, 0);
    return len >= base && (len - base) % a->enc_size == 0 && (len - base) / a->enc_size <= UINT32_MAX;
}

/* The stated entry count must fit in len (ECOUNT) and account for exactly
 * len bytes (ELENGTH). len >= array_size(a, 0) already holds. */
static vfdswmr_mderr_t
check_count(const uint8_t *buf, size_t len, const entry_array_t *a, uint32_t *n)
{
    *n = vfdswmr_le32_decode(buf + a->fixed - 4);
    if (*n > (len - array_size(a, 0)) / a->enc_size)
        return VFDSWMR_MD_ECOUNT;
    if (array_size(a, *n) != len)
        return VFDSWMR_MD_ELENGTH;
    return VFDSWMR_MD_OK;
}

/* Decodes and checks n entries (count already checked) into a new array;
 * *out is NULL when n is 0 or on failure. */
static vfdswmr_mderr_t
decode_entries(const uint8_t *buf, uint32_t n, const entry_array_t *a, void *ctx, void **out)
{
    unsigned char *arr;

    *out = NULL;
    if (n == 0)
        return VFDSWMR_MD_OK;
    if ((arr = calloc(n, a->mem_size)) == NULL)
        return VFDSWMR_MD_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        vfdswmr_mderr_t err = a->decode(buf + a->fixed + (size_t)i * a->enc_size, arr, i, ctx);
        if (err != VFDSWMR_MD_OK) {
            free(arr);
            return err;
        }
    }
    *out = arr;
    return VFDSWMR_MD_OK;
}

/* Pages [page, *end) hold len bytes, and *end * page_size fits in 64 bits
 * (so every byte offset inside does too). page_size is valid. */
static bool
span_ok(uint64_t page, uint64_t len, uint32_t page_size, uint64_t *end)
{
    uint64_t npages = vfdswmr_pages(len, page_size);
    if (page > UINT64_MAX - npages || page + npages > UINT64_MAX / page_size)
        return false;
    *end = page + npages;
    return true;
}

/* Images that must follow one another in increasing page order. */
typedef struct page_run_t {
    uint64_t next;          /* first page the next image may start at */
    vfdswmr_mderr_t before; /* error for an image starting before `next` */
} page_run_t;

static vfdswmr_mderr_t
run_add(page_run_t *r, uint64_t page, uint64_t end)
{
    if (page < r->next)
        return r->before;
    r->next = end;
    r->before = VFDSWMR_MD_EOVERLAP;
    return VFDSWMR_MD_OK;
}

/* ---- error descriptions and page sizes ---------------------------------- */

static const char *const mderr_text[VFDSWMR_MD_NERRORS] = {
    [VFDSWMR_MD_OK] = "success",
    [VFDSWMR_MD_ESHORT] = "buffer shorter than the structure (truncated file)",
    [VFDSWMR_MD_EMAGIC] = "wrong signature",
    [VFDSWMR_MD_ECHECKSUM] = "checksum mismatch (torn write or damage)",
    [VFDSWMR_MD_EVERSION] = "unsupported format version",
    [VFDSWMR_MD_EPAGESIZE] = "page size 0, not a power of two, or out of range",
    [VFDSWMR_MD_ERESERVED] = "a reserved field or flag bit is not zero",
    [VFDSWMR_MD_ELENGTH] = "a stated length disagrees with the entry count",
    [VFDSWMR_MD_ECOUNT] = "entry count larger than the buffer can hold",
    [VFDSWMR_MD_EUNSORTED] = "entries not in strictly increasing order",
    [VFDSWMR_MD_EOVERLAP] = "two entries cover the same pages",
    [VFDSWMR_MD_EENTRY] = "an entry is invalid (zero length, in page 0, or its offset overflows)",
    [VFDSWMR_MD_EBOUNDS] = "an offset or length lies outside the file, or is absurd",
    [VFDSWMR_MD_ETICK_AHEAD] = "header and index ticks differ by one, or the index is newer (a write in flight)",
    [VFDSWMR_MD_ETICK] = "tick mismatch",
    [VFDSWMR_MD_ESESSION] = "structures of two writer sessions mixed",
    [VFDSWMR_MD_EFLAGS] = "invalid combination of flags",
    [VFDSWMR_MD_ESEQUENCE] = "updater sequence number not the one expected",
    [VFDSWMR_MD_EIO] = "read or write failed",
    [VFDSWMR_MD_ENOMEM] = "out of memory",
    [VFDSWMR_MD_ERANGE] = "metadata range invalid (empty, outside its image, unsorted or miscounted)",
    [VFDSWMR_MD_EFIELD] = "a header field has a value the format forbids (max_lag below 3)",
};

const char *
vfdswmr_mderr_str(vfdswmr_mderr_t err)
{
    if ((unsigned)err >= VFDSWMR_MD_NERRORS || mderr_text[err] == NULL)
        return "unknown metadata format error";
    return mderr_text[err];
}

bool
vfdswmr_mderr_retryable(vfdswmr_mderr_t err)
{
    switch (err) {
    case VFDSWMR_MD_ESHORT:
    case VFDSWMR_MD_EMAGIC:
    case VFDSWMR_MD_ECHECKSUM:
    case VFDSWMR_MD_ETICK_AHEAD:
    case VFDSWMR_MD_ESESSION:
    case VFDSWMR_MD_EBOUNDS:
        return true;
    default:
        return false;
    }
}

bool
vfdswmr_page_size_valid(uint32_t page_size)
{
    return page_size >= VFDSWMR_MIN_PAGE_SIZE && page_size <= VFDSWMR_MAX_PAGE_SIZE &&
           (page_size & (page_size - 1)) == 0;
}

/* ---- metadata file index ------------------------------------------------ */

/* Fixed part: signature, session, tick, nentries, nranges. */
#define MDIDX_FIXED 28u
#define MDIDX_ENTRY 32u
#define MDIDX_RANGE 8u
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
vfdswmr_mdidx_encode(const vfdswmr_mdidx_t *idx, uint8_t *out)
{
    uint8_t *p = put_magic(out, MAGIC_VIDX);

    p = put64(p, idx->session);
    p = put64(p, idx->tick);
    p = put32(p, idx->nentries);
    p = put32(p, idx->nranges);
    for (uint32_t i = 0; i < idx->nentries; i++) {
        const vfdswmr_mdentry_t *e = &idx->entries[i];
        p = put64(p, e->hdf5_page);
        p = put64(p, e->md_page);
        p = put32(p, e->length);
        p = put32(p, e->checksum);
        p = put32(p, e->range_first);
        p = put32(p, e->nranges);
    }
    for (uint32_t k = 0; k < idx->nranges; k++) {
        p = put32(p, idx->ranges[k].offset);
        p = put32(p, idx->ranges[k].length);
    }
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_mdidx_size(idx->nentries, idx->nranges));
    seal(out, p);
}

/* Entry i at p: its own fields (EENTRY), order and overlap in the HDF5 file
 * (EUNSORTED, EOVERLAP), and its share of the ranges (ERANGE). *next_range is
 * the sum of the previous entries' nranges. */
static vfdswmr_mderr_t
mdentry_decode(const uint8_t *p, vfdswmr_mdentry_t *e, uint32_t i, uint32_t page_size, page_run_t *run,
               uint32_t nranges, uint32_t *next_range)
{
    uint64_t md_end, hdf5_end;
    vfdswmr_mderr_t err;

    e->hdf5_page = take64(&p);
    e->md_page = take64(&p);
    e->length = take32(&p);
    e->checksum = take32(&p);
    e->range_first = take32(&p);
    e->nranges = take32(&p);
    if (e->md_page == 0 || e->length == 0 || !span_ok(e->md_page, e->length, page_size, &md_end) ||
        !span_ok(e->hdf5_page, e->length, page_size, &hdf5_end))
        return VFDSWMR_MD_EENTRY;
    if (i > 0 && e->hdf5_page <= e[-1].hdf5_page)
        return VFDSWMR_MD_EUNSORTED;
    if ((err = run_add(run, e->hdf5_page, hdf5_end)) != VFDSWMR_MD_OK)
        return err;
    if (e->range_first != *next_range || e->nranges > nranges - *next_range)
        return VFDSWMR_MD_ERANGE;
    *next_range += e->nranges;
    return VFDSWMR_MD_OK;
}

/* The ranges of entry e, at p: each nonempty, inside the image, after the
 * end of the one before. */
static vfdswmr_mderr_t
mdranges_decode(const uint8_t *p, const vfdswmr_mdentry_t *e, vfdswmr_mdrange_t *r)
{
    uint64_t next = 0;

    for (uint32_t k = 0; k < e->nranges; k++) {
        r[k].offset = take32(&p);
        r[k].length = take32(&p);
        if (r[k].length == 0 || r[k].offset < next || (uint64_t)r[k].offset + r[k].length > e->length)
            return VFDSWMR_MD_ERANGE;
        next = (uint64_t)r[k].offset + r[k].length;
    }
    return VFDSWMR_MD_OK;
}

/* Counts: nentries must fit in len (ECOUNT), then nranges in what is left
 * (ECOUNT), and together they must account for exactly len bytes (ELENGTH).
 * len >= MDIDX_MIN already holds. */
static vfdswmr_mderr_t
mdidx_check_counts(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *m)
{
    size_t room = len - MDIDX_MIN;

    *n = vfdswmr_le32_decode(buf + 20);
    *m = vfdswmr_le32_decode(buf + 24);
    if (*n > room / MDIDX_ENTRY)
        return VFDSWMR_MD_ECOUNT;
    room -= (size_t)*n * MDIDX_ENTRY;
    if (*m > room / MDIDX_RANGE)
        return VFDSWMR_MD_ECOUNT;
    if (vfdswmr_mdidx_size(*n, *m) != len)
        return VFDSWMR_MD_ELENGTH;
    return VFDSWMR_MD_OK;
}

/* Entries, then the ranges, into v (counts already checked). */
static vfdswmr_mderr_t
mdidx_decode_arrays(const uint8_t *buf, uint32_t page_size, vfdswmr_mdidx_t *v)
{
    const uint8_t *ranges_at = buf + MDIDX_FIXED + (size_t)v->nentries * MDIDX_ENTRY;
    page_run_t run = {0, VFDSWMR_MD_EOVERLAP};
    uint32_t next_range = 0;
    vfdswmr_mderr_t err = VFDSWMR_MD_OK;

    if ((v->nentries && NULL == (v->entries = calloc(v->nentries, sizeof *v->entries))) ||
        (v->nranges && NULL == (v->ranges = calloc(v->nranges, sizeof *v->ranges))))
        return VFDSWMR_MD_ENOMEM;
    for (uint32_t i = 0; i < v->nentries && err == VFDSWMR_MD_OK; i++)
        err = mdentry_decode(buf + MDIDX_FIXED + (size_t)i * MDIDX_ENTRY, &v->entries[i], i, page_size, &run,
                             v->nranges, &next_range);
    if (err == VFDSWMR_MD_OK && next_range != v->nranges)
        err = VFDSWMR_MD_ERANGE;
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
    const uint8_t *p;
    vfdswmr_mderr_t err;

    *idx = v;
    if ((err = check_frame(buf, len, var_frame(len, MDIDX_MIN), MAGIC_VIDX)) != VFDSWMR_MD_OK)
        return err;
    if (!vfdswmr_page_size_valid(page_size))
        return VFDSWMR_MD_EPAGESIZE;
    if ((err = mdidx_check_counts(buf, len, &v.nentries, &v.nranges)) != VFDSWMR_MD_OK)
        return err;
    p = buf + MAGIC_LEN;
    v.session = take64(&p);
    v.tick = take64(&p);
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

/* Where an index image may go in the metadata file: at or after the end of
 * the header, 8-byte aligned (EBOUNDS), with a length an index can have
 * (ELENGTH), and offset + length must not overflow (EBOUNDS). */
static vfdswmr_mderr_t
check_index_place(uint64_t offset, uint64_t length)
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

/* Version 1 of the header: 56 bytes, checksum at 52. */
#define MDHDR_V1_SIZE 56

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
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + VFDSWMR_MDHDR_SIZE);
    seal(out, p);
}

/* A whole, intact header of format version 1: refused as such (EVERSION)
 * rather than reported as a checksum mismatch, which a reader would retry. */
static bool
is_v1_header(const uint8_t *buf, size_t len)
{
    const uint8_t *p = buf + MAGIC_LEN;

    return len >= MDHDR_V1_SIZE && take16(&p) == 1 &&
           vfdswmr_le32_decode(buf + MDHDR_V1_SIZE - CKSUM_LEN) == vfdswmr_checksum(buf, MDHDR_V1_SIZE - CKSUM_LEN);
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
    if (h->max_lag < VFDSWMR_MDHDR_MIN_MAX_LAG)
        return VFDSWMR_MD_EFIELD;
    return check_index_place(h->index_offset, h->index_length);
}

vfdswmr_mderr_t
vfdswmr_mdhdr_decode(const uint8_t *buf, size_t len, vfdswmr_mdhdr_t *h)
{
    vfdswmr_mdhdr_t v = {0};
    const uint8_t *p;
    vfdswmr_mderr_t err;

    *h = v;
    if (len >= MAGIC_LEN && memcmp(buf, MAGIC_VHDR, MAGIC_LEN) == 0 && is_v1_header(buf, len))
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
    if ((err = check_mdhdr_fields(&v)) != VFDSWMR_MD_OK)
        return err;
    *h = v;
    return VFDSWMR_MD_OK;
}

/* ---- updater change list ------------------------------------------------- */

typedef struct udcl_ctx_t {
    uint32_t page_size;
    uint64_t file_len;
    page_run_t run; /* in the updater file */
} udcl_ctx_t;

/* An image of len bytes at `page` of the updater file: no overflow (EENTRY),
 * after the previous image (run), inside the file (EBOUNDS). */
static vfdswmr_mderr_t
place_ud_image(udcl_ctx_t *c, uint64_t page, uint64_t len)
{
    uint64_t end;
    vfdswmr_mderr_t err;

    if (!span_ok(page, len, c->page_size, &end))
        return VFDSWMR_MD_EENTRY;
    if ((err = run_add(&c->run, page, end)) != VFDSWMR_MD_OK)
        return err;
    if (page * c->page_size + len > c->file_len)
        return VFDSWMR_MD_EBOUNDS;
    return VFDSWMR_MD_OK;
}

static vfdswmr_mderr_t
udentry_decode(const uint8_t *p, void *entries, uint32_t i, void *vctx)
{
    udcl_ctx_t *c = vctx;
    vfdswmr_udentry_t *e = (vfdswmr_udentry_t *)entries + i;
    uint64_t end;

    e->ud_page = take64(&p);
    e->md_page = take64(&p);
    e->hdf5_page = take64(&p);
    e->length = take32(&p);
    e->checksum = take32(&p);
    if (e->md_page == 0 || e->length == 0 || !span_ok(e->md_page, e->length, c->page_size, &end) ||
        !span_ok(e->hdf5_page, e->length, c->page_size, &end))
        return VFDSWMR_MD_EENTRY;
    if (i > 0 && e->ud_page <= e[-1].ud_page)
        return VFDSWMR_MD_EUNSORTED;
    return place_ud_image(c, e->ud_page, e->length);
}

static const entry_array_t UDCL_ARRAY = {
    .fixed = 56, .enc_size = 32, .mem_size = sizeof(vfdswmr_udentry_t), .decode = udentry_decode};

size_t
vfdswmr_udcl_size(uint32_t n)
{
    return array_size(&UDCL_ARRAY, n);
}

void
vfdswmr_udcl_encode(const vfdswmr_udcl_t *cl, uint8_t *out)
{
    uint8_t *p = put_magic(out, MAGIC_VUCL);

    p = put64(p, cl->tick);
    p = put64(p, cl->hdr_ud_page);
    p = put32(p, cl->hdr_len);
    p = put32(p, cl->hdr_checksum);
    p = put64(p, cl->idx_ud_page);
    p = put64(p, cl->idx_md_offset);
    p = put32(p, cl->idx_len);
    p = put32(p, cl->idx_checksum);
    p = put32(p, cl->nentries);
    for (uint32_t i = 0; i < cl->nentries; i++) {
        const vfdswmr_udentry_t *e = &cl->entries[i];
        p = put64(p, e->ud_page);
        p = put64(p, e->md_page);
        p = put64(p, e->hdf5_page);
        p = put32(p, e->length);
        p = put32(p, e->checksum);
    }
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_udcl_size(cl->nentries));
    seal(out, p);
}

/* The fixed fields of a change list (up to, not including, the count). */
static void
udcl_take_fixed(const uint8_t *buf, vfdswmr_udcl_t *v)
{
    const uint8_t *p = buf + MAGIC_LEN;

    v->tick = take64(&p);
    v->hdr_ud_page = take64(&p);
    v->hdr_len = take32(&p);
    v->hdr_checksum = take32(&p);
    v->idx_ud_page = take64(&p);
    v->idx_md_offset = take64(&p);
    v->idx_len = take32(&p);
    v->idx_checksum = take32(&p);
}

/* Entries, then the index image, then the header image, each after the one
 * before; the first after the header and change list (page aligned). */
static vfdswmr_mderr_t
udcl_decode_images(const uint8_t *buf, size_t len, udcl_ctx_t *c, vfdswmr_udcl_t *v)
{
    void *entries;
    vfdswmr_mderr_t err;

    /* len <= vfdswmr_udcl_size(UINT32_MAX): the sum cannot overflow */
    c->run.next = vfdswmr_pages(VFDSWMR_UDHDR_SIZE + (uint64_t)len, c->page_size);
    c->run.before = VFDSWMR_MD_EBOUNDS;
    if ((err = decode_entries(buf, v->nentries, &UDCL_ARRAY, c, &entries)) != VFDSWMR_MD_OK)
        return err;
    if ((err = place_ud_image(c, v->idx_ud_page, v->idx_len)) == VFDSWMR_MD_OK)
        err = place_ud_image(c, v->hdr_ud_page, v->hdr_len);
    if (err != VFDSWMR_MD_OK) {
        free(entries);
        return err;
    }
    v->entries = entries;
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_udcl_decode(const uint8_t *buf, size_t len, uint32_t page_size, uint64_t file_len, vfdswmr_udcl_t *cl)
{
    vfdswmr_udcl_t v = {0};
    udcl_ctx_t ctx = {.page_size = page_size, .file_len = file_len};
    vfdswmr_mderr_t err;

    *cl = v;
    if ((err = check_frame(buf, len, var_frame(len, vfdswmr_udcl_size(0)), MAGIC_VUCL)) != VFDSWMR_MD_OK)
        return err;
    if (!vfdswmr_page_size_valid(page_size))
        return VFDSWMR_MD_EPAGESIZE;
    if ((err = check_count(buf, len, &UDCL_ARRAY, &v.nentries)) != VFDSWMR_MD_OK)
        return err;
    udcl_take_fixed(buf, &v);
    if (v.hdr_len != VFDSWMR_MDHDR_SIZE)
        return VFDSWMR_MD_ELENGTH;
    if ((err = check_index_place(v.idx_md_offset, v.idx_len)) != VFDSWMR_MD_OK)
        return err;
    if ((err = udcl_decode_images(buf, len, &ctx, &v)) != VFDSWMR_MD_OK)
        return err;
    *cl = v;
    return VFDSWMR_MD_OK;
}

/* ---- updater file header ------------------------------------------------- */

void
vfdswmr_udhdr_encode(const vfdswmr_udhdr_t *h, uint8_t out[VFDSWMR_UDHDR_SIZE])
{
    uint8_t *p = put_magic(out, MAGIC_VUDH);

    p = put16(p, VFDSWMR_FORMAT_VERSION);
    p = put16(p, h->flags);
    p = put32(p, h->page_size);
    p = put64(p, h->session);
    p = put64(p, h->sequence);
    p = put64(p, h->tick);
    p = put64(p, h->cl_offset);
    p = put64(p, h->cl_length);
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + VFDSWMR_UDHDR_SIZE);
    seal(out, p);
}

/* Flags, then the change list's place: none with CREATE_ONLY, else right
 * after the header with a length a change list can have. */
static vfdswmr_mderr_t
check_udhdr_fields(const vfdswmr_udhdr_t *h)
{
    if ((h->flags & ~(VFDSWMR_UD_CREATE_ONLY | VFDSWMR_UD_FINAL)) != 0)
        return VFDSWMR_MD_ERESERVED;
    if (!vfdswmr_page_size_valid(h->page_size))
        return VFDSWMR_MD_EPAGESIZE;
    if (h->flags & VFDSWMR_UD_CREATE_ONLY)
        return (h->flags & VFDSWMR_UD_FINAL) || h->sequence != 0 || h->cl_offset != 0 || h->cl_length != 0
                   ? VFDSWMR_MD_EFLAGS
                   : VFDSWMR_MD_OK;
    if (h->cl_offset != VFDSWMR_UDHDR_SIZE || !array_length_ok(&UDCL_ARRAY, h->cl_length))
        return VFDSWMR_MD_EBOUNDS;
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_udhdr_decode(const uint8_t *buf, size_t len, vfdswmr_udhdr_t *h)
{
    vfdswmr_udhdr_t v = {0};
    const uint8_t *p;
    vfdswmr_mderr_t err;

    *h = v;
    if ((err = check_frame(buf, len, VFDSWMR_UDHDR_SIZE, MAGIC_VUDH)) != VFDSWMR_MD_OK)
        return err;
    p = buf + MAGIC_LEN;
    if ((err = check_version(take16(&p))) != VFDSWMR_MD_OK)
        return err;
    v.flags = take16(&p);
    v.page_size = take32(&p);
    v.session = take64(&p);
    v.sequence = take64(&p);
    v.tick = take64(&p);
    v.cl_offset = take64(&p);
    v.cl_length = take64(&p);
    if ((err = check_udhdr_fields(&v)) != VFDSWMR_MD_OK)
        return err;
    *h = v;
    return VFDSWMR_MD_OK;
}

/* ---- read-mark table header ------------------------------------------------ */

void
vfdswmr_markshdr_encode(const vfdswmr_markshdr_t *h, uint8_t out[VFDSWMR_MARKSHDR_SIZE])
{
    uint8_t *p = put_magic(out, MAGIC_VRDM);

    p = put32(p, VFDSWMR_MARKS_FORMAT_VERSION);
    p = put64(p, h->session);
    p = put64(p, h->release_below);
    p = put32(p, h->nslots);
    memset(p, 0, (size_t)(out + VFDSWMR_MARKSHDR_SIZE - p));
}

vfdswmr_mderr_t
vfdswmr_markshdr_decode(const uint8_t *buf, size_t len, vfdswmr_markshdr_t *h)
{
    const uint8_t *p = buf + MAGIC_LEN;

    memset(h, 0, sizeof *h);
    if (len < VFDSWMR_MARKSHDR_SIZE)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, MAGIC_VRDM, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (take32(&p) != VFDSWMR_MARKS_FORMAT_VERSION)
        return VFDSWMR_MD_EVERSION;
    h->session = take64(&p);
    h->release_below = take64(&p);
    h->nslots = take32(&p);
    for (const uint8_t *q = p; q < buf + VFDSWMR_MARKSHDR_SIZE; q++)
        if (*q) {
            memset(h, 0, sizeof *h);
            return VFDSWMR_MD_ERESERVED;
        }
    if (h->nslots == 0 || h->nslots > 65536) {
        memset(h, 0, sizeof *h);
        return VFDSWMR_MD_ECOUNT;
    }
    return VFDSWMR_MD_OK;
}

/* ---- raw-data write log ------------------------------------------------------ */

size_t
vfdswmr_rawlog_size(uint32_t n)
{
    return VFDSWMR_RAWLOG_HDR_SIZE + (size_t)n * VFDSWMR_RAWRANGE_SIZE + CKSUM_LEN;
}

void
vfdswmr_rawlog_encode(const vfdswmr_rawloghdr_t *h, const vfdswmr_rawrange_t *r, uint8_t *out)
{
    uint8_t *p = out;

    memcpy(p, MAGIC_VRAW, MAGIC_LEN);
    p = put32(p + MAGIC_LEN, VFDSWMR_RAWLOG_FORMAT_VERSION);
    p = put64(p, h->session);
    p = put64(p, h->first_tick);
    p = put64(p, h->last_tick);
    p = put32(p, h->count);
    for (uint32_t i = 0; i < h->count; i++) {
        p = put64(p, r[i].tick);
        p = put64(p, r[i].addr);
        p = put64(p, r[i].len);
    }
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_rawlog_size(h->count));
    seal(out, p);
}

vfdswmr_mderr_t
vfdswmr_rawlog_decode(const uint8_t *buf, size_t len, vfdswmr_rawloghdr_t *h, vfdswmr_rawrange_t **r)
{
    const uint8_t *p = buf + MAGIC_LEN;
    vfdswmr_mderr_t err;

    memset(h, 0, sizeof *h);
    *r = NULL;
    if (len < VFDSWMR_RAWLOG_HDR_SIZE)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, MAGIC_VRAW, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (take32(&p) != VFDSWMR_RAWLOG_FORMAT_VERSION)
        return VFDSWMR_MD_EVERSION;
    vfdswmr_rawloghdr_t d = {.session = take64(&p), .first_tick = take64(&p), .last_tick = take64(&p)};
    d.count = take32(&p);
    if (d.count > VFDSWMR_RAWLOG_MAX)
        return VFDSWMR_MD_ECOUNT;
    if (len < vfdswmr_rawlog_size(d.count))
        return d.count > (len - VFDSWMR_RAWLOG_HDR_SIZE) / VFDSWMR_RAWRANGE_SIZE ? VFDSWMR_MD_ECOUNT
                                                                                 : VFDSWMR_MD_ESHORT;
    if ((err = check_frame(buf, len, vfdswmr_rawlog_size(d.count), MAGIC_VRAW)) != VFDSWMR_MD_OK)
        return err;
    if (d.last_tick != UINT64_MAX && d.first_tick > d.last_tick + 1)
        return VFDSWMR_MD_ETICK;
    vfdswmr_rawrange_t *v = d.count ? malloc((size_t)d.count * sizeof *v) : NULL;
    if (d.count && v == NULL)
        return VFDSWMR_MD_ENOMEM;
    for (uint32_t i = 0; i < d.count; i++) {
        v[i].tick = take64(&p);
        v[i].addr = take64(&p);
        v[i].len = take64(&p);
        err = v[i].tick < d.first_tick || v[i].tick > d.last_tick ? VFDSWMR_MD_ETICK
              : v[i].len == 0 || v[i].addr + v[i].len < v[i].addr ? VFDSWMR_MD_ERANGE
                                                                  : VFDSWMR_MD_OK;
        if (err != VFDSWMR_MD_OK) {
            free(v);
            return err;
        }
    }
    *h = d;
    *r = v;
    return VFDSWMR_MD_OK;
}
