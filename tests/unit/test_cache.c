/*
 * The shared chunk cache (chunk-cache/cache.c): a randomized model test
 * against a shadow "file" (every hit must return the file's bytes, and
 * ranges the file changed under the cache or cut off must miss), then the
 * rules one by one: the budget, two-stage LRU order, minimum retention and
 * its hard limit, the second chance of partial entries, chunk registration,
 * new limits, coherence operations and statistics. vfdswmr_cc_check runs
 * after every mutation.
 *
 * TEST_CACHE_SEED=n runs the model test with that seed only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

#define A 0x1000u
#define B 0x2000u
#define C 0x3000u

/* ---- helpers of the rule tests: the "file" holds pat(addr) at addr ----- */

#define PAT_SIZE (64u << 10)
static unsigned char pat[PAT_SIZE];

static int
setup_pat(void **state)
{
    (void)state;
    for (size_t i = 0; i < PAT_SIZE; i++)
        pat[i] = (unsigned char)(i * 131u + i / 251u + 7u);
    return 0;
}

static vfdswmr_cc_t *
new_cache(size_t size, size_t max_entry, size_t dset_min)
{
    vfdswmr_cc_limits_t l = {.size = size, .max_entry = max_entry, .dset_min = dset_min};
    vfdswmr_cc_t *c = vfdswmr_cc_new(&l);

    assert_non_null(c);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    return c;
}

static int
ins(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len, bool partial)
{
    int r = vfdswmr_cc_insert(c, dset, addr, len, pat + addr, partial);

    assert_int_equal(vfdswmr_cc_check(c), 0);
    return r;
}

/* A lookup; on a hit the bytes must be the file's, on a miss untouched. */
static int
look(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len)
{
    unsigned char buf[1024];
    int r;

    assert_true(len <= sizeof buf);
    memset(buf, 0xa5, sizeof buf);
    r = vfdswmr_cc_lookup(c, dset, addr, len, buf);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    if (r == 1)
        assert_memory_equal(buf, pat + addr, len);
    else
        for (size_t i = 0; i < len; i++)
            assert_int_equal(buf[i], 0xa5);
    return r;
}

static vfdswmr_cc_stats_t
stats(const vfdswmr_cc_t *c, uint64_t dset)
{
    vfdswmr_cc_stats_t s;

    vfdswmr_cc_stats(c, dset, &s);
    return s;
}

/* ---- the randomized model test ----------------------------------------- */

#define FILE_SIZE (1u << 20)
#define MAX_LEN   16384u
#define NDSETS    5
#define NRECENT   64
#define HOT       (128u << 10) /* most operations fall into a window this long */
static const uint64_t dsets[NDSETS] = {A, B, C, 0x4000, VFDSWMR_CC_ANON};

struct model {
    vfdswmr_cc_t *c;
    unsigned char *shadow; /* the file, FILE_SIZE bytes; beyond eof: garbage */
    uint64_t eof;          /* every entry lies below it */
    uint64_t hot;          /* the window's start */
    uint64_t seed, rng;
    long step;
    bool nocache[NDSETS];
    uint64_t base[NDSETS]; /* entries held at the last reset_stats */
    uint64_t misses[NDSETS];
    uint64_t lookups, hits, inserts, loaded, served;
    uint64_t total_hits, total_inserts; /* never reset */
    struct {
        uint64_t addr;
        size_t len;
    } recent[NRECENT]; /* ranges inserted lately: lookups aim at them */
    unsigned nrecent;
};

