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

#define PS 512u
#define FILE_PAGES 64u
#define MAX_LAG 3u

static uint8_t hdf5[FILE_PAGES * PS]; /* the model HDF5 file */
static unsigned stores;

static int
fill(void *ctx, uint64_t page, uint8_t *image)
{
    (void)ctx;
    memcpy(image, hdf5 + page * PS, PS);
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
        assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, store, NULL), 0);
    assert_int_equal(hdf5[5 * PS + 7], 105);
    assert_int_equal(vfdswmr_pb_store_due(pb, 2 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 1);
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
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 1);
    assert_int_equal(hdf5[9 * PS], 0x33);
    vfdswmr_pb_stats(pb, &st);
    assert_int_equal(st.images, 0); /* the file holds the current bytes: no image kept */
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
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 1);
    /* modified again: it is re-read from the HDF5 file, stays in the index */
    b = 2;
    assert_int_equal(vfdswmr_pb_write(pb, 3 * PS + 1, 1, &b, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    for (t = 2 + MAX_LAG; t < 10 + MAX_LAG; t++)
        publish(pb, t, 0, false); /* never removed while its newest image is not in the file */
    /* due at once: it has been in the index for max_lag ticks without a break */
    assert_int_equal(vfdswmr_pb_store_due(pb, t, MAX_LAG, FILE_PAGES * PS, store, NULL), 1);
    assert_int_equal(hdf5[3 * PS], 1);
    assert_int_equal(hdf5[3 * PS + 1], 2);
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
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 1);
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
    assert_int_equal(vfdswmr_pb_store_due(pb, 100, MAX_LAG, 20 * PS, store, NULL), 0);
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
    assert_int_equal(vfdswmr_pb_store_due(pb, 4 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 5);
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
    /* stored and re-read from the file: a fresh image knows no metadata */
    assert_int_equal(vfdswmr_pb_store_due(pb, 1 + MAX_LAG, MAX_LAG, FILE_PAGES * PS, store, NULL), 2);
    assert_int_equal(vfdswmr_pb_write(pb, 4 * PS + 500, 2, meta, fill, NULL), 0);
    assert_int_equal(vfdswmr_pb_consistency_point(pb, FILE_PAGES * PS), 0);
    assert_int_equal(vfdswmr_pb_prepare(pb, 2 + MAX_LAG, MAX_LAG, false, &c, &nc, &r, &nr), 0);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].nranges, 1);
    assert_int_equal(c[0].ranges[0].offset, 500);
    assert_int_equal(c[0].ranges[0].length, 2);
    vfdswmr_pb_published(pb, 2 + MAX_LAG);
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_read_overlay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_and_delayed_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removal_after_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_change_after_store_keeps_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_write_coherent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_freed_space_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_current, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
