/*
 * Unit tests of mdfile/format_md.c, format_ud.c and checksum.c: the four
 * on-disk structures of the metadata file and updater files.
 *
 * Every check looks at data: the exact error code, or every decoded field.
 * Byte offsets are checked with this file's own little-endian helpers, and
 * checksums against published SHA-256 test vectors, so neither depends on
 * the code under test. A decoder must leave its output all zero on failure;
 * the decode adapters check that each time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "le.h"

#define PS 4096u /* default page size of the tests */

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

/* Recomputes the trailing checksum of a structure of len bytes. */
static void
reseal(uint8_t *buf, size_t len)
{
    vfdswmr_le_encode(buf + len - 4, vfdswmr_checksum(buf, len - 4), 4);
}

/* Overwrites an n-byte field at off, then fixes the trailing checksum. */
static void
patch(uint8_t *buf, size_t len, size_t off, uint64_t v, unsigned n)
{
    vfdswmr_le_encode(buf + off, v, n);
    reseal(buf, len);
}

static uint8_t *
xmalloc(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

static uint8_t *
dup_bytes(const uint8_t *b, size_t n)
{
    uint8_t *p = xmalloc(n);
    memcpy(p, b, n);
    return p;
}

/* Decoded outputs start as garbage: decoders must overwrite all of it. */
static vfdswmr_mdentry_t md_sentinel;
static vfdswmr_mdrange_t range_sentinel;
static vfdswmr_udentry_t ud_sentinel;

static vfdswmr_mderr_t
mdhdr_dec(const uint8_t *b, size_t n, vfdswmr_mdhdr_t *h)
{
    memset(h, 0xA5, sizeof *h);
    vfdswmr_mderr_t err = vfdswmr_mdhdr_decode(b, n, h);
    if (err != VFDSWMR_MD_OK) {
        assert_int_equal(h->flags, 0);
        assert_int_equal(h->page_size, 0);
        assert_int_equal(h->session, 0);
        assert_int_equal(h->tick, 0);
        assert_int_equal(h->index_offset, 0);
        assert_int_equal(h->index_length, 0);
        assert_int_equal(h->eoa, 0);
        assert_int_equal(h->tick_len, 0);
        assert_int_equal(h->max_lag, 0);
        assert_int_equal(h->hdf5_id, 0);
    }
    return err;
}

static vfdswmr_mderr_t
udhdr_dec(const uint8_t *b, size_t n, vfdswmr_udhdr_t *h)
{
    memset(h, 0xA5, sizeof *h);
    vfdswmr_mderr_t err = vfdswmr_udhdr_decode(b, n, h);
    if (err != VFDSWMR_MD_OK) {
        assert_int_equal(h->flags, 0);
        assert_int_equal(h->page_size, 0);
        assert_int_equal(h->session, 0);
        assert_int_equal(h->sequence, 0);
        assert_int_equal(h->tick, 0);
        assert_int_equal(h->cl_offset, 0);
        assert_int_equal(h->cl_length, 0);
    }
    return err;
}

/* On success the caller frees idx with vfdswmr_mdidx_free(). */
static vfdswmr_mderr_t
mdidx_dec(const uint8_t *b, size_t n, uint32_t ps, vfdswmr_mdidx_t *idx)
{
    *idx = (vfdswmr_mdidx_t){
        .session = 7, .tick = 7, .nentries = 7, .entries = &md_sentinel, .nranges = 7, .ranges = &range_sentinel};
    vfdswmr_mderr_t err = vfdswmr_mdidx_decode(b, n, ps, idx);
    if (err != VFDSWMR_MD_OK) {
        assert_null(idx->entries);
        assert_null(idx->ranges);
        assert_int_equal(idx->nentries, 0);
        assert_int_equal(idx->nranges, 0);
        assert_int_equal(idx->session, 0);
        assert_int_equal(idx->tick, 0);
    }
    else {
        if (idx->nentries == 0)
            assert_null(idx->entries);
        if (idx->nranges == 0)
            assert_null(idx->ranges);
    }
    return err;
}

static vfdswmr_mderr_t
udcl_dec(const uint8_t *b, size_t n, uint32_t ps, uint64_t file_len, vfdswmr_udcl_t *cl)
{
    *cl = (vfdswmr_udcl_t){.tick = 7, .hdr_len = 7, .nentries = 7, .entries = &ud_sentinel};
    vfdswmr_mderr_t err = vfdswmr_udcl_decode(b, n, ps, file_len, cl);
    if (err != VFDSWMR_MD_OK) {
        assert_null(cl->entries);
        assert_int_equal(cl->nentries, 0);
        assert_int_equal(cl->tick, 0);
        assert_int_equal(cl->hdr_len, 0);
    }
    else if (cl->nentries == 0) {
        assert_null(cl->entries);
    }
    return err;
}

/* Decode, discarding the result. */
static vfdswmr_mderr_t
mdidx_err(const uint8_t *b, size_t n, uint32_t ps)
{
    vfdswmr_mdidx_t idx;
    vfdswmr_mderr_t err = mdidx_dec(b, n, ps, &idx);
    vfdswmr_mdidx_free(&idx);
    return err;
}

static vfdswmr_mderr_t
udcl_err(const uint8_t *b, size_t n, uint32_t ps, uint64_t file_len)
{
    vfdswmr_udcl_t cl;
    vfdswmr_mderr_t err = udcl_dec(b, n, ps, file_len, &cl);
    free(cl.entries);
    return err;
}

/* ---- sample structures ------------------------------------------------ */

static vfdswmr_mdhdr_t
sample_mdhdr(void)
{
    return (vfdswmr_mdhdr_t){.flags = 0,
                             .page_size = PS,
                             .session = 0x0123456789abcdefull,
                             .tick = 42,
                             .index_offset = VFDSWMR_MDHDR_SIZE,
                             .index_length = 32 + 32 * 3 + 8 * 4,
                             .eoa = 0x10000,
                             .tick_len = 4,
                             .max_lag = 7,
                             .hdf5_id = 0x1234567};
}

static vfdswmr_udhdr_t
sample_udhdr(void)
{
    return (vfdswmr_udhdr_t){.flags = 0,
                             .page_size = PS,
                             .session = 0xfedcba9876543210ull,
                             .sequence = 5,
                             .tick = 43,
                             .cl_offset = VFDSWMR_UDHDR_SIZE,
                             .cl_length = 60 + 32 * 3};
}

/* n index entries: multi-page ones, gaps, an entry in HDF5 page 0; entry i
 * has i % 4 ranges (none, the whole image, two, three with one reaching the
 * image's end). Free with vfdswmr_mdidx_free(). */
static vfdswmr_mdidx_t
make_mdidx(uint64_t session, uint64_t tick, uint32_t n, uint32_t ps)
{
    vfdswmr_mdidx_t idx = {.session = session, .tick = tick, .nentries = n};
    uint64_t page = 0;
    idx.entries = calloc(n ? n : 1, sizeof *idx.entries);
    idx.ranges = calloc(n ? 6ull * n : 1, sizeof *idx.ranges);
    assert_non_null(idx.entries);
    assert_non_null(idx.ranges);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = i % 3 == 1 ? 3 * ps + 17 : ps;
        vfdswmr_mdrange_t *r = idx.ranges + idx.nranges;
        idx.entries[i] = (vfdswmr_mdentry_t){.hdf5_page = page,
                                             .md_page = 1 + 5ull * i,
                                             .length = len,
                                             .checksum = (uint32_t)(0x9e3779b9ull * (i + 1)),
                                             .range_first = idx.nranges,
                                             .nranges = i % 4};
        switch (i % 4) {
        case 1:
            r[0] = (vfdswmr_mdrange_t){0, len};
            break;
        case 2:
            r[0] = (vfdswmr_mdrange_t){0, 16};
            r[1] = (vfdswmr_mdrange_t){16, 40};
            break; /* adjacent */
        case 3:
            r[0] = (vfdswmr_mdrange_t){8, 1};
            r[1] = (vfdswmr_mdrange_t){100, 200};
            r[2] = (vfdswmr_mdrange_t){len - 10, 10};
            break;
        }
        idx.nranges += i % 4;
        page += vfdswmr_pages(len, ps) + (i % 2);
    }
    return idx;
}

/* Encodes idx into a new buffer of *len bytes. */
static uint8_t *
enc_mdidx(const vfdswmr_mdidx_t *idx, size_t *len)
{
    *len = vfdswmr_mdidx_size(idx->nentries, idx->nranges);
    uint8_t *b = xmalloc(*len);
    vfdswmr_mdidx_encode(idx, b);
    return b;
}

static uint8_t *
enc_udcl(const vfdswmr_udcl_t *cl, size_t *len)
{
    *len = vfdswmr_udcl_size(cl->nentries);
    uint8_t *b = xmalloc(*len);
    vfdswmr_udcl_encode(cl, b);
    return b;
}

/*
 * A valid change list of n entries with the given lengths, laid out as the
 * writer does: images from the first page after header + change list, in
 * order, then the index image (idx_len bytes), then the header image.
 * Returns the updater file length (ends with the header image).
 */
static uint64_t
build_udcl(vfdswmr_udcl_t *cl, uint32_t n, const uint32_t *lengths, uint32_t ps, uint32_t idx_len)
{
    uint64_t page = vfdswmr_pages(VFDSWMR_UDHDR_SIZE + vfdswmr_udcl_size(n), ps);
    *cl = (vfdswmr_udcl_t){.tick = 44,
                           .hdr_len = VFDSWMR_MDHDR_SIZE,
                           .hdr_checksum = 0xdeadbeef,
                           .idx_md_offset = VFDSWMR_MDHDR_SIZE,
                           .idx_len = idx_len,
                           .idx_checksum = 0x01020304,
                           .nentries = n,
                           .entries = n ? calloc(n, sizeof *cl->entries) : NULL};
    assert_true(n == 0 || cl->entries != NULL);
    for (uint32_t i = 0; i < n; i++) {
        cl->entries[i] = (vfdswmr_udentry_t){.ud_page = page,
                                             .md_page = 2 + 7ull * i,
                                             .hdf5_page = 3ull * i,
                                             .length = lengths[i],
                                             .checksum = (uint32_t)(0x85ebca6bull * (i + 1))};
        page += vfdswmr_pages(lengths[i], ps);
    }
    cl->idx_ud_page = page;
    cl->hdr_ud_page = page + vfdswmr_pages(idx_len, ps);
    return cl->hdr_ud_page * ps + VFDSWMR_MDHDR_SIZE;
}

static void
assert_mdhdr_equal(const vfdswmr_mdhdr_t *a, const vfdswmr_mdhdr_t *b)
{
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->tick_len, b->tick_len);
    assert_int_equal(a->max_lag, b->max_lag);
    assert_int_equal(a->hdf5_id, b->hdf5_id);
    assert_int_equal(a->page_size, b->page_size);
    assert_int_equal(a->session, b->session);
    assert_int_equal(a->tick, b->tick);
    assert_int_equal(a->index_offset, b->index_offset);
    assert_int_equal(a->index_length, b->index_length);
    assert_int_equal(a->eoa, b->eoa);
}

