/*
 * Unit tests of mdfile/space.c, the page allocator of the metadata file with
 * its delayed-free list.
 *
 * Every check looks at data: page numbers, the counters, the end of file,
 * and vfdswmr_space_check() after each change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "abort.h"
#include "space.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

static vfdswmr_space_t *
new_space(uint64_t reserved)
{
    vfdswmr_space_t *s = vfdswmr_space_new(reserved);
    assert_non_null(s);
    return s;
}

static void
assert_consistent(const vfdswmr_space_t *s)
{
    const char *err = vfdswmr_space_check(s);
    if (err != NULL)
        fail_msg("vfdswmr_space_check: %s", err);
}

/* The counters, the end of file, and every invariant. */
static void
assert_state(const vfdswmr_space_t *s, uint64_t eof, uint64_t free_pages, uint64_t deferred_pages)
{
    assert_consistent(s);
    assert_int_equal(vfdswmr_space_eof(s), eof);
    assert_int_equal(vfdswmr_space_free_pages(s), free_pages);
    assert_int_equal(vfdswmr_space_deferred_pages(s), deferred_pages);
}

/* Allocate n pages, which must land at `expect`. */
static void
alloc_at(vfdswmr_space_t *s, uint64_t n, uint64_t expect)
{
    uint64_t page = UINT64_MAX;
    assert_int_equal(vfdswmr_space_alloc(s, n, &page), 0);
    assert_int_equal(page, expect);
    assert_consistent(s);
}

/* Allocate `count` images of one page each from page `first` on. */
static void
alloc_singles(vfdswmr_space_t *s, uint64_t first, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        alloc_at(s, 1, first + i);
}

/* ---------------------------------------------------------------------- */
/* Creation and reserved pages                                              */

static void
test_new_destroy(void **state)
{
    (void)state;
    vfdswmr_space_t *s = new_space(3);

    assert_int_equal(vfdswmr_space_reserved_pages(s), 3);
    assert_state(s, 3, 0, 0);
    vfdswmr_space_destroy(s);
    assert_null(vfdswmr_space_new(0));
    vfdswmr_space_destroy(NULL);
}

static void
test_reserved_never_handed_out(void **state)
{
    (void)state;
    vfdswmr_space_t *s = new_space(4);

    alloc_at(s, 1, 4);
    alloc_at(s, 2, 5);
    vfdswmr_space_free(s, 4, 1); /* a hole right above the reserved pages */
    assert_state(s, 7, 1, 0);
    alloc_at(s, 1, 4);
    vfdswmr_space_free(s, 4, 1);
    vfdswmr_space_free(s, 5, 2); /* everything: the file shrinks to them */
    assert_state(s, 4, 0, 0);
    alloc_at(s, 3, 4);
    assert_state(s, 7, 0, 0);
    vfdswmr_space_destroy(s);
}

/* ---------------------------------------------------------------------- */
/* Allocation                                                               */

/* Reserved page 0, then A=1..2 B=3 C=4..6 D=7 E=8..11 F=12 with A, C, E
 * freed: holes of 2, 3 and 4 pages at 1, 4 and 8; eof 13. */
static vfdswmr_space_t *
three_holes(void)
{
    vfdswmr_space_t *s = new_space(1);

    alloc_at(s, 2, 1);
    alloc_at(s, 1, 3);
    alloc_at(s, 3, 4);
    alloc_at(s, 1, 7);
    alloc_at(s, 4, 8);
    alloc_at(s, 1, 12);
    vfdswmr_space_free(s, 1, 2);
    vfdswmr_space_free(s, 4, 3);
    vfdswmr_space_free(s, 8, 4);
    assert_state(s, 13, 9, 0);
    return s;
}

static void
test_first_fit_lowest_hole(void **state)
{
    (void)state;
    vfdswmr_space_t *s = three_holes();

    alloc_at(s, 3, 4); /* the 2-page hole is too small: the lowest that fits */
    assert_state(s, 13, 6, 0);
    alloc_at(s, 1, 1);
    assert_state(s, 13, 5, 0);
    alloc_at(s, 2, 8); /* page 2 is too small */
    alloc_at(s, 1, 2);
    alloc_at(s, 2, 10);
    assert_state(s, 13, 0, 0);
    vfdswmr_space_destroy(s);
}

