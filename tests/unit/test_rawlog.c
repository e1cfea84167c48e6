/*
 * The raw-data write log (mdfile/rawlog.c) and its encoder/decoder: what a
 * reader asks for is listed exactly when the log is complete for it, and it
 * is told "cannot tell" (drop everything) otherwise -- another session, a
 * reader older than the window, a log not yet published that far, a torn or
 * missing file; the size cap drops old ticks or collapses one tick's ranges
 * into a covering one.
 *
 * Also the other side structure written beside the metadata file, the kept
 * old bytes list ("VKPT", mdfile/kept.c, in "<metadata file>.readers"): its
 * encoder and decoder (every field, every error, each bad input made from a
 * good list and resealed where the check lies past the checksum) and its
 * I/O on a real file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testdir.h"

#include "checksum.h"
#include "format.h"
#include "kept.h"
#include "le.h"
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
    assert_int_equal(vfdswmr_rawlog_create(md, 9, 1, &l), 0);
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

/* A log created mid-session (a reader registered at tick 5, after the
 * writer wrote in tick 5 unlogged): it lists ticks 6 on, so a reader asking
 * about tick 5 or earlier cannot be told, and one from 5 on can. */
static void
test_created_late(void **state)
{
    vfdswmr_rawlog_t *l;
    struct got g;

    (void)state;
    assert_int_equal(vfdswmr_rawlog_create(md, 4, 6, &l), 0);
    assert_int_equal(ask(4, 5, 5, &g), 1);  /* nothing in ticks 6 .. 5 */
    assert_int_equal(ask(4, 4, 5, &g), 0);  /* tick 5 was not logged */
    assert_int_equal(publish(l, 5, 10), 0); /* published at tick 5 */
    assert_int_equal(ask(4, 4, 5, &g), 0);
    vfdswmr_rawlog_add(l, 6, 300, 7);
    assert_int_equal(publish(l, 6, 10), 0);
    assert_int_equal(ask(4, 5, 6, &g), 1);
    assert_true(g.n == 1 && g.addr[0] == 300 && g.len[0] == 7);
    assert_int_equal(ask(4, 4, 6, &g), 0);
    assert_int_equal(ask(4, 0, 6, &g), 0);
    vfdswmr_rawlog_close(l);
}

static void
test_cap(void **state)
{
    vfdswmr_rawlog_t *l;
    struct got g;

    (void)state;
    assert_int_equal(vfdswmr_rawlog_create(md, 3, 1, &l), 0);
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

/* ---- kept old bytes ("VKPT") ------------------------------------------------ */

/* Byte offsets of the list, from docs/FORMAT.md. */
#define K_VERSION 4
#define K_SESSION 8
#define K_COUNT   16
#define K_ENT(i)  (20 + 32 * (size_t)(i)) /* entry i */
#define K_ADDR    0                       /* ... and its fields */
#define K_LEN     8
#define K_TICK    16
#define K_DATA    24
#define KMIN      VFDSWMR_KEPT_DATA_OFFSET /* the data_min readers pass */
#define KSESSION  UINT64_C(0x8877665544332211)
#define TOP       (UINT64_C(1) << 63)

/* n valid entries, every field different, ticks non-decreasing with ties
 * (3, 3, 4, 4, ...), the first copy at KMIN exactly. */
static void
kept_fill(vfdswmr_keptent_t *e, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        e[i] = (vfdswmr_keptent_t){
            .addr = 4096 * (uint64_t)i + 7, .len = 100 + i, .tick = 3 + i / 2, .data = KMIN + 1000 * (uint64_t)i};
}

/* The kept_fill list of n entries, session KSESSION, encoded into buf. */
static void
kept_good(uint8_t *buf, uint32_t n)
{
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];
    vfdswmr_kepthdr_t h = {.session = KSESSION, .count = n};

    kept_fill(e, n);
    vfdswmr_kept_encode(&h, e, buf);
}

/* Recomputes the checksum of a list of n entries in buf. */
static void
kept_reseal(uint8_t *buf, uint32_t n)
{
    size_t end = vfdswmr_kept_size(n) - 4;
    vfdswmr_le_encode(buf + end, vfdswmr_checksum(buf, end), 4);
}