static void
assert_udhdr_equal(const vfdswmr_udhdr_t *a, const vfdswmr_udhdr_t *b)
{
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->page_size, b->page_size);
    assert_int_equal(a->session, b->session);
    assert_int_equal(a->sequence, b->sequence);
    assert_int_equal(a->tick, b->tick);
    assert_int_equal(a->cl_offset, b->cl_offset);
    assert_int_equal(a->cl_length, b->cl_length);
}

static void
assert_mdidx_equal(const vfdswmr_mdidx_t *a, const vfdswmr_mdidx_t *b)
{
    assert_int_equal(a->session, b->session);
    assert_int_equal(a->tick, b->tick);
    assert_int_equal(a->nentries, b->nentries);
    for (uint32_t i = 0; i < a->nentries; i++) {
        assert_int_equal(a->entries[i].hdf5_page, b->entries[i].hdf5_page);
        assert_int_equal(a->entries[i].md_page, b->entries[i].md_page);
        assert_int_equal(a->entries[i].length, b->entries[i].length);
        assert_int_equal(a->entries[i].checksum, b->entries[i].checksum);
        assert_int_equal(a->entries[i].range_first, b->entries[i].range_first);
        assert_int_equal(a->entries[i].nranges, b->entries[i].nranges);
    }
    assert_int_equal(a->nranges, b->nranges);
    for (uint32_t k = 0; k < a->nranges; k++) {
        assert_int_equal(a->ranges[k].offset, b->ranges[k].offset);
        assert_int_equal(a->ranges[k].length, b->ranges[k].length);
    }
}

static void
assert_udcl_equal(const vfdswmr_udcl_t *a, const vfdswmr_udcl_t *b)
{
    assert_int_equal(a->tick, b->tick);
    assert_int_equal(a->hdr_ud_page, b->hdr_ud_page);
    assert_int_equal(a->hdr_len, b->hdr_len);
    assert_int_equal(a->hdr_checksum, b->hdr_checksum);
    assert_int_equal(a->idx_ud_page, b->idx_ud_page);
    assert_int_equal(a->idx_md_offset, b->idx_md_offset);
    assert_int_equal(a->idx_len, b->idx_len);
    assert_int_equal(a->idx_checksum, b->idx_checksum);
    assert_int_equal(a->nentries, b->nentries);
    for (uint32_t i = 0; i < a->nentries; i++) {
        assert_int_equal(a->entries[i].ud_page, b->entries[i].ud_page);
        assert_int_equal(a->entries[i].md_page, b->entries[i].md_page);
        assert_int_equal(a->entries[i].hdf5_page, b->entries[i].hdf5_page);
        assert_int_equal(a->entries[i].length, b->entries[i].length);
        assert_int_equal(a->entries[i].checksum, b->entries[i].checksum);
    }
}

/* Encode, decode, compare; also from an odd (unaligned) address. */
static void
roundtrip_mdhdr(const vfdswmr_mdhdr_t *h)
{
    uint8_t buf[VFDSWMR_MDHDR_SIZE + 1];
    vfdswmr_mdhdr_t out;
    vfdswmr_mdhdr_encode(h, buf + 1);
    assert_int_equal(mdhdr_dec(buf + 1, VFDSWMR_MDHDR_SIZE, &out), VFDSWMR_MD_OK);
    assert_mdhdr_equal(&out, h);
}

static void
roundtrip_udhdr(const vfdswmr_udhdr_t *h)
{
    uint8_t buf[VFDSWMR_UDHDR_SIZE + 1];
    vfdswmr_udhdr_t out;
    vfdswmr_udhdr_encode(h, buf + 1);
    assert_int_equal(udhdr_dec(buf + 1, VFDSWMR_UDHDR_SIZE, &out), VFDSWMR_MD_OK);
    assert_udhdr_equal(&out, h);
}

static void
roundtrip_mdidx(const vfdswmr_mdidx_t *idx, uint32_t ps)
{
    size_t len = vfdswmr_mdidx_size(idx->nentries, idx->nranges);
    uint8_t *buf = xmalloc(len + 1);
    vfdswmr_mdidx_t out;
    vfdswmr_mdidx_encode(idx, buf + 1);
    assert_int_equal(mdidx_dec(buf + 1, len, ps, &out), VFDSWMR_MD_OK);
    assert_mdidx_equal(&out, idx);
    vfdswmr_mdidx_free(&out);
    free(buf);
}

static void
roundtrip_udcl(const vfdswmr_udcl_t *cl, uint32_t ps, uint64_t file_len)
{
    size_t len = vfdswmr_udcl_size(cl->nentries);
    uint8_t *buf = xmalloc(len + 1);
    vfdswmr_udcl_t out;
    vfdswmr_udcl_encode(cl, buf + 1);
    assert_int_equal(udcl_dec(buf + 1, len, ps, file_len, &out), VFDSWMR_MD_OK);
    assert_udcl_equal(&out, cl);
    free(out.entries);
    free(buf);
}

/* ---- the four structures behind one interface (error-class tests) ----- */

typedef struct sample_t {
    uint8_t *buf;
    size_t len;
    uint64_t file_len; /* change lists only */
} sample_t;

typedef struct kind_t {
    const char *magic;
    size_t min_len;  /* smallest valid encoding */
    bool fixed_size; /* a header: trailing bytes are ignored */
    sample_t (*make)(void);
    vfdswmr_mderr_t (*decode)(const uint8_t *buf, size_t len, uint64_t file_len);
} kind_t;

static sample_t
make_mdhdr_sample(void)
{
    vfdswmr_mdhdr_t h = sample_mdhdr();
    sample_t s = {.buf = xmalloc(VFDSWMR_MDHDR_SIZE), .len = VFDSWMR_MDHDR_SIZE};
    vfdswmr_mdhdr_encode(&h, s.buf);
    return s;
}

static sample_t
make_udhdr_sample(void)
{
    vfdswmr_udhdr_t h = sample_udhdr();
    sample_t s = {.buf = xmalloc(VFDSWMR_UDHDR_SIZE), .len = VFDSWMR_UDHDR_SIZE};
    vfdswmr_udhdr_encode(&h, s.buf);
    return s;
}

static sample_t
make_mdidx_sample(void)
{
    vfdswmr_mdidx_t idx = make_mdidx(99, 42, 4, PS); /* 6 ranges */
    sample_t s;
    s.buf = enc_mdidx(&idx, &s.len);
    vfdswmr_mdidx_free(&idx);
    return s;
}

static sample_t
make_udcl_sample(void)
{
    const uint32_t lengths[] = {PS, 2 * PS + 1, 100};
    vfdswmr_udcl_t cl;
    sample_t s;
    s.file_len = build_udcl(&cl, 3, lengths, PS, 32 + 32 * 3 + 8 * 2);
    s.buf = enc_udcl(&cl, &s.len);
    free(cl.entries);
    return s;
}

static vfdswmr_mderr_t
kind_mdhdr_dec(const uint8_t *b, size_t n, uint64_t file_len)
{
    vfdswmr_mdhdr_t h;
    (void)file_len;
    return mdhdr_dec(b, n, &h);
}

static vfdswmr_mderr_t
kind_udhdr_dec(const uint8_t *b, size_t n, uint64_t file_len)
{
    vfdswmr_udhdr_t h;
    (void)file_len;
    return udhdr_dec(b, n, &h);
}

static vfdswmr_mderr_t
kind_mdidx_dec(const uint8_t *b, size_t n, uint64_t file_len)
{
    (void)file_len;
    return mdidx_err(b, n, PS);
}

static vfdswmr_mderr_t
kind_udcl_dec(const uint8_t *b, size_t n, uint64_t file_len)
{
    return udcl_err(b, n, PS, file_len);
}

static const kind_t KIND_MDHDR = {"VHDR", VFDSWMR_MDHDR_SIZE, true, make_mdhdr_sample, kind_mdhdr_dec};
static const kind_t KIND_MDIDX = {"VIDX", 32, false, make_mdidx_sample, kind_mdidx_dec};
static const kind_t KIND_UDHDR = {"VUDH", VFDSWMR_UDHDR_SIZE, true, make_udhdr_sample, kind_udhdr_dec};
static const kind_t KIND_UDCL = {"VUCL", 60, false, make_udcl_sample, kind_udcl_dec};

/* Defines test_<name>_<structure> for each structure. */
#define PER_KIND(name)                            \
    static void test_##name##_mdhdr(void **state) \
    {                                             \
        (void)state;                              \
        name(&KIND_MDHDR);                        \
    }                                             \
    static void test_##name##_mdidx(void **state) \
    {                                             \
        (void)state;                              \
        name(&KIND_MDIDX);                        \
    }                                             \
    static void test_##name##_udhdr(void **state) \
    {                                             \
        (void)state;                              \
        name(&KIND_UDHDR);                        \
    }                                             \
    static void test_##name##_udcl(void **state)  \
    {                                             \
        (void)state;                              \
        name(&KIND_UDCL);                         \
    }