#define MASSERT(m, cond)                                                                              \
    do {                                                                                              \
        if (!(cond))                                                                                  \
            fail_msg("seed %" PRIu64 " step %ld line %d: %s", (m)->seed, (m)->step, __LINE__, #cond); \
    } while (0)

static uint64_t
rnd(struct model *m) /* splitmix64 */
{
    uint64_t z = (m->rng += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t
below(struct model *m, uint64_t n) /* uniform enough in [0, n), n > 0 */
{
    return rnd(m) % n;
}

static void
scramble(struct model *m, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to && i < FILE_SIZE; i++)
        m->shadow[i] = (unsigned char)rnd(m);
}

/* Where to put len bytes below limit (len <= limit): mostly in the window. */
static uint64_t
place(struct model *m, size_t len, uint64_t limit)
{
    uint64_t lo = 0, hi = limit - len;

    if (below(m, 4) > 0 && m->hot < hi) {
        lo = m->hot;
        hi = hi < m->hot + HOT ? hi : m->hot + HOT;
    }
    return lo + below(m, hi - lo + 1);
}

static size_t
some_len(struct model *m) /* mostly short, sometimes up to MAX_LEN */
{
    return 1 + below(m, below(m, 8) == 0 ? MAX_LEN : 512);
}

static vfdswmr_cc_limits_t
limits(const struct model *m)
{
    vfdswmr_cc_limits_t l;

    vfdswmr_cc_get_limits(m->c, &l);
    return l;
}

/* A lookup through the model: a hit returns the shadow's bytes below eof. */
static int
m_lookup(struct model *m, int di, uint64_t addr, size_t len)
{
    static unsigned char buf[MAX_LEN];
    int r;

    MASSERT(m, len <= MAX_LEN && addr + len <= FILE_SIZE);
    memset(buf, 0x5a, len);
    r = vfdswmr_cc_lookup(m->c, dsets[di], addr, len, buf);
    m->lookups++;
    if (r == 1) {
        MASSERT(m, len > 0 && addr + len <= m->eof);
        MASSERT(m, memcmp(buf, m->shadow + addr, len) == 0);
        m->hits++;
        m->total_hits++;
        m->served += len;
    }
    else {
        MASSERT(m, r == 0);
        for (size_t i = 0; i < len; i++)
            MASSERT(m, buf[i] == 0x5a);
        m->misses[di]++;
    }
    return r;
}

static void
op_lookup(struct model *m)
{
    int di = (int)below(m, NDSETS);
    uint64_t addr;
    size_t len;

    if (m->nrecent > 0 && below(m, 3) > 0) {
        unsigned k = (unsigned)below(m, m->nrecent < NRECENT ? m->nrecent : NRECENT);

        addr = m->recent[k].addr + below(m, m->recent[k].len);
        len = 1 + below(m, m->recent[k].addr + m->recent[k].len - addr);
    }
    else {
        len = below(m, 2049);
        addr = place(m, len, FILE_SIZE);
    }
    m_lookup(m, di, addr, len);
}

static void
op_insert(struct model *m)
{
    vfdswmr_cc_limits_t l = limits(m);
    int di = (int)below(m, NDSETS);
    size_t len = below(m, 20) == 0 ? 0 : some_len(m);
    bool partial = below(m, 4) == 0;
    uint64_t addr;
    int r, want;

    if (len > m->eof)
        return;
    addr = place(m, len, m->eof);
    r = vfdswmr_cc_insert(m->c, dsets[di], addr, len, m->shadow + addr, partial);
    want = !(len == 0 || len > l.max_entry || len > l.size || m->nocache[di]);
    MASSERT(m, r == want);
    if (r != 1)
        return;
    m->inserts++;
    m->total_inserts++;
    m->loaded += len;
    m->recent[m->nrecent % NRECENT].addr = addr;
    m->recent[m->nrecent++ % NRECENT].len = len;
    MASSERT(m, vfdswmr_cc_check(m->c) == 0);
    MASSERT(m, m_lookup(m, di, addr, len) == 1); /* just inserted: most recent */
}

/* A driver's read: a lookup, and on a miss the chunk holding the range is
 * loaded (partial when the read wanted only part of it). */
static void
op_read(struct model *m)
{
    size_t csize = (size_t)256 << 2 * below(m, 3), off = below(m, csize), len = 1 + below(m, csize - off);
    uint64_t chunk;
    int di, r;

    if (csize > m->eof)
        return;
    chunk = place(m, csize, m->eof) / csize * csize;
    di = (int)(chunk / csize % NDSETS); /* each chunk has its dataset */
    if (m_lookup(m, di, chunk + off, len) == 1)
        return;
    r = vfdswmr_cc_insert(m->c, dsets[di], chunk, csize, m->shadow + chunk, len < csize);
    MASSERT(m, r == (csize <= limits(m).max_entry && csize <= limits(m).size && !m->nocache[di]));
    if (r == 1) {
        m->inserts++;
        m->total_inserts++;
        m->loaded += csize;
    }
}

static void
op_update(struct model *m)
{
    size_t len = some_len(m);
    uint64_t addr = place(m, len, FILE_SIZE);

    scramble(m, addr, addr + len);
    vfdswmr_cc_update(m->c, addr, len, m->shadow + addr);
    if (addr + len > m->eof) { /* the write extends the file */
        scramble(m, m->eof, addr);
        m->eof = addr + len;
    }
}

/* The file changed under the cache: the bytes are new and nothing may hit. */
static void
op_invalidate(struct model *m)
{
    uint64_t addr = place(m, 1, FILE_SIZE), len;

    switch (below(m, 32)) {
    case 0:
        len = UINT64_MAX;
        break;
    case 1:
        len = UINT64_MAX - addr;
        break;
    default:
        len = some_len(m);
    }
    scramble(m, addr, len > FILE_SIZE ? FILE_SIZE : addr + len);
    vfdswmr_cc_invalidate(m->c, addr, len);
    MASSERT(m, vfdswmr_cc_check(m->c) == 0);
    MASSERT(m, m_lookup(m, (int)below(m, NDSETS), addr, 1) == 0);
    if (addr > 0)
        MASSERT(m, m_lookup(m, (int)below(m, NDSETS), addr - 1, 2) == 0);
}

static void
op_truncate(struct model *m)
{
    uint64_t k = below(m, 3), eof = k == 0 ? FILE_SIZE : k == 1 ? place(m, 0, FILE_SIZE) : FILE_SIZE / 2;

    if (k == 2)
        eof += below(m, FILE_SIZE / 2 + 1);
    scramble(m, eof, FILE_SIZE); /* cut off, or new bytes of an extension */
    vfdswmr_cc_truncate(m->c, eof);
    m->eof = eof;
    MASSERT(m, vfdswmr_cc_check(m->c) == 0);
    if (eof > 0 && eof < FILE_SIZE)
        MASSERT(m, m_lookup(m, 0, eof - 1, 2) == 0);
}

static void
op_evict(struct model *m)
{
    int di = (int)below(m, NDSETS + 1);
    vfdswmr_cc_stats_t s;

    vfdswmr_cc_evict(m->c, di == NDSETS ? VFDSWMR_CC_ALL : dsets[di]);
    vfdswmr_cc_stats(m->c, di == NDSETS ? VFDSWMR_CC_ALL : dsets[di], &s);
    MASSERT(m, s.entries == 0 && s.bytes == 0);
}

static void
op_set_limits(struct model *m)
{
    static const size_t sizes[] = {0, 4096, 65536, 262144, 524288};
    size_t size = sizes[below(m, 20) == 0 ? 0 : 1 + below(m, 4)];
    vfdswmr_cc_limits_t l = vfdswmr_cc_default_limits(size);

    if (below(m, 2) == 0) {
        l.max_entry = below(m, size + 2);
        l.dset_min = below(m, size / 2 + 1);
    }
    MASSERT(m, vfdswmr_cc_set_limits(m->c, &l) == 0);
    MASSERT(m, stats(m->c, VFDSWMR_CC_ALL).bytes <= size);
}

static void
op_set_dset(struct model *m)
{
    int di = (int)below(m, NDSETS);
    size_t min = below(m, 2) == 0 ? SIZE_MAX : below(m, limits(m).size + 1);

    m->nocache[di] = below(m, 6) == 0;
    MASSERT(m, vfdswmr_cc_set_dset(m->c, dsets[di], min, m->nocache[di]) == 0);
    if (m->nocache[di])
        MASSERT(m, stats(m->c, dsets[di]).entries == 0);
}

static void
op_reset_stats(struct model *m)
{
    vfdswmr_cc_reset_stats(m->c);
    for (int i = 0; i < NDSETS; i++) {
        m->base[i] = stats(m->c, dsets[i]).entries;
        m->misses[i] = 0;
    }
    m->lookups = m->hits = m->inserts = m->loaded = m->served = 0;
}

/* The statistics identity per dataset and file-wide, and the model's counts. */
static void
model_stats(struct model *m)
{
    uint64_t sum[11] = {0}, all[11], base = 0, v[11];
    vfdswmr_cc_stats_t s;

    for (int i = 0; i < NDSETS; i++) {
        s = stats(m->c, dsets[i]);
        MASSERT(m, s.lookups == s.hits + s.misses);
        MASSERT(m, s.insertions + m->base[i] == s.entries + s.evictions + s.invalidations);
        MASSERT(m, s.misses == m->misses[i]);
        MASSERT(m, !m->nocache[i] || s.entries == 0);
        memcpy(v, &s, sizeof v);
        for (int k = 0; k < 11; k++)
            sum[k] += v[k];
        base += m->base[i];
    }
    s = stats(m->c, VFDSWMR_CC_ALL);
    memcpy(all, &s, sizeof all);
    MASSERT(m, memcmp(sum, all, sizeof all) == 0);
    MASSERT(m, s.lookups == s.hits + s.misses);
    MASSERT(m, s.insertions + base == s.entries + s.evictions + s.invalidations);
    MASSERT(m, s.lookups == m->lookups && s.hits == m->hits && s.bytes_served == m->served);
    MASSERT(m, s.insertions == m->inserts && s.bytes_loaded == m->loaded);
    MASSERT(m, s.bytes <= limits(m).size);
}

static void
model_step(struct model *m)
{
    uint64_t k = below(m, 10000); /* rare: what empties much of the cache */

    if (below(m, 2000) == 0)
        m->hot = below(m, FILE_SIZE - HOT);
    if (k < 3030)
        op_lookup(m);
    else if (k < 6230)
        op_read(m);
    else if (k < 8230)
        op_insert(m);
    else if (k < 9230)
        op_update(m);
    else if (k < 9730)
        op_invalidate(m);
    else if (k < 9760)
        op_truncate(m);
    else if (k < 9790)
        op_evict(m);
    else if (k < 9830)
        op_set_limits(m);
    else if (k < 9980)
        op_set_dset(m);
    else
        op_reset_stats(m);
    MASSERT(m, vfdswmr_cc_check(m->c) == 0);
    model_stats(m);
}

static void
run_model(uint64_t seed, long steps)
{
    struct model m = {.seed = seed, .rng = seed, .eof = FILE_SIZE, .hot = FILE_SIZE / 3};
    vfdswmr_cc_limits_t l = vfdswmr_cc_default_limits(131072);

    m.shadow = malloc(FILE_SIZE);
    assert_non_null(m.shadow);
    scramble(&m, 0, FILE_SIZE);
    m.c = vfdswmr_cc_new(&l);
    assert_non_null(m.c);
    for (m.step = 0; m.step < steps; m.step++)
        model_step(&m);
    MASSERT(&m, m.total_hits > (uint64_t)steps / 10 && m.total_inserts > (uint64_t)steps / 10);
    vfdswmr_cc_free(m.c);
    free(m.shadow);
}

static void
test_model(void **state)
{
    const char *env = getenv("TEST_CACHE_SEED");

    (void)state;
    if (env != NULL) {
        run_model(strtoull(env, NULL, 0), 20000);
        return;
    }
    run_model(1, 30000);
    for (uint64_t seed = 2; seed <= 9; seed++)
        run_model(seed * 0x51ed270b27e5ull, 6000);
}

/* ---- the rules ---------------------------------------------------------- */

static void
test_default_limits(void **state)
{
    vfdswmr_cc_limits_t l;
    vfdswmr_cc_t *c;

    (void)state;
    l = vfdswmr_cc_default_limits(0);
    assert_true(l.size == 0 && l.max_entry == 0 && l.dset_min == 0);
    l = vfdswmr_cc_default_limits(3);
    assert_true(l.size == 3 && l.max_entry == 1 && l.dset_min == 0);
    l = vfdswmr_cc_default_limits(1 << 20);
    assert_true(l.max_entry == 1 << 18 && l.dset_min == 1 << 16);
    l = vfdswmr_cc_default_limits((size_t)1 << 30);
    assert_true(l.max_entry == (size_t)1 << 28 && l.dset_min == (size_t)10 << 20);
    c = new_cache(1000, 300, 70);
    vfdswmr_cc_get_limits(c, &l);
    assert_true(l.size == 1000 && l.max_entry == 300 && l.dset_min == 70);
    vfdswmr_cc_free(c);
}

static void
test_budget(void **state)
{
    vfdswmr_cc_t *c = new_cache(100, 40, 0);

    (void)state;
    assert_int_equal(ins(c, A, 0, 41, false), 0); /* > max_entry */
    assert_int_equal(ins(c, A, 0, 0, false), 0);
    assert_int_equal(ins(c, A, 0, 40, false), 1);
    assert_int_equal(look(c, A, 0, 0), 0); /* len 0: a miss */
    for (uint64_t a = 100; a < 2000; a += 37) {
        assert_int_equal(ins(c, (a / 37) % 2 ? A : B, a, 37, false), 1);
        assert_true(stats(c, VFDSWMR_CC_ALL).bytes <= 100);
    }
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 2);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).insertions, stats(c, VFDSWMR_CC_ALL).evictions + 2);
    vfdswmr_cc_free(c);

    c = new_cache(10, 100, 0); /* max_entry beyond the budget */
    assert_int_equal(ins(c, A, 0, 11, false), 0);
    assert_int_equal(ins(c, A, 0, 10, false), 1);
    vfdswmr_cc_free(c);

    c = new_cache(0, 0, 0);
    assert_int_equal(ins(c, A, 0, 1, false), 0);
    assert_int_equal(look(c, A, 0, 1), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).insertions, 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).bytes, 0);
    vfdswmr_cc_free(c);
}