/* Overwrites the nbytes field at off of a list of n entries, then reseals it. */
static void
kept_patch(uint8_t *buf, uint32_t n, size_t off, uint64_t v, unsigned nbytes)
{
    vfdswmr_le_encode(buf + off, v, nbytes);
    kept_reseal(buf, n);
}

/* Field f of entry k of a list of n entries := v, resealed. */
static void
kept_set(uint8_t *buf, uint32_t n, uint32_t k, size_t f, uint64_t v)
{
    kept_patch(buf, n, K_ENT(k) + f, v, 8);
}

/* Decodes a copy of buf[0, len) in an allocation of exactly len bytes (so
 * that a sanitizer build sees any read past it); a failure must leave the
 * header zeroed and write no entry past the list's count. */
static vfdswmr_mderr_t
kept_dec(const uint8_t *buf, size_t len, uint64_t data_min)
{
    vfdswmr_kepthdr_t h = {.session = 1, .count = 1};
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX + 1], canary;
    uint8_t *b = malloc(len ? len : 1);
    vfdswmr_mderr_t err;

    assert_non_null(b);
    memcpy(b, buf, len);
    memset(e, 0x5a, sizeof e);
    canary = e[VFDSWMR_KEPT_MAX];
    err = vfdswmr_kept_decode(b, len, data_min, &h, e);
    free(b);
    assert_memory_equal(&e[VFDSWMR_KEPT_MAX], &canary, sizeof canary);
    if (err != VFDSWMR_MD_OK) {
        assert_int_equal(h.session, 0);
        assert_int_equal(h.count, 0);
    }
    return err;
}

static void
assert_kept_equal(const vfdswmr_keptent_t *a, const vfdswmr_keptent_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(a[i].addr, b[i].addr);
        assert_int_equal(a[i].len, b[i].len);
        assert_int_equal(a[i].tick, b[i].tick);
        assert_int_equal(a[i].data, b[i].data);
    }
}

/* Every byte where docs/FORMAT.md puts it; the sizes. */
static void
test_kept_layout(void **state)
{
    vfdswmr_kepthdr_t h = {.session = UINT64_C(0x0102030405060708), .count = 1}, dh;
    vfdswmr_keptent_t e = {.addr = UINT64_C(0x1112131415161718),
                           .len = UINT64_C(0x2122232425262728),
                           .tick = UINT64_C(0x3132333435363738),
                           .data = UINT64_C(0x4142434445464748)},
                      de[VFDSWMR_KEPT_MAX];
    uint8_t buf[64];

    (void)state;
    assert_int_equal(VFDSWMR_KEPT_HDR_SIZE, 20);
    assert_int_equal(VFDSWMR_KEPT_ENTRY_SIZE, 32);
    assert_int_equal(vfdswmr_kept_size(0), 24);
    assert_int_equal(vfdswmr_kept_size(1), 56);
    assert_int_equal(vfdswmr_kept_size(VFDSWMR_KEPT_MAX), 20 + 32 * 64 + 4);
    assert_true(vfdswmr_kept_size(VFDSWMR_KEPT_MAX) <= VFDSWMR_KEPT_LIST_SPACE);
    assert_true(KMIN == VFDSWMR_KEPT_LIST_OFFSET + VFDSWMR_KEPT_LIST_SPACE);
    assert_true(VFDSWMR_KEPT_LIST_OFFSET == 2u << 20 && KMIN == (2u << 20) + 4096);
    memset(buf, 0xee, sizeof buf);
    vfdswmr_kept_encode(&h, &e, buf);
    assert_memory_equal(buf, "VKPT", 4);
    assert_int_equal(vfdswmr_le_decode(buf + K_VERSION, 4), 1);
    assert_int_equal(vfdswmr_le_decode(buf + K_SESSION, 8), h.session);
    assert_int_equal(vfdswmr_le_decode(buf + K_COUNT, 4), 1);
    /* little-endian: lowest byte first */
    assert_int_equal(buf[K_SESSION], 0x08);
    assert_int_equal(buf[K_ENT(0) + K_ADDR], 0x18);
    assert_int_equal(vfdswmr_le_decode(buf + K_ENT(0) + K_ADDR, 8), e.addr);
    assert_int_equal(vfdswmr_le_decode(buf + K_ENT(0) + K_LEN, 8), e.len);
    assert_int_equal(vfdswmr_le_decode(buf + K_ENT(0) + K_TICK, 8), e.tick);
    assert_int_equal(vfdswmr_le_decode(buf + K_ENT(0) + K_DATA, 8), e.data);
    assert_int_equal(vfdswmr_le_decode(buf + 52, 4), vfdswmr_checksum(buf, 52));
    for (size_t i = 56; i < sizeof buf; i++) /* exactly vfdswmr_kept_size(1) bytes */
        assert_int_equal(buf[i], 0xee);
    assert_int_equal(vfdswmr_kept_decode(buf, 56, KMIN, &dh, de), VFDSWMR_MD_OK);
    assert_int_equal(dh.session, h.session);
    assert_int_equal(dh.count, 1);
    assert_kept_equal(de, &e, 1);
}

