/*
 * The writer's page buffer against a model HDF5 file (a byte array): what
 * the writer reads back, what each publish carries, and above all when a
 * page may reach the HDF5 file and leave the index (pagebuf.h invariants).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pagebuf.h"

#define PS         512u
#define FILE_PAGES 64u
#define MAX_LAG    3u

static uint8_t hdf5[FILE_PAGES * PS]; /* the model HDF5 file */
static unsigned stores, fills;

/* malloc of this program and of the page buffer (linked with
 * -Wl,--wrap=malloc): the next fail_mallocs calls fail. */
static unsigned fail_mallocs;
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *
__wrap_malloc(size_t size)
{
    if (fail_mallocs > 0) {
        fail_mallocs--;
        return NULL;
    }
    return __real_malloc(size);
}

static int
fill(void *ctx, uint64_t page, uint8_t *image)
{
    (void)ctx;
    memcpy(image, hdf5 + page * PS, PS);
    fills++;
    return 0;
}

static int
store(void *ctx, uint64_t page, const uint8_t *image, size_t len)
{
    (void)ctx;
    memcpy(hdf5 + page * PS, image, len);
    stores++;
    return 0;
}

static int
setup(void **state)
{
    for (size_t i = 0; i < sizeof hdf5; i++)
        hdf5[i] = (uint8_t)(i / PS + 100); /* every page filled with its number + 100 */
    stores = 0;
    *state = vfdswmr_pb_new(PS);
    return *state ? 0 : -1;
}

static int
teardown(void **state)
{
    vfdswmr_pb_destroy(*state);
    return 0;
}

/* Publish tick t: returns the number of changes, checks removals == want_removed. */
static size_t
publish(vfdswmr_pagebuf_t *pb, uint64_t t, size_t want_removed, bool all)
{
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_prepare(pb, t, MAX_LAG, all, &c, &nc, &r, &nr), 0);
    assert_int_equal(nr, want_removed);
    for (size_t i = 1; i < nc; i++)
        assert_true(c[i - 1].hdf5_page < c[i].hdf5_page);
    vfdswmr_pb_published(pb, t);
    return nc;
}

static void
test_write_read_overlay(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t buf[3 * PS], want[3 * PS];

    /* a write across a page boundary creates two pages from the file's bytes */
    memset(buf, 0xAB, 100);
    assert_int_equal(vfdswmr_pb_write(pb, 2 * PS - 40, 100, buf, fill, NULL), 0);
    memcpy(buf, hdf5 + PS, sizeof buf); /* what the HDF5 file has for pages 1..3 */
    vfdswmr_pb_read(pb, PS, sizeof buf, buf);
    memcpy(want, hdf5 + PS, sizeof want);
    memset(want + PS - 40, 0xAB, 100);
    assert_memory_equal(buf, want, sizeof buf);
    /* the HDF5 file itself is untouched */
    assert_int_equal(hdf5[2 * PS - 40], 101); /* page 1 holds 100 + 1 */
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 2);
    assert_int_equal(st.images, 2);
}

static void
test_publish_and_delayed_store(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x11, out[PS];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    /* nothing waits before a consistency point */
    assert_int_equal(vfdswmr_pb_prepare(pb, 1, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 0);
    vfdswmr_pb_published(pb, 1);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_true(vfdswmr_pb_pending(pb));
    /* a later write does not change the snapshot already taken */
    b = 0x22;
    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 2, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_true(c[0].hdf5_page == 5 && c[0].length == PS);
    assert_int_equal(((const uint8_t *)c[0].image)[7], 0x11);
    assert_int_equal(((const uint8_t *)c[0].image)[8], 105);
    vfdswmr_pb_published(pb, 2);
    assert_int_equal(vfdswmr_pb_last_due_tick(pb, MAX_LAG), 2 + MAX_LAG);

    /* not written to the HDF5 file before it has been in the index max_lag ticks */
    for (uint64_t t = 2; t < 2 + MAX_LAG; t++)
        assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 0);
    assert_int_equal(hdf5[5 * PS + 7], 105);
    assert_int_equal(vfdswmr_pb_store_due(pb, 2 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    /* the published image went to the file, not the newer current bytes */
    assert_int_equal(hdf5[5 * PS + 7], 0x11);
    /* the writer still reads its current bytes */
    memcpy(out, hdf5 + 5 * PS, PS);
    vfdswmr_pb_read(pb, 5 * PS, PS, out);
    assert_int_equal(out[7], 0x22);
}

static void
test_removal_after_store(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x33;
    uint64_t t = 1;
    vfdswmr_pb_stats_t st;

    assert_int_equal(vfdswmr_pb_write(pb, 9 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, t, 0, false), 1); /* in the index from tick 1 */
    for (t = 2; t <= 1 + MAX_LAG; t++)
        publish(pb, t, 0, false);
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[9 * PS], 0x33);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.images, 1); /* the file holds the current bytes: kept, clean, while in the index */
    /* it stays in the index max_lag ticks after the store, then leaves */
    for (t = 2 + MAX_LAG; t < 1 + 2 * MAX_LAG; t++)
        publish(pb, t, 0, false);
    publish(pb, 1 + 2 * MAX_LAG, 1, false);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 0);
    assert_int_equal(st.in_index, 0);
}

static void
test_change_after_store_keeps_index(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 1;
    uint64_t t;

    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    /* modified again: not read back from the HDF5 file (its current image
     * was kept), stays in the index */
    b = 2;
    fills = 0;
    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS + 1, 1, &b, fill, NULL), 0);
    assert_int_equal(fills, 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    for (t = 2 + MAX_LAG; t < 10 + MAX_LAG; t++)
        publish(pb, t, 0, false); /* never removed while its newest image is not in the file */
    /* due at once: it has been in the index for max_lag ticks without a break */
    assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[3 * PS], 1);
    assert_int_equal(hdf5[3 * PS + 1], 2);
}