/* First fit, not best fit: a large low hole wins over an exact high one. */
static void
test_first_fit_not_best_fit(void **state)
{
    (void)state;
    vfdswmr_space_t *s = new_space(1);

    alloc_at(s, 4, 1);
    alloc_at(s, 1, 5);
    alloc_at(s, 1, 6);
    alloc_at(s, 1, 7);
    vfdswmr_space_free(s, 1, 4);
    vfdswmr_space_free(s, 6, 1);
    assert_state(s, 8, 5, 0);
    alloc_at(s, 1, 1);
    assert_state(s, 8, 4, 0);
    vfdswmr_space_destroy(s);
}

static void
test_alloc_at_eof_when_no_hole_fits(void **state)
{
    (void)state;
    vfdswmr_space_t *s = three_holes();

    alloc_at(s, 5, 13);
    assert_state(s, 18, 9, 0);
    vfdswmr_space_destroy(s);
}

static void
test_exact_fit(void **state)
{
    (void)state;
    vfdswmr_space_t *s = three_holes();

    alloc_at(s, 2, 1);
    assert_state(s, 13, 7, 0);
    alloc_at(s, 4, 8);
    assert_state(s, 13, 3, 0);
    alloc_at(s, 3, 4);
    assert_state(s, 13, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_split_run(void **state)
{
    (void)state;
    vfdswmr_space_t *s = three_holes();

    alloc_at(s, 1, 1); /* 2 stays free */
    alloc_at(s, 2, 4); /* 6 stays free */
    alloc_at(s, 3, 8); /* 11 stays free */
    assert_state(s, 13, 3, 0);
    alloc_at(s, 2, 13); /* no 2-page run is left */
    alloc_at(s, 1, 2);
    alloc_at(s, 1, 6);
    alloc_at(s, 1, 11);
    assert_state(s, 15, 0, 0);
    vfdswmr_space_destroy(s);
}

/* ---------------------------------------------------------------------- */
/* Freeing                                                                  */

/* Reserved page 0, single pages 1..5 and a guard at 6 that keeps eof at 7. */
static vfdswmr_space_t *
six_singles(void)
{
    vfdswmr_space_t *s = new_space(1);

    alloc_singles(s, 1, 6);
    assert_state(s, 7, 0, 0);
    return s;
}

static void
test_coalesce_left(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    vfdswmr_space_free(s, 2, 1);
    vfdswmr_space_free(s, 3, 1); /* joins 2 */
    assert_state(s, 7, 2, 0);
    alloc_at(s, 2, 2); /* one 2-page run, not two 1-page runs */
    assert_state(s, 7, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_coalesce_right(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    vfdswmr_space_free(s, 3, 1);
    vfdswmr_space_free(s, 2, 1); /* joins 3 */
    assert_state(s, 7, 2, 0);
    alloc_at(s, 2, 2);
    assert_state(s, 7, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_coalesce_both(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    vfdswmr_space_free(s, 2, 1);
    vfdswmr_space_free(s, 4, 1);
    assert_state(s, 7, 2, 0);
    vfdswmr_space_free(s, 3, 1); /* joins 2 and 4 */
    assert_state(s, 7, 3, 0);
    alloc_at(s, 3, 2);
    assert_state(s, 7, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_free_last_shrinks_eof(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    vfdswmr_space_free(s, 6, 1);
    assert_state(s, 6, 0, 0);
    vfdswmr_space_free(s, 4, 1); /* middle: no shrink */
    assert_state(s, 6, 1, 0);
    vfdswmr_space_free(s, 5, 1); /* last: shrinks past 5 and 4 */
    assert_state(s, 4, 0, 0);
    vfdswmr_space_free(s, 1, 1);
    vfdswmr_space_free(s, 2, 2); /* joins 1 and reaches eof */
    assert_state(s, 1, 0, 0);
    alloc_at(s, 2, 1);
    vfdswmr_space_destroy(s);
}

/* ---------------------------------------------------------------------- */
/* Delayed free                                                             */

static void
test_release_exactly_at_tag_plus_max_lag(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    assert_int_equal(vfdswmr_space_defer(s, 1, 1, 5), 0);
    assert_int_equal(vfdswmr_space_defer(s, 3, 2, 5), 0);
    assert_int_equal(vfdswmr_space_defer(s, 5, 1, 6), 0);
    assert_state(s, 7, 0, 4);
    for (uint64_t tick = 0; tick < 8; tick++) {
        assert_int_equal(vfdswmr_space_release(s, tick, 3), 0);
        assert_state(s, 7 + tick, 0, 4);
        alloc_at(s, 1, 7 + tick); /* deferred pages are never reused */
    }
    assert_int_equal(vfdswmr_space_release(s, 8, 3), 3); /* tag 5: all of it */
    assert_state(s, 15, 3, 1);
    assert_int_equal(vfdswmr_space_release(s, 8, 3), 0);
    assert_int_equal(vfdswmr_space_release(s, 9, 3), 1);
    assert_state(s, 15, 4, 0);
    alloc_at(s, 1, 1); /* released space is reused first */
    alloc_at(s, 3, 3); /* 3..4 and 5 coalesced */
    assert_state(s, 15, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_release_at_eof_shrinks(void **state)
{
    (void)state;
    vfdswmr_space_t *s = new_space(2);

    alloc_at(s, 3, 2);
    alloc_at(s, 2, 5);
    assert_int_equal(vfdswmr_space_defer(s, 5, 2, 1), 0);
    vfdswmr_space_free(s, 2, 3); /* a hole: the deferred pages hold eof */
    assert_state(s, 7, 3, 2);
    assert_int_equal(vfdswmr_space_release(s, 4, 3), 2);
    assert_state(s, 2, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_defer_tags_out_of_order(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    assert_int_equal(vfdswmr_space_defer(s, 1, 1, 10), 0);
    assert_int_equal(vfdswmr_space_defer(s, 2, 1, 4), 0); /* stored as 10 */
    assert_int_equal(vfdswmr_space_release(s, 7, 3), 0);  /* 4 + 3 would be due */
    assert_int_equal(vfdswmr_space_release(s, 12, 3), 0);
    assert_state(s, 7, 0, 2);
    assert_int_equal(vfdswmr_space_release(s, 13, 3), 2);
    assert_state(s, 7, 2, 0);
    /* With the list empty again a smaller tick is taken as is. */
    assert_int_equal(vfdswmr_space_defer(s, 3, 1, 2), 0);
    assert_int_equal(vfdswmr_space_release(s, 5, 3), 1);
    assert_state(s, 7, 3, 0);
    vfdswmr_space_destroy(s);
}

static void
test_release_overflow_safe(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    assert_int_equal(vfdswmr_space_defer(s, 2, 1, UINT64_MAX - 1), 0);
    /* tag + max_lag wraps around: not due, whatever the tick. */
    assert_int_equal(vfdswmr_space_release(s, UINT64_MAX, 3), 0);
    assert_int_equal(vfdswmr_space_release(s, 0, 3), 0);
    assert_int_equal(vfdswmr_space_release(s, UINT64_MAX, UINT32_MAX), 0);
    assert_state(s, 7, 0, 1);
    assert_int_equal(vfdswmr_space_release(s, UINT64_MAX, 1), 1);
    assert_state(s, 7, 1, 0);
    vfdswmr_space_destroy(s);
}

/* ---------------------------------------------------------------------- */
/* Defensive behaviour                                                      */

/* Frees and defers that must be ignored, on six_singles() with page 3 free
 * and page 5 deferred: the state stays eof 7, 1 free page, 1 deferred. */
static void
test_invalid_ranges_ignored(void **state)
{
    (void)state;
    static const struct {
        uint64_t page, n;
    } bad[] = {
        {0, 1},          {0, 2},          /* reserved */
        {1, 0},          {4, 0},          /* empty */
        {6, 2},          {7, 1},          /* past eof */
        {100, 1},        {UINT64_MAX, 1}, /* far past eof */
        {6, UINT64_MAX}, {1, UINT64_MAX}, /* end overflows */
        {3, 1},          {2, 2},          /* already free */
        {3, 2},          {1, 6},          /* overlaps free */
    };
    vfdswmr_space_t *s = six_singles();

    vfdswmr_space_free(s, 3, 1);
    assert_int_equal(vfdswmr_space_defer(s, 5, 1, 1), 0);
    assert_state(s, 7, 1, 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vfdswmr_space_free(s, bad[i].page, bad[i].n);
        assert_state(s, 7, 1, 1);
        assert_int_equal(vfdswmr_space_defer(s, bad[i].page, bad[i].n, 1), -1);
        assert_state(s, 7, 1, 1);
    }
    alloc_at(s, 1, 3); /* the free page is still there, once */
    alloc_at(s, 1, 7);
    assert_int_equal(vfdswmr_space_release(s, 4, 3), 1);
    assert_state(s, 8, 1, 0);
    vfdswmr_space_destroy(s);
}

static void
test_alloc_rejects(void **state)
{
    (void)state;
    uint64_t page = 42;
    vfdswmr_space_t *s = new_space(1);

    assert_int_equal(vfdswmr_space_alloc(s, 0, &page), -1);
    assert_int_equal(vfdswmr_space_alloc(s, UINT64_MAX, &page), -1); /* 1 + n overflows */
    assert_int_equal(vfdswmr_space_alloc(s, 1, NULL), -1);
    assert_int_equal(page, 42);
    assert_state(s, 1, 0, 0);
    vfdswmr_space_destroy(s);
}

static void
test_top_of_address_space(void **state)
{
    (void)state;
    uint64_t page = 42;
    vfdswmr_space_t *s = new_space(UINT64_MAX - 3);

    alloc_at(s, 3, UINT64_MAX - 3); /* up to the last page number */
    assert_state(s, UINT64_MAX, 0, 0);
    assert_int_equal(vfdswmr_space_alloc(s, 1, &page), -1);
    assert_int_equal(page, 42);
    vfdswmr_space_free(s, UINT64_MAX - 3, 1);
    assert_state(s, UINT64_MAX, 1, 0);
    vfdswmr_space_free(s, UINT64_MAX - 2, 2);
    assert_state(s, UINT64_MAX - 3, 0, 0);
    vfdswmr_space_destroy(s);
}

/* Pages 1..6 allocated, then 2 deferred and 4 freed: allocated() says yes
 * only for ranges wholly in allocated pages. */
static void
test_allocated(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    assert_true(vfdswmr_space_allocated(s, 1, 6));
    assert_int_equal(vfdswmr_space_defer(s, 2, 1, 1), 0);
    vfdswmr_space_free(s, 4, 1);
    assert_true(vfdswmr_space_allocated(s, 1, 1));
    assert_true(vfdswmr_space_allocated(s, 5, 2));
    assert_false(vfdswmr_space_allocated(s, 0, 1)); /* reserved */
    assert_false(vfdswmr_space_allocated(s, 1, 2)); /* reaches the deferred page */
    assert_false(vfdswmr_space_allocated(s, 3, 2)); /* reaches the free page */
    assert_false(vfdswmr_space_allocated(s, 6, 2)); /* past the end of file */
    assert_false(vfdswmr_space_allocated(s, 3, 0));
    assert_false(vfdswmr_space_allocated(NULL, 3, 1));
    vfdswmr_space_destroy(s);
}

/* Freeing deferred pages is a caller error free() cannot see; check() must.
 * An invariant build (common/check.h) runs the check inside free() and
 * aborts with its answer, which a child process shows. */
static void
free_deferred(void *arg)
{
    vfdswmr_space_free(arg, 2, 1);
}

static void
test_check_reports_overlap(void **state)
{
    (void)state;
    vfdswmr_space_t *s = six_singles();

    assert_int_equal(vfdswmr_space_defer(s, 2, 1, 1), 0);
#ifdef VFDSWMR_INVARIANTS
    expect_abort(free_deferred, s, "invariant violated: check_all(");
    expect_abort(free_deferred, s, " (deferred runs overlap each other or free runs)\n");
    assert_null(vfdswmr_space_check(s)); /* the child's free() changed nothing here */
#else
    free_deferred(s);
    assert_string_equal(vfdswmr_space_check(s), "deferred runs overlap each other or free runs");
#endif
    vfdswmr_space_destroy(s);
}

/* ---------------------------------------------------------------------- */
/* Randomized simulation of a writer against a shadow model               */

#define MAX_IMAGE_PAGES  8 /* image sizes are 1..8 pages */
#define MAX_OPS_PER_TICK 8

enum page_state { P_FREE, P_ALLOC, P_DEFER };

struct image {
    uint64_t page, n;
    uint64_t born; /* tick of allocation: not yet published in that tick */
};

struct pending {
    uint64_t page, n, tag;
};

struct sim_params {
    uint64_t seed;
    uint64_t steps; /* stop after this many API calls */
    size_t target;  /* live images in steady state */
    uint32_t lag;   /* max_lag, 3..10 */
    uint64_t reserved;
    bool release; /* false: never release (the bound must then break) */
};

struct sim {
    const struct sim_params *p;
    vfdswmr_space_t *s;
    uint64_t rng;
    uint8_t *map; /* enum page_state of every page below cap */
    uint64_t cap;
    uint64_t eof, alloc_pages, deferred_pages; /* the model's view */
    struct image *live;
    size_t nlive;
    struct pending *q; /* deferred runs, oldest first: q[qhead..qlen) */
    size_t qhead, qlen, qcap;
    uint64_t tick, steps, max_eof, bound;
};

#define SIM_ASSERT(sim, cond)                                                                   \
    do {                                                                                        \
        if (!(cond))                                                                            \
            fail_msg("seed %llu, step %llu, tick %llu: %s", (unsigned long long)(sim)->p->seed, \
                     (unsigned long long)(sim)->steps, (unsigned long long)(sim)->tick, #cond); \
    } while (0)

/* splitmix64 */
static uint64_t
rnd(struct sim *sim, uint64_t bound)
{
    uint64_t z = (sim->rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return (z ^ (z >> 31)) % bound;
}

/*
 * The steady-state bound on eof. Pages not free at any moment are at most
 *   reserved
 *   + 8 * target               live images of at most 8 pages,
 *   + 8 * MAX_OPS_PER_TICK * lag  deferred pages: a tick defers at most one
 *                              image per operation, and after the release at
 *                              the start of tick t only tags t-lag+1..t stay,
 *   + 8                        the one image in flight (a replacement is
 *                              allocated before its predecessor is deferred,
 *                              a scratch image before it is freed).
 * That sum, N, is a hard limit. First fit leaves holes between those pages;
 * the bound allows as many hole pages as N (factor 2). That is no worst-case
 * theorem (adversarial request sequences can fragment first fit more), but
 * for sizes 1..8 chosen at random it is generous: the runs below peak at an
 * eof of 0.47..0.68 N, at most 0.34 of the bound. It is still tight enough
 * to catch a missing release: deferred pages then grow by ~16 per tick
 * without limit and eof passes the bound after ~200 ticks, which
 * test_sim_bound_needs_release checks.
 */
static uint64_t
steady_state_bound(const struct sim_params *p)
{
    return 2 * (p->reserved + MAX_IMAGE_PAGES * (uint64_t)p->target +
                MAX_IMAGE_PAGES * MAX_OPS_PER_TICK * (uint64_t)p->lag + MAX_IMAGE_PAGES);
}

static void
set_pages(struct sim *sim, uint64_t page, uint64_t n, enum page_state st)
{
    if (page + n > sim->cap) {
        uint64_t cap = 2 * (page + n);
        sim->map = realloc(sim->map, cap);
        assert_non_null(sim->map);
        memset(sim->map + sim->cap, P_FREE, cap - sim->cap);
        sim->cap = cap;
    }
    memset(sim->map + page, st, n);
}

static void
model_shrink(struct sim *sim)
{
    while (sim->eof > sim->p->reserved && sim->map[sim->eof - 1] == P_FREE)
        sim->eof--;
}

/* Where first fit must put n pages, from the model. */
static uint64_t
model_first_fit(const struct sim *sim, uint64_t n)
{
    uint64_t run = 0;

    for (uint64_t p = sim->p->reserved; p < sim->eof; p++) {
        run = sim->map[p] == P_FREE ? run + 1 : 0;
        if (run == n)
            return p + 1 - n;
    }
    return sim->eof;
}

/* After every API call: the invariants, and counters equal to the model. */
static void
after_step(struct sim *sim)
{
    const char *err = vfdswmr_space_check(sim->s);
    uint64_t free_pages = sim->eof - sim->p->reserved - sim->alloc_pages - sim->deferred_pages;

    sim->steps++;
    if (err != NULL)
        fail_msg("seed %llu, step %llu: vfdswmr_space_check: %s", (unsigned long long)sim->p->seed,
                 (unsigned long long)sim->steps, err);
    SIM_ASSERT(sim, vfdswmr_space_eof(sim->s) == sim->eof);
    SIM_ASSERT(sim, vfdswmr_space_free_pages(sim->s) == free_pages);
    SIM_ASSERT(sim, vfdswmr_space_deferred_pages(sim->s) == sim->deferred_pages);
    SIM_ASSERT(sim, !sim->p->release || sim->eof <= sim->bound);
    if (sim->eof > sim->max_eof)
        sim->max_eof = sim->eof;
}

static struct image
sim_alloc(struct sim *sim)
{
    struct image im = {.n = 1 + rnd(sim, MAX_IMAGE_PAGES), .born = sim->tick};
    uint64_t expect = model_first_fit(sim, im.n);

    im.page = UINT64_MAX;
    SIM_ASSERT(sim, vfdswmr_space_alloc(sim->s, im.n, &im.page) == 0);
    /* Never a page that is allocated, or deferred and so possibly read by a
     * reader up to lag ticks behind: the model frees deferred pages only at
     * tag + lag. */
    for (uint64_t p = im.page; p < im.page + im.n; p++)
        SIM_ASSERT(sim, p >= sim->eof || sim->map[p] == P_FREE);
    SIM_ASSERT(sim, im.page == expect);
    set_pages(sim, im.page, im.n, P_ALLOC);
    sim->alloc_pages += im.n;
    if (im.page + im.n > sim->eof)
        sim->eof = im.page + im.n;
    after_step(sim);
    return im;
}

static void
sim_free(struct sim *sim, struct image im)
{
    vfdswmr_space_free(sim->s, im.page, im.n);
    set_pages(sim, im.page, im.n, P_FREE);
    sim->alloc_pages -= im.n;
    model_shrink(sim);
    after_step(sim);
}

static void
queue_push(struct sim *sim, struct pending d)
{
    if (sim->qlen == sim->qcap && sim->qhead > 0) {
        memmove(sim->q, sim->q + sim->qhead, (sim->qlen - sim->qhead) * sizeof *sim->q);
        sim->qlen -= sim->qhead;
        sim->qhead = 0;
    }
    if (sim->qlen == sim->qcap) {
        sim->qcap = sim->qcap ? 2 * sim->qcap : 64;
        sim->q = realloc(sim->q, sim->qcap * sizeof *sim->q);
        assert_non_null(sim->q);
    }
    sim->q[sim->qlen++] = d;
}

static void
sim_defer(struct sim *sim, struct image im)
{
    SIM_ASSERT(sim, vfdswmr_space_defer(sim->s, im.page, im.n, sim->tick) == 0);
    set_pages(sim, im.page, im.n, P_DEFER);
    sim->alloc_pages -= im.n;
    sim->deferred_pages += im.n;
    queue_push(sim, (struct pending){im.page, im.n, sim->tick});
    after_step(sim);
}

static void
sim_release(struct sim *sim)
{
    uint64_t expect = 0;

    for (; sim->qhead < sim->qlen && sim->q[sim->qhead].tag + sim->p->lag <= sim->tick; sim->qhead++) {
        const struct pending *d = &sim->q[sim->qhead];
        set_pages(sim, d->page, d->n, P_FREE);
        sim->deferred_pages -= d->n;
        expect += d->n;
    }
    model_shrink(sim);
    SIM_ASSERT(sim, vfdswmr_space_release(sim->s, sim->tick, sim->p->lag) == expect);
    after_step(sim);
}

/* An image leaves the index: deferred, or freed at once if never published. */
static void
sim_retire(struct sim *sim, struct image im)
{
    if (im.born == sim->tick)
        sim_free(sim, im);
    else
        sim_defer(sim, im);
}

static void
sim_op(struct sim *sim)
{
    if (sim->nlive < sim->p->target)
        sim->live[sim->nlive++] = sim_alloc(sim);
    else if (rnd(sim, 10) < 8) { /* supersede a live image */
        size_t i = (size_t)rnd(sim, sim->nlive);
        struct image old = sim->live[i];
        sim->live[i] = sim_alloc(sim);
        sim_retire(sim, old);
    }
    else /* a scratch image, abandoned before publication */
        sim_free(sim, sim_alloc(sim));
}

static void
sim_tick(struct sim *sim)
{
    uint64_t ops = 1 + rnd(sim, MAX_OPS_PER_TICK);

    sim->tick++;
    if (sim->p->release)
        sim_release(sim);
    for (uint64_t i = 0; i < ops; i++)
        sim_op(sim);
}

/* Run until p->steps API calls, or (without release) until eof passes the
 * bound. Returns the largest eof seen. */
static uint64_t
simulate(const struct sim_params *p)
{
    struct sim sim = {.p = p, .rng = p->seed, .eof = p->reserved, .bound = steady_state_bound(p)};
    uint64_t max_eof;

    sim.s = new_space(p->reserved);
    sim.live = calloc(p->target, sizeof *sim.live);
    assert_non_null(sim.live);
    while (sim.steps < p->steps && (p->release || sim.eof <= sim.bound))
        sim_tick(&sim);
    print_message("seed %llu: %llu steps, %llu ticks, max eof %llu, bound %llu\n", (unsigned long long)p->seed,
                  (unsigned long long)sim.steps, (unsigned long long)sim.tick, (unsigned long long)sim.max_eof,
                  (unsigned long long)sim.bound);
    max_eof = sim.max_eof;
    vfdswmr_space_destroy(sim.s);
    free(sim.map);
    free(sim.live);
    free(sim.q);
    return max_eof;
}

static void
test_sim_long(void **state)
{
    (void)state;
    const struct sim_params p = {.seed = 1, .steps = 200000, .target = 200, .lag = 3, .reserved = 1, .release = true};

    assert_true(simulate(&p) <= steady_state_bound(&p));
}

static void
test_sim_seeds(void **state)
{
    (void)state;
    static const struct sim_params runs[] = {
        {.seed = 2, .steps = 40000, .target = 50, .lag = 10, .reserved = 2, .release = true},
        {.seed = 3, .steps = 40000, .target = 500, .lag = 7, .reserved = 1, .release = true},
        {.seed = 4, .steps = 40000, .target = 5, .lag = 4, .reserved = 3, .release = true},
        {.seed = 5, .steps = 40000, .target = 120, .lag = 5, .reserved = 8, .release = true},
    };

    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        assert_true(simulate(&runs[i]) <= steady_state_bound(&runs[i]));
}

/* The bound is not vacuous: without release the same writer breaks it. */
static void
test_sim_bound_needs_release(void **state)
{
    (void)state;
    const struct sim_params p = {.seed = 1, .steps = 200000, .target = 200, .lag = 3, .reserved = 1, .release = false};

    assert_true(simulate(&p) > steady_state_bound(&p));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_destroy),
        cmocka_unit_test(test_reserved_never_handed_out),
        cmocka_unit_test(test_first_fit_lowest_hole),
        cmocka_unit_test(test_first_fit_not_best_fit),
        cmocka_unit_test(test_alloc_at_eof_when_no_hole_fits),
        cmocka_unit_test(test_exact_fit),
        cmocka_unit_test(test_split_run),
        cmocka_unit_test(test_coalesce_left),
        cmocka_unit_test(test_coalesce_right),
        cmocka_unit_test(test_coalesce_both),
        cmocka_unit_test(test_free_last_shrinks_eof),
        cmocka_unit_test(test_release_exactly_at_tag_plus_max_lag),
        cmocka_unit_test(test_release_at_eof_shrinks),
        cmocka_unit_test(test_defer_tags_out_of_order),
        cmocka_unit_test(test_release_overflow_safe),
        cmocka_unit_test(test_invalid_ranges_ignored),
        cmocka_unit_test(test_alloc_rejects),
        cmocka_unit_test(test_top_of_address_space),
        cmocka_unit_test(test_allocated),
        cmocka_unit_test(test_check_reports_overlap),
        cmocka_unit_test(test_sim_long),
        cmocka_unit_test(test_sim_seeds),
        cmocka_unit_test(test_sim_bound_needs_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