#define PER_KIND_TESTS(name)                                                      \
    cmocka_unit_test(test_##name##_mdhdr), cmocka_unit_test(test_##name##_mdidx), \
        cmocka_unit_test(test_##name##_udhdr), cmocka_unit_test(test_##name##_udcl)

/* The sample decodes, also from an unaligned copy. */
static void
valid_sample(const kind_t *k)
{
    sample_t s = k->make();
    uint8_t *odd = xmalloc(s.len + 1);
    memcpy(odd + 1, s.buf, s.len);
    assert_memory_equal(s.buf, k->magic, 4);
    assert_int_equal(k->decode(s.buf, s.len, s.file_len), VFDSWMR_MD_OK);
    assert_int_equal(k->decode(odd + 1, s.len, s.file_len), VFDSWMR_MD_OK);
    free(odd);
    free(s.buf);
}
PER_KIND(valid_sample)

/* Cut at every length: ESHORT below the minimum; longer cuts of an index or
 * change list have a trailer in the wrong place: ECHECKSUM. */
static void
truncated(const kind_t *k)
{
    sample_t s = k->make();
    for (size_t n = 0; n < s.len; n++) {
        uint8_t *cut = dup_bytes(s.buf, n); /* exactly n bytes: ASan sees overreads */
        vfdswmr_mderr_t want = n < k->min_len ? VFDSWMR_MD_ESHORT : VFDSWMR_MD_ECHECKSUM;
        assert_int_equal(k->decode(cut, n, s.file_len), want);
        free(cut);
    }
    assert_int_equal(k->decode(NULL, 0, s.file_len), VFDSWMR_MD_ESHORT);
    free(s.buf);
}
PER_KIND(truncated)

/* Cut and resealed (a writer stating more entries than it wrote): ECOUNT.
 * Headers: ESHORT. */
static void
truncated_resealed(const kind_t *k)
{
    sample_t s = k->make();
    for (size_t n = k->fixed_size ? 4 : k->min_len; n < s.len; n++) {
        uint8_t *cut = dup_bytes(s.buf, n);
        reseal(cut, n);
        vfdswmr_mderr_t want = k->fixed_size ? VFDSWMR_MD_ESHORT : VFDSWMR_MD_ECOUNT;
        assert_int_equal(k->decode(cut, n, s.file_len), want);
        free(cut);
    }
    free(s.buf);
}
PER_KIND(truncated_resealed)

/* Extra bytes after the structure: ignored by header decoders; for the
 * others the trailer is then in the wrong place (ECHECKSUM), and once
 * resealed the count does not match the length (ELENGTH). */
static void
extended(const kind_t *k)
{
    sample_t s = k->make();
    for (size_t extra = 1; extra <= 40; extra++) {
        size_t n = s.len + extra;
        uint8_t *b = xmalloc(n);
        memcpy(b, s.buf, s.len);
        memset(b + s.len, 0x5a, extra);
        assert_int_equal(k->decode(b, n, s.file_len), k->fixed_size ? VFDSWMR_MD_OK : VFDSWMR_MD_ECHECKSUM);
        if (!k->fixed_size) {
            reseal(b, n);
            assert_int_equal(k->decode(b, n, s.file_len), VFDSWMR_MD_ELENGTH);
        }
        free(b);
    }
    free(s.buf);
}
PER_KIND(extended)

/* Any other signature, even with a matching checksum: EMAGIC. */
static void
wrong_magic(const kind_t *k)
{
    static const char *const others[] = {"VHDR", "VIDX", "VUDH", "VUCL", "vhdr", "\0\0\0\0", "VHD\xd2"};
    sample_t s = k->make();
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        if (memcmp(others[i], k->magic, 4) == 0)
            continue;
        uint8_t *b = dup_bytes(s.buf, s.len);
        memcpy(b, others[i], 4);
        reseal(b, s.len);
        assert_int_equal(k->decode(b, s.len, s.file_len), VFDSWMR_MD_EMAGIC);
        free(b);
    }
    free(s.buf);
}
PER_KIND(wrong_magic)

/* One flipped bit anywhere: EMAGIC in the signature, else ECHECKSUM. */
static void
bit_flips(const kind_t *k)
{
    sample_t s = k->make();
    uint8_t *b = dup_bytes(s.buf, s.len);
    for (size_t i = 0; i < s.len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1u << bit);
            assert_int_equal(k->decode(b, s.len, s.file_len), i < 4 ? VFDSWMR_MD_EMAGIC : VFDSWMR_MD_ECHECKSUM);
            b[i] ^= (uint8_t)(1u << bit);
        }
    }
    assert_int_equal(k->decode(b, s.len, s.file_len), VFDSWMR_MD_OK);
    free(b);
    free(s.buf);
}
PER_KIND(bit_flips)

/* ---------------------------------------------------------------------- */
/* Checksum, error strings, page sizes                                      */

static void
test_checksum_known_answers(void **state)
{
    (void)state;
    /* FIPS 180-2 / NIST vectors: SHA-256("abc") = ba7816bf..., SHA-256("") =
     * e3b0c442..., SHA-256("abcdbcde...nopq") = 248d6a61..., SHA-256(10^6 x
     * 'a') = cdc76e5c...; the checksum is the first 4 bytes little-endian. */
    static const char two_block[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(vfdswmr_checksum("abc", 3), 0xbf1678bau);
    assert_int_equal(vfdswmr_checksum("", 0), 0x42c4b0e3u);
    assert_int_equal(vfdswmr_checksum(two_block, sizeof two_block - 1), 0x616a8d24u);
    uint8_t *million = xmalloc(1000000);
    memset(million, 'a', 1000000);
    assert_int_equal(vfdswmr_checksum(million, 1000000), 0x5c6ec7cdu);
    /* the same bytes at an odd address give the same value */
    uint8_t odd[4] = {0, 'a', 'b', 'c'};
    assert_int_equal(vfdswmr_checksum(odd + 1, 3), 0xbf1678bau);
    free(million);
}

#define NTHREADS 8
#define NROUNDS  2000

/* Every thread sees the known answer and the same value for one page. */
static void *
checksum_worker(void *arg)
{
    const uint8_t *page = arg;
    uint32_t first = vfdswmr_checksum(page, PS);
    for (int i = 0; i < NROUNDS; i++)
        if (vfdswmr_checksum("abc", 3) != 0xbf1678bau || vfdswmr_checksum(page, PS) != first)
            return (void *)1;
    return (void *)(uintptr_t)(first == 0); /* 0 is possible, but not for this page */
}

/* Concurrent first use (this test runs first) and calls from many threads
 * give the right values. */
static void
test_checksum_threads(void **state)
{
    (void)state;
    pthread_t t[NTHREADS];
    uint8_t *page = xmalloc(PS);
    for (unsigned i = 0; i < PS; i++)
        page[i] = (uint8_t)(i * 31);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, checksum_worker, page), 0);
    for (int i = 0; i < NTHREADS; i++) {
        void *ret;
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    free(page);
}

static void
test_mderr_str(void **state)
{
    (void)state;
    assert_string_equal(vfdswmr_mderr_str(VFDSWMR_MD_ECHECKSUM), "checksum mismatch (torn write or damage)");
    assert_string_equal(vfdswmr_mderr_str(VFDSWMR_MD_OK), "success");
    for (int i = 0; i < VFDSWMR_MD_NERRORS; i++) {
        const char *s = vfdswmr_mderr_str((vfdswmr_mderr_t)i);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(s, vfdswmr_mderr_str((vfdswmr_mderr_t)j));
    }
    assert_string_equal(vfdswmr_mderr_str(VFDSWMR_MD_NERRORS), "unknown metadata format error");
    assert_string_equal(vfdswmr_mderr_str((vfdswmr_mderr_t)-1), "unknown metadata format error");
}

static void
test_mderr_retryable(void **state)
{
    (void)state;
    for (int i = 0; i <= VFDSWMR_MD_NERRORS; i++) {
        bool want = i == VFDSWMR_MD_ESHORT || i == VFDSWMR_MD_EMAGIC || i == VFDSWMR_MD_ECHECKSUM ||
                    i == VFDSWMR_MD_ETICK_AHEAD || i == VFDSWMR_MD_ESESSION || i == VFDSWMR_MD_EBOUNDS;
        assert_int_equal(vfdswmr_mderr_retryable((vfdswmr_mderr_t)i), want);
    }
}

static void
test_page_size_valid(void **state)
{
    (void)state;
    static const uint32_t bad[] = {
        0, 1, 2, 3, 256, 511, 513, 768, 3 * 4096, 4095, 4097, (1u << 30) + 512, 1u << 31, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(vfdswmr_page_size_valid(bad[i]));
    for (uint32_t ps = 512; ps <= (1u << 30); ps <<= 1)
        assert_true(vfdswmr_page_size_valid(ps));
}

static void
test_pages_and_sizes(void **state)
{
    (void)state;
    assert_int_equal(vfdswmr_pages(0, 512), 0);
    assert_int_equal(vfdswmr_pages(1, 512), 1);
    assert_int_equal(vfdswmr_pages(512, 512), 1);
    assert_int_equal(vfdswmr_pages(513, 512), 2);
    assert_int_equal(vfdswmr_pages(UINT64_MAX, 512), (UINT64_MAX >> 9) + 1);
    assert_int_equal(vfdswmr_mdidx_size(0, 0), 32);
    assert_int_equal(vfdswmr_mdidx_size(1, 0), 64);
    assert_int_equal(vfdswmr_mdidx_size(0, 1), 40);
    assert_int_equal(vfdswmr_mdidx_size(3, 5), 32 + 96 + 40);
    assert_int_equal(vfdswmr_mdidx_size(UINT32_MAX, UINT32_MAX), 32 + 40 * (uint64_t)UINT32_MAX);
    /* index slots: half of the reserved bytes after the header, a multiple of 8 */
    assert_int_equal(vfdswmr_mdidx_slot_size(1, 512), 216);
    assert_int_equal(vfdswmr_mdidx_slot_offset(0, 1, 512), 80);
    assert_int_equal(vfdswmr_mdidx_slot_offset(1, 1, 512), 80 + 216);
    assert_int_equal(vfdswmr_mdidx_slot_size(2, 4096), 4056);
    assert_int_equal(vfdswmr_mdidx_slot_offset(1, 2, 4096), 80 + 4056);
    assert_int_equal(vfdswmr_mdidx_slot_size(3, 1u << 30), ((3ull << 30) - 80) / 2 / 8 * 8);
    assert_int_equal(vfdswmr_mdidx_slot_size(UINT32_MAX, 1u << 30), (((uint64_t)UINT32_MAX << 30) - 80) / 2 / 8 * 8);
    assert_int_equal(vfdswmr_mdidx_slot_size(0, 512), 0);
    assert_int_equal(vfdswmr_udcl_size(0), 60);
    assert_int_equal(vfdswmr_udcl_size(1), 92);
    assert_int_equal(vfdswmr_udcl_size(UINT32_MAX), 60 + 32 * (uint64_t)UINT32_MAX);
}

/* ---------------------------------------------------------------------- */
/* Metadata file header                                                     */

static void
test_mdhdr_layout(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = {.flags = VFDSWMR_MDHDR_FAILED,
                         .page_size = 0x11223344,
                         .session = 0x0102030405060708ull,
                         .tick = 0x1112131415161718ull,
                         .index_offset = 0x2122232425262728ull,
                         .index_length = 0x3132333435363738ull,
                         .eoa = 0x4142434445464748ull,
                         .tick_len = 0x51525354,
                         .max_lag = 0x61626364,
                         .hdf5_id = 0x7172737475767778ull,
                         .epoch = 0x0a0b0c0d0e0f1011ull};
    uint8_t b[VFDSWMR_MDHDR_SIZE];
    assert_int_equal(VFDSWMR_MDHDR_SIZE, 80);
    vfdswmr_mdhdr_encode(&h, b);
    assert_memory_equal(b, "VHDR", 4);
    assert_int_equal(vfdswmr_le_decode(b + 4, 2), 3);
    assert_int_equal(vfdswmr_le_decode(b + 6, 2), 0x0002);
    assert_int_equal(vfdswmr_le_decode(b + 8, 4), h.page_size);
    assert_int_equal(vfdswmr_le_decode(b + 60, 8), h.hdf5_id);
    assert_int_equal(vfdswmr_le_decode(b + 68, 8), h.epoch);
    assert_int_equal(vfdswmr_le_decode(b + 12, 8), h.session);
    assert_int_equal(vfdswmr_le_decode(b + 20, 8), h.tick);
    assert_int_equal(vfdswmr_le_decode(b + 28, 8), h.index_offset);
    assert_int_equal(vfdswmr_le_decode(b + 36, 8), h.index_length);
    assert_int_equal(vfdswmr_le_decode(b + 44, 8), h.eoa);
    assert_int_equal(vfdswmr_le_decode(b + 52, 4), h.tick_len);
    assert_int_equal(vfdswmr_le_decode(b + 56, 4), h.max_lag);
    assert_int_equal(vfdswmr_le_decode(b + 60, 8), h.hdf5_id);
    assert_int_equal(vfdswmr_le_decode(b + 68, 8), h.epoch);
    assert_int_equal(vfdswmr_le_decode(b + 76, 4), vfdswmr_checksum(b, 76));
    assert_int_equal(b[8], 0x44); /* little-endian */
}

static void
test_mdhdr_roundtrip(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    roundtrip_mdhdr(&h);
    h.flags = VFDSWMR_MDHDR_FINAL;
    roundtrip_mdhdr(&h);
    h.flags = VFDSWMR_MDHDR_FAILED;
    roundtrip_mdhdr(&h);
    /* extremes: every unrestricted field at its maximum, the index as far
     * up as offset + length allows */
    h = (vfdswmr_mdhdr_t){.page_size = 512,
                          .session = UINT64_MAX,
                          .tick = VFDSWMR_TICK_MAX,
                          .index_offset = UINT64_MAX - 511,
                          .index_length = 32 + 32 * 14 + 8 * 3,
                          .eoa = UINT64_MAX,
                          .tick_len = UINT32_MAX,
                          .max_lag = UINT32_MAX,
                          .hdf5_id = UINT64_MAX};
    roundtrip_mdhdr(&h);
    h = (vfdswmr_mdhdr_t){.page_size = 1u << 30,
                          .session = 0,
                          .tick = 0,
                          .index_offset = 1u << 30,
                          .index_length = vfdswmr_mdidx_size(UINT32_MAX, UINT32_MAX),
                          .eoa = 0,
                          .max_lag = 3};
    roundtrip_mdhdr(&h);
    h.index_offset = 3ull << 30;
    h.index_length = 32;
    roundtrip_mdhdr(&h);
}

/* A whole page read from offset 0: the header is its first 80 bytes. */
static void
test_mdhdr_in_page(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr(), out;
    uint8_t *page = xmalloc(PS);
    memset(page, 0xee, PS);
    vfdswmr_mdhdr_encode(&h, page);
    assert_int_equal(mdhdr_dec(page, PS, &out), VFDSWMR_MD_OK);
    assert_mdhdr_equal(&out, &h);
    free(page);
}

/* Encodes a header, changes one field, reseals, decodes. */
static vfdswmr_mderr_t
mdhdr_with(const vfdswmr_mdhdr_t *h, size_t off, uint64_t v, unsigned n)
{
    uint8_t b[VFDSWMR_MDHDR_SIZE];
    vfdswmr_mdhdr_t out;
    vfdswmr_mdhdr_encode(h, b);
    patch(b, sizeof b, off, v, n);
    return mdhdr_dec(b, sizeof b, &out);
}

static void
test_mdhdr_version(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    assert_int_equal(mdhdr_with(&h, 4, 3, 2), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 4, 0, 2), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_with(&h, 4, 1, 2), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_with(&h, 4, 2, 2), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_with(&h, 4, 4, 2), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_with(&h, 4, 0x0200, 2), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_with(&h, 4, 0xffff, 2), VFDSWMR_MD_EVERSION);
}