/* Stores with published_before: an image published in the tick still open
 * waits (a writer publishing at every flush stores a page once a tick);
 * the next tick's store writes the image then published. */
static void
test_store_once_a_tick(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b;
    uint64_t t;

    for (t = 1; t <= 1 + MAX_LAG; t++) { /* a change in every tick: in the index from 1 */
        b = (uint8_t)t;
        assert_int_equal(vfdswmr_pb_write(pb, 4 * PS, 1, &b, fill, NULL), 0);
        assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
        publish(pb, t, 0, false);
    }
    t = 1 + MAX_LAG; /* due, but published in the open tick t */
    stores = 0;
    assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, t, store, NULL), 0);
    assert_int_equal(hdf5[4 * PS], 104);
    /* tick t ended: its image goes */
    assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, t + 1, store, NULL), 1);
    assert_int_equal(hdf5[4 * PS], (uint8_t)t);
    assert_int_equal(stores, 1);
    /* stored once: nothing more until the next publish */
    assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 0);
}

static void
test_raw_write_coherent(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta = 0x44, raw[200], out[PS];

    assert_int_equal(vfdswmr_pb_write(pb, 7 * PS, 1, &meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    /* raw data lands in the same page (written to the file by the driver) */
    memset(raw, 0x55, sizeof raw);
    memcpy(hdf5 + 7 * PS + 100, raw, sizeof raw);
    vfdswmr_pb_write_raw(pb, 7 * PS + 100, sizeof raw, raw);
    /* storing the published image later must not put back the old raw bytes */
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[7 * PS], 0x44);
    assert_int_equal(hdf5[7 * PS + 100], 0x55);
    assert_int_equal(hdf5[7 * PS + 299], 0x55);
    memcpy(out, hdf5 + 7 * PS, PS);
    vfdswmr_pb_read(pb, 7 * PS, PS, out);
    assert_int_equal(out[150], 0x55);
    /* raw data over untracked pages changes nothing */
    vfdswmr_pb_write_raw(pb, 20 * PS, sizeof raw, raw);
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 1);
}

/* Raw writes and reads over many pages, against the model file: a range of
 * fewer pages than are tracked looks each page up, a longer one walks the
 * tracked pages in it (for_each_overlap); both must reach exactly the
 * tracked pages, and only their bytes inside the range. */
static void
test_raw_ranges_model(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    static const uint64_t tracked[] = {2, 3, 5, 9, 40};
    static uint8_t model[FILE_PAGES * PS], raw[FILE_PAGES * PS], out[FILE_PAGES * PS];
    static const struct {
        uint64_t addr, len;
    } w[] = {
        {1 * PS + 17, 11 * PS - 22}, /* 12 pages, 4 tracked: the walk */
        {2 * PS + 5, 10 * PS},       /* the walk, from a tracked page */
        {2 * PS + 1, PS + 8},        /* 2 pages: look-ups */
        {5 * PS, PS},                /* one whole tracked page */
        {9 * PS - 3, 6},             /* across a tracked page's start */
        {0, FILE_PAGES * PS},        /* all of it */
        {10 * PS, 30 * PS},          /* 30 untracked pages: the walk finds none */
        {40 * PS + PS - 1, 1},       /* a tracked page's last byte */
    };
    uint8_t meta = 0x44;

    for (size_t i = 0; i < sizeof tracked / sizeof tracked[0]; i++)
        assert_int_equal(vfdswmr_pb_write(pb, tracked[i] * PS + 7, 1, &meta, fill, NULL), 0);
    memcpy(model, hdf5, sizeof model);
    for (size_t i = 0; i < sizeof tracked / sizeof tracked[0]; i++)
        model[tracked[i] * PS + 7] = meta;
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        for (uint64_t i = 0; i < w[k].len; i++)
            raw[i] = (uint8_t)(k * 31 + i * 7 + 1);
        memcpy(hdf5 + w[k].addr, raw, w[k].len); /* the driver writes raw data to the file */
        memcpy(model + w[k].addr, raw, w[k].len);
        assert_int_equal(vfdswmr_pb_write_raw(pb, w[k].addr, w[k].len, raw), 0);
        /* a read lays the tracked pages over the file's bytes */
        memcpy(out, hdf5, sizeof out);
        vfdswmr_pb_read(pb, 0, sizeof out, out);
        assert_memory_equal(out, model, sizeof out);
        memset(out, 0, sizeof out);
        vfdswmr_pb_read(pb, 1 * PS + 3, 10 * PS, out);
        for (uint64_t a = 1 * PS + 3; a < 11 * PS + 3; a++) {
            bool in = false;
            for (size_t i = 0; i < sizeof tracked / sizeof tracked[0]; i++)
                in |= a / PS == tracked[i];
            assert_int_equal(out[a - (1 * PS + 3)], in ? model[a] : 0);
        }
    }
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, sizeof tracked / sizeof tracked[0]);
}

