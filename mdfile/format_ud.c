/*
 * Encoder and decoder of the updater file header ("VUDH") and of the updater
 * change list ("VUCL") (byte layouts: docs/FORMAT.md).
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

#include "check.h"
#include "format_codec.h"

_Static_assert(SIZE_MAX / 32 > UINT32_MAX, "vfdswmr_udcl_size() needs a 64-bit size_t");

static const uint8_t MAGIC_VUDH[MAGIC_LEN] = {'V', 'U', 'D', 'H'};
static const uint8_t MAGIC_VUCL[MAGIC_LEN] = {'V', 'U', 'C', 'L'};

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
    if ((err = vfdswmr_mdidx_check_place(v.idx_md_offset, v.idx_len)) != VFDSWMR_MD_OK)
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
    if (h->tick > VFDSWMR_TICK_MAX || h->sequence > VFDSWMR_TICK_MAX)
        return VFDSWMR_MD_EFIELD;
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