/* Misses never reorder anything, so they probe what was evicted. */
static void
test_lru_order(void **state)
{
    vfdswmr_cc_t *c = new_cache(40, 10, 0);

    (void)state;
    assert_int_equal(ins(c, A, 0, 10, false), 1);   /* a1 */
    assert_int_equal(ins(c, A, 10, 10, false), 1);  /* a2 */
    assert_int_equal(ins(c, B, 100, 10, false), 1); /* b1 */
    assert_int_equal(ins(c, B, 110, 10, false), 1); /* b2: A is the older dataset */
    assert_int_equal(ins(c, B, 120, 10, false), 1); /* b3 takes a1, A's tail */
    assert_int_equal(look(c, C, 0, 10), 0);
    assert_true(stats(c, A).evictions == 1 && stats(c, B).evictions == 0);

    assert_int_equal(look(c, C, 10, 10), 1);       /* a2: A becomes most recent */
    assert_int_equal(ins(c, A, 20, 10, false), 1); /* a3 takes b1, B's tail */
    assert_int_equal(look(c, C, 100, 10), 0);
    assert_true(stats(c, A).evictions == 1 && stats(c, B).evictions == 1);

    assert_int_equal(look(c, C, 112, 5), 1);       /* b2 to B's head, B most recent */
    assert_int_equal(look(c, C, 15, 5), 1);        /* a2 to A's head, A most recent */
    assert_int_equal(ins(c, A, 30, 10, false), 1); /* a4 takes b3, B's tail now */
    assert_int_equal(look(c, C, 120, 10), 0);
    assert_int_equal(stats(c, B).evictions, 2);
    for (uint64_t a = 10; a < 40; a += 10)
        assert_int_equal(look(c, C, a, 10), 1);
    assert_int_equal(look(c, C, 110, 10), 1);
    /* hits count for the entry's dataset, misses for the caller's */
    assert_true(stats(c, A).hits == 5 && stats(c, B).hits == 2 && stats(c, C).hits == 0);
    assert_true(stats(c, C).misses == 3 && stats(c, C).lookups == 3);
    vfdswmr_cc_free(c);
}