static void
test_freed_space_dropped(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 9;

    assert_int_equal(vfdswmr_pb_write(pb, 30 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    /* the EOA shrinks below page 30 and the page changes again: it leaves the index */
    assert_int_equal(vfdswmr_pb_write(pb, 30 * PS + 1, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, 20 * PS), 0);
    publish(pb, 2, 1, false);
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 0);
    /* pages beyond the EOA are never written to the file */
    assert_int_equal(vfdswmr_pb_store_due(pb, 100, MAX_LAG, 20 * PS, UINT64_MAX, store, NULL), 0);
    assert_int_equal(stores, 0);
}

static void
test_close_all(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 7;

    for (uint64_t p = 0; p < 10; p += 2)
        assert_int_equal(vfdswmr_pb_write(pb, p * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 4, 0, false);
    assert_int_equal(vfdswmr_pb_last_due_tick(pb, MAX_LAG), 4 + MAX_LAG);
    assert_int_equal(vfdswmr_pb_store_due(pb, 4 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 5);
    assert_int_equal(vfdswmr_pb_last_due_tick(pb, MAX_LAG), 0);
    publish(pb, 5 + MAX_LAG, 5, true); /* the empty index of close */
    for (uint64_t p = 0; p < 10; p += 2)
        assert_int_equal(hdf5[p * PS], 7);
}

/* The metadata ranges a publish carries: bytes last written as metadata. */
static void
test_metadata_ranges(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta[PS], raw[8];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    memset(meta, 0x77, sizeof meta);
    memset(raw, 0x99, sizeof raw);
    assert_int_equal(vfdswmr_pb_write(pb, 4 * PS + 10, 10, meta, fill, NULL), 0);  /* [10, 20) */
    assert_int_equal(vfdswmr_pb_write(pb, 4 * PS + 64, 200, meta, fill, NULL), 0); /* [64, 264) */
    vfdswmr_pb_write_raw(pb, 4 * PS + 15, 3, raw);                                 /* [15, 18) is raw now */
    assert_int_equal(vfdswmr_pb_write(pb, 6 * PS, PS, meta, fill, NULL), 0);       /* a whole page */
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    vfdswmr_pb_write_raw(pb, 4 * PS + 100, 4, raw); /* after the consistency point: the snapshot too */
    assert_int_equal(vfdswmr_pb_prepare(pb, 1, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 2);
    assert_int_equal(c[0].hdf5_page, 4);
    assert_int_equal(c[0].nranges, 4);
    const uint32_t want[4][2] = {{10, 5}, {18, 2}, {64, 36}, {104, 160}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c[0].ranges[i].offset, want[i][0]);
        assert_int_equal(c[0].ranges[i].length, want[i][1]);
    }
    assert_int_equal(((const uint8_t *)c[0].image)[100], 0x99);
    assert_int_equal(c[1].hdf5_page, 6);
    assert_int_equal(c[1].nranges, 1);
    assert_int_equal(c[1].ranges[0].offset, 0);
    assert_int_equal(c[1].ranges[0].length, PS);
    vfdswmr_pb_published(pb, 1);
    /* stored: the kept image still marks what the index marks (raw data
     * over it must publish the page again: test_raw_over_stored_metadata),
     * and the next change adds to it */
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 2);
    assert_int_equal(vfdswmr_pb_write(pb, 4 * PS + 500, 2, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 2 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].nranges, 5);
    for (int i = 0; i < 4; i++)
        assert_int_equal(c[0].ranges[i].offset, want[i][0]);
    assert_int_equal(c[0].ranges[4].offset, 500);
    assert_int_equal(c[0].ranges[4].length, 2);
    vfdswmr_pb_published(pb, 2 + MAX_LAG);
}

/* Ranges against a model of the page's bytes: random metadata and raw
 * writes (runs that start and end anywhere in 64-bit words of the map, and at
 * the page's ends), then the ranges a publish carries must be exactly the
 * runs of bytes whose last write was metadata. */
static void
test_metadata_ranges_model(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    static uint8_t bytes[PS];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;
    unsigned seed = 12345;

    static bool model[PS]; /* the page's map carries every write since it came in */

    memset(bytes, 0x55, sizeof bytes);
    for (uint64_t t = 1; t <= 200; t++) {
        uint64_t page = 3;
        for (int k = 0, n = 1 + (int)(t % 7); k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            uint32_t off = (seed >> 8) % PS;
            seed = seed * 1103515245u + 12345u;
            uint32_t len = 1 + (seed >> 8) % (k % 3 == 0 ? 8u : 200u);
            if (k == 0 && t % 5 == 0)
                off = 0; /* from the page's start */
            if (k == 1 && t % 4 == 0)
                off = PS - len % PS; /* to its end */
            if (off + len > PS)
                len = PS - off;
            bool meta = k % 2 == 0 || t % 3 == 0;
            if (meta)
                assert_int_equal(vfdswmr_pb_write(pb, page * PS + off, len, bytes, fill, NULL), 0);
            else
                vfdswmr_pb_write_raw(pb, page * PS + off, len, bytes);
            for (uint32_t i = off; i < off + len; i++)
                model[i] = meta;
        }
        assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
        assert_int_equal(vfdswmr_pb_prepare(pb, t, MAX_LAG, false, &c, &nc, &r, &nr), 0);
        assert_int_equal(nc, 1);
        {
            uint32_t k = 0, i = 0;
            while (i < PS) {
                if (!model[i]) {
                    i++;
                    continue;
                }
                uint32_t start = i;
                while (i < PS && model[i])
                    i++;
                assert_true(k < c[0].nranges);
                assert_int_equal(c[0].ranges[k].offset, start);
                assert_int_equal(c[0].ranges[k].length, i - start);
                k++;
            }
            assert_int_equal(k, c[0].nranges);
        }
        vfdswmr_pb_published(pb, t);
    }
}

/* Raw data over bytes a published image marks as metadata: readers read
 * those bytes from the image, so the page is published again, with ranges
 * that leave them to the file; with a snapshot waiting, that one does it. */
/* Page 3 with metadata [0, 64) of 0x55, published at tick 1; raw is 0xaa. */
static void
meta_page_published(vfdswmr_pagebuf_t *pb, uint8_t *meta, size_t nmeta, uint8_t *raw, size_t nraw)
{
    memset(meta, 0x55, nmeta);
    memset(raw, 0xaa, nraw);
    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS, 64, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, 1, 0, false), 1);
}