/* 0, 1 and VFDSWMR_KEPT_MAX entries, exact and longer buffers. */
static void
test_kept_roundtrip(void **state)
{
    static const uint32_t counts[] = {0, 1, 2, VFDSWMR_KEPT_MAX};
    vfdswmr_keptent_t in[VFDSWMR_KEPT_MAX], out[VFDSWMR_KEPT_MAX], junk;
    vfdswmr_kepthdr_t h, dh;
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];

    (void)state;
    kept_fill(in, VFDSWMR_KEPT_MAX);
    memset(&junk, 0x5a, sizeof junk);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t n = counts[c];
        size_t size = vfdswmr_kept_size(n), lens[] = {size, size + 1, sizeof buf};

        h = (vfdswmr_kepthdr_t){.session = KSESSION + n, .count = n};
        memset(buf, 0xa5, sizeof buf); /* after the list: bytes of anything */
        vfdswmr_kept_encode(&h, in, buf);
        assert_int_equal(buf[size], 0xa5);
        for (size_t l = 0; l < 3; l++) {
            memset(&dh, 0xff, sizeof dh);
            memset(out, 0x5a, sizeof out);
            assert_int_equal(vfdswmr_kept_decode(buf, lens[l], KMIN, &dh, out), VFDSWMR_MD_OK);
            assert_int_equal(dh.session, KSESSION + n);
            assert_int_equal(dh.count, n);
            assert_kept_equal(out, in, n);
            for (uint32_t i = n; i < VFDSWMR_KEPT_MAX; i++) /* nothing written past the count */
                assert_memory_equal(&out[i], &junk, sizeof junk);
            assert_int_equal(kept_dec(buf, lens[l], KMIN), VFDSWMR_MD_OK);
        }
    }
    /* a shorter list written over a longer one: the count says where it ends */
    h = (vfdswmr_kepthdr_t){.session = 1, .count = VFDSWMR_KEPT_MAX};
    vfdswmr_kept_encode(&h, in, buf);
    h = (vfdswmr_kepthdr_t){.session = 2, .count = 1};
    vfdswmr_kept_encode(&h, in + 5, buf);
    assert_int_equal(vfdswmr_kept_decode(buf, sizeof buf, KMIN, &dh, out), VFDSWMR_MD_OK);
    assert_true(dh.session == 2 && dh.count == 1);
    assert_kept_equal(out, in + 5, 1);
}

