/*
 * Writes seed inputs for the fuzz targets (tests/fuzz/fuzz_*.c):
 *
 *   seed TARGET DIR    TARGET is mdhdr, mdidx, udhdr, udcl, rawlog or kept:
 *                      files in DIR
 *   seed all DIR       every target, in DIR/<target>/
 *
 * Every seed is a valid structure behind the target's input prefix (see the
 * comment at the top of each fuzz_*.c), once with the checksum-fixing mode
 * bit clear and once with it set. Directories are created when missing.
 * Exit status 0 on success, 1 on a usage or I/O error (with a message).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "kept.h"
#include "le.h"

#define MODE_RESEAL 1u
#define MAX_SEED    4096

typedef struct seed_dir_t {
    const char *path;
    int count;
    int failed;
} seed_dir_t;

/* Writes prefix + body twice: mode bit 0 clear, then set. */
static void
emit(seed_dir_t *d, uint8_t *prefix, size_t plen, const uint8_t *body, size_t blen)
{
    for (unsigned mode = 0; mode <= MODE_RESEAL; mode++) {
        char name[4096];
        FILE *f;
        prefix[0] = (uint8_t)mode;
        snprintf(name, sizeof name, "%s/seed-%02d", d->path, ++d->count);
        if ((f = fopen(name, "wb")) == NULL || fwrite(prefix, 1, plen, f) != plen || fwrite(body, 1, blen, f) != blen ||
            fclose(f) != 0) {
            fprintf(stderr, "seed: cannot write %s: %s\n", name, strerror(errno));
            d->failed = 1;
        }
    }
}

/* Index of the valid page size in the targets' selector (512 << k). */
static uint32_t
selector(uint32_t page_size)
{
    uint32_t k = 0;
    while ((VFDSWMR_MIN_PAGE_SIZE << k) < page_size)
        k++;
    return k;
}

static void
seed_mdhdr(seed_dir_t *d)
{
    static const vfdswmr_mdhdr_t hdrs[] = {
        {.flags = 0,
         .page_size = 4096,
         .session = 0x0123456789abcdefull,
         .tick = 1,
         .index_offset = VFDSWMR_MDHDR_SIZE,
         .index_length = 32 + 32 * 3 + 8 * 4,
         .eoa = 1 << 20,
         .tick_len = 4,
         .max_lag = 7,
         .hdf5_id = 0x1234},
        {.flags = VFDSWMR_MDHDR_FINAL,
         .page_size = 512,
         .session = 7,
         .tick = 0,
         .index_offset = 72 + 216,
         .index_length = 32,
         .eoa = 0,
         .tick_len = 0,
         .max_lag = 3,
         .hdf5_id = 0},
        {.flags = VFDSWMR_MDHDR_FAILED,
         .page_size = 1u << 30,
         .session = UINT64_MAX,
         .tick = UINT64_MAX,
         .index_offset = UINT64_MAX - ((1u << 30) - 1),
         .index_length = 32 + 32 * 1000 + 8 * 3000,
         .eoa = UINT64_MAX,
         .tick_len = UINT32_MAX,
         .max_lag = UINT32_MAX,
         .hdf5_id = UINT64_MAX},
    };
    uint8_t mode[1], body[VFDSWMR_MDHDR_SIZE + 8];
    for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
        vfdswmr_mdhdr_encode(&hdrs[i], body);
        emit(d, mode, 1, body, VFDSWMR_MDHDR_SIZE);
    }
    memset(body + VFDSWMR_MDHDR_SIZE, 0xee, 8); /* a longer read: trailing bytes */
    emit(d, mode, 1, body, sizeof body);
}