/* A version-1 header as version 1 wrote it: "VHDR", version 1, reserved 0,
 * page size, session, tick, index offset 56, index length, EOA, checksum of
 * bytes 0-51 at 52; then the index, as a read of the first page has it. */
static void
v1_header(uint8_t *b, size_t len)
{
    memset(b, 0x33, len);
    memcpy(b, "VHDR", 4);
    vfdswmr_le_encode(b + 4, 1, 2);
    vfdswmr_le_encode(b + 6, 0, 2);
    vfdswmr_le_encode(b + 8, PS, 4);
    vfdswmr_le_encode(b + 12, 0x0123456789abcdefull, 8);
    vfdswmr_le_encode(b + 20, 9, 8);
    vfdswmr_le_encode(b + 28, 56, 8);
    vfdswmr_le_encode(b + 36, 28, 8);
    vfdswmr_le_encode(b + 44, 0x10000, 8);
    reseal(b, 56);
}

/* A version-1 file is refused as such, not as a checksum mismatch (which a
 * reader would retry); a torn one is a checksum mismatch as usual. */
static void
test_mdhdr_v1_refused(void **state)
{
    (void)state;
    uint8_t b[PS];
    vfdswmr_mdhdr_t out;
    v1_header(b, sizeof b);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 72, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 56, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 55, &out), VFDSWMR_MD_ESHORT);
    b[30] ^= 1; /* v1 checksum broken */
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_ECHECKSUM);
    assert_int_equal(mdhdr_dec(b, 56, &out), VFDSWMR_MD_ESHORT);
    b[30] ^= 1;
    b[0] = 'X';
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EMAGIC);
}

/* A version-2 header as version 2 wrote it: the version-3 layout without
 * the epoch, 72 bytes, checksum of bytes 0-67 at 68, index in slot 0 (72). */
static void
v2_header(uint8_t *b, size_t len)
{
    vfdswmr_mdhdr_t h = sample_mdhdr();

    memset(b, 0x33, len);
    vfdswmr_mdhdr_encode(&h, b);
    vfdswmr_le_encode(b + 4, 2, 2);
    vfdswmr_le_encode(b + 28, 72, 8);
    reseal(b, 72);
}

/* A version-2 file is refused as such, not as a checksum mismatch. */
static void
test_mdhdr_v2_refused(void **state)
{
    (void)state;
    uint8_t b[PS];
    vfdswmr_mdhdr_t out;
    v2_header(b, sizeof b);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 80, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 72, &out), VFDSWMR_MD_EVERSION);
    assert_int_equal(mdhdr_dec(b, 71, &out), VFDSWMR_MD_ESHORT);
    b[30] ^= 1; /* v2 checksum broken: torn, retried */
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_ECHECKSUM);
}

/* The epoch never passes the tick. */
static void
test_mdhdr_epoch(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    assert_int_equal(mdhdr_with(&h, 68, h.tick, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 68, 0, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 68, h.tick + 1, 8), VFDSWMR_MD_EFIELD);
    assert_int_equal(mdhdr_with(&h, 68, UINT64_MAX, 8), VFDSWMR_MD_EFIELD);
}

/* Which header belongs to which HDF5 file (hdf5_id): 0 names no file and
 * is no permission, except tick 0 with its empty index. */
static void
test_hdf5_id_foreign(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    h.hdf5_id = 77;
    assert_false(vfdswmr_hdf5_id_foreign(&h, 77));
    assert_true(vfdswmr_hdf5_id_foreign(&h, 78));
    assert_false(vfdswmr_hdf5_id_foreign(&h, 0)); /* the opener cannot tell */
    h.hdf5_id = 0;
    assert_true(h.tick != 0);
    assert_true(vfdswmr_hdf5_id_foreign(&h, 78));
    assert_false(vfdswmr_hdf5_id_foreign(&h, 0));
    h.tick = h.epoch = 0;
    h.index_length = vfdswmr_mdidx_size(0, 0);
    assert_false(vfdswmr_hdf5_id_foreign(&h, 78)); /* tick 0, empty: written before the HDF5 file was opened */
    h.index_length = vfdswmr_mdidx_size(1, 1);
    assert_true(vfdswmr_hdf5_id_foreign(&h, 78));
}

/* Ticks end at 2^62, so that tick arithmetic never wraps. */
static void
test_mdhdr_tick_max(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    assert_int_equal(mdhdr_with(&h, 20, VFDSWMR_TICK_MAX, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 20, VFDSWMR_TICK_MAX + 1, 8), VFDSWMR_MD_EFIELD);
    assert_int_equal(mdhdr_with(&h, 20, UINT64_MAX - 1, 8), VFDSWMR_MD_EFIELD);
    h.tick = h.epoch = VFDSWMR_TICK_MAX;
    assert_int_equal(mdhdr_with(&h, 68, VFDSWMR_TICK_MAX, 8), VFDSWMR_MD_OK);
}

static void
test_mdhdr_flags(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    for (unsigned bit = 2; bit < 16; bit++) {
        assert_int_equal(mdhdr_with(&h, 6, 1u << bit, 2), VFDSWMR_MD_ERESERVED);
        assert_int_equal(mdhdr_with(&h, 6, 1u << bit | VFDSWMR_MDHDR_FINAL, 2), VFDSWMR_MD_ERESERVED);
    }
    assert_int_equal(mdhdr_with(&h, 6, 0, 2), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 6, VFDSWMR_MDHDR_FINAL, 2), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 6, VFDSWMR_MDHDR_FAILED, 2), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 6, VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED, 2), VFDSWMR_MD_EFLAGS);
    assert_int_equal(mdhdr_with(&h, 6, 0xffff, 2), VFDSWMR_MD_ERESERVED);
}

static void
test_mdhdr_max_lag(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    assert_int_equal(mdhdr_with(&h, 56, 0, 4), VFDSWMR_MD_EFIELD);
    assert_int_equal(mdhdr_with(&h, 56, 1, 4), VFDSWMR_MD_EFIELD);
    assert_int_equal(mdhdr_with(&h, 56, 2, 4), VFDSWMR_MD_EFIELD);
    assert_int_equal(mdhdr_with(&h, 56, 3, 4), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 56, UINT32_MAX, 4), VFDSWMR_MD_OK);
    /* tick_len and hdf5_id take any value */
    assert_int_equal(mdhdr_with(&h, 52, 0, 4), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 52, UINT32_MAX, 4), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 60, 0, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 60, UINT64_MAX, 8), VFDSWMR_MD_OK);
}

static void
test_mdhdr_page_size(void **state)
{
    (void)state;
    static const uint32_t bad[] = {0, 3, 256, 511, 4095, 4096 * 3, 1u << 31, UINT32_MAX};
    vfdswmr_mdhdr_t h = sample_mdhdr();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mdhdr_with(&h, 8, bad[i], 4), VFDSWMR_MD_EPAGESIZE);
    assert_int_equal(mdhdr_with(&h, 8, 512, 4), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 8, 1u << 30, 4), VFDSWMR_MD_OK);
}

/* At or after the end of the header, 8-byte aligned: the two slots and
 * page-aligned places all qualify. */
static void
test_mdhdr_index_offset(void **state)
{
    (void)state;
    static const uint64_t bad[] = {0, 1, 8, 56, 64, 71, 72, 79, 81, 84, 4097, 4096 + 4, UINT64_MAX};
    vfdswmr_mdhdr_t h = sample_mdhdr();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mdhdr_with(&h, 28, bad[i], 8), VFDSWMR_MD_EBOUNDS);
    assert_int_equal(mdhdr_with(&h, 28, 80, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 28, 88, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 28, 80 + 2008, 8), VFDSWMR_MD_OK); /* slot 1 of one 4 KiB page */
    assert_int_equal(mdhdr_with(&h, 28, 4096, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 28, 4096 * 1000, 8), VFDSWMR_MD_OK);
}

/* 32 + 32 n + 8 m: any multiple of 8 from 32 up to n = m = 2^32 - 1. */
static void
test_mdhdr_index_length(void **state)
{
    (void)state;
    const uint64_t max = vfdswmr_mdidx_size(UINT32_MAX, UINT32_MAX);
    const uint64_t bad[] = {0, 1, 8, 24, 28, 31, 33, 36, 39, 41, 52, 63, max + 8, max + 1, UINT64_MAX};
    vfdswmr_mdhdr_t h = sample_mdhdr();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mdhdr_with(&h, 36, bad[i], 8), VFDSWMR_MD_ELENGTH);
    assert_int_equal(mdhdr_with(&h, 36, 32, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, 40, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, 64, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, vfdswmr_mdidx_size(UINT32_MAX, 0), 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, max - 8, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, max, 8), VFDSWMR_MD_OK);
}

