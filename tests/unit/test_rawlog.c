/*
 * The raw-data write log (mdfile/rawlog.c) and its encoder/decoder: what a
 * reader asks for is listed exactly when the log is complete for it, and it
 * is told "cannot tell" (drop everything) otherwise -- another session, a
 * reader older than the window, a log not yet published that far, a torn or
 * missing file; the size cap drops old ticks or collapses one tick's ranges
 * into a covering one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testdir.h"

#include "format.h"
#include "rawlog.h"

static char md[256];

/* What the writer does at a publish: prepare, then write. */
static int
publish(vfdswmr_rawlog_t *l, uint64_t tick, uint64_t window)
{
    vfdswmr_rawlog_prepare(l, tick, window);
    return vfdswmr_rawlog_write(l);
}

struct got {
    uint64_t addr[16], len[16];
    unsigned n;
};

static void
collect(void *ctx, uint64_t addr, uint64_t len)
{
    struct got *g = ctx;
    if (g->n < 16) {
        g->addr[g->n] = addr;
        g->len[g->n] = len;
    }
    g->n++;
}

static int
ask(uint64_t session, uint64_t from, uint64_t to, struct got *g)
{
    memset(g, 0, sizeof *g);
    return vfdswmr_rawlog_read(md, session, from, to, collect, g);
}

static void
test_codec(void **state)
{
    vfdswmr_rawrange_t r[2] = {{5, 4096, 100}, {6, 0, 8}}, *d;
    vfdswmr_rawloghdr_t h = {.session = 77, .first_tick = 5, .last_tick = 6, .count = 2}, dh;
    uint8_t buf[200];

    (void)state;
    assert_int_equal(vfdswmr_rawlog_size(2), 36 + 48 + 4);
    vfdswmr_rawlog_encode(&h, r, buf);
    assert_memory_equal(buf, "VRAW", 4);
    assert_int_equal(vfdswmr_rawlog_decode(buf, vfdswmr_rawlog_size(2), &dh, &d), VFDSWMR_MD_OK);
    assert_true(dh.session == 77 && dh.first_tick == 5 && dh.last_tick == 6 && dh.count == 2);
    assert_true(d[0].tick == 5 && d[0].addr == 4096 && d[0].len == 100 && d[1].tick == 6 && d[1].len == 8);
    free(d);
    /* a longer earlier log under it is fine */
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_OK);
    free(d);
    assert_int_equal(vfdswmr_rawlog_decode(buf, vfdswmr_rawlog_size(2) - 1, &dh, &d), VFDSWMR_MD_ESHORT);
    assert_null(d);
    buf[50] ^= 1;
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_ECHECKSUM);
    buf[50] ^= 1;
    r[1].tick = 9; /* outside first .. last */
    vfdswmr_rawlog_encode(&h, r, buf);
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_ETICK);
    r[1].tick = 6;
    r[1].len = 0;
    vfdswmr_rawlog_encode(&h, r, buf);
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_ERANGE);
    uint32_t big = VFDSWMR_RAWLOG_MAX + 1; /* count at offset 32, little-endian */
    buf[32] = (uint8_t)big;
    buf[33] = (uint8_t)(big >> 8);
    buf[34] = (uint8_t)(big >> 16);
    buf[35] = (uint8_t)(big >> 24);
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_ECOUNT);
    buf[4] = 2;
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_EVERSION);
    buf[0] = 'X';
    assert_int_equal(vfdswmr_rawlog_decode(buf, sizeof buf, &dh, &d), VFDSWMR_MD_EMAGIC);
}

static void
test_window(void **state)
{
    vfdswmr_rawlog_t *l;
    struct got g;

    (void)state;
    assert_int_equal(ask(9, 0, 0, &g), 0); /* no log */
    assert_int_equal(vfdswmr_rawlog_create(md, 9, &l), 0);
    assert_int_equal(ask(9, 0, 0, &g), 1); /* nothing written yet */
    vfdswmr_rawlog_add(l, 1, 1000, 10);
    vfdswmr_rawlog_add(l, 1, 1010, 10); /* an append: one range */
    vfdswmr_rawlog_add(l, 2, 5000, 1);  /* tick 2 is not published yet */
    assert_int_equal(publish(l, 1, 10), 0);
    assert_int_equal(ask(9, 0, 1, &g), 1);
    assert_int_equal(g.n, 1);
    assert_true(g.addr[0] == 1000 && g.len[0] == 20);
    assert_int_equal(ask(9, 0, 2, &g), 0); /* not published that far */
    assert_int_equal(ask(8, 0, 1, &g), 0); /* another session */
    assert_int_equal(publish(l, 2, 10), 0);
    assert_int_equal(ask(9, 1, 2, &g), 1);
    assert_true(g.n == 1 && g.addr[0] == 5000);
    assert_int_equal(ask(9, 0, 2, &g), 1);
    assert_int_equal(g.n, 2);
    /* a window of 2 ticks at tick 4: ticks 3 and 4 only */
    vfdswmr_rawlog_add(l, 3, 7000, 5);
    assert_int_equal(publish(l, 4, 2), 0);
    assert_int_equal(ask(9, 2, 4, &g), 1);
    assert_true(g.n == 1 && g.addr[0] == 7000);
    assert_int_equal(ask(9, 1, 4, &g), 0); /* tick 2's writes are gone: cannot tell */
    /* a torn log: cannot tell */
    char path[300];
    assert_int_equal(vfdswmr_rawlog_name(path, sizeof path, md), 0);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "X", 1, 40), 1);
    close(fd);
    assert_int_equal(ask(9, 2, 4, &g), 0);
    vfdswmr_rawlog_close(l);
    assert_int_equal(access(path, F_OK), -1);
}

static void
test_cap(void **state)
{
    vfdswmr_rawlog_t *l;
    struct got g;

    (void)state;
    assert_int_equal(vfdswmr_rawlog_create(md, 3, &l), 0);
    for (uint64_t i = 0; i < VFDSWMR_RAWLOG_CAP; i++)
        vfdswmr_rawlog_add(l, 1, i * 100, 10); /* not adjacent: one range each */
    vfdswmr_rawlog_add(l, 2, 10, 1);           /* full: tick 1 goes */
    assert_int_equal(publish(l, 2, 100), 0);
    assert_int_equal(ask(3, 0, 2, &g), 0); /* tick 1 no longer listed */
    assert_int_equal(ask(3, 1, 2, &g), 1);
    assert_true(g.n == 1 && g.addr[0] == 10);
    for (uint64_t i = 0; i < VFDSWMR_RAWLOG_CAP + 5; i++)
        vfdswmr_rawlog_add(l, 3, 1000000 + i * 100, 10); /* one tick over the cap: collapsed */
    assert_int_equal(publish(l, 3, 100), 0);
    assert_int_equal(ask(3, 2, 3, &g), 1);
    /* whatever the shape, the ranges cover every write of tick 3 */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned i = 0; i < g.n && i < 16; i++) {
        lo = g.addr[i] < lo ? g.addr[i] : lo;
        hi = g.addr[i] + g.len[i] > hi ? g.addr[i] + g.len[i] : hi;
    }
    assert_true(g.n <= 16 && lo <= 1000000 && hi >= 1000000 + (VFDSWMR_RAWLOG_CAP + 4) * 100 + 10);
    vfdswmr_rawlog_close(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_cap),
    };
    if (testdir_setup(NULL) < 0)
        return 1;
    snprintf(md, sizeof md, "%s/f.h5.md", dir);
    return cmocka_run_group_tests(tests, NULL, testdir_teardown);
}