static void
seed_udhdr(seed_dir_t *d)
{
    static const vfdswmr_udhdr_t hdrs[] = {
        {VFDSWMR_UD_CREATE_ONLY, 4096, 0x0123456789abcdefull, 0, 0, 0, 0},
        {0, 4096, 0x0123456789abcdefull, 1, 1, VFDSWMR_UDHDR_SIZE, 60 + 32 * 3},
        {VFDSWMR_UD_FINAL, 512, UINT64_MAX, UINT64_MAX, UINT64_MAX, VFDSWMR_UDHDR_SIZE, 60},
    };
    uint8_t mode[1], body[VFDSWMR_UDHDR_SIZE];
    for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
        vfdswmr_udhdr_encode(&hdrs[i], body);
        emit(d, mode, 1, body, sizeof body);
    }
}

static void
seed_mdidx(seed_dir_t *d)
{
    /* entries with 0, 2, 1, 0 and 3 ranges */
    static const vfdswmr_mdentry_t e[] = {
        {0, 1, 4096, 0x11111111, 0, 0}, {1, 2, 3 * 4096 + 5, 0x22222222, 0, 2}, {9, 6, 4096, 0x33333333, 2, 1},
        {10, 7, 1, 0x44444444, 3, 0},   {100, 8, 4096, 0x55555555, 3, 3},
    };
    static const vfdswmr_mdrange_t r[] = {{0, 16}, {4096, 3 * 4096 + 5 - 4096}, {100, 1}, {0, 1}, {1, 99}, {200, 3896}};
    static const uint32_t counts[] = {0, 1, 5}, nranges[] = {0, 0, 6};
    uint8_t prefix[5], body[MAX_SEED];
    vfdswmr_le_encode(prefix + 1, selector(4096), 4);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        vfdswmr_mdidx_t idx = {0x0123456789abcdefull,  1 + i,      counts[i],
                               (vfdswmr_mdentry_t *)e, nranges[i], (vfdswmr_mdrange_t *)r};
        vfdswmr_mdidx_encode(&idx, body);
        emit(d, prefix, sizeof prefix, body, vfdswmr_mdidx_size(counts[i], nranges[i]));
    }
}

/* A change list of n entries of the given lengths laid out as the writer
 * does; emitted with the exact updater file length. */
static void
seed_one_udcl(seed_dir_t *d, uint32_t ps, uint32_t n, const uint32_t *lengths)
{
    vfdswmr_udentry_t e[8];
    uint8_t prefix[13], body[MAX_SEED];
    uint64_t page = vfdswmr_pages(VFDSWMR_UDHDR_SIZE + vfdswmr_udcl_size(n), ps);
    for (uint32_t i = 0; i < n; i++) {
        e[i] = (vfdswmr_udentry_t){page, 1 + 3 * i, 2 * i, lengths[i], 0xabc00000u + i};
        page += vfdswmr_pages(lengths[i], ps);
    }
    vfdswmr_udcl_t cl = {.tick = 3,
                         .hdr_len = VFDSWMR_MDHDR_SIZE,
                         .hdr_checksum = 0x12345678,
                         .idx_ud_page = page,
                         .idx_md_offset = VFDSWMR_MDHDR_SIZE,
                         .idx_len = (uint32_t)vfdswmr_mdidx_size(n, 2 * n),
                         .idx_checksum = 0x9abcdef0,
                         .nentries = n,
                         .entries = e};
    cl.hdr_ud_page = page + vfdswmr_pages(cl.idx_len, ps);
    vfdswmr_le_encode(prefix + 1, selector(ps), 4);
    vfdswmr_le_encode(prefix + 5, cl.hdr_ud_page * ps + VFDSWMR_MDHDR_SIZE, 8);
    vfdswmr_udcl_encode(&cl, body);
    emit(d, prefix, sizeof prefix, body, vfdswmr_udcl_size(n));
}

static void
seed_udcl(seed_dir_t *d)
{
    static const uint32_t lengths[] = {512, 1000, 100, 512, 3 * 512 + 1};
    seed_one_udcl(d, 512, 0, lengths);
    seed_one_udcl(d, 512, 1, lengths);
    seed_one_udcl(d, 512, 5, lengths);
    seed_one_udcl(d, 4096, 3, lengths);
}