/* index_offset + index_length must not wrap around. */
static void
test_mdhdr_index_overflow(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr();
    h.index_offset = UINT64_MAX - (PS - 1); /* the last page */
    h.index_length = 4088;                  /* ends at 2^64 - 8: fits */
    assert_int_equal(mdhdr_with(&h, 36, h.index_length, 8), VFDSWMR_MD_OK);
    assert_int_equal(mdhdr_with(&h, 36, 4096, 8), VFDSWMR_MD_EBOUNDS);
    assert_int_equal(mdhdr_with(&h, 36, vfdswmr_mdidx_size(UINT32_MAX, UINT32_MAX), 8), VFDSWMR_MD_EBOUNDS);
}

/* With several problems, the first in the documented order is reported. */
static void
test_mdhdr_check_order(void **state)
{
    (void)state;
    vfdswmr_mdhdr_t h = sample_mdhdr(), out;
    uint8_t b[VFDSWMR_MDHDR_SIZE];
    vfdswmr_mdhdr_encode(&h, b);
    vfdswmr_le_encode(b + 36, 5, 8); /* bad index length */
    vfdswmr_le_encode(b + 28, 3, 8); /* bad index offset */
    vfdswmr_le_encode(b + 56, 2, 4); /* max_lag too small */
    vfdswmr_le_encode(b + 8, 3, 4);  /* bad page size */
    vfdswmr_le_encode(b + 6, 3, 2);  /* FINAL with FAILED */
    vfdswmr_le_encode(b + 6, 7, 2);  /* and an unknown flag */
    vfdswmr_le_encode(b + 4, 9, 2);  /* version */
    reseal(b, sizeof b);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EVERSION);
    patch(b, sizeof b, 4, 3, 2);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_ERESERVED);
    patch(b, sizeof b, 6, 3, 2);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EFLAGS);
    patch(b, sizeof b, 6, 0, 2);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EPAGESIZE);
    patch(b, sizeof b, 8, PS, 4);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EFIELD);
    patch(b, sizeof b, 56, 3, 4);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EBOUNDS);
    patch(b, sizeof b, 28, 80, 8);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_ELENGTH);
    patch(b, sizeof b, 36, 32, 8);
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_OK);
    b[0] = 'X'; /* bad magic and now also a bad checksum */
    assert_int_equal(mdhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EMAGIC);
    assert_int_equal(mdhdr_dec(b, sizeof b - 1, &out), VFDSWMR_MD_ESHORT);
}

/* ---------------------------------------------------------------------- */
/* Metadata file index                                                      */

static void
test_mdidx_layout(void **state)
{
    (void)state;
    vfdswmr_mdentry_t e[2] = {{0x0102030405060708ull, 0x1112131415161718ull, 0x21222324, 0x31323334, 0, 2},
                              {0x4142434445464748ull, 0x5152535455565758ull, 0x61626364, 0x71727374, 2, 1}};
    vfdswmr_mdrange_t r[3] = {{0x81828384, 0x91929394}, {0xa1a2a3a4, 0xb1b2b3b4}, {0xc1c2c3c4, 0xd1d2d3d4}};
    vfdswmr_mdidx_t idx = {.session = 0x8182838485868788ull,
                           .tick = 0x9192939495969798ull,
                           .nentries = 2,
                           .entries = e,
                           .nranges = 3,
                           .ranges = r};
    size_t len;
    uint8_t *b = enc_mdidx(&idx, &len);
    assert_int_equal(len, 32 + 64 + 24);
    assert_memory_equal(b, "VIDX", 4);
    assert_int_equal(vfdswmr_le_decode(b + 4, 8), idx.session);
    assert_int_equal(vfdswmr_le_decode(b + 12, 8), idx.tick);
    assert_int_equal(vfdswmr_le_decode(b + 20, 4), 2);
    assert_int_equal(vfdswmr_le_decode(b + 24, 4), 3);
    for (int i = 0; i < 2; i++) {
        const uint8_t *p = b + 28 + 32 * i;
        assert_int_equal(vfdswmr_le_decode(p, 8), e[i].hdf5_page);
        assert_int_equal(vfdswmr_le_decode(p + 8, 8), e[i].md_page);
        assert_int_equal(vfdswmr_le_decode(p + 16, 4), e[i].length);
        assert_int_equal(vfdswmr_le_decode(p + 20, 4), e[i].checksum);
        assert_int_equal(vfdswmr_le_decode(p + 24, 4), e[i].range_first);
        assert_int_equal(vfdswmr_le_decode(p + 28, 4), e[i].nranges);
    }
    for (int k = 0; k < 3; k++) {
        const uint8_t *p = b + 92 + 8 * k;
        assert_int_equal(vfdswmr_le_decode(p, 4), r[k].offset);
        assert_int_equal(vfdswmr_le_decode(p + 4, 4), r[k].length);
    }
    assert_int_equal(vfdswmr_le_decode(b + 116, 4), vfdswmr_checksum(b, 116));
    free(b);
}

static void
test_mdidx_roundtrip(void **state)
{
    (void)state;
    static const uint32_t counts[] = {0, 1, 2, 3, 4, 5, 1000};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        vfdswmr_mdidx_t idx = make_mdidx(1 + i, 100 + i, counts[i], PS);
        roundtrip_mdidx(&idx, PS);
        /* the same entries without ranges */
        uint32_t nranges = idx.nranges;
        for (uint32_t k = 0; k < idx.nentries; k++)
            idx.entries[k].range_first = idx.entries[k].nranges = 0;
        idx.nranges = 0;
        roundtrip_mdidx(&idx, PS);
        idx.nranges = nranges;
        vfdswmr_mdidx_free(&idx);
    }
}

/* Entries at the very top of the 64-bit byte space, maximum lengths. */
static void
test_mdidx_roundtrip_extremes(void **state)
{
    (void)state;
    const uint64_t top = UINT64_MAX / 512; /* last page end that fits at 512 */
    const uint64_t big = vfdswmr_pages(UINT32_MAX, 512);
    vfdswmr_mdentry_t e[3] = {
        {.hdf5_page = 0, .md_page = 1, .length = UINT32_MAX, .checksum = UINT32_MAX, .range_first = 0, .nranges = 1},
        {.hdf5_page = top - big - 1, .md_page = top - big - 1, .length = 512, .checksum = 0, .range_first = 1},
        {.hdf5_page = top - big,
         .md_page = top - big,
         .length = UINT32_MAX,
         .checksum = 1,
         .range_first = 1,
         .nranges = 2},
    };
    vfdswmr_mdrange_t r[3] = {{0, UINT32_MAX}, {0, 1}, {UINT32_MAX - 1, 1}};
    vfdswmr_mdidx_t idx = {
        .session = UINT64_MAX, .tick = UINT64_MAX, .nentries = 3, .entries = e, .nranges = 3, .ranges = r};
    roundtrip_mdidx(&idx, 512);
    /* the same at the largest page size */
    e[0] = (vfdswmr_mdentry_t){.hdf5_page = (UINT64_MAX >> 30) - 1,
                               .md_page = (UINT64_MAX >> 30) - 1,
                               .length = 1u << 30,
                               .checksum = 5,
                               .nranges = 1};
    r[0] = (vfdswmr_mdrange_t){(1u << 30) - 1, 1};
    idx.nentries = 1;
    idx.nranges = 1;
    roundtrip_mdidx(&idx, 1u << 30);
}

/* An index with the given entries and ranges, encoded, decoded at page size
 * ps. */
static vfdswmr_mderr_t
mdidx_ranges_err(const vfdswmr_mdentry_t *e, uint32_t n, const vfdswmr_mdrange_t *r, uint32_t m, uint32_t ps)
{
    vfdswmr_mdidx_t idx = {.session = 1,
                           .tick = 2,
                           .nentries = n,
                           .entries = (vfdswmr_mdentry_t *)e,
                           .nranges = m,
                           .ranges = (vfdswmr_mdrange_t *)r};
    size_t len;
    uint8_t *b = enc_mdidx(&idx, &len);
    vfdswmr_mderr_t err = mdidx_err(b, len, ps);
    free(b);
    return err;
}

static vfdswmr_mderr_t
mdidx_entries_err(const vfdswmr_mdentry_t *e, uint32_t n, uint32_t ps)
{
    return mdidx_ranges_err(e, n, NULL, 0, ps);
}

/* A raw index of `len` bytes stating n entries and m ranges (all zero). */
static vfdswmr_mderr_t
mdidx_counts_err(uint8_t *b, size_t len, uint32_t n, uint32_t m)
{
    memset(b, 0, len);
    memcpy(b, "VIDX", 4);
    vfdswmr_le_encode(b + 20, n, 4);
    vfdswmr_le_encode(b + 24, m, 4);
    reseal(b, len);
    return mdidx_err(b, len, PS);
}

static void
test_mdidx_count(void **state)
{
    (void)state;
    uint8_t b[400];
    /* counts 0xFFFFFFFF in buffers far too short */
    assert_int_equal(mdidx_counts_err(b, 32, UINT32_MAX, 0), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 400, UINT32_MAX, 0), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 32, 0, UINT32_MAX), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 400, 0, UINT32_MAX), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 400, UINT32_MAX, UINT32_MAX), VFDSWMR_MD_ECOUNT);
    /* entries fit, ranges one too many for the rest */
    assert_int_equal(mdidx_counts_err(b, 64 + 8 * 3 + 7, 1, 4), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 64 + 31, 2, 0), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 32, 1, 0), VFDSWMR_MD_ECOUNT);
    assert_int_equal(mdidx_counts_err(b, 32, 0, 1), VFDSWMR_MD_ECOUNT);
    /* the entries would take the room of 4 ranges: 32 bytes for 1 entry */
    assert_int_equal(mdidx_counts_err(b, 32 + 32, 0, 5), VFDSWMR_MD_ECOUNT);
    /* counts smaller than the length, or a length that is no whole count */
    assert_int_equal(mdidx_counts_err(b, 64, 0, 0), VFDSWMR_MD_ELENGTH);
    assert_int_equal(mdidx_counts_err(b, 64, 0, 3), VFDSWMR_MD_ELENGTH);
    assert_int_equal(mdidx_counts_err(b, 33, 0, 0), VFDSWMR_MD_ELENGTH);
    assert_int_equal(mdidx_counts_err(b, 65, 1, 0), VFDSWMR_MD_ELENGTH);
    assert_int_equal(mdidx_counts_err(b, 41, 0, 1), VFDSWMR_MD_ELENGTH);
    /* counts that fit exactly: an empty index */
    assert_int_equal(mdidx_counts_err(b, 32, 0, 0), VFDSWMR_MD_OK);
}

/* Ranges: a run of counts (range_first) and each entry's ranges inside its
 * image, nonempty, increasing, disjoint. */