/* The edges every field may reach. */
static void
test_kept_extremes(void **state)
{
    vfdswmr_keptent_t in[3] = {{.addr = 0, .len = 1, .tick = 0, .data = 0},                   /* data_min 0 */
                               {.addr = TOP - 10, .len = 10, .tick = 0, .data = TOP - 10},    /* both end at 2^63 */
                               {.addr = 0, .len = TOP, .tick = VFDSWMR_TICK_MAX, .data = 0}}, /* the longest */
        out[VFDSWMR_KEPT_MAX];
    vfdswmr_kepthdr_t h = {.session = UINT64_MAX, .count = 3}, dh;
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];

    (void)state;
    vfdswmr_kept_encode(&h, in, buf);
    assert_int_equal(vfdswmr_kept_decode(buf, vfdswmr_kept_size(3), 0, &dh, out), VFDSWMR_MD_OK);
    assert_true(dh.session == UINT64_MAX && dh.count == 3);
    assert_kept_equal(out, in, 3);
    /* the same with data_min 1: the copy at 0 is below it */
    assert_int_equal(kept_dec(buf, vfdswmr_kept_size(3), 1), VFDSWMR_MD_ERANGE);
    h.session = 0; /* a session of 0 is a valid field (the reader compares it) */
    h.count = 0;
    vfdswmr_kept_encode(&h, in, buf);
    assert_int_equal(vfdswmr_kept_decode(buf, vfdswmr_kept_size(0), UINT64_MAX, &dh, out), VFDSWMR_MD_OK);
    assert_true(dh.session == 0 && dh.count == 0);
}

/* ESHORT: the header, then the entries and checksum the count states. */
static void
test_kept_short(void **state)
{
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    size_t s2 = vfdswmr_kept_size(2), smax = vfdswmr_kept_size(VFDSWMR_KEPT_MAX);

    (void)state;
    kept_good(buf, 0);
    for (size_t len = 0; len < 24; len++) /* header cut, then its checksum */
        assert_int_equal(kept_dec(buf, len, KMIN), VFDSWMR_MD_ESHORT);
    assert_int_equal(kept_dec(buf, 24, KMIN), VFDSWMR_MD_OK);
    buf[0] = 'X';
    assert_int_equal(kept_dec(buf, 19, KMIN), VFDSWMR_MD_ESHORT); /* length first */
    kept_good(buf, 2);
    for (size_t len = s2 - 4; len < s2; len++) /* the entries are there, the checksum is not */
        assert_int_equal(kept_dec(buf, len, KMIN), VFDSWMR_MD_ESHORT);
    kept_good(buf, VFDSWMR_KEPT_MAX);
    assert_int_equal(kept_dec(buf, smax - 1, KMIN), VFDSWMR_MD_ESHORT);
    assert_int_equal(kept_dec(buf, smax, KMIN), VFDSWMR_MD_OK);
}

/* EMAGIC and EVERSION, checked before the count and the checksum. */
static void
test_kept_magic_version(void **state)
{
    static const uint32_t versions[] = {0, 2, 0x100 | 1, UINT32_MAX};
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    size_t s = vfdswmr_kept_size(2);

    (void)state;
    kept_good(buf, 2);
    memcpy(buf, "VRAW", 4);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EMAGIC);
    kept_reseal(buf, 2);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EMAGIC);
    memcpy(buf, "vkpt", 4);
    kept_reseal(buf, 2);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EMAGIC);
    memset(buf, 0, sizeof buf); /* never written */
    assert_int_equal(kept_dec(buf, sizeof buf, KMIN), VFDSWMR_MD_EMAGIC);
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        kept_good(buf, 2);
        vfdswmr_le_encode(buf + K_VERSION, versions[v], 4); /* checksum now wrong too */
        assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EVERSION);
        kept_reseal(buf, 2);
        assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EVERSION);
        vfdswmr_le_encode(buf + K_COUNT, VFDSWMR_KEPT_MAX + 1, 4); /* version before count */
        assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EVERSION);
        memcpy(buf, "XKPT", 4); /* signature before version */
        assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_EMAGIC);
    }
}