static void
test_min_retention(void **state)
{
    vfdswmr_cc_t *c = new_cache(50, 10, 20);

    (void)state;
    assert_int_equal(ins(c, A, 0, 10, false), 1);   /* a1 */
    assert_int_equal(ins(c, A, 10, 10, false), 1);  /* a2: A at its minimum */
    assert_int_equal(ins(c, B, 100, 10, false), 1); /* b1 */
    assert_int_equal(ins(c, B, 110, 10, false), 1); /* b2 */
    assert_int_equal(ins(c, B, 120, 10, false), 1); /* b3: full */
    assert_int_equal(ins(c, A, 20, 10, false), 1);  /* a3: A (older) is skipped, b1 goes */
    assert_int_equal(look(c, C, 100, 1), 0);
    assert_true(stats(c, A).evictions == 0 && stats(c, B).evictions == 1);

    assert_int_equal(ins(c, A, 30, 10, false), 1); /* a4: B (older) at its minimum, A gives a1 */
    assert_int_equal(look(c, C, 0, 1), 0);
    assert_true(stats(c, A).evictions == 1 && stats(c, B).evictions == 1);

    /* both at their minimum: the hard pass takes the older dataset's tail */
    assert_int_equal(vfdswmr_cc_set_dset(c, A, 30, false), 0);
    assert_int_equal(ins(c, B, 130, 10, false), 1); /* B is older: b2 goes */
    assert_int_equal(look(c, C, 110, 1), 0);
    assert_true(stats(c, A).evictions == 1 && stats(c, B).evictions == 2);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).bytes, 50);

    /* back to the default minimum (20): A (older, 30 bytes) gives a2 */
    assert_int_equal(vfdswmr_cc_set_dset(c, A, SIZE_MAX, false), 0);
    assert_int_equal(ins(c, B, 140, 10, false), 1);
    assert_int_equal(look(c, C, 10, 1), 0);
    assert_true(stats(c, A).evictions == 2 && stats(c, B).evictions == 2);
    assert_true(stats(c, A).bytes == 20 && stats(c, B).bytes == 30);

    /* a no-cache dataset: its entries are evicted and nothing more is cached */
    assert_int_equal(vfdswmr_cc_set_dset(c, B, SIZE_MAX, true), 0);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_true(stats(c, B).entries == 0 && stats(c, B).evictions == 5);
    assert_int_equal(ins(c, B, 200, 10, false), 0);
    assert_int_equal(look(c, B, 120, 1), 0);
    assert_int_equal(vfdswmr_cc_set_dset(c, B, SIZE_MAX, false), 0);
    assert_int_equal(ins(c, B, 200, 10, false), 1);
    assert_int_equal(look(c, B, 200, 10), 1);
    vfdswmr_cc_free(c);
}

