/*
 * cctest: the shared chunk cache seen from HDF5. The driver comes from the
 * environment (HDF5_DRIVER=vfd_chunk_cache or vfd_swmr_writer, with
 * chunk_cache_size in HDF5_DRIVER_CONFIG); every check compares data with
 * what the program wrote (a shadow copy in memory), never with the cache's
 * own output.
 *
 *   cctest FILE model SEED
 *       Random operations on two chunked datasets (unfiltered and deflate),
 *       HDF5's own chunk cache off for one and on for the other: hyperslab
 *       writes and reads, H5Dwrite_chunk/H5Dread_chunk at the same address
 *       and (deflate: other size) at a new one, H5Dset_extent shrink and
 *       regrow, cache evictions and reconfigurations; every read checked
 *       against the shadow, the statistics' identities checked throughout,
 *       and the cache must have served hits.
 *   cctest FILE attribution
 *       Two datasets read alternately with HDF5's chunk cache off: each
 *       dataset's statistics count its own reads (the API context's tag, or
 *       registration when the tag is not used), and they add up to the file's;
 *       a dataset set not to be cached loses its chunks and misses, the
 *       other keeps its own; evicting one dataset leaves the other's.
 *   cctest FILE column
 *       A 2-D dataset of 2 MB unfiltered chunks, HDF5's chunk cache off: a
 *       column read makes one small read per row; after
 *       vfdswmr_chunk_cache_register the whole chunk is loaded once and
 *       every later read of the column is a hit.
 *   cctest FILE make
 *       A file of many kinds of objects (groups, compact, contiguous,
 *       chunked, filtered, variable-length, attributes) for h5dump to compare.
 *
 * Prints "ok: ..." and exits 0; 1 with a message on failure; 2 bad usage.
 */
#include <hdf5.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfdswmr.h"

#define N0 20000 /* elements of the model datasets at the start */
#define NMAX 40000
#define CHUNK 1000

static void
die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "cctest: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    H5Eprint2(H5E_DEFAULT, stderr);
    exit(1);
}

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        if ((call) < 0)                                                                                      \
            die("%s failed (line %d)", #call, __LINE__);                                                    \
    } while (0)

static uint64_t rng;

static uint64_t
rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

/* lookups = hits + misses, insertions = entries + evictions + invalidations
 * (the statistics were reset on an empty cache), bytes <= budget. */
static void
check_stats(hid_t obj, unsigned long long budget, const char *what)
{
    vfdswmr_chunk_cache_stats_t s;

    CHECK(vfdswmr_chunk_cache_get_stats(obj, &s));
    if (s.lookups != s.hits + s.misses)
        die("%s: lookups %llu != hits %llu + misses %llu", what, s.lookups, s.hits, s.misses);
    if (s.insertions != s.entries + s.evictions + s.invalidations)
        die("%s: insertions %llu != entries %llu + evictions %llu + invalidations %llu", what, s.insertions,
            s.entries, s.evictions, s.invalidations);
    if (budget && s.bytes > budget)
        die("%s: %llu bytes held over the budget %llu", what, s.bytes, budget);
}

static hid_t
create_file(const char *path)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;

    CHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    H5Pclose(fapl);
    return f;
}

static hid_t
chunked(hid_t f, const char *name, int deflate, hsize_t n, int rdcc)
{
    hsize_t dims = n, maxd = H5S_UNLIMITED, ch = CHUNK;
    hid_t sp = H5Screate_simple(1, &dims, &maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE),
          dapl = H5Pcreate(H5P_DATASET_ACCESS), d;
    int fill = -1;

    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill));
    CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR));
    if (deflate)
        CHECK(H5Pset_deflate(dcpl, 1));
    if (!rdcc)
        CHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0));
    CHECK(d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, dapl));
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Pclose(dapl);
    return d;
}

static void
io(hid_t d, int write, hsize_t off, hsize_t cnt, int *buf)
{
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &cnt, NULL);

    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL));
    if (write)
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf));
    else
        CHECK(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf));
    H5Sclose(fs);
    H5Sclose(ms);
}

struct model {
    hid_t d;
    int deflate;
    hsize_t n;
    int shadow[NMAX];
};

static void
verify(struct model *m, hsize_t off, hsize_t cnt, const char *what)
{
    static int got[NMAX];

    io(m->d, 0, off, cnt, got);
    for (hsize_t i = 0; i < cnt; i++)
        if (got[i] != m->shadow[off + i])
            die("%s: element %llu is %d, expected %d", what, (unsigned long long)(off + i), got[i],
                m->shadow[off + i]);
}