/* ECOUNT: over VFDSWMR_KEPT_MAX, or more entries than the buffer holds. */
static void
test_kept_count(void **state)
{
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    vfdswmr_kepthdr_t dh;
    vfdswmr_keptent_t in[VFDSWMR_KEPT_MAX], out[VFDSWMR_KEPT_MAX];
    size_t s2 = vfdswmr_kept_size(2), big = vfdswmr_kept_size(VFDSWMR_KEPT_MAX + 1);

    (void)state;
    assert_true(big <= sizeof buf);
    /* a whole list of VFDSWMR_KEPT_MAX + 1 entries, sealed: refused for its count alone */
    kept_good(buf, VFDSWMR_KEPT_MAX);
    memcpy(buf + big - 4 - 32, buf + K_ENT(VFDSWMR_KEPT_MAX - 1), 32);
    kept_patch(buf, VFDSWMR_KEPT_MAX + 1, K_COUNT, VFDSWMR_KEPT_MAX + 1, 4);
    assert_int_equal(vfdswmr_le_decode(buf + big - 4, 4), vfdswmr_checksum(buf, big - 4));
    assert_int_equal(kept_dec(buf, big, KMIN), VFDSWMR_MD_ECOUNT);
    assert_int_equal(kept_dec(buf, sizeof buf, KMIN), VFDSWMR_MD_ECOUNT);
    vfdswmr_le_encode(buf + K_COUNT, UINT32_MAX, 4);
    assert_int_equal(kept_dec(buf, sizeof buf, KMIN), VFDSWMR_MD_ECOUNT);
    vfdswmr_le_encode(buf + K_COUNT, UINT32_C(1) << 31, 4);
    assert_int_equal(kept_dec(buf, sizeof buf, KMIN), VFDSWMR_MD_ECOUNT);
    /* a count the buffer cannot hold: 3 entries in a 2-entry list */
    kept_good(buf, 2);
    vfdswmr_le_encode(buf + K_COUNT, 3, 4);
    assert_int_equal(kept_dec(buf, s2, KMIN), VFDSWMR_MD_ECOUNT);
    assert_int_equal(kept_dec(buf, vfdswmr_kept_size(3) - 5, KMIN), VFDSWMR_MD_ECOUNT);
    assert_int_equal(kept_dec(buf, vfdswmr_kept_size(3) - 4, KMIN), VFDSWMR_MD_ESHORT); /* entries fit */
    /* the buffer cut inside the last entry the count states */
    kept_good(buf, 2);
    assert_int_equal(kept_dec(buf, K_ENT(2) - 1, KMIN), VFDSWMR_MD_ECOUNT);
    assert_int_equal(kept_dec(buf, K_ENT(1), KMIN), VFDSWMR_MD_ECOUNT);
    assert_int_equal(kept_dec(buf, K_ENT(0), KMIN), VFDSWMR_MD_ECOUNT);
    kept_good(buf, VFDSWMR_KEPT_MAX);
    assert_int_equal(kept_dec(buf, K_ENT(VFDSWMR_KEPT_MAX) - 1, KMIN), VFDSWMR_MD_ECOUNT);
    /* a smaller count, resealed where it says: the first entries alone */
    kept_good(buf, 2);
    vfdswmr_le_encode(buf + K_COUNT, 1, 4);
    assert_int_equal(kept_dec(buf, s2, KMIN), VFDSWMR_MD_ECHECKSUM);
    kept_reseal(buf, 1);
    kept_fill(in, 2);
    assert_int_equal(vfdswmr_kept_decode(buf, s2, KMIN, &dh, out), VFDSWMR_MD_OK);
    assert_true(dh.session == KSESSION && dh.count == 1);
    assert_kept_equal(out, in, 1);
}

/* ECHECKSUM: any byte changed, outside the fields checked before it. */
static void
test_kept_checksum(void **state)
{
    uint8_t good[VFDSWMR_KEPT_LIST_SPACE], buf[VFDSWMR_KEPT_LIST_SPACE];
    size_t s = vfdswmr_kept_size(3);

    (void)state;
    kept_good(good, 3);
    for (size_t off = 0; off < s; off++)
        for (unsigned bit = 0; bit < 8; bit++) {
            vfdswmr_mderr_t want = VFDSWMR_MD_ECHECKSUM;
            memcpy(buf, good, s);
            buf[off] ^= (uint8_t)(1u << bit);
            if (off < 4)
                want = VFDSWMR_MD_EMAGIC;
            else if (off < K_SESSION)
                want = VFDSWMR_MD_EVERSION;
            else if (off >= K_COUNT && off < K_ENT(0) && vfdswmr_le_decode(buf + K_COUNT, 4) > 3)
                want = VFDSWMR_MD_ECOUNT; /* fewer than 3: the checksum is not where the count says */
            assert_int_equal(kept_dec(buf, s, KMIN), want);
        }
    /* a field the decoder would refuse, not resealed: the checksum first */
    kept_good(buf, 3);
    vfdswmr_le_encode(buf + K_ENT(1) + K_LEN, 0, 8);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ECHECKSUM);
    vfdswmr_le_encode(buf + K_ENT(1) + K_TICK, UINT64_MAX, 8);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ECHECKSUM);
    kept_reseal(buf, 3);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
}