static void
test_second_chance(void **state)
{
    vfdswmr_cc_t *c = new_cache(30, 10, 0);

    (void)state;
    assert_int_equal(ins(c, A, 0, 10, true), 1); /* p1, partial */
    assert_int_equal(ins(c, A, 10, 10, false), 1);
    assert_int_equal(ins(c, A, 20, 10, false), 1);
    assert_int_equal(ins(c, A, 30, 10, false), 1); /* p1 at the tail: spared, [10,20) goes */
    assert_int_equal(look(c, B, 10, 1), 0);
    assert_int_equal(stats(c, A).evictions, 1);
    assert_int_equal(ins(c, A, 40, 10, false), 1); /* [20,30) goes */
    assert_int_equal(look(c, B, 20, 1), 0);
    assert_int_equal(ins(c, A, 50, 10, false), 1); /* p1, unmarked, goes */
    assert_int_equal(look(c, B, 0, 1), 0);
    assert_int_equal(stats(c, A).evictions, 3);
    for (uint64_t a = 30; a < 60; a += 10)
        assert_int_equal(look(c, B, a, 10), 1);

    vfdswmr_cc_free(c);

    /* two partial entries at B's tail: both spared, then the first of them goes;
     * A, older but at its minimum, is left alone */
    c = new_cache(30, 10, 10);
    assert_int_equal(ins(c, A, 0, 10, true), 1);
    assert_int_equal(ins(c, B, 10, 10, true), 1);
    assert_int_equal(ins(c, B, 20, 10, true), 1);
    assert_int_equal(ins(c, B, 30, 10, false), 1);
    assert_int_equal(look(c, C, 10, 1), 0);
    assert_true(stats(c, A).evictions == 0 && stats(c, B).evictions == 1);
    assert_int_equal(look(c, C, 0, 10) + look(c, C, 20, 10) + look(c, C, 30, 10), 3);
    vfdswmr_cc_free(c);

    /* the hard pass gives a partial entry its second chance too, then takes it */
    c = new_cache(30, 10, 20);
    assert_int_equal(ins(c, A, 0, 10, true), 1);
    assert_int_equal(ins(c, A, 10, 10, false), 1);
    assert_int_equal(ins(c, B, 100, 10, false), 1);
    assert_int_equal(ins(c, B, 110, 10, false), 1); /* both at their minimum: A's [10,20) goes */
    assert_int_equal(look(c, C, 10, 1), 0);
    assert_true(stats(c, A).evictions == 1 && stats(c, B).evictions == 0);
    assert_int_equal(ins(c, B, 120, 10, false), 1); /* now the unmarked [0,10) */
    assert_int_equal(look(c, C, 0, 1), 0);
    assert_int_equal(stats(c, A).evictions, 2);
    vfdswmr_cc_free(c);
}