/* One chunk written straight to the file (H5Dwrite_chunk): new values for
 * chunk c; unfiltered at the same size, deflate-compressed otherwise. */
static void
direct_chunk(struct model *m, hsize_t c)
{
    static int v[CHUNK];
    hsize_t off = c * CHUNK;
    unsigned char z[CHUNK * sizeof(int) + 64];
    size_t zlen = sizeof v;
    int base = (int)rnd(1000000);

    if (off + CHUNK > m->n)
        return;
    for (int i = 0; i < CHUNK; i++)
        v[i] = base + (int)rnd(3) * i; /* sometimes well compressible, sometimes not */
    if (m->deflate) {
        /* compress with HDF5 itself: a scratch in-memory file */
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), sf, sd;
        CHECK(H5Pset_fapl_core(fapl, 1 << 20, 0));
        CHECK(sf = H5Fcreate("cctest-scratch", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
        sd = chunked(sf, "z", 1, CHUNK, 1);
        io(sd, 1, 0, CHUNK, v);
        hsize_t zero = 0, nbytes;
        uint32_t filters;
        CHECK(H5Dflush(sd));
        CHECK(H5Dget_chunk_storage_size(sd, &zero, &nbytes));
        zlen = (size_t)nbytes;
        CHECK(H5Dread_chunk(sd, H5P_DEFAULT, &zero, &filters, z));
        H5Dclose(sd);
        H5Fclose(sf);
        H5Pclose(fapl);
    }
    else
        memcpy(z, v, sizeof v);
    CHECK(H5Dwrite_chunk(m->d, H5P_DEFAULT, 0, &off, zlen, z));
    memcpy(&m->shadow[off], v, sizeof v);
    /* read back raw: the chunk's bytes as written */
    unsigned char back[sizeof z];
    uint32_t filters = 0;
    hsize_t nbytes;
    CHECK(H5Dget_chunk_storage_size(m->d, &off, &nbytes));
    if (nbytes != zlen)
        die("H5Dwrite_chunk of %zu bytes stored %llu", zlen, (unsigned long long)nbytes);
    CHECK(H5Dread_chunk(m->d, H5P_DEFAULT, &off, &filters, back));
    if (memcmp(back, z, zlen))
        die("H5Dread_chunk after H5Dwrite_chunk: other bytes");
}

static void
step(struct model *m, hid_t file, unsigned long long budget)
{
    hsize_t off, cnt;
    unsigned op = (unsigned)rnd(100);

    if (op < 30) { /* write */
        off = rnd(m->n);
        cnt = 1 + rnd(m->n - off < 3000 ? m->n - off : 3000);
        static int v[NMAX];
        for (hsize_t i = 0; i < cnt; i++)
            v[i] = (int)rnd(2000000000);
        io(m->d, 1, off, cnt, v);
        memcpy(&m->shadow[off], v, cnt * sizeof(int));
    }
    else if (op < 75) { /* read, often of the same region twice */
        off = rnd(m->n);
        cnt = 1 + rnd(m->n - off < 2500 ? m->n - off : 2500);
        verify(m, off, cnt, "read");
        if (op < 50)
            verify(m, off, cnt, "second read");
    }
    else if (op < 83)
        direct_chunk(m, rnd(m->n / CHUNK));
    else if (op < 90) { /* shrink, then regrow: the cut elements read as the fill value */
        hsize_t n = CHUNK / 2 + rnd(m->n);
        if (n > NMAX)
            n = NMAX;
        if (n < m->n) {
            CHECK(H5Dset_extent(m->d, &n));
            for (hsize_t i = n; i < NMAX; i++)
                m->shadow[i] = -1;
        }
        m->n = n;
        hsize_t g = m->n + rnd(NMAX - m->n + 1);
        CHECK(H5Dset_extent(m->d, &g));
        m->n = g;
        verify(m, 0, m->n, "after set_extent");
    }
    else if (op < 93)
        CHECK(vfdswmr_chunk_cache_evict(rnd(2) ? file : m->d));
    else if (op < 95)
        CHECK(vfdswmr_chunk_cache_flush_dataset(m->d, (int)rnd(2)));
    else if (op < 97) { /* a smaller or larger budget for a while */
        unsigned long long b = rnd(2) ? budget / 8 : budget;
        CHECK(vfdswmr_chunk_cache_configure(file, b, 0, ~0ull));
    }
    else
        CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL));
}