/* ETICK: a tick over VFDSWMR_TICK_MAX, or below the previous entry's. */
static void
test_kept_tick(void **state)
{
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    size_t s = vfdswmr_kept_size(3), smax = vfdswmr_kept_size(VFDSWMR_KEPT_MAX);
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];

    (void)state;
    kept_fill(e, VFDSWMR_KEPT_MAX);
    assert_true(e[0].tick == e[1].tick && e[2].tick == e[1].tick + 1); /* ties are fine */
    kept_good(buf, 3);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_OK);
    kept_set(buf, 3, 2, K_TICK, VFDSWMR_TICK_MAX); /* the largest */
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_OK);
    kept_set(buf, 3, 2, K_TICK, VFDSWMR_TICK_MAX + 1);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    kept_set(buf, 3, 2, K_TICK, UINT64_MAX);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    kept_good(buf, 3);
    kept_set(buf, 3, 0, K_TICK, VFDSWMR_TICK_MAX + 1); /* the first entry too */
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    /* going down */
    kept_good(buf, 3);
    kept_set(buf, 3, 1, K_TICK, e[0].tick - 1);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    kept_good(buf, 3);
    kept_set(buf, 3, 2, K_TICK, e[1].tick - 1);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    kept_good(buf, 3);
    kept_set(buf, 3, 0, K_TICK, VFDSWMR_TICK_MAX); /* above all later ones */
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ETICK);
    kept_set(buf, 3, 0, K_TICK, 0); /* back in order */
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_OK);
    /* the last of the longest list is checked too */
    kept_good(buf, VFDSWMR_KEPT_MAX);
    kept_set(buf, VFDSWMR_KEPT_MAX, VFDSWMR_KEPT_MAX - 1, K_TICK, e[VFDSWMR_KEPT_MAX - 2].tick - 1);
    assert_int_equal(kept_dec(buf, smax, KMIN), VFDSWMR_MD_ETICK);
    /* entries in order: an earlier entry's problem is the one reported */
    kept_good(buf, 3);
    kept_set(buf, 3, 0, K_LEN, 0);
    kept_set(buf, 3, 2, K_TICK, UINT64_MAX);
    assert_int_equal(kept_dec(buf, s, KMIN), VFDSWMR_MD_ERANGE);
}

/* ERANGE: length 0, bytes past 2^63 in the HDF5 file or in the .readers
 * file, copies below data_min. */