static void
expect_chunk(const vfdswmr_cc_t *c, uint64_t addr, size_t len, uint64_t dset, uint64_t caddr, uint64_t csize)
{
    uint64_t d = 0;
    vfdswmr_cc_chunk_t k = {0, 0};

    assert_int_equal(vfdswmr_cc_find_chunk(c, addr, len, &d, &k), 1);
    assert_true(d == dset && k.addr == caddr && k.size == csize);
}

static void
expect_no_chunk(const vfdswmr_cc_t *c, uint64_t addr, size_t len)
{
    uint64_t d;
    vfdswmr_cc_chunk_t k;

    assert_int_equal(vfdswmr_cc_find_chunk(c, addr, len, &d, &k), 0);
}

static void
test_register(void **state)
{
    vfdswmr_cc_t *c = new_cache(1000, 100, 0);
    const vfdswmr_cc_chunk_t a1[] = {{0, 100}, {100, 100}, {300, 100}}, a2[] = {{1000, 100}}, b1[] = {{1050, 150}},
                             a3[] = {{5000, 100}};
    vfdswmr_cc_stats_t before, after;

    (void)state;
    assert_int_equal(ins(c, A, 0, 50, false), 1);
    before = stats(c, VFDSWMR_CC_ALL);
    assert_int_equal(vfdswmr_cc_register(c, A, a1, 3), 0);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    expect_chunk(c, 50, 50, A, 0, 100);
    expect_chunk(c, 0, 1, A, 0, 100);
    expect_no_chunk(c, 50, 51); /* crosses into the next chunk */
    expect_chunk(c, 150, 50, A, 100, 100);
    expect_no_chunk(c, 250, 1);
    expect_no_chunk(c, 199, 102);
    expect_chunk(c, 399, 1, A, 300, 100);
    expect_no_chunk(c, 400, 1);
    expect_no_chunk(c, 0, 0);
    after = stats(c, VFDSWMR_CC_ALL);
    assert_memory_equal(&before, &after, sizeof after); /* registration changed no entry */
    assert_int_equal(look(c, A, 0, 50), 1);

    assert_int_equal(vfdswmr_cc_register(c, A, a2, 1), 0); /* replaces */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    expect_no_chunk(c, 50, 1);
    expect_no_chunk(c, 350, 1);
    expect_chunk(c, 1000, 100, A, 1000, 100);

    assert_int_equal(vfdswmr_cc_register(c, B, b1, 1), 0); /* overlaps A's: removes it */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    expect_no_chunk(c, 1000, 10);
    expect_chunk(c, 1050, 150, B, 1050, 150);
    expect_chunk(c, 1060, 10, B, 1050, 150);

    assert_int_equal(vfdswmr_cc_register(c, A, a3, 1), 0);
    expect_chunk(c, 5000, 1, A, 5000, 100);
    assert_int_equal(vfdswmr_cc_register(c, A, NULL, 0), 0); /* forgets */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    expect_no_chunk(c, 5000, 1);
    expect_chunk(c, 1100, 1, B, 1050, 150);
    assert_int_equal(vfdswmr_cc_register(c, C, NULL, 0), 0); /* never registered */
    assert_int_equal(stats(c, A).entries, 1);
    vfdswmr_cc_free(c); /* with B's chunks: valgrind sees them freed */
}

/* Random chunk maps of four datasets against a list of what must be live. */
struct live_chunk {
    uint64_t dset, addr, size;
};

static bool
chunk_overlaps(const struct live_chunk *k, const vfdswmr_cc_chunk_t *map, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (k->addr < map[j].addr + map[j].size && map[j].addr < k->addr + k->size)
            return true;
    return false;
}

/* find_chunk of random ranges against the list. */
static void
query_chunks(struct model *m, const vfdswmr_cc_t *c, const struct live_chunk *live, size_t nlive)
{
    for (int q = 0; q < 20; q++) {
        uint64_t addr = below(m, 5000), d = 0;
        size_t len = 1 + below(m, 40), want = SIZE_MAX;
        vfdswmr_cc_chunk_t got = {0, 0};

        for (size_t i = 0; i < nlive; i++)
            if (live[i].addr <= addr && addr + len <= live[i].addr + live[i].size)
                want = i;
        if (want == SIZE_MAX) {
            MASSERT(m, vfdswmr_cc_find_chunk(c, addr, len, &d, &got) == 0);
            continue;
        }
        MASSERT(m, vfdswmr_cc_find_chunk(c, addr, len, &d, &got) == 1);
        MASSERT(m, d == live[want].dset && got.addr == live[want].addr && got.size == live[want].size);
    }
}

