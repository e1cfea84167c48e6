/*
 * bench_space.c - steady-state throughput of the metadata file space manager
 * (mdfile/space.c).
 *
 * A writer keeps L live images of 1..8 pages. One operation supersedes a
 * random live image: allocate its replacement, defer the old one with the
 * current tick; every OPS_PER_TICK operations the tick advances and expired
 * space is released with max_lag = MAX_LAG. After a warm-up the time of
 * OPS operations is measured; ns/op covers one alloc, one defer and the
 * share of the release work. Prints a Markdown table.
 *
 * Build and run:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Imdfile mdfile/space.c bench/bench_space.c \
 *       $(pkg-config --cflags --libs libbsd) -o /tmp/bench_space && /tmp/bench_space
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "space.h"

#define MAX_IMAGE_PAGES 8
#define OPS_PER_TICK    100
#define MAX_LAG         5
#define OPS             2000000

struct image {
    uint64_t page, n;
};

struct bench {
    vfdswmr_space_t *s;
    struct image *live;
    size_t nlive;
    uint64_t tick, rng;
};

/* splitmix64 */
static uint64_t
rnd(struct bench *b, uint64_t bound)
{
    uint64_t z = (b->rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return (z ^ (z >> 31)) % bound;
}

static void
die(const char *what)
{
    fprintf(stderr, "bench_space: %s\n", what);
    exit(1);
}

static struct image
new_image(struct bench *b)
{
    struct image im = {.n = 1 + rnd(b, MAX_IMAGE_PAGES)};

    if (vfdswmr_space_alloc(b->s, im.n, &im.page) < 0)
        die("allocation failed");
    return im;
}

/* Supersede one live image; every OPS_PER_TICK calls, end the tick. */
static void
operation(struct bench *b, uint64_t i)
{
    struct image *slot = &b->live[rnd(b, b->nlive)];
    struct image old = *slot;

    *slot = new_image(b);
    if (vfdswmr_space_defer(b->s, old.page, old.n, b->tick) < 0)
        die("out of memory");
    if (i % OPS_PER_TICK == OPS_PER_TICK - 1)
        vfdswmr_space_release(b->s, ++b->tick, MAX_LAG);
}

static void
run(size_t nlive)
{
    struct bench b = {.nlive = nlive, .rng = nlive};
    const char *err;
    double t0, t1;

    if ((b.s = vfdswmr_space_new(1)) == NULL || (b.live = malloc(nlive * sizeof *b.live)) == NULL)
        die("out of memory");
    for (size_t i = 0; i < nlive; i++)
        b.live[i] = new_image(&b);
    for (uint64_t i = 0; i < 4 * (uint64_t)nlive + OPS; i++) /* warm-up: every image replaced */
        operation(&b, i);
    t0 = vfdswmr_now();
    for (uint64_t i = 0; i < OPS; i++)
        operation(&b, i);
    t1 = vfdswmr_now();
    if ((err = vfdswmr_space_check(b.s)) != NULL)
        die(err);
    printf("| %7zu | %9d | %6.1f | %9llu | %10llu | %14llu |\n", nlive, OPS, (t1 - t0) * 1e9 / OPS,
           (unsigned long long)vfdswmr_space_eof(b.s), (unsigned long long)vfdswmr_space_free_pages(b.s),
           (unsigned long long)vfdswmr_space_deferred_pages(b.s));
    vfdswmr_space_destroy(b.s);
    free(b.live);
}

int
main(void)
{
    printf("Steady state: images of 1..8 pages, %d supersessions per tick, max_lag %d.\n\n", OPS_PER_TICK, MAX_LAG);
    printf("| live images | operations | ns/op | eof pages | free pages | deferred pages |\n");
    printf("|---:|---:|---:|---:|---:|---:|\n");
    run(1000);
    run(10000);
    run(100000);
    return 0;
}