static void
test_mdidx_ranges(void **state)
{
    (void)state;
    vfdswmr_mdentry_t e[3] = {{.hdf5_page = 0, .md_page = 1, .length = 100, .range_first = 0, .nranges = 2},
                              {.hdf5_page = 1, .md_page = 2, .length = 50, .range_first = 2, .nranges = 0},
                              {.hdf5_page = 2, .md_page = 3, .length = PS, .range_first = 2, .nranges = 1}};
    vfdswmr_mdrange_t r[3] = {{0, 10}, {10, 90}, {PS - 1, 1}};
#define RANGE_CASE(want, ...)                                         \
    do {                                                              \
        vfdswmr_mdentry_t ee[3];                                      \
        vfdswmr_mdrange_t rr[3];                                      \
        uint32_t m = 3;                                               \
        memcpy(ee, e, sizeof ee);                                     \
        memcpy(rr, r, sizeof rr);                                     \
        __VA_ARGS__;                                                  \
        assert_int_equal(mdidx_ranges_err(ee, 3, rr, m, PS), (want)); \
    } while (0)
    RANGE_CASE(VFDSWMR_MD_OK, (void)0);
    /* counts that do not add up */
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[1].range_first = 1);
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[1].range_first = 3);
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[0].range_first = 1);
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[2].nranges = 2);          /* past the ranges */
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[2].nranges = UINT32_MAX); /* far past */
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[2].nranges = 0);          /* one range nobody owns */
    RANGE_CASE(VFDSWMR_MD_ERANGE, m = 2);                      /* entry 2's range missing */
    RANGE_CASE(VFDSWMR_MD_OK, ee[0].nranges = 1; ee[1].range_first = 1; ee[2].range_first = 1; rr[1] = rr[2]; m = 2);
    /* a range itself */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[0].length = 0);
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[2].length = 0);
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[1].length = 91); /* past the image's 100 bytes */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[2].length = 2);  /* past the image's PS bytes */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[2] = (vfdswmr_mdrange_t){PS, 1});
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[2] = (vfdswmr_mdrange_t){UINT32_MAX, 1}); /* offset + length wraps */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[2] = (vfdswmr_mdrange_t){1, UINT32_MAX});
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[1].offset = 9; rr[1].length = 5);  /* overlap */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[0] = (vfdswmr_mdrange_t){50, 10}); /* unsorted */
    RANGE_CASE(VFDSWMR_MD_ERANGE, rr[1] = rr[0]);                       /* twice the same */
    RANGE_CASE(VFDSWMR_MD_OK, rr[1] = (vfdswmr_mdrange_t){20, 1});      /* a gap */
    RANGE_CASE(VFDSWMR_MD_OK, rr[0] = (vfdswmr_mdrange_t){0, 100}; ee[0].nranges = 1; ee[1].range_first = 1;
               ee[2].range_first = 1; rr[1] = rr[2]; m = 2); /* a whole image */
    /* entry checks come before range checks, in entry order */
    RANGE_CASE(VFDSWMR_MD_EENTRY, rr[0].length = 0; ee[2].length = 0);
    RANGE_CASE(VFDSWMR_MD_ERANGE, ee[1].range_first = 1; ee[2].hdf5_page = 0);
    RANGE_CASE(VFDSWMR_MD_EUNSORTED, ee[2].range_first = 1; ee[2].hdf5_page = 0);
#undef RANGE_CASE
}

static void
test_mdidx_page_size(void **state)
{
    (void)state;
    static const uint32_t bad[] = {0, 3, 256, 511, 4097, 1u << 31, UINT32_MAX};
    sample_t s = make_mdidx_sample();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mdidx_err(s.buf, s.len, bad[i]), VFDSWMR_MD_EPAGESIZE);
    patch(s.buf, s.len, 20, 1000, 4); /* also a bad count */
    assert_int_equal(mdidx_err(s.buf, s.len, 0), VFDSWMR_MD_EPAGESIZE);
    assert_int_equal(mdidx_err(s.buf, s.len, PS), VFDSWMR_MD_ECOUNT);
    free(s.buf);
}

static void
test_mdidx_bad_entry(void **state)
{
    (void)state;
    const uint64_t top = UINT64_MAX / PS;
    vfdswmr_mdentry_t e[2] = {{.hdf5_page = 0, .md_page = 1, .length = PS},
                              {.hdf5_page = 5, .md_page = 9, .length = 1}};
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_OK);
    e[1].md_page = 0; /* the header's page */
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    e[1].md_page = 9;
    e[1].length = 0;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    e[1].length = PS + 1; /* two pages: (page + 2) * PS must fit */
    e[1].hdf5_page = top - 2;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_OK);
    e[1].hdf5_page = top - 1;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    e[1].hdf5_page = UINT64_MAX; /* page + pages wraps */
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    e[1].hdf5_page = 5;
    e[1].md_page = top - 2;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_OK);
    e[1].md_page = top - 1;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    e[1].md_page = UINT64_MAX;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
    /* the first entry is checked too */
    e[1].md_page = 9;
    e[0].length = 0;
    assert_int_equal(mdidx_entries_err(e, 2, PS), VFDSWMR_MD_EENTRY);
}

static void
test_mdidx_order(void **state)
{
    (void)state;
    vfdswmr_mdentry_t e[3] = {{.hdf5_page = 5, .md_page = 1, .length = 2 * PS},
                              {.hdf5_page = 7, .md_page = 3, .length = PS + 1},
                              {.hdf5_page = 9, .md_page = 5, .length = PS}};
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_OK); /* adjacent */
    e[1].hdf5_page = 6;                                           /* inside entry 0's second page */
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_EOVERLAP);
    e[1].hdf5_page = 8; /* entry 1 now reaches into page 9 */
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_EOVERLAP);
    e[1].hdf5_page = 5; /* same page as entry 0 */
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_EUNSORTED);
    e[1].hdf5_page = 4;
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_EUNSORTED);
    e[1].hdf5_page = 7;
    e[2].hdf5_page = 0;
    assert_int_equal(mdidx_entries_err(e, 3, PS), VFDSWMR_MD_EUNSORTED);
}

/* ---------------------------------------------------------------------- */
/* Updater file header                                                      */

static void
test_udhdr_layout(void **state)
{
    (void)state;
    vfdswmr_udhdr_t h = {.flags = 0x0102,
                         .page_size = 0x11223344,
                         .session = 0x2122232425262728ull,
                         .sequence = 0x3132333435363738ull,
                         .tick = 0x4142434445464748ull,
                         .cl_offset = 0x5152535455565758ull,
                         .cl_length = 0x6162636465666768ull};
    uint8_t b[VFDSWMR_UDHDR_SIZE];
    vfdswmr_udhdr_encode(&h, b);
    assert_memory_equal(b, "VUDH", 4);
    assert_int_equal(vfdswmr_le_decode(b + 4, 2), 3);
    assert_int_equal(vfdswmr_le_decode(b + 6, 2), h.flags);
    assert_int_equal(vfdswmr_le_decode(b + 8, 4), h.page_size);
    assert_int_equal(vfdswmr_le_decode(b + 12, 8), h.session);
    assert_int_equal(vfdswmr_le_decode(b + 20, 8), h.sequence);
    assert_int_equal(vfdswmr_le_decode(b + 28, 8), h.tick);
    assert_int_equal(vfdswmr_le_decode(b + 36, 8), h.cl_offset);
    assert_int_equal(vfdswmr_le_decode(b + 44, 8), h.cl_length);
    assert_int_equal(vfdswmr_le_decode(b + 52, 4), vfdswmr_checksum(b, 52));
}

static void
test_udhdr_roundtrip(void **state)
{
    (void)state;
    vfdswmr_udhdr_t h = sample_udhdr();
    roundtrip_udhdr(&h);
    h.flags = VFDSWMR_UD_FINAL;
    roundtrip_udhdr(&h);
    h = (vfdswmr_udhdr_t){.flags = VFDSWMR_UD_CREATE_ONLY,
                          .page_size = 512,
                          .session = UINT64_MAX,
                          .sequence = 0,
                          .tick = VFDSWMR_TICK_MAX,
                          .cl_offset = 0,
                          .cl_length = 0};
    roundtrip_udhdr(&h);
    h = (vfdswmr_udhdr_t){.flags = VFDSWMR_UD_FINAL,
                          .page_size = 1u << 30,
                          .session = UINT64_MAX,
                          .sequence = VFDSWMR_TICK_MAX,
                          .tick = VFDSWMR_TICK_MAX,
                          .cl_offset = VFDSWMR_UDHDR_SIZE,
                          .cl_length = vfdswmr_udcl_size(UINT32_MAX)};
    roundtrip_udhdr(&h);
    h.flags = 0;
    h.cl_length = vfdswmr_udcl_size(0);
    roundtrip_udhdr(&h);
}

static vfdswmr_mderr_t
udhdr_err(const vfdswmr_udhdr_t *h)
{
    uint8_t b[VFDSWMR_UDHDR_SIZE];
    vfdswmr_udhdr_t out;
    vfdswmr_udhdr_encode(h, b);
    return udhdr_dec(b, sizeof b, &out);
}

/* Ticks and sequence numbers end at 2^62, as the metadata file's ticks. */
static void
test_udhdr_tick_max(void **state)
{
    (void)state;
    vfdswmr_udhdr_t h = sample_udhdr();
    h.tick = h.sequence = VFDSWMR_TICK_MAX;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_OK);
    h.tick = VFDSWMR_TICK_MAX + 1;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFIELD);
    h.tick = 1;
    h.sequence = UINT64_MAX;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFIELD);
}

static void
test_udhdr_version(void **state)
{
    (void)state;
    static const uint16_t bad[] = {0, 1, 2, 4, 0x0100, 0x0300, 0xffff};
    vfdswmr_udhdr_t h = sample_udhdr(), out;
    uint8_t b[VFDSWMR_UDHDR_SIZE];
    vfdswmr_udhdr_encode(&h, b);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        patch(b, sizeof b, 4, bad[i], 2);
        assert_int_equal(udhdr_dec(b, sizeof b, &out), VFDSWMR_MD_EVERSION);
    }
    patch(b, sizeof b, 4, 3, 2);
    assert_int_equal(udhdr_dec(b, sizeof b, &out), VFDSWMR_MD_OK);
}

static void
test_udhdr_reserved_flags(void **state)
{
    (void)state;
    vfdswmr_udhdr_t h = sample_udhdr();
    for (unsigned bit = 2; bit < 16; bit++) {
        h.flags = (uint16_t)(1u << bit);
        assert_int_equal(udhdr_err(&h), VFDSWMR_MD_ERESERVED);
        h.flags = (uint16_t)(1u << bit | VFDSWMR_UD_FINAL);
        assert_int_equal(udhdr_err(&h), VFDSWMR_MD_ERESERVED);
    }
    h.flags = 0xffff;
    h.page_size = 3; /* reserved bits are reported first */
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_ERESERVED);
}

static void
test_udhdr_page_size(void **state)
{
    (void)state;
    static const uint32_t bad[] = {0, 3, 256, 511, 4095, 4096 * 3, 1u << 31, UINT32_MAX};
    vfdswmr_udhdr_t h = sample_udhdr();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h.page_size = bad[i];
        assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EPAGESIZE);
    }
    h.flags = VFDSWMR_UD_CREATE_ONLY | VFDSWMR_UD_FINAL; /* page size is checked before flag rules */
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EPAGESIZE);
}