static void
test_register_model(void **state)
{
    struct model m = {.seed = 7, .rng = 7};
    struct live_chunk live[64];
    size_t nlive = 0;
    vfdswmr_cc_chunk_t map[8];
    vfdswmr_cc_t *c = new_cache(0, 0, 0);

    (void)state;
    for (m.step = 0; m.step < 3000; m.step++) {
        uint64_t dset = dsets[below(&m, 4)], at = below(&m, 4000);
        size_t n = below(&m, 9), k = 0;

        for (size_t i = 0; i < n; i++) { /* a map: ascending, disjoint */
            map[i] = (vfdswmr_cc_chunk_t){.addr = at, .size = 1 + below(&m, 300)};
            at += map[i].size + below(&m, 50);
        }
        MASSERT(&m, vfdswmr_cc_register(c, dset, map, n) == 0);
        for (size_t i = 0; i < nlive; i++) /* dset's old map and what the new one overlaps go */
            if (live[i].dset != dset && !chunk_overlaps(&live[i], map, n))
                live[k++] = live[i];
        nlive = k;
        for (size_t j = 0; j < n; j++)
            live[nlive++] = (struct live_chunk){dset, map[j].addr, map[j].size};
        MASSERT(&m, vfdswmr_cc_check(c) == 0);
        query_chunks(&m, c, live, nlive);
    }
    vfdswmr_cc_free(c);
}

static void
test_set_limits(void **state)
{
    vfdswmr_cc_t *c = new_cache(100, 50, 0);
    vfdswmr_cc_limits_t l = {.size = 100, .max_entry = 25, .dset_min = 0};

    (void)state;
    assert_int_equal(ins(c, B, 100, 30, false), 1);
    assert_int_equal(ins(c, B, 200, 40, false), 1);
    assert_int_equal(ins(c, A, 0, 20, false), 1);
    assert_int_equal(ins(c, A, 50, 10, false), 1); /* 100 bytes */
    assert_int_equal(vfdswmr_cc_set_limits(c, &l), 0);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_true(stats(c, B).entries == 0 && stats(c, B).evictions == 2);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).bytes, 30);
    assert_int_equal(ins(c, A, 300, 26, false), 0);

    l.size = 15; /* LRU down to 15: A's tail [0,20) goes, [50,60) stays */
    assert_int_equal(vfdswmr_cc_set_limits(c, &l), 0);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).bytes, 10);
    assert_int_equal(look(c, A, 0, 1), 0);
    assert_int_equal(look(c, A, 50, 10), 1);
    vfdswmr_cc_get_limits(c, &l);
    assert_true(l.size == 15 && l.max_entry == 25);

    l = vfdswmr_cc_default_limits(0);
    assert_int_equal(vfdswmr_cc_set_limits(c, &l), 0);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 0);
    assert_int_equal(ins(c, A, 50, 10, false), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).evictions, 4);
    vfdswmr_cc_free(c);
}

static void
test_coherence(void **state)
{
    vfdswmr_cc_t *c = new_cache(1000, 100, 0);
    unsigned char w[30], buf[100];

    (void)state;
    assert_int_equal(ins(c, A, 0, 50, false), 1);
    assert_int_equal(ins(c, B, 50, 50, false), 1);
    memset(w, 0xee, sizeof w);
    vfdswmr_cc_update(c, 40, sizeof w, w); /* into both entries */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_true(stats(c, A).updates == 1 && stats(c, B).updates == 1);
    assert_int_equal(vfdswmr_cc_lookup(c, A, 0, 50, buf), 1);
    assert_memory_equal(buf, pat, 40);
    assert_memory_equal(buf + 40, w, 10);
    assert_int_equal(vfdswmr_cc_lookup(c, A, 50, 50, buf), 1);
    assert_memory_equal(buf, w, 20);
    assert_memory_equal(buf + 20, pat + 70, 30);
    vfdswmr_cc_update(c, 100, 10, w); /* touches none */
    vfdswmr_cc_update(c, 50, 0, w);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).updates, 2);

    /* an overlapping insert removes both (invalidations, on their datasets) */
    assert_int_equal(ins(c, C, 45, 10, false), 1);
    assert_true(stats(c, A).invalidations == 1 && stats(c, B).invalidations == 1);
    assert_int_equal(look(c, A, 45, 10), 1);
    assert_int_equal(stats(c, C).hits, 1);

    assert_int_equal(ins(c, A, 100, 10, false), 1);
    assert_int_equal(ins(c, A, 200, 10, false), 1);
    assert_int_equal(ins(c, A, 300, 10, false), 1);
    vfdswmr_cc_invalidate(c, 110, 90); /* [110, 200): touches nothing */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 4);
    vfdswmr_cc_invalidate(c, 109, 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 4);
    vfdswmr_cc_invalidate(c, 109, 92); /* [109, 201) */
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 2);
    assert_int_equal(stats(c, A).invalidations, 3);

    vfdswmr_cc_truncate(c, 310); /* [300, 310) ends at eof: stays */
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 2);
    vfdswmr_cc_truncate(c, 309);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 1);
    assert_int_equal(look(c, A, 300, 1), 0);
    assert_int_equal(ins(c, A, 300, 10, false), 1);
    vfdswmr_cc_invalidate(c, 55, UINT64_MAX); /* to the end */
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 1);
    assert_int_equal(look(c, C, 45, 5), 1);

    /* ranges at the top of the address space */
    assert_int_equal(vfdswmr_cc_insert(c, A, UINT64_MAX - 5, 10, pat, false), 0);
    assert_int_equal(vfdswmr_cc_insert(c, A, UINT64_MAX - 10, 10, pat, false), 1);
    assert_int_equal(vfdswmr_cc_lookup(c, A, UINT64_MAX - 2, 5, buf), 0);
    assert_int_equal(vfdswmr_cc_lookup(c, A, UINT64_MAX - 2, 2, buf), 1);
    assert_memory_equal(buf, pat + 8, 2);
    vfdswmr_cc_update(c, UINT64_MAX - 1, 1, w);
    assert_int_equal(vfdswmr_cc_lookup(c, A, UINT64_MAX - 1, 1, buf), 1);
    assert_int_equal(buf[0], 0xee);
    vfdswmr_cc_invalidate(c, UINT64_MAX - 1, 1);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_int_equal(stats(c, VFDSWMR_CC_ALL).entries, 1);
    vfdswmr_cc_free(c);
}