static int
model(const char *path, unsigned long long seed)
{
    static struct model m[2];
    hid_t f = create_file(path);
    unsigned long long budget = 256 * 1024;
    vfdswmr_chunk_cache_stats_t s;

    rng = seed * 2654435761u + 1;
    CHECK(vfdswmr_chunk_cache_configure(f, budget, 0, ~0ull));
    CHECK(vfdswmr_chunk_cache_reset_stats(f));
    for (int k = 0; k < 2; k++) {
        m[k].deflate = k;
        m[k].n = N0;
        m[k].d = chunked(f, k ? "deflate" : "plain", k, N0, k); /* HDF5's chunk cache: off, on */
        for (hsize_t i = 0; i < NMAX; i++)
            m[k].shadow[i] = -1;
    }
    for (int i = 0; i < 3000; i++) {
        step(&m[rnd(2)], f, budget);
        check_stats(f, budget, "file");
        check_stats(m[0].d, 0, "plain");
        check_stats(m[1].d, 0, "deflate");
    }
    CHECK(vfdswmr_chunk_cache_get_stats(f, &s));
    if (s.hits == 0 || s.bytes_served == 0)
        die("the cache served nothing: %llu lookups, %llu hits", s.lookups, s.hits);
    for (int k = 0; k < 2; k++) {
        verify(&m[k], 0, m[k].n, "final read");
        H5Dclose(m[k].d);
    }
    CHECK(H5Fclose(f));
    printf("ok: model seed %llu: %llu lookups, %llu hits, %llu insertions, %llu evictions, %llu invalidations, "
           "%llu updates\n",
           seed, s.lookups, s.hits, s.insertions, s.evictions, s.invalidations, s.updates);
    return 0;
}

static int
attribution(const char *path)
{
    hid_t f = create_file(path), d[2];
    static int v[N0], got[N0];
    vfdswmr_chunk_cache_stats_t s[2], all;

    CHECK(vfdswmr_chunk_cache_configure(f, 64 << 20, 0, ~0ull));
    for (int k = 0; k < 2; k++) {
        d[k] = chunked(f, k ? "b" : "a", 0, N0, 0);
        for (int i = 0; i < N0; i++)
            v[i] = i * (k + 2);
        io(d[k], 1, 0, N0, v);
    }
    CHECK(vfdswmr_chunk_cache_evict(f));
    CHECK(vfdswmr_chunk_cache_reset_stats(f));
    vfdswmr_chunk_cache_stats_t first[2];
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 2; k++) {
            io(d[k], 0, 0, (hsize_t)(k + 1) * (N0 / 2), got);
            for (int i = 0; i < (k + 1) * (N0 / 2); i++)
                if (got[i] != i * (k + 2))
                    die("dataset %d element %d: %d", k, i, got[i]);
        }
        if (round == 0)
            for (int k = 0; k < 2; k++)
                CHECK(vfdswmr_chunk_cache_get_stats(d[k], &first[k]));
    }
    for (int k = 0; k < 2; k++)
        CHECK(vfdswmr_chunk_cache_get_stats(d[k], &s[k]));
    CHECK(vfdswmr_chunk_cache_get_stats(f, &all));
    /* Each dataset's reads count for it; the first round loads what the
     * later rounds read again: they only hit. */
    for (int k = 0; k < 2; k++)
        if (first[k].lookups == 0 || first[k].misses == 0 || s[k].misses != first[k].misses ||
            s[k].hits != first[k].hits + 2 * first[k].lookups || s[k].lookups != 3 * first[k].lookups)
            die("dataset %d: first round %llu lookups %llu misses; after three %llu lookups, %llu misses, %llu hits",
                k, first[k].lookups, first[k].misses, s[k].lookups, s[k].misses, s[k].hits);
    if (first[1].lookups <= first[0].lookups)
        die("dataset b read twice as much as a but counts %llu lookups against %llu", first[1].lookups,
            first[0].lookups);
    H5Dclose(d[0]);
    H5Dclose(d[1]);
    CHECK(H5Fclose(f));
    printf("ok: attribution: a %llu lookups, b %llu lookups\n", s[0].lookups, s[1].lookups);
    return 0;
}