static void
test_udhdr_flag_rules(void **state)
{
    (void)state;
    vfdswmr_udhdr_t create = {.flags = VFDSWMR_UD_CREATE_ONLY, .page_size = PS, .session = 1};
    assert_int_equal(udhdr_err(&create), VFDSWMR_MD_OK);
    vfdswmr_udhdr_t h = create;
    h.flags |= VFDSWMR_UD_FINAL;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFLAGS);
    h = create;
    h.sequence = 1;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFLAGS);
    h = create;
    h.cl_offset = VFDSWMR_UDHDR_SIZE;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFLAGS);
    h = create;
    h.cl_length = vfdswmr_udcl_size(0);
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFLAGS);
    h.cl_offset = VFDSWMR_UDHDR_SIZE; /* a whole valid change list */
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EFLAGS);
    /* without CREATE_ONLY any sequence and FINAL are fine */
    h = sample_udhdr();
    h.flags = VFDSWMR_UD_FINAL;
    h.sequence = 0;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_OK);
}

static void
test_udhdr_change_list_place(void **state)
{
    (void)state;
    static const uint64_t bad_off[] = {0, 1, 55, 57, 4096, UINT64_MAX};
    static const uint64_t bad_len[] = {0, 59, 61, 91, 93, 60 + 32 * (uint64_t)UINT32_MAX + 32, UINT64_MAX};
    vfdswmr_udhdr_t h = sample_udhdr();
    for (size_t i = 0; i < sizeof bad_off / sizeof bad_off[0]; i++) {
        h.cl_offset = bad_off[i];
        assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EBOUNDS);
    }
    h.cl_offset = VFDSWMR_UDHDR_SIZE;
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        h.cl_length = bad_len[i];
        assert_int_equal(udhdr_err(&h), VFDSWMR_MD_EBOUNDS);
    }
    h.cl_length = 60;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_OK);
    h.cl_length = 92;
    assert_int_equal(udhdr_err(&h), VFDSWMR_MD_OK);
}

/* ---------------------------------------------------------------------- */
/* Updater change list                                                      */

static void
test_udcl_layout(void **state)
{
    (void)state;
    vfdswmr_udentry_t e[2] = {
        {0x0102030405060708ull, 0x1112131415161718ull, 0x2122232425262728ull, 0x31323334, 0x41424344},
        {0x5152535455565758ull, 0x6162636465666768ull, 0x7172737475767778ull, 0x81828384, 0x91929394}};
    vfdswmr_udcl_t cl = {.tick = 0xa1a2a3a4a5a6a7a8ull,
                         .hdr_ud_page = 0xb1b2b3b4b5b6b7b8ull,
                         .hdr_len = 0xc1c2c3c4,
                         .hdr_checksum = 0xd1d2d3d4,
                         .idx_ud_page = 0xe1e2e3e4e5e6e7e8ull,
                         .idx_md_offset = 0xf1f2f3f4f5f6f7f8ull,
                         .idx_len = 0x0a0b0c0d,
                         .idx_checksum = 0x1a1b1c1d,
                         .nentries = 2,
                         .entries = e};
    size_t len;
    uint8_t *b = enc_udcl(&cl, &len);
    assert_int_equal(len, 124);
    assert_memory_equal(b, "VUCL", 4);
    assert_int_equal(vfdswmr_le_decode(b + 4, 8), cl.tick);
    assert_int_equal(vfdswmr_le_decode(b + 12, 8), cl.hdr_ud_page);
    assert_int_equal(vfdswmr_le_decode(b + 20, 4), cl.hdr_len);
    assert_int_equal(vfdswmr_le_decode(b + 24, 4), cl.hdr_checksum);
    assert_int_equal(vfdswmr_le_decode(b + 28, 8), cl.idx_ud_page);
    assert_int_equal(vfdswmr_le_decode(b + 36, 8), cl.idx_md_offset);
    assert_int_equal(vfdswmr_le_decode(b + 44, 4), cl.idx_len);
    assert_int_equal(vfdswmr_le_decode(b + 48, 4), cl.idx_checksum);
    assert_int_equal(vfdswmr_le_decode(b + 52, 4), 2);
    for (int i = 0; i < 2; i++) {
        const uint8_t *p = b + 56 + 32 * i;
        assert_int_equal(vfdswmr_le_decode(p, 8), e[i].ud_page);
        assert_int_equal(vfdswmr_le_decode(p + 8, 8), e[i].md_page);
        assert_int_equal(vfdswmr_le_decode(p + 16, 8), e[i].hdf5_page);
        assert_int_equal(vfdswmr_le_decode(p + 24, 4), e[i].length);
        assert_int_equal(vfdswmr_le_decode(p + 28, 4), e[i].checksum);
    }
    assert_int_equal(vfdswmr_le_decode(b + 120, 4), vfdswmr_checksum(b, 120));
    free(b);
}

static void
test_udcl_roundtrip(void **state)
{
    (void)state;
    static const uint32_t counts[] = {0, 1, 2, 20, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t n = counts[c];
        uint32_t *lengths = calloc(n ? n : 1, sizeof *lengths);
        vfdswmr_udcl_t cl;
        assert_non_null(lengths);
        for (uint32_t i = 0; i < n; i++)
            lengths[i] = i % 4 == 3 ? 5 * 512 + 3 : 512;
        uint64_t file_len = build_udcl(&cl, n, lengths, 512, (uint32_t)vfdswmr_mdidx_size(n, 2 * n));
        roundtrip_udcl(&cl, 512, file_len);
        roundtrip_udcl(&cl, 512, UINT64_MAX);
        cl.idx_md_offset = 512 * 7; /* index outside the reserved pages */
        roundtrip_udcl(&cl, 512, file_len);
        free(cl.entries);
        free(lengths);
    }
}

/* Images at the very top of the 64-bit byte space, extreme field values. */
static void
test_udcl_roundtrip_extremes(void **state)
{
    (void)state;
    const uint64_t top = UINT64_MAX / 512; /* last page end that fits */
    vfdswmr_udentry_t e[2] = {
        {.ud_page = top - 4, .md_page = top - 1, .hdf5_page = top - 1, .length = 512, .checksum = UINT32_MAX},
        {.ud_page = top - 3, .md_page = 1, .hdf5_page = 0, .length = 1, .checksum = 0}};
    vfdswmr_udcl_t cl = {.tick = UINT64_MAX,
                         .hdr_ud_page = top - 1,
                         .hdr_len = VFDSWMR_MDHDR_SIZE,
                         .hdr_checksum = UINT32_MAX,
                         .idx_ud_page = top - 2,
                         .idx_md_offset = UINT64_MAX - 511,
                         .idx_len = 32 + 32 * 2 + 8,
                         .idx_checksum = UINT32_MAX,
                         .nentries = 2,
                         .entries = e};
    roundtrip_udcl(&cl, 512, UINT64_MAX);
    roundtrip_udcl(&cl, 512, (top - 1) * 512 + VFDSWMR_MDHDR_SIZE); /* file ends with the header image */
    /* an index image of the largest size an index field allows */
    cl.nentries = 0;
    cl.idx_ud_page = 1;
    cl.idx_md_offset = 512;
    cl.idx_len = (uint32_t)vfdswmr_mdidx_size(0, (UINT32_MAX - 32) / 8);
    assert_int_equal(cl.idx_len, UINT32_MAX - 7);
    cl.hdr_ud_page = 1 + vfdswmr_pages(cl.idx_len, 512);
    roundtrip_udcl(&cl, 512, cl.hdr_ud_page * 512 + VFDSWMR_MDHDR_SIZE);
}

/* Fixture for the rule tests: 3 entries (1, 2 and 1 pages) in a file of
 * page size 512; the change list (156 bytes) ends in page 0, so images
 * start at page 1: entries at 1, 2-3, 4; index at 5; header at 6. */
typedef struct cl_fixture_t {
    vfdswmr_udcl_t cl;
    uint64_t file_len;
} cl_fixture_t;

static cl_fixture_t
cl_fixture(void)
{
    static const uint32_t lengths[] = {512, 1000, 100};
    cl_fixture_t f;
    f.file_len = build_udcl(&f.cl, 3, lengths, 512, 32 + 32 * 4 + 8 * 3);
    assert_int_equal(f.cl.entries[0].ud_page, 1);
    assert_int_equal(f.cl.entries[2].ud_page, 4);
    assert_int_equal(f.cl.idx_ud_page, 5);
    assert_int_equal(f.cl.hdr_ud_page, 6);
    assert_int_equal(f.file_len, 6 * 512 + 80);
    return f;
}

static vfdswmr_mderr_t
cl_fixture_err(cl_fixture_t *f)
{
    size_t len;
    uint8_t *b = enc_udcl(&f->cl, &len);
    vfdswmr_mderr_t err = udcl_err(b, len, 512, f->file_len);
    free(b);
    return err;
}

/* Runs one modification of the fixture and frees it. */
#define CL_CASE(want, ...)                            \
    do {                                              \
        cl_fixture_t f = cl_fixture();                \
        __VA_ARGS__;                                  \
        assert_int_equal(cl_fixture_err(&f), (want)); \
        free(f.cl.entries);                           \
    } while (0)

static void
test_udcl_count(void **state)
{
    (void)state;
    uint8_t b[300];
    memset(b, 0, sizeof b);
    memcpy(b, "VUCL", 4);
    /* count 0xFFFFFFFF, hdr_len 0: the count is checked first */
    vfdswmr_le_encode(b + 52, UINT32_MAX, 4);
    reseal(b, 60);
    assert_int_equal(udcl_err(b, 60, 512, 1 << 20), VFDSWMR_MD_ECOUNT);
    reseal(b, 300);
    assert_int_equal(udcl_err(b, 300, 512, 1 << 20), VFDSWMR_MD_ECOUNT);
    patch(b, 92 + 31, 52, 2, 4);
    assert_int_equal(udcl_err(b, 92 + 31, 512, 1 << 20), VFDSWMR_MD_ECOUNT);
    patch(b, 60, 52, 1, 4);
    assert_int_equal(udcl_err(b, 60, 512, 1 << 20), VFDSWMR_MD_ECOUNT);
    patch(b, 92, 52, 0, 4);
    assert_int_equal(udcl_err(b, 92, 512, 1 << 20), VFDSWMR_MD_ELENGTH);
    patch(b, 61, 52, 0, 4);
    assert_int_equal(udcl_err(b, 61, 512, 1 << 20), VFDSWMR_MD_ELENGTH);
    patch(b, 93, 52, 1, 4);
    assert_int_equal(udcl_err(b, 93, 512, 1 << 20), VFDSWMR_MD_ELENGTH);
}

static void
test_udcl_page_size(void **state)
{
    (void)state;
    static const uint32_t bad[] = {0, 3, 256, 511, 4097, 1u << 31, UINT32_MAX};
    sample_t s = make_udcl_sample();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(udcl_err(s.buf, s.len, bad[i], s.file_len), VFDSWMR_MD_EPAGESIZE);
    free(s.buf);
}