static void
test_evict_and_stats(void **state)
{
    vfdswmr_cc_t *c = new_cache(1000, 100, 0);
    vfdswmr_cc_stats_t s;

    (void)state;
    assert_int_equal(ins(c, A, 0, 10, false), 1);
    assert_int_equal(ins(c, A, 10, 10, false), 1);
    assert_int_equal(ins(c, B, 20, 10, false), 1);
    assert_int_equal(look(c, C, 5, 5), 1);
    assert_int_equal(look(c, C, 5, 10), 0); /* spans two entries */
    s = stats(c, A);
    assert_true(s.hits == 1 && s.bytes_served == 5 && s.lookups == 1 && s.misses == 0);
    assert_true(s.insertions == 2 && s.bytes_loaded == 20 && s.entries == 2 && s.bytes == 20);
    s = stats(c, C);
    assert_true(s.lookups == 1 && s.misses == 1 && s.hits == 0 && s.insertions == 0);
    s = stats(c, 0x9999);
    assert_memory_equal(&s, &(vfdswmr_cc_stats_t){0}, sizeof s);

    vfdswmr_cc_evict(c, 0x9999); /* never seen: nothing */
    vfdswmr_cc_evict(c, A);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    assert_true(stats(c, A).entries == 0 && stats(c, A).evictions == 2 && stats(c, B).entries == 1);
    assert_int_equal(look(c, B, 20, 10), 1);

    vfdswmr_cc_reset_stats(c);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    s = stats(c, B);
    assert_true(s.entries == 1 && s.bytes == 10 && s.lookups == 0 && s.hits == 0 && s.insertions == 0);
    s = stats(c, VFDSWMR_CC_ALL);
    assert_true(s.entries == 1 && s.bytes == 10 && s.lookups == 0 && s.evictions == 0);
    s = stats(c, A);
    assert_memory_equal(&s, &(vfdswmr_cc_stats_t){0}, sizeof s);

    assert_int_equal(ins(c, A, 0, 10, false), 1);
    vfdswmr_cc_evict(c, VFDSWMR_CC_ALL);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    s = stats(c, VFDSWMR_CC_ALL);
    assert_true(s.entries == 0 && s.bytes == 0 && s.evictions == 2 && s.insertions == 1);
    vfdswmr_cc_free(c);
    vfdswmr_cc_free(NULL);
}

/* Many entries: eviction stays cheap (a quadratic scan would time out). */
static void
test_many_entries(void **state)
{
    vfdswmr_cc_t *c = new_cache(100000, 16, 0);
    vfdswmr_cc_stats_t s;
    unsigned char one = 1;

    (void)state;
    for (uint64_t i = 0; i < 1000000; i++)
        assert_int_equal(vfdswmr_cc_insert(c, i % 3 ? A : B, i * 2, 1, &one, i % 7 == 0), 1);
    assert_int_equal(vfdswmr_cc_check(c), 0);
    s = stats(c, VFDSWMR_CC_ALL);
    assert_true(s.entries == 100000 && s.evictions == 900000);
    vfdswmr_cc_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_limits),  cmocka_unit_test(test_budget),        cmocka_unit_test(test_lru_order),
        cmocka_unit_test(test_min_retention),   cmocka_unit_test(test_second_chance), cmocka_unit_test(test_register),
        cmocka_unit_test(test_register_model),  cmocka_unit_test(test_set_limits),    cmocka_unit_test(test_coherence),
        cmocka_unit_test(test_evict_and_stats), cmocka_unit_test(test_many_entries),  cmocka_unit_test(test_model),
    };

    return cmocka_run_group_tests(tests, setup_pat, NULL);
}