static void
seed_rawlog(seed_dir_t *d)
{
    static const vfdswmr_rawrange_t r[] = {{3, 4096, 100}, {4, 0, 1}, {4, 1 << 20, 4096}, {5, 12, UINT64_MAX - 12}};
    static const vfdswmr_rawloghdr_t hdrs[] = {{7, 1, 0, 0}, {7, 3, 5, 4}, {UINT64_MAX, 4, 4, 2}};
    uint8_t mode[1], body[MAX_SEED];
    for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
        vfdswmr_rawlog_encode(&hdrs[i], hdrs[i].first_tick == 4 ? r + 1 : r, body);
        emit(d, mode, 1, body, vfdswmr_rawlog_size(hdrs[i].count));
    }
}

static void
seed_kept(seed_dir_t *d)
{
    /* copies from VFDSWMR_KEPT_DATA_OFFSET on, as readers require; ticks
     * non-decreasing, with a tie; the last one at every limit (both ranges
     * end at 2^63, VFDSWMR_TICK_MAX) */
    static const vfdswmr_keptent_t few[] = {
        {1 << 20, 4096, 5, VFDSWMR_KEPT_DATA_OFFSET},
        {3 << 20, 1, 5, VFDSWMR_KEPT_DATA_OFFSET + 4096},
        {12345, 678, 9, VFDSWMR_KEPT_DATA_OFFSET + 8192},
        {(UINT64_C(1) << 63) - 10, 10, VFDSWMR_TICK_MAX, (UINT64_C(1) << 63) - 10},
    };
    static const uint32_t counts[] = {0, 3, 4};
    vfdswmr_keptent_t many[VFDSWMR_KEPT_MAX]; /* the longest list: one per tick */
    uint8_t mode[1], body[MAX_SEED];
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        vfdswmr_kepthdr_t h = {0x0123456789abcdefull + i, counts[i]};
        vfdswmr_kept_encode(&h, few, body);
        emit(d, mode, 1, body, vfdswmr_kept_size(counts[i]));
    }
    for (uint32_t i = 0; i < VFDSWMR_KEPT_MAX; i++)
        many[i] =
            (vfdswmr_keptent_t){(uint64_t)i << 16, 100 + i, 10 + i, VFDSWMR_KEPT_DATA_OFFSET + 4096 * (uint64_t)i};
    vfdswmr_kepthdr_t h = {UINT64_MAX, VFDSWMR_KEPT_MAX};
    vfdswmr_kept_encode(&h, many, body);
    emit(d, mode, 1, body, vfdswmr_kept_size(VFDSWMR_KEPT_MAX));
}

static const struct {
    const char *name;
    void (*write)(seed_dir_t *d);
} targets[] = {{"mdhdr", seed_mdhdr}, {"mdidx", seed_mdidx},   {"udhdr", seed_udhdr},
               {"udcl", seed_udcl},   {"rawlog", seed_rawlog}, {"kept", seed_kept}};

static int
make_dir(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "seed: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int
run(size_t t, const char *dir)
{
    seed_dir_t d = {.path = dir};
    if (make_dir(dir) != 0)
        return 1;
    targets[t].write(&d);
    return d.failed;
}

int
main(int argc, char **argv)
{
    size_t ntargets = sizeof targets / sizeof targets[0];
    int status = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: seed {mdhdr|mdidx|udhdr|udcl|rawlog|kept} DIR | seed all DIR\n");
        return 1;
    }
    if (strcmp(argv[1], "all") == 0) {
        if (make_dir(argv[2]) != 0)
            return 1;
        for (size_t t = 0; t < ntargets; t++) {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", argv[2], targets[t].name);
            status |= run(t, sub);
        }
        return status;
    }
    for (size_t t = 0; t < ntargets; t++)
        if (strcmp(argv[1], targets[t].name) == 0)
            return run(t, argv[2]);
    fprintf(stderr, "seed: unknown target \"%s\" (mdhdr, mdidx, udhdr, udcl, rawlog, kept or all)\n", argv[1]);
    return 1;
}