static void
test_udcl_lengths(void **state)
{
    (void)state;
    CL_CASE(VFDSWMR_MD_OK, (void)0);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.hdr_len = 0);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.hdr_len = 56); /* a version-1 header */
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.hdr_len = 71);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.hdr_len = 73);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.hdr_len = UINT32_MAX);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.idx_len = 0);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.idx_len = 28); /* a version-1 empty index */
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.idx_len = 31);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.idx_len = 33);
    CL_CASE(VFDSWMR_MD_ELENGTH, f.cl.idx_len = 32 + 32 * 4 + 4);
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_len = 32);
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_len = 40);
}

static void
test_udcl_index_md_offset(void **state)
{
    (void)state;
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = 0);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = 56);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = 71);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = 79);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = 513);
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_md_offset = 80);
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_md_offset = 80 + 216); /* slot 1 of one 512-byte page */
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_md_offset = 512);
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_md_offset = 512 * 1000);
    /* on the last page: offset + length must not wrap */
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_md_offset = UINT64_MAX - 511);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_md_offset = UINT64_MAX - 511; f.cl.idx_len = 32 + 32 * 15 + 8);
}

static void
test_udcl_bad_entry(void **state)
{
    (void)state;
    const uint64_t top = UINT64_MAX / 512;
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[1].md_page = 0);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[0].length = 0);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[2].length = 0);
    /* entry 1 is 2 pages long */
    CL_CASE(VFDSWMR_MD_OK, f.cl.entries[1].md_page = top - 2);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[1].md_page = top - 1);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[1].md_page = UINT64_MAX);
    CL_CASE(VFDSWMR_MD_OK, f.cl.entries[1].hdf5_page = top - 2);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[1].hdf5_page = top - 1);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[1].hdf5_page = UINT64_MAX);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[2].ud_page = UINT64_MAX);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.entries[2].ud_page = top);
    /* hdf5_page 0 is fine (the superblock's page) */
    CL_CASE(VFDSWMR_MD_OK, f.cl.entries[0].hdf5_page = 0);
}

static void
test_udcl_entry_bounds(void **state)
{
    (void)state;
    /* before the first page after header + change list */
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.entries[0].ud_page = 0);
    /* past the end of the file: the entry is checked before the images */
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.file_len = 4 * 512 + 99);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.file_len = 0);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.entries[2].ud_page = UINT64_MAX / 512 - 1);
}

/* A change list spanning pages 0-1: images may start at page 2 only. */
static void
test_udcl_long_change_list(void **state)
{
    (void)state;
    uint32_t lengths[20];
    vfdswmr_udcl_t cl;
    size_t len;
    for (int i = 0; i < 20; i++)
        lengths[i] = 512;
    uint64_t file_len = build_udcl(&cl, 20, lengths, 512, 32);
    assert_int_equal(cl.entries[0].ud_page, 2); /* 56 + 700 bytes */
    uint8_t *b = enc_udcl(&cl, &len);
    assert_int_equal(udcl_err(b, len, 512, file_len), VFDSWMR_MD_OK);
    free(b);
    cl.entries[0].ud_page = 1;
    b = enc_udcl(&cl, &len);
    assert_int_equal(udcl_err(b, len, 512, file_len), VFDSWMR_MD_EBOUNDS);
    free(b);
    /* no entries: the index image is the first one */
    cl.nentries = 0;
    cl.idx_ud_page = 0;
    b = enc_udcl(&cl, &len);
    assert_int_equal(udcl_err(b, len, 512, file_len), VFDSWMR_MD_EBOUNDS);
    free(b);
    free(cl.entries);
}

static void
test_udcl_entry_order(void **state)
{
    (void)state;
    CL_CASE(VFDSWMR_MD_EUNSORTED, f.cl.entries[1].ud_page = 1);
    CL_CASE(VFDSWMR_MD_EUNSORTED, f.cl.entries[2].ud_page = 1);
    CL_CASE(VFDSWMR_MD_EUNSORTED, f.cl.entries[1].ud_page = 0);
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.entries[2].ud_page = 3); /* entry 1 covers 2-3 */
    CL_CASE(VFDSWMR_MD_OK, f.cl.entries[2].ud_page = 4);
    /* a gap is fine */
    CL_CASE(VFDSWMR_MD_OK, f.cl.entries[2].ud_page = 5; f.cl.idx_ud_page = 6; f.cl.hdr_ud_page = 7;
            f.file_len = 7 * 512 + 80);
}

static void
test_udcl_index_image(void **state)
{
    (void)state;
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.idx_ud_page = 4); /* the last entry's page */
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.idx_ud_page = 1);
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.idx_ud_page = 0);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.idx_ud_page = UINT64_MAX);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.idx_ud_page = UINT64_MAX / 512);
    /* after the header image: the header image then overlaps it */
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.idx_ud_page = 7; f.file_len = 8 * 512);
    /* past the end of the file */
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_ud_page = 7; f.cl.hdr_ud_page = 8);
    /* no entries: the index image must still follow the change list */
    CL_CASE(VFDSWMR_MD_OK, f.cl.nentries = 0; f.cl.idx_ud_page = 1; f.cl.hdr_ud_page = 2; f.file_len = 2 * 512 + 80);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.nentries = 0; f.cl.idx_ud_page = 0; f.cl.hdr_ud_page = 2);
    /* an index image longer than a page */
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.idx_len = 32 + 32 * 20; f.file_len = 8 * 512);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.idx_len = 32 + 32 * 20); /* it ends past the file */
    CL_CASE(VFDSWMR_MD_OK, f.cl.idx_len = 32 + 32 * 20; f.cl.hdr_ud_page = 7; f.file_len = 7 * 512 + 80);
}

static void
test_udcl_header_image(void **state)
{
    (void)state;
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.hdr_ud_page = 5); /* the index image's page */
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.hdr_ud_page = 4);
    CL_CASE(VFDSWMR_MD_EOVERLAP, f.cl.hdr_ud_page = 0);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.hdr_ud_page = UINT64_MAX);
    CL_CASE(VFDSWMR_MD_EENTRY, f.cl.hdr_ud_page = UINT64_MAX / 512);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.cl.hdr_ud_page = 7);
    CL_CASE(VFDSWMR_MD_EBOUNDS, f.file_len -= 1);
    CL_CASE(VFDSWMR_MD_OK, f.file_len += 1000);
    CL_CASE(VFDSWMR_MD_OK, f.cl.hdr_ud_page = 7; f.file_len = 7 * 512 + 80);
}

/* The one search of an index (format.h) against a linear scan: every page
 * from before the first entry to after the last, with gaps and multi-page
 * entries, and the empty index. */
static void
test_mdidx_search(void **state)
{
    const uint32_t ps = 512;
    vfdswmr_mdentry_t e[] = {
        {.hdf5_page = 2, .md_page = 1, .length = 512},
        {.hdf5_page = 3, .md_page = 2, .length = 3 * 512},      /* pages 3-5 */
        {.hdf5_page = 9, .md_page = 5, .length = 1},            /* page 9 */
        {.hdf5_page = 10, .md_page = 6, .length = 2 * 512 + 1}, /* pages 10-12 */
    };
    const uint32_t n = sizeof e / sizeof e[0];
    vfdswmr_mdidx_t idx = {.nentries = n, .entries = e}, none = {0};

    (void)state;
    for (uint64_t page = 0; page < 16; page++) {
        uint32_t want = 0;
        const vfdswmr_mdentry_t *covering = NULL;
        while (want < n && e[want].hdf5_page + vfdswmr_pages(e[want].length, ps) <= page)
            want++;
        for (uint32_t k = 0; k < n; k++)
            if (e[k].hdf5_page <= page && page < e[k].hdf5_page + vfdswmr_pages(e[k].length, ps))
                covering = &e[k];
        assert_int_equal(vfdswmr_mdidx_search(e, n, ps, page), want);
        assert_ptr_equal(vfdswmr_mdidx_find(&idx, ps, page), covering);
        assert_int_equal(vfdswmr_mdidx_search(e, 0, ps, page), 0);
        assert_null(vfdswmr_mdidx_find(&none, ps, page));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checksum_threads),
        cmocka_unit_test(test_checksum_known_answers),
        cmocka_unit_test(test_mderr_str),
        cmocka_unit_test(test_mderr_retryable),
        cmocka_unit_test(test_page_size_valid),
        cmocka_unit_test(test_pages_and_sizes),
        PER_KIND_TESTS(valid_sample),
        PER_KIND_TESTS(truncated),
        PER_KIND_TESTS(truncated_resealed),
        PER_KIND_TESTS(extended),
        PER_KIND_TESTS(wrong_magic),
        PER_KIND_TESTS(bit_flips),
        cmocka_unit_test(test_mdhdr_layout),
        cmocka_unit_test(test_mdhdr_roundtrip),
        cmocka_unit_test(test_mdhdr_in_page),
        cmocka_unit_test(test_mdhdr_version),
        cmocka_unit_test(test_mdhdr_v1_refused),
        cmocka_unit_test(test_mdhdr_v2_refused),
        cmocka_unit_test(test_mdhdr_epoch),
        cmocka_unit_test(test_mdhdr_tick_max),
        cmocka_unit_test(test_hdf5_id_foreign),
        cmocka_unit_test(test_mdhdr_flags),
        cmocka_unit_test(test_mdhdr_max_lag),
        cmocka_unit_test(test_mdhdr_page_size),
        cmocka_unit_test(test_mdhdr_index_offset),
        cmocka_unit_test(test_mdhdr_index_length),
        cmocka_unit_test(test_mdhdr_index_overflow),
        cmocka_unit_test(test_mdhdr_check_order),
        cmocka_unit_test(test_mdidx_layout),
        cmocka_unit_test(test_mdidx_roundtrip),
        cmocka_unit_test(test_mdidx_roundtrip_extremes),
        cmocka_unit_test(test_mdidx_count),
        cmocka_unit_test(test_mdidx_ranges),
        cmocka_unit_test(test_mdidx_page_size),
        cmocka_unit_test(test_mdidx_bad_entry),
        cmocka_unit_test(test_mdidx_order),
        cmocka_unit_test(test_udhdr_layout),
        cmocka_unit_test(test_udhdr_roundtrip),
        cmocka_unit_test(test_udhdr_version),
        cmocka_unit_test(test_udhdr_tick_max),
        cmocka_unit_test(test_udhdr_reserved_flags),
        cmocka_unit_test(test_udhdr_page_size),
        cmocka_unit_test(test_udhdr_flag_rules),
        cmocka_unit_test(test_udhdr_change_list_place),
        cmocka_unit_test(test_udcl_layout),
        cmocka_unit_test(test_udcl_roundtrip),
        cmocka_unit_test(test_udcl_roundtrip_extremes),
        cmocka_unit_test(test_udcl_count),
        cmocka_unit_test(test_udcl_page_size),
        cmocka_unit_test(test_udcl_lengths),
        cmocka_unit_test(test_udcl_index_md_offset),
        cmocka_unit_test(test_udcl_bad_entry),
        cmocka_unit_test(test_udcl_entry_bounds),
        cmocka_unit_test(test_udcl_long_change_list),
        cmocka_unit_test(test_udcl_entry_order),
        cmocka_unit_test(test_udcl_index_image),
        cmocka_unit_test(test_udcl_header_image),
        cmocka_unit_test(test_mdidx_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