static void
test_kept_range(void **state)
{
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    size_t s = vfdswmr_kept_size(3), smax = vfdswmr_kept_size(VFDSWMR_KEPT_MAX);
    const uint32_t k = 1; /* the entry changed: addr 4103, len 101, data KMIN + 1000 */

    (void)state;
#define KEPT_CASE(field, value, min, want)             \
    do {                                               \
        kept_good(buf, 3);                             \
        kept_set(buf, 3, k, field, value);             \
        assert_int_equal(kept_dec(buf, s, min), want); \
    } while (0)
    /* length */
    KEPT_CASE(K_LEN, 0, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_LEN, 1, KMIN, VFDSWMR_MD_OK);
    /* addr + len: up to 2^63 */
    KEPT_CASE(K_ADDR, TOP - 101, KMIN, VFDSWMR_MD_OK);
    KEPT_CASE(K_ADDR, TOP - 100, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_ADDR, TOP, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_ADDR, UINT64_MAX - 50, KMIN, VFDSWMR_MD_ERANGE); /* past 2^64 */
    KEPT_CASE(K_ADDR, UINT64_MAX, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_LEN, TOP - 4103, 0, VFDSWMR_MD_ERANGE); /* addr + len is 2^63, data + len past it */
    kept_good(buf, 3);
    kept_set(buf, 3, k, K_DATA, 0);
    kept_set(buf, 3, k, K_LEN, TOP - 4103);
    assert_int_equal(kept_dec(buf, s, 0), VFDSWMR_MD_OK);
    kept_set(buf, 3, k, K_LEN, TOP - 4102);
    assert_int_equal(kept_dec(buf, s, 0), VFDSWMR_MD_ERANGE);
    kept_set(buf, 3, k, K_LEN, UINT64_MAX);
    assert_int_equal(kept_dec(buf, s, 0), VFDSWMR_MD_ERANGE);
    /* data below data_min */
    KEPT_CASE(K_DATA, KMIN - 1, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_DATA, KMIN, KMIN, VFDSWMR_MD_OK);
    KEPT_CASE(K_DATA, 0, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_DATA, 0, 0, VFDSWMR_MD_OK);
    kept_good(buf, 3); /* entry 0's copy is at KMIN exactly */
    assert_int_equal(kept_dec(buf, s, KMIN + 1), VFDSWMR_MD_ERANGE);
    assert_int_equal(kept_dec(buf, s, UINT64_MAX), VFDSWMR_MD_ERANGE);
    /* data + len: up to 2^63 */
    KEPT_CASE(K_DATA, TOP - 101, KMIN, VFDSWMR_MD_OK);
    KEPT_CASE(K_DATA, TOP - 100, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_DATA, TOP, KMIN, VFDSWMR_MD_ERANGE);
    KEPT_CASE(K_DATA, UINT64_MAX - 50, KMIN, VFDSWMR_MD_ERANGE); /* past 2^64 */
    KEPT_CASE(K_DATA, UINT64_MAX, KMIN, VFDSWMR_MD_ERANGE);
#undef KEPT_CASE
    /* the last entry of the longest list */
    kept_good(buf, VFDSWMR_KEPT_MAX);
    kept_set(buf, VFDSWMR_KEPT_MAX, VFDSWMR_KEPT_MAX - 1, K_LEN, 0);
    assert_int_equal(kept_dec(buf, smax, KMIN), VFDSWMR_MD_ERANGE);
    kept_good(buf, VFDSWMR_KEPT_MAX);
    kept_set(buf, VFDSWMR_KEPT_MAX, VFDSWMR_KEPT_MAX - 1, K_DATA, KMIN - 1);
    assert_int_equal(kept_dec(buf, smax, KMIN), VFDSWMR_MD_ERANGE);
}