static void
test_raw_over_published_metadata(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta[64], raw[8];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    meta_page_published(pb, meta, sizeof meta, raw, sizeof raw);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 3 * PS + 100, 8, raw), 0); /* no metadata there: nothing to publish */
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, 2, 0, false), 0);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 3 * PS + 8, 8, raw), 0); /* metadata [8, 16) becomes raw */
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 3, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].hdf5_page, 3);
    assert_int_equal(c[0].nranges, 2);
    assert_int_equal(c[0].ranges[0].offset, 0);
    assert_int_equal(c[0].ranges[0].length, 8);
    assert_int_equal(c[0].ranges[1].offset, 16);
    assert_int_equal(c[0].ranges[1].length, 48);
    assert_int_equal(((const uint8_t *)c[0].image)[8], 0xaa);
    vfdswmr_pb_published(pb, 3);
    /* a snapshot waits: it takes the raw bytes itself, no second change */
    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS + 40, 1, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 3 * PS + 20, 4, raw), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 4, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].nranges, 3); /* [0, 8), [16, 20), [24, 64) */
    vfdswmr_pb_published(pb, 4);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, 5, 0, false), 0);
}

/* The same once the published image reached the HDF5 file: the index still
 * marks those bytes metadata, so the page is published again. */
static void
test_raw_over_stored_metadata(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta[64], raw[8];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    meta_page_published(pb, meta, sizeof meta, raw, sizeof raw);
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(publish(pb, 1 + MAX_LAG, 0, false), 0); /* still in the index */
    memcpy(hdf5 + 3 * PS + 8, raw, 8);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 3 * PS + 8, 8, raw), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 2 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(nr, 0);
    assert_int_equal(c[0].nranges, 2); /* [0, 8), [16, 64) */
    assert_int_equal(c[0].ranges[1].offset, 16);
    assert_int_equal(((const uint8_t *)c[0].image)[8], 0xaa);
    vfdswmr_pb_published(pb, 2 + MAX_LAG);
}

/* The one change of the next publish: its page and ranges. */
static const vfdswmr_mdchange_t *
one_change(vfdswmr_pagebuf_t *pb, uint64_t t, uint64_t page)
{
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_prepare(pb, t, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].hdf5_page, page);
    return c;
}

/* Keeping freed space's old bytes (vfdswmr_pb_keep_old): the next publish
 * holds what a reader of the newest snapshot reads there, the range marked
 * metadata, and raw data written there later makes the page published
 * again without it. */
static void
test_keep_old(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta[64], raw[50];
    const vfdswmr_mdchange_t *c;
    size_t kept;

    memset(meta, 0x55, sizeof meta);
    memset(raw, 0xaa, sizeof raw);
    /* an untracked page is the caller's: nothing here */
    assert_int_equal(vfdswmr_pb_keep_old(pb, 9 * PS + 100, 50, fill, NULL, &kept), 0);
    assert_int_equal(kept, 0);
    assert_false(vfdswmr_pb_pending(pb));
    assert_false(vfdswmr_pb_tracked(pb, 9));
    /* a tracked page not in the index (written since the last consistency
     * point): the file's bytes, not the current ones */
    assert_int_equal(vfdswmr_pb_write(pb, 10 * PS + 400, 8, meta, fill, NULL), 0);
    assert_true(vfdswmr_pb_tracked(pb, 10));
    assert_int_equal(vfdswmr_pb_keep_old(pb, 10 * PS + 100, 50, fill, NULL, &kept), 0);
    assert_int_equal(kept, 1);
    c = one_change(pb, 1, 10);
    assert_int_equal(c[0].nranges, 1);
    assert_int_equal(c[0].ranges[0].offset, 100);
    assert_int_equal(c[0].ranges[0].length, 50);
    assert_int_equal(((const uint8_t *)c[0].image)[120], 110);
    assert_int_equal(((const uint8_t *)c[0].image)[400], 110);
    vfdswmr_pb_published(pb, 1);
    /* new raw data there: the next consistency point publishes the page
     * without the range, with the new bytes (and the metadata write) */
    memcpy(hdf5 + 10 * PS + 100, raw, sizeof raw);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 10 * PS + 100, sizeof raw, raw), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    c = one_change(pb, 2, 10);
    assert_int_equal(c[0].nranges, 1);
    assert_int_equal(c[0].ranges[0].offset, 400);
    assert_int_equal(((const uint8_t *)c[0].image)[120], 0xaa);
    assert_int_equal(((const uint8_t *)c[0].image)[400], 0x55);
    vfdswmr_pb_published(pb, 2);

    /* bytes the published image already holds as metadata: nothing to do */
    assert_int_equal(vfdswmr_pb_write(pb, 12 * PS, 64, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, 3, 0, false), 1);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 12 * PS + 8, 56, fill, NULL, &kept), 0);
    assert_int_equal(kept, 0);
    assert_false(vfdswmr_pb_pending(pb));
    /* ... and with a change since: the published image, not the change */
    meta[0] = 0x66;
    assert_int_equal(vfdswmr_pb_write(pb, 12 * PS + 300, 1, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 12 * PS + 64, 16, fill, NULL, &kept), 0);
    assert_int_equal(kept, 1);
    c = one_change(pb, 4, 12);
    assert_int_equal(c[0].nranges, 1); /* [0, 80) */
    assert_int_equal(c[0].ranges[0].length, 80);
    assert_int_equal(((const uint8_t *)c[0].image)[300], 112);
    vfdswmr_pb_published(pb, 4);

    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    (void)one_change(pb, 5, 12); /* the change at 300 */
    vfdswmr_pb_published(pb, 5);

    /* raw data over the published metadata: that image is only in the
     * metadata file now; nothing is kept, nothing changes */
    assert_int_equal(vfdswmr_pb_write(pb, 14 * PS, 64, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    (void)one_change(pb, 6, 14);
    vfdswmr_pb_published(pb, 6);
    memcpy(hdf5 + 14 * PS + 8, raw, 8);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 14 * PS + 8, 8, raw), 0);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 14 * PS + 4, 8, fill, NULL, &kept), 1);
    assert_false(vfdswmr_pb_pending(pb));
    /* once a consistency point took it, the waiting snapshot is the view */
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 14 * PS + 4, 8, fill, NULL, &kept), 0);
    assert_int_equal(kept, 1);
    c = one_change(pb, 7, 14);
    assert_int_equal(c[0].nranges, 2); /* [0, 12), [16, 64): the raw bytes at 8 as the file holds them */
    assert_int_equal(c[0].ranges[0].length, 12);
    assert_int_equal(((const uint8_t *)c[0].image)[9], 0xaa);
    vfdswmr_pb_published(pb, 7);

    /* in the index and in the HDF5 file, unchanged: the current image */
    assert_int_equal(vfdswmr_pb_store_due(pb, 7 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 3);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 14 * PS + 200, 20, fill, NULL, &kept), 0);
    assert_int_equal(kept, 1);
    c = one_change(pb, 8, 14);
    assert_int_equal(c[0].nranges, 3); /* [0, 12), [16, 64), [200, 220) */
    assert_int_equal(c[0].ranges[2].offset, 200);
    assert_int_equal(((const uint8_t *)c[0].image)[9], 0xaa);
    assert_int_equal(((const uint8_t *)c[0].image)[210], 114);
    /* not while a publish is under way */
    assert_int_equal(vfdswmr_pb_keep_old(pb, 20 * PS, 8, fill, NULL, &kept), -1);
    vfdswmr_pb_published(pb, 8);
}