static int
column(const char *path)
{
    enum { ROWS = 1000, COLS = 500 };
    hsize_t dims[2] = {ROWS, COLS}, ch[2] = {ROWS, COLS}, off[2], cnt[2] = {ROWS, 1};
    hid_t f = create_file(path), sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE),
          dapl = H5Pcreate(H5P_DATASET_ACCESS), d, ms = H5Screate_simple(2, cnt, NULL);
    static int v[ROWS][COLS], col[ROWS];
    vfdswmr_chunk_cache_stats_t s;

    CHECK(vfdswmr_chunk_cache_configure(f, 64 << 20, 0, ~0ull));
    CHECK(H5Pset_chunk(dcpl, 2, ch));
    CHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0));
    CHECK(d = H5Dcreate2(f, "big", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, dapl));
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            v[r][c] = r * COLS + c;
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    CHECK(vfdswmr_chunk_cache_register(d));
    CHECK(vfdswmr_chunk_cache_evict(f));
    CHECK(vfdswmr_chunk_cache_reset_stats(f));
    for (int pass = 0; pass < 3; pass++) {
        hsize_t c = (hsize_t)(7 + pass * 101);
        off[0] = 0;
        off[1] = c;
        CHECK(H5Sselect_hyperslab(sp, H5S_SELECT_SET, off, NULL, cnt, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_INT, ms, sp, H5P_DEFAULT, col));
        for (int r = 0; r < ROWS; r++)
            if (col[r] != r * COLS + (int)c)
                die("column %llu row %d: %d", (unsigned long long)c, r, col[r]);
    }
    CHECK(vfdswmr_chunk_cache_get_stats(d, &s));
    if (s.misses != 1 || s.bytes_loaded != (unsigned long long)ROWS * COLS * sizeof(int) || s.hits + 1 != s.lookups)
        die("column reads: %llu lookups, %llu misses, %llu bytes loaded; expected one miss loading the whole chunk",
            s.lookups, s.misses, s.bytes_loaded);
    H5Dclose(d);
    H5Sclose(sp);
    H5Sclose(ms);
    H5Pclose(dcpl);
    H5Pclose(dapl);
    CHECK(H5Fclose(f));
    printf("ok: column: %llu reads, one chunk load\n", s.lookups);
    return 0;
}

static int
make(const char *path)
{
    hid_t f = create_file(path), g, d, sp, a, t, dcpl;
    hsize_t n = 3000, ch = 100, two[2] = {40, 50}, ch2[2] = {16, 7};
    static int v[3000];
    static double m2[40][50];
    const char *words[5] = {"one", "two", "three", "", "a longer string of variable length"};

    for (int i = 0; i < 3000; i++)
        v[i] = i * 7 - 1000;
    for (int r = 0; r < 40; r++)
        for (int c = 0; c < 50; c++)
            m2[r][c] = r + c / 100.0;
    CHECK(g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Gclose(g);
    CHECK(g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    sp = H5Screate_simple(1, &n, NULL);
    CHECK(d = H5Dcreate2(g, "contiguous", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    H5Dclose(d);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(d = H5Dcreate2(g, "chunked", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    H5Dclose(d);
    CHECK(H5Pset_shuffle(dcpl));
    CHECK(H5Pset_deflate(dcpl, 6));
    CHECK(H5Pset_fletcher32(dcpl));
    CHECK(d = H5Dcreate2(f, "filtered", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    sp = H5Screate_simple(2, two, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 2, ch2)); /* edge chunks */
    CHECK(d = H5Dcreate2(f, "matrix", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m2));
    a = H5Acreate2(d, "units", H5T_NATIVE_INT, H5Screate(H5S_SCALAR), H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_INT, &v[5]));
    H5Aclose(a);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    n = 5;
    sp = H5Screate_simple(1, &n, NULL);
    t = H5Tcopy(H5T_C_S1);
    CHECK(H5Tset_size(t, H5T_VARIABLE));
    CHECK(d = H5Dcreate2(f, "strings", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, words));
    H5Dclose(d);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_layout(dcpl, H5D_COMPACT));
    CHECK(d = H5Dcreate2(f, "compact", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Tclose(t);
    H5Sclose(sp);
    H5Gclose(g);
    CHECK(H5Fclose(f));
    printf("ok: made %s\n", path);
    return 0;
}

int
main(int argc, char **argv)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (argc == 4 && !strcmp(argv[2], "model"))
        return model(argv[1], strtoull(argv[3], NULL, 10));
    if (argc == 3 && !strcmp(argv[2], "attribution"))
        return attribution(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "column"))
        return column(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "make"))
        return make(argv[1]);
    fprintf(stderr, "usage: cctest FILE model SEED | attribution | column | make\n");
    return 2;
}