/* vfdswmr_kept_write_list / vfdswmr_kept_read_list on a real file. */
static void
test_kept_file(void **state)
{
    char path[300];
    uint8_t table[VFDSWMR_MARKSHDR_SIZE], got[VFDSWMR_KEPT_LIST_SPACE], want[VFDSWMR_KEPT_LIST_SPACE];
    vfdswmr_markshdr_t mh = {.session = 77, .release_below = 0, .nslots = 64};
    vfdswmr_keptent_t in[VFDSWMR_KEPT_MAX], e[VFDSWMR_KEPT_MAX];
    vfdswmr_kepthdr_t h;
    struct stat st;
    int fd;

    (void)state;
    kept_fill(in, VFDSWMR_KEPT_MAX);
    snprintf(path, sizeof path, "%s/kept.h5.md.readers", dir);
    assert_true((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) >= 0);
    /* an empty file: nothing kept */
    h = (vfdswmr_kepthdr_t){.session = 9, .count = 9};
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 0 && h.count == 0);
    /* a read-mark table only, ending before the list */
    vfdswmr_markshdr_encode(&mh, table);
    assert_int_equal(vfdswmr_pwrite_all(fd, table, sizeof table, 0), 0);
    assert_int_equal(ftruncate(fd, VFDSWMR_MARKSHDR_SIZE + 64 * VFDSWMR_MARKSLOT_SIZE), 0);
    h = (vfdswmr_kepthdr_t){.session = 9, .count = 9};
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 0 && h.count == 0);
    /* zeros where the list would be */
    assert_int_equal(ftruncate(fd, (off_t)(KMIN + 4096)), 0);
    h = (vfdswmr_kepthdr_t){.session = 9, .count = 9};
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 0 && h.count == 0);

    /* a written list: its bytes at VFDSWMR_KEPT_LIST_OFFSET, the table untouched */
    assert_int_equal(ftruncate(fd, VFDSWMR_MARKSHDR_SIZE + 64 * VFDSWMR_MARKSLOT_SIZE), 0);
    assert_int_equal(vfdswmr_kept_write_list(fd, 77, in, 3), 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, VFDSWMR_KEPT_LIST_OFFSET + vfdswmr_kept_size(3));
    h = (vfdswmr_kepthdr_t){.session = 77, .count = 3};
    vfdswmr_kept_encode(&h, in, want);
    assert_int_equal(vfdswmr_pread_all(fd, got, vfdswmr_kept_size(3), VFDSWMR_KEPT_LIST_OFFSET), 0);
    assert_memory_equal(got, want, vfdswmr_kept_size(3));
    assert_int_equal(vfdswmr_pread_all(fd, got, sizeof table, 0), 0);
    assert_memory_equal(got, table, sizeof table);
    memset(&h, 0xff, sizeof h);
    memset(e, 0, sizeof e);
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 77 && h.count == 3);
    assert_kept_equal(e, in, 3);
    /* rewritten in place, shorter: the old list's tail stays under it */
    assert_int_equal(vfdswmr_kept_write_list(fd, 77, in + 1, 1), 0);
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 77 && h.count == 1);
    assert_kept_equal(e, in + 1, 1);
    /* the longest */
    assert_int_equal(vfdswmr_kept_write_list(fd, 78, in, VFDSWMR_KEPT_MAX), 0);
    memset(e, 0, sizeof e);
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 78 && h.count == VFDSWMR_KEPT_MAX);
    assert_kept_equal(e, in, VFDSWMR_KEPT_MAX);
    /* an empty list of a session is not "never written": it names the session */
    assert_int_equal(vfdswmr_kept_write_list(fd, 79, in, 0), 0);
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 79 && h.count == 0);

    /* garbage where the list is: EIO after the retries */
    assert_int_equal(vfdswmr_kept_write_list(fd, 80, in, 3), 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, "\xff", 1, VFDSWMR_KEPT_LIST_OFFSET + K_ENT(1) + K_LEN), 0);
    errno = 0;
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), -1);
    assert_int_equal(errno, EIO);
    memset(got, 0xa5, sizeof got);
    assert_int_equal(vfdswmr_pwrite_all(fd, got, sizeof got, VFDSWMR_KEPT_LIST_OFFSET), 0);
    errno = 0;
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), -1);
    assert_int_equal(errno, EIO);
    /* a sealed list whose copy lies inside the list's space (below
     * VFDSWMR_KEPT_DATA_OFFSET): refused as well */
    in[1].data = VFDSWMR_KEPT_LIST_OFFSET;
    assert_int_equal(vfdswmr_kept_write_list(fd, 81, in, 3), 0);
    errno = 0;
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), -1);
    assert_int_equal(errno, EIO);
    in[1].data = KMIN;
    assert_int_equal(vfdswmr_kept_write_list(fd, 81, in, 3), 0);
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), 0);
    assert_true(h.session == 81 && h.count == 3 && e[1].data == KMIN);
    assert_int_equal(close(fd), 0);

    /* a read that fails: its errno */
    errno = 0;
    assert_int_equal(vfdswmr_kept_read_list(fd, &h, e), -1);
    assert_int_equal(errno, EBADF);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_created_late),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_kept_layout),
        cmocka_unit_test(test_kept_roundtrip),
        cmocka_unit_test(test_kept_extremes),
        cmocka_unit_test(test_kept_short),
        cmocka_unit_test(test_kept_magic_version),
        cmocka_unit_test(test_kept_count),
        cmocka_unit_test(test_kept_checksum),
        cmocka_unit_test(test_kept_tick),
        cmocka_unit_test(test_kept_range),
        cmocka_unit_test(test_kept_file),
    };
    if (testdir_setup(NULL) < 0)
        return 1;
    snprintf(md, sizeof md, "%s/f.h5.md", dir);
    return cmocka_run_group_tests(tests, NULL, testdir_teardown);
}