/* A page holding kept bytes stays in the index, however many ticks publish
 * the consistency point before the free again, until one taken after it is
 * published -- also when its image never reached the HDF5 file (the file
 * was cut below it) -- and raw data written there later still makes it
 * changed. An indexed page whose image went to the file and changed since
 * has its view only in the metadata file: nothing is kept. */
static void
test_keep_old_held(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t meta[8], raw[16];
    size_t kept;
    uint64_t t;
    vfdswmr_pb_stats_t st;

    memset(meta, 0x55, sizeof meta);
    memset(raw, 0xaa, sizeof raw);
    assert_int_equal(vfdswmr_pb_write(pb, 20 * PS + 300, 8, meta, fill, NULL), 0); /* tracked, not indexed */
    assert_int_equal(vfdswmr_pb_keep_old(pb, 20 * PS, 100, fill, NULL, &kept), 0);
    assert_int_equal(kept, 1);
    assert_int_equal(publish(pb, 1, 0, false), 1);
    /* the file ends below the page: nothing written, yet it stays */
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, 20 * PS, UINT64_MAX, store, NULL), 0);
    for (t = 2; t < 4 * MAX_LAG; t++)
        assert_int_equal(publish(pb, t, 0, false), 0);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.in_index, 1);
    /* raw data there: published again without the range; written to the
     * file and max_lag ticks old, it then leaves */
    assert_int_equal(vfdswmr_pb_write_raw(pb, 20 * PS + 10, sizeof raw, raw), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    const vfdswmr_mdchange_t *c = one_change(pb, t, 20);
    assert_int_equal(c[0].nranges, 3); /* [0, 10), [26, 100), [300, 308) */
    vfdswmr_pb_published(pb, t);
    uint64_t t0 = t;
    assert_int_equal(vfdswmr_pb_store_due(pb, t0 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    for (t = t0 + 1; t < t0 + 2 * MAX_LAG; t++)
        assert_int_equal(publish(pb, t, 0, false), 0);
    assert_int_equal(publish(pb, t, 1, false), 0);

    /* written to the file and changed since: only in the metadata file */
    assert_int_equal(vfdswmr_pb_write(pb, 22 * PS, 8, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, ++t, 0, false), 1);
    assert_int_equal(vfdswmr_pb_store_due(pb, t + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(vfdswmr_pb_write(pb, 22 * PS + 200, 8, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_keep_old(pb, 22 * PS + 50, 8, fill, NULL, &kept), 1);
    assert_false(vfdswmr_pb_pending(pb));
}

/* After a publish failure every current page goes to the file, indexed first. */
static void
test_store_current(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x31;

    assert_int_equal(vfdswmr_pb_write(pb, 8 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    b = 0x32; /* changed again, never published */
    assert_int_equal(vfdswmr_pb_write(pb, 8 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_write(pb, 9 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_store_current(pb, FILE_PAGES * PS, store, NULL), 2);
    assert_int_equal(hdf5[8 * PS], 0x32);
    assert_int_equal(hdf5[9 * PS], 0x32);
}

/* While a publish is under way (prepare .. published) the writer goes on:
 * the images handed over never change, and what happened meanwhile is kept. */
static void
test_in_flight_images_stable(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x11, raw[4] = {0x55, 0x55, 0x55, 0x55}, copy[PS];
    const vfdswmr_mdchange_t *c, *c2;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 1, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    memcpy(copy, c[0].image, PS);
    /* one publish at a time */
    assert_int_equal(vfdswmr_pb_prepare(pb, 2, MAX_LAG, false, &c2, &nc, &r, &nr), -1);
    /* metadata, a consistency point and raw data over the page, meanwhile */
    b = 0x22;
    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    memcpy(hdf5 + 5 * PS + 100, raw, sizeof raw);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 5 * PS + 100, sizeof raw, raw), 0);
    assert_memory_equal(c[0].image, copy, PS); /* what the publish writes is untouched */
    assert_int_equal(c[0].nranges, 1);
    vfdswmr_pb_published(pb, 1);
    /* the published image that goes to the HDF5 file has the raw bytes */
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[5 * PS + 7], 0x11);
    assert_int_equal(hdf5[5 * PS + 100], 0x55);
    /* the consistency point taken meanwhile waits for the next publish */
    assert_int_equal(vfdswmr_pb_prepare(pb, 2 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(((const uint8_t *)c[0].image)[7], 0x22);
    assert_int_equal(((const uint8_t *)c[0].image)[100], 0x55);
    vfdswmr_pb_published(pb, 2 + MAX_LAG);
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 1);
    assert_int_equal(st.images, 2); /* cur and pub: fly and fix were handed on or freed */
}

/* A page due while its next image is in flight: the older published image
 * goes to the HDF5 file, the writer keeps its current bytes. */
static void
test_store_due_in_flight(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 1, out[PS];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    b = 2;
    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 1 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(vfdswmr_pb_store_due(pb, MAX_LAG + 1, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[3 * PS], 1);
    memcpy(out, hdf5 + 3 * PS, PS);
    vfdswmr_pb_read(pb, 3 * PS, PS, out);
    assert_int_equal(out[0], 2); /* the current bytes were not forgotten */
    vfdswmr_pb_published(pb, 1 + MAX_LAG);
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + 2 * MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    assert_int_equal(hdf5[3 * PS], 2);
}

/* A removal whose page is written while the publish is under way leaves
 * the index but stays tracked, and its new bytes are published later. */
static void
test_removal_revived_in_flight(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x61, out[PS];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;
    uint64_t t;
    vfdswmr_pb_stats_t st;

    assert_int_equal(vfdswmr_pb_write(pb, 12 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false);
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL), 1);
    for (t = 2; t < 1 + 2 * MAX_LAG; t++)
        publish(pb, t, 0, false);
    assert_int_equal(vfdswmr_pb_prepare(pb, t, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nr, 1);
    assert_int_equal(r[0], 12);
    b = 0x62;
    assert_int_equal(vfdswmr_pb_write(pb, 12 * PS + 1, 1, &b, fill, NULL), 0);
    vfdswmr_pb_published(pb, t);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.pages, 1);
    assert_int_equal(st.in_index, 0);
    memcpy(out, hdf5 + 12 * PS, PS);
    vfdswmr_pb_read(pb, 12 * PS, PS, out);
    assert_int_equal(out[0], 0x61);
    assert_int_equal(out[1], 0x62);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(publish(pb, t + 1, 0, false), 1);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.in_index, 1);
}

/* Raw data over a page in flight when its private copy cannot be made (out
 * of memory): the writer's current bytes still take the raw data, and the
 * image handed to the publish, which lacks it, never reaches the HDF5 file --
 * neither as a delayed write nor at close (vfdswmr_pb_store_current). */
static void
test_raw_in_flight_out_of_memory(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 0x11, raw[8], out[PS];
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    memset(raw, 0x55, sizeof raw);
    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    publish(pb, 1, 0, false); /* in the index from tick 1 */
    b = 0x22;
    assert_int_equal(vfdswmr_pb_write(pb, 5 * PS + 7, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 1 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    /* the driver wrote raw data to the file; the page buffer runs out of memory */
    memcpy(hdf5 + 5 * PS + 100, raw, sizeof raw);
    fail_mallocs = 1;
    assert_int_equal(vfdswmr_pb_write_raw(pb, 5 * PS + 100, sizeof raw, raw), -1);
    fail_mallocs = 0;
    memcpy(out, hdf5 + 5 * PS, PS);
    vfdswmr_pb_read(pb, 5 * PS, PS, out);
    assert_int_equal(out[7], 0x22);
    assert_int_equal(out[100], 0x55); /* the writer reads the raw data it wrote */
    vfdswmr_pb_published(pb, 1 + MAX_LAG);
    /* due since tick 1 + MAX_LAG: nothing stale may be written */
    assert_true(vfdswmr_pb_store_due(pb, 1 + 2 * MAX_LAG, MAX_LAG, FILE_PAGES * PS, UINT64_MAX, store, NULL) >= 0);
    assert_int_equal(hdf5[5 * PS + 100], 0x55);
    /* close after the failure: every page's current bytes */
    assert_int_equal(vfdswmr_pb_store_current(pb, FILE_PAGES * PS, store, NULL), 1);
    assert_int_equal(hdf5[5 * PS + 7], 0x22);
    assert_int_equal(hdf5[5 * PS + 100], 0x55);
}

/* A publish that never completes (it failed) is freed with the buffer. */
static void
test_destroy_in_flight(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 3, raw = 4;
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    for (uint64_t p = 0; p < 4; p++)
        assert_int_equal(vfdswmr_pb_write(pb, p * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 1, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 4);
    assert_int_equal(vfdswmr_pb_write_raw(pb, 2 * PS + 9, 1, &raw), 0);
    /* after a failed publish every current page still goes to the file */
    assert_int_equal(vfdswmr_pb_store_current(pb, FILE_PAGES * PS, store, NULL), 4);
    assert_int_equal(hdf5[2 * PS], 3);
    assert_int_equal(hdf5[2 * PS + 9], 4);
    /* teardown destroys it in flight (valgrind and ASan check the memory) */
}

/* A page whose first publish is under way, written again and then freed (a
 * consistency point drops it): the publish under way adds it to the index,
 * so the next publish removes it. */
static void
test_drop_in_flight_removed(void **state)
{
    vfdswmr_pagebuf_t *pb = *state;
    uint8_t b = 3;
    const vfdswmr_mdchange_t *c;
    const uint64_t *r;
    size_t nc, nr;

    assert_int_equal(vfdswmr_pb_write(pb, 30 * PS, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 1, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(vfdswmr_pb_write(pb, 30 * PS + 1, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, 30 * PS), 0); /* freed */
    vfdswmr_pb_published(pb, 1);
    assert_int_equal(vfdswmr_pb_prepare(pb, 2, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 0);
    assert_int_equal(nr, 1);
    assert_int_equal(r[0], 30);
    vfdswmr_pb_published(pb, 2);
}

/* ---- randomized: publishes in flight against a model ----------------------
 * Metadata and raw writes, consistency points, delayed stores and publishes
 * whose prepare and published() are apart (the tick thread writing without
 * the lock), in random order, with a lag that changes from tick to tick (read
 * marks). After every step, against a model: the writer reads its current
 * bytes; every snapshot a reader may hold -- marked readers down to tick T -
 * lag + 1, T the newest tick begun, and unmarked ones down to the header's
 * tick - max_lag + 1 -- reads the metadata of its consistency point, from the
 * metadata file where its index names the page and from the HDF5 file
 * elsewhere; recovery from the newest header (with a publish in flight, either
 * header) gives that state's metadata and the current raw data; images handed
 * to a publish never change; stores never put back stale raw bytes. Each
 * block of 32 bytes is metadata or raw data for the whole run. */

#define M_PAGES  12u
#define M_BLK    32u
#define M_TICKS  1024u
#define M_MAXLAG 3u

typedef struct {
    uint8_t img[PS];
    bool meta[PS]; /* in the change's metadata ranges */
} m_entry_t;

typedef struct {
    uint64_t seed, rng;
    long step;
    vfdswmr_pagebuf_t *pb;
    uint8_t file[M_PAGES * PS], cur[M_PAGES * PS], raw[M_PAGES * PS], cp[M_PAGES * PS];
    bool is_meta[M_PAGES * PS / M_BLK];
    uint8_t *state[M_TICKS];     /* metadata of the consistency point published at each tick */
    int index[M_TICKS][M_PAGES]; /* the metadata file's index at each tick: entry, or -1 */
    m_entry_t *entries;
    size_t nentries, cap;
    uint64_t done, flying; /* last tick published; tick in flight (0: none) */
    uint32_t lag;
    const vfdswmr_mdchange_t *changes;
    size_t nchanges;
    uint8_t *handed; /* copies of the images handed to the publish in flight */
} model_t;

#define M_CHECK(m, cond, ...)                                                              \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            print_error("seed %llu step %ld: ", (unsigned long long)(m)->seed, (m)->step); \
            fail_msg(__VA_ARGS__);                                                         \
        }                                                                                  \
    } while (0)

static uint32_t
m_rand(model_t *m, uint32_t n)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return (uint32_t)(m->rng % n);
}

static bool
m_meta(const model_t *m, size_t byte)
{
    return m->is_meta[byte / M_BLK];
}

static int
m_fill(void *ctx, uint64_t page, uint8_t *image)
{
    model_t *m = ctx;
    memcpy(image, m->file + page * PS, PS);
    return 0;
}

static int
m_store(void *ctx, uint64_t page, const uint8_t *image, size_t len)
{
    model_t *m = ctx;
    for (size_t i = 0; i < len; i++)
        M_CHECK(m, m_meta(m, page * PS + i) || image[i] == m->raw[page * PS + i],
                "a store of page %llu puts back a stale raw byte at %zu", (unsigned long long)page, i);
    memcpy(m->file + page * PS, image, len);
    return 0;
}

static void
m_check(model_t *m)
{
    uint8_t buf[PS];
    uint64_t newest = m->flying ? m->flying : m->done, header = m->flying ? m->flying - 1 : m->done;
    int64_t lo_marked = (int64_t)newest - m->lag + 1, lo_unmarked = (int64_t)header - M_MAXLAG + 1;
    int64_t lo = lo_marked < lo_unmarked ? lo_marked : lo_unmarked;

    for (uint64_t p = 0; p < M_PAGES; p++) { /* the writer's own reads */
        memcpy(buf, m->file + p * PS, PS);
        vfdswmr_pb_read(m->pb, p * PS, PS, buf);
        for (size_t i = 0, b = p * PS; i < PS; i++, b++)
            M_CHECK(m, buf[i] == (m_meta(m, b) ? m->cur[b] : m->raw[b]), "the writer reads byte %zu wrong", b);
    }
    for (uint64_t t = lo < 0 ? 0 : (uint64_t)lo; t <= newest; t++) /* readers */
        for (uint64_t p = 0; p < M_PAGES; p++) {
            int e = m->index[t][p];
            for (size_t i = 0, b = p * PS; i < PS; i++, b++)
                M_CHECK(m, !m_meta(m, b) || (e >= 0 ? m->entries[e].img[i] : m->file[b]) == m->state[t][b],
                        "a reader of tick %llu reads metadata byte %zu wrong from the %s (writer at %llu, lag %u)",
                        (unsigned long long)t, b, e >= 0 ? "metadata file" : "HDF5 file", (unsigned long long)newest,
                        m->lag);
        }
    for (int k = 0; k < (m->flying ? 2 : 1); k++) { /* recovery from the newest header */
        uint64_t t = k ? m->flying : m->done;
        for (uint64_t p = 0; p < M_PAGES; p++) {
            int e = m->index[t][p];
            for (size_t i = 0, b = p * PS; i < PS; i++, b++) {
                uint8_t v = e >= 0 && m->entries[e].meta[i] ? m->entries[e].img[i] : m->file[b];
                M_CHECK(m, v == (m_meta(m, b) ? m->state[t][b] : m->raw[b]),
                        "recovery to tick %llu makes byte %zu (%s) wrong", (unsigned long long)t, b,
                        m_meta(m, b) ? "metadata" : "raw data");
            }
        }
    }
}

static void
m_begin(model_t *m, bool all)
{
    const uint64_t *r;
    size_t nr;
    uint64_t t = m->done + 1;
    uint32_t lag = M_MAXLAG + m_rand(m, 3);

    assert_true(t < M_TICKS);
    assert_int_equal(vfdswmr_pb_prepare(m->pb, t, lag, all, &m->changes, &m->nchanges, &r, &nr), 0);
    m->lag = lag;
    assert_non_null(m->state[t] = malloc(sizeof m->cp));
    memcpy(m->state[t], m->cp, sizeof m->cp);
    memcpy(m->index[t], m->index[t - 1], sizeof m->index[t]);
    for (size_t i = 0; i < nr; i++) {
        M_CHECK(m, m->index[t][r[i]] >= 0, "page %llu leaves an index that does not name it", (unsigned long long)r[i]);
        m->index[t][r[i]] = -1;
    }
    assert_non_null(m->handed = realloc(m->handed, m->nchanges * PS + 1));
    for (size_t i = 0; i < m->nchanges; i++) {
        const vfdswmr_mdchange_t *c = &m->changes[i];
        if (m->nentries == m->cap)
            assert_non_null(m->entries = realloc(m->entries, (m->cap = m->cap ? 2 * m->cap : 64) * sizeof *m->entries));
        m_entry_t *e = &m->entries[m->nentries];
        memcpy(e->img, c->image, PS);
        memcpy(m->handed + i * PS, c->image, PS);
        memset(e->meta, 0, sizeof e->meta);
        for (uint32_t k = 0; k < c->nranges; k++)
            for (uint32_t j = 0; j < c->ranges[k].length; j++)
                e->meta[c->ranges[k].offset + j] = true;
        m->index[t][c->hdf5_page] = (int)m->nentries++;
    }
    m->flying = t;
}

static void
m_published(model_t *m)
{
    for (size_t i = 0; i < m->nchanges; i++)
        M_CHECK(m, memcmp(m->handed + i * PS, m->changes[i].image, PS) == 0,
                "the image of page %llu changed while it was being published",
                (unsigned long long)m->changes[i].hdf5_page);
    vfdswmr_pb_published(m->pb, m->flying);
    m->done = m->flying;
    m->flying = 0;
}

/* A metadata write over up to three metadata blocks, or a raw write in one
 * raw block; either may start and end inside its blocks. */
static void
m_write(model_t *m, bool meta)
{
    size_t blk = m_rand(m, M_PAGES * PS / M_BLK), n = 0, off, len;
    uint8_t v[3 * M_BLK];

    while (n < (meta ? 3 : 1) && blk + n < M_PAGES * PS / M_BLK && m->is_meta[blk + n] == meta)
        n++;
    if (n == 0)
        return;
    off = m_rand(m, M_BLK / 2);
    len = n * M_BLK - off - m_rand(m, M_BLK / 2);
    for (size_t i = 0; i < len; i++)
        v[i] = (uint8_t)m_rand(m, 256);
    off += blk * M_BLK;
    if (meta) {
        assert_int_equal(vfdswmr_pb_write(m->pb, off, len, v, m_fill, m), 0);
        memcpy(m->cur + off, v, len);
    }
    else {
        memcpy(m->file + off, v, len);
        memcpy(m->raw + off, v, len);
        assert_int_equal(vfdswmr_pb_write_raw(m->pb, off, len, v), 0);
    }
}

static void
m_store_due(model_t *m)
{
    assert_true(vfdswmr_pb_store_due(m->pb, m->done, m->lag, sizeof m->file, UINT64_MAX, m_store, m) >= 0);
}

static void
m_run(uint64_t seed, long steps)
{
    model_t *m = calloc(1, sizeof *m);

    assert_non_null(m);
    m->seed = seed;
    m->rng = seed * 2654435761u + 1;
    m->lag = M_MAXLAG;
    for (size_t i = 0; i < sizeof m->is_meta; i++)
        m->is_meta[i] = m_rand(m, 2);
    for (size_t i = 0; i < sizeof m->file; i++)
        m->file[i] = (uint8_t)m_rand(m, 256);
    memcpy(m->cur, m->file, sizeof m->file);
    memcpy(m->raw, m->file, sizeof m->file);
    memcpy(m->cp, m->file, sizeof m->file);
    assert_non_null(m->state[0] = malloc(sizeof m->cp));
    memcpy(m->state[0], m->cp, sizeof m->cp);
    memset(m->index, 0xff, sizeof m->index); /* -1: no entry */
    assert_non_null(m->pb = vfdswmr_pb_new(PS));
    for (m->step = 0; m->step < steps && m->done + 1 < M_TICKS / 2; m->step++) {
        uint32_t r = m_rand(m, 100);
        if (r < 30)
            m_write(m, true);
        else if (r < 45)
            m_write(m, false);
        else if (r < 55) {
            assert_int_equal(vfdswmr_pb_consistency_point(m->pb, sizeof m->file), 0);
            memcpy(m->cp, m->cur, sizeof m->cp);
        }
        else if (r < 70)
            m_store_due(m);
        else if (r < 85 && !m->flying)
            m_begin(m, false);
        else if (r >= 85 && m->flying)
            m_published(m);
        m_check(m);
    }
    /* close: the last consistency point, ticks until every page is due,
     * the stores, the empty index */
    if (m->flying)
        m_published(m);
    assert_int_equal(vfdswmr_pb_consistency_point(m->pb, sizeof m->file), 0);
    memcpy(m->cp, m->cur, sizeof m->cp);
    do {
        m_begin(m, false);
        m_published(m);
        m_store_due(m);
        m_check(m);
    } while (m->done < vfdswmr_pb_last_due_tick(m->pb, m->lag));
    m_begin(m, true);
    m_published(m);
    m_check(m);
    for (size_t b = 0; b < sizeof m->file; b++)
        M_CHECK(m, m->file[b] == (m_meta(m, b) ? m->cur[b] : m->raw[b]), "after close byte %zu is wrong", b);
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(m->pb, &st);
    M_CHECK(m, st.in_index == 0 && st.pages == 0, "after close %llu pages, %llu in the index",
            (unsigned long long)st.pages, (unsigned long long)st.in_index);
    vfdswmr_pb_destroy(m->pb);
    for (size_t t = 0; t < M_TICKS; t++)
        free(m->state[t]);
    free(m->entries);
    free(m->handed);
    free(m);
}

static void
test_in_flight_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 24; seed++)
        m_run(seed, 1200);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_read_overlay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_and_delayed_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removal_after_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_change_after_store_keeps_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_write_coherent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_ranges_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_freed_space_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_ranges_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_over_published_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_over_stored_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_old_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_current, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_flight_images_stable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_due_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_once_a_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removal_revived_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_in_flight_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_in_flight_removed, setup, teardown),
        cmocka_unit_test(test_in_flight_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
