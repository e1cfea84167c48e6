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
 *   cctest FILE attribution [register]
 *       Two datasets read alternately with HDF5's chunk cache off: each
 *       dataset's statistics count its own reads (the API context's tag, or
 *       registration when the tag is not used or `register` asks for it:
 *       run it with chunk_cache_tag=0 then), and they add up to the file's;
 *       a dataset set not to be cached loses its chunks and misses, the
 *       other keeps its own; evicting one dataset leaves the other's.
 *   cctest FILE column
 *       A 2-D dataset of 2 MB unfiltered chunks, HDF5's chunk cache off: a
 *       column read makes one small read per row; after
 *       vfdswmr_chunk_cache_register the whole chunk is loaded once and
 *       every later read of the column is a hit.
 *   cctest FILE readahead on|off
 *       As column, without registration: the environment's configuration
 *       says chunk_cache_readahead=1 (on: after a few misses at the row's
 *       stride the cache loads growing windows ahead, so three columns cost
 *       a few dozen misses and at most three chunks' bytes; every value
 *       checked) or 0 (off: no read is served). Then (on) a column next to
 *       the cached one is rewritten in place, one small write per row, and
 *       read back: the windows took the new values; a dataset set not to
 *       be cached reads no window (bytes read, /proc/self/io), nor does a
 *       column at a 32 KiB stride ("wide"). (An HDF5 that reads such a
 *       column in large pieces of its own -- 2.2 does -- is only checked for
 *       the values and the rewrite.)
 *   cctest FILE make
 *       A file of many kinds of objects (groups, compact, contiguous,
 *       chunked, filtered, variable-length, attributes) for h5dump to compare.
 *   cctest FILE bigentry
 *       As column, with the cache as the environment configured it, then
 *       configured with a largest entry (1 TiB) above its budget (64 KiB):
 *       a column read must not read the 2 MB chunk from the file once per
 *       row (bytes read counted in /proc/self/io).
 *   cctest FILE legacy [DRIVER CONFIG]
 *       HDF5's own SWMR: this process writes (H5Fstart_swmr_write), a copy
 *       of it (same environment; through DRIVER with CONFIG, when given)
 *       reads with H5F_ACC_SWMR_READ. The writer
 *       appends into the chunk the reader read, then rewrites every element
 *       in place; after each H5Drefresh the reader must see the new values.
 *       Configuring a cache on the SWMR-read file must fail (but through
 *       vfd_swmr_reader, which drops its cache at every such refresh).
 *   cctest FILE ctl
 *       H5FDctl on the driver's handle with NULL and absurd arguments, for
 *       every vfd-swmr operation: errors, never a crash; the file stays right.
 *
 * Prints "ok: ..." and exits 0; 1 with a message on failure; 2 bad usage.
 */
#include <hdf5.h>
#include <H5FDdevelop.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A chunk's bytes as stored (len: the buffer's size). HDF5 2.x's
 * H5Dread_chunk (H5Dread_chunk2) takes the buffer's size; 1.14's does not. */
static herr_t
read_chunk(hid_t d, const hsize_t *off, uint32_t *filters, void *buf, size_t len)
{
#if H5_VERSION_GE(2, 0, 0)
    return H5Dread_chunk2(d, H5P_DEFAULT, off, filters, buf, &len);
#else
    (void)len;
    return H5Dread_chunk(d, H5P_DEFAULT, off, filters, buf);
#endif
}

#include "vfdswmr.h"

#define N0    20000 /* elements of the model datasets at the start */
#define NMAX  40000
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

#define CHECK(call)                                      \
    do {                                                 \
        if ((call) < 0)                                  \
            die("%s failed (line %d)", #call, __LINE__); \
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
        die("%s: insertions %llu != entries %llu + evictions %llu + invalidations %llu", what, s.insertions, s.entries,
            s.evictions, s.invalidations);
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
            die("%s: element %llu is %d, expected %d", what, (unsigned long long)(off + i), got[i], m->shadow[off + i]);
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
        CHECK(read_chunk(sd, &zero, &filters, z, sizeof z));
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
    CHECK(read_chunk(m->d, &off, &filters, back, sizeof back));
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

/* Do the drivers attribute raw reads to datasets through HDF5's API
 * context here? Only on the HDF5 versions where that was checked, 1.14.5
 * and 2.2.0 (chunk-cache/ccfile.c, find_tag_fn); elsewhere datasets are
 * registered. */
static bool
tag_attribution(void)
{
    unsigned maj, min, rel;

    return H5get_libversion(&maj, &min, &rel) >= 0 &&
           ((maj == 1 && min == 14 && rel == 5) || (maj == 2 && min == 2 && rel == 0));
}

static int
attribution(const char *path, bool reg)
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
        if (reg || !tag_attribution())
            CHECK(vfdswmr_chunk_cache_register(d[k]));
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
            die("dataset %d: first round %llu lookups %llu misses; after three %llu lookups, %llu misses, %llu hits", k,
                first[k].lookups, first[k].misses, s[k].lookups, s[k].misses, s[k].hits);
    if (first[1].lookups <= first[0].lookups)
        die("dataset b read twice as much as a but counts %llu lookups against %llu", first[1].lookups,
            first[0].lookups);
    H5Dclose(d[0]);
    H5Dclose(d[1]);
    CHECK(H5Fclose(f));
    printf("ok: attribution (%s): a %llu lookups, b %llu lookups\n",
           reg || !tag_attribution() ? "registered" : "API context", s[0].lookups, s[1].lookups);
    return 0;
}

/* The big-chunk dataset of column and bigentry: 1000 x 500 ints in one
 * unfiltered chunk (2 MB, larger than HDF5's chunk cache, which is off
 * anyway), element (r, c) = r * 500 + c, registered with the shared cache. */
enum { BIG_ROWS = 1000, BIG_COLS = 500 };
#define BIG_CHUNK ((unsigned long long)BIG_ROWS * BIG_COLS * sizeof(int))

/* A 2-D int32 dataset `name` of rows x cols in one chunk, (r, c) = r * cols
 * + c, HDF5's chunk cache off; registered with the shared cache when reg. */
static hid_t
grid_dataset(hid_t f, const char *name, hsize_t rows, hsize_t cols, bool reg)
{
    hsize_t dims[2] = {rows, cols};
    hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE),
          dapl = H5Pcreate(H5P_DATASET_ACCESS), d;
    int *v = malloc(rows * cols * sizeof *v);

    if (v == NULL)
        die("out of memory");
    CHECK(H5Pset_chunk(dcpl, 2, dims));
    CHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0));
    CHECK(d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, dapl));
    for (hsize_t i = 0; i < rows * cols; i++)
        v[i] = (int)i;
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    if (reg)
        CHECK(vfdswmr_chunk_cache_register(d));
    free(v);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Pclose(dapl);
    return d;
}

static hid_t
big_dataset(hid_t f)
{
    return grid_dataset(f, "big", BIG_ROWS, BIG_COLS, true);
}

/* Read (or write, with values r * cols + c + add) column c of a grid
 * dataset of `rows` rows and `cols` columns: one small read or write per
 * row; a read is checked. */
static void
grid_column_io(hid_t d, hsize_t rows, hsize_t cols, hsize_t c, bool write, int add)
{
    hsize_t off[2] = {0, c}, cnt[2] = {rows, 1};
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(2, cnt, NULL);
    int *col = malloc(rows * sizeof *col);

    if (col == NULL)
        die("out of memory");
    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL));
    if (write) {
        for (hsize_t r = 0; r < rows; r++)
            col[r] = (int)(r * cols + c) + add;
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, col));
    }
    else {
        CHECK(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, col));
        for (hsize_t r = 0; r < rows; r++)
            if (col[r] != (int)(r * cols + c) + add)
                die("column %llu row %llu: %d, expected %d", (unsigned long long)c, (unsigned long long)r, col[r],
                    (int)(r * cols + c) + add);
    }
    free(col);
    H5Sclose(fs);
    H5Sclose(ms);
}

/* Read column c of the big dataset (one small read per row) and check it. */
static void
big_column(hid_t d, hsize_t c)
{
    grid_column_io(d, BIG_ROWS, BIG_COLS, c, false, 0);
}

/* "wide": 64 rows of 8192 int32 in one 2 MiB chunk (rows of 32 KiB). */
enum { WIDE_ROWS = 64, WIDE_COLS = 8192 };

static unsigned long long bytes_read(void);

static int
readahead(const char *path, bool on)
{
    hid_t f = create_file(path), d;
    vfdswmr_chunk_cache_stats_t s;

    CHECK(vfdswmr_chunk_cache_configure(f, 64 << 20, 0, ~0ull));
    d = grid_dataset(f, "big", BIG_ROWS, BIG_COLS, false);
    CHECK(vfdswmr_chunk_cache_evict(f));
    CHECK(vfdswmr_chunk_cache_reset_stats(f));
    for (int pass = 0; pass < 3; pass++)
        big_column(d, (hsize_t)(7 + pass * 101));
    CHECK(vfdswmr_chunk_cache_get_stats(f, &s));
    if (s.lookups != 3 * BIG_ROWS) {
        /* HDF5 2.2 reads such a column through a sieve of its own, 64 KiB a
         * read (31 reads for 1000 rows), each large enough to be cached as
         * it is: no small misses for read-ahead. What stays to check: the
         * values (above) and a column rewritten in place. */
        grid_column_io(d, BIG_ROWS, BIG_COLS, 8, true, 1000000);
        grid_column_io(d, BIG_ROWS, BIG_COLS, 8, false, 1000000);
        big_column(d, 7);
        printf("ok: readahead %s: this HDF5 reads a column in %llu reads of its own, not one per row (nothing small "
               "to read ahead of); a rewritten column reads new\n",
               on ? "on" : "off", s.lookups / 3);
        H5Dclose(d);
        CHECK(H5Fclose(f));
        return 0;
    }
    if (!on) {
        if (s.hits != 0 || s.bytes_loaded != 0)
            die("readahead off: %llu hits, %llu bytes loaded; expected none", s.hits, s.bytes_loaded);
        printf("ok: readahead off: %llu column reads, none served\n", s.lookups);
    }
    else {
        if (s.misses > 64 || s.bytes_loaded > 3 * BIG_CHUNK)
            die("readahead: %llu of %llu reads missed, %llu bytes loaded (the chunk is %llu)", s.misses, s.lookups,
                s.bytes_loaded, BIG_CHUNK);
        /* the windows hold column 8 too: rewritten in place, read back new */
        grid_column_io(d, BIG_ROWS, BIG_COLS, 8, true, 1000000);
        grid_column_io(d, BIG_ROWS, BIG_COLS, 8, false, 1000000);
        big_column(d, 7);
        /* a dataset set not to be cached: no window is read for it */
        unsigned long long before = bytes_read(), got;
        CHECK(vfdswmr_chunk_cache_set_dataset(d, ~0ull, 1));
        big_column(d, 300);
        if (before != ULLONG_MAX && (got = bytes_read() - before) > (64u << 10))
            die("readahead: a column of a no-cache dataset read %llu bytes from the file", got);
        CHECK(vfdswmr_chunk_cache_set_dataset(d, ~0ull, 0));
        /* rows wider than a stream's stride limit (32 KiB): no window either */
        vfdswmr_chunk_cache_stats_t w;
        hid_t wide = grid_dataset(f, "wide", WIDE_ROWS, WIDE_COLS, false);
        CHECK(vfdswmr_chunk_cache_reset_stats(f));
        grid_column_io(wide, WIDE_ROWS, WIDE_COLS, 5, false, 0);
        CHECK(vfdswmr_chunk_cache_get_stats(wide, &w));
        if (w.bytes_loaded != 0)
            die("readahead: a column at a 32 KiB stride loaded %llu bytes", w.bytes_loaded);
        H5Dclose(wide);
        printf("ok: readahead: %llu column reads, %llu missed, %llu bytes loaded; a rewritten column reads new; no "
               "window for a no-cache dataset or a 32 KiB stride\n",
               s.lookups, s.misses, s.bytes_loaded);
    }
    H5Dclose(d);
    CHECK(H5Fclose(f));
    return 0;
}

static int
column(const char *path)
{
    hid_t f = create_file(path), d;
    vfdswmr_chunk_cache_stats_t s;

    CHECK(vfdswmr_chunk_cache_configure(f, 64 << 20, 0, ~0ull));
    d = big_dataset(f);
    CHECK(vfdswmr_chunk_cache_evict(f));
    CHECK(vfdswmr_chunk_cache_reset_stats(f));
    for (int pass = 0; pass < 3; pass++)
        big_column(d, (hsize_t)(7 + pass * 101));
    CHECK(vfdswmr_chunk_cache_get_stats(d, &s));
    if (s.misses != 1 || s.bytes_loaded != BIG_CHUNK || s.hits + 1 != s.lookups)
        die("column reads: %llu lookups, %llu misses, %llu bytes loaded; expected one miss loading the whole chunk",
            s.lookups, s.misses, s.bytes_loaded);
    H5Dclose(d);
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

/* Bytes this process read through read(2)/pread(2) so far (rchar), or
 * ULLONG_MAX when the kernel does not say. */
static unsigned long long
bytes_read(void)
{
    FILE *fp = fopen("/proc/self/io", "r");
    char line[128];
    unsigned long long v = ULLONG_MAX;

    if (fp == NULL)
        return v;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "rchar:", 6))
            v = strtoull(line + 6, NULL, 10);
    fclose(fp);
    return v;
}

static int
bigentry(const char *path)
{
    hid_t f, d;

    if (bytes_read() == ULLONG_MAX) {
        printf("ok: bigentry: skipped (no /proc/self/io)\n");
        return 0;
    }
    f = create_file(path);
    d = big_dataset(f);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) /* a largest entry above the budget, through the ctl */
            CHECK(vfdswmr_chunk_cache_configure(f, 64 << 10, 1ull << 40, ~0ull));
        CHECK(vfdswmr_chunk_cache_evict(f));
        unsigned long long before = bytes_read(), got;
        big_column(d, (hsize_t)(3 + pass));
        if ((got = bytes_read() - before) > 4 * BIG_CHUNK)
            die("%s: a column read of %d ints read %llu bytes from the file (the chunk is %llu bytes)",
                pass ? "max_entry 1T, size 64K (configure)" : "the environment's cache", BIG_ROWS, got, BIG_CHUNK);
    }
    H5Dclose(d);
    CHECK(H5Fclose(f));
    printf("ok: bigentry: a column read never loads a chunk the cache cannot keep\n");
    return 0;
}

/* The reader half of legacy: commands on fd 3 ('r': refresh and check the
 * round's values), answers on fd 4. */
static int
legacy_values(int round, int i)
{
    return round * 1000 + i + 1;
}

static int
legacy_reader(const char *path, const char *driver, const char *config)
{
    hid_t f, d, dapl = H5Pcreate(H5P_DATASET_ACCESS), fapl = H5Pcreate(H5P_FILE_ACCESS);
    static int got[1000];
    char cmd;

    if (driver)
        CHECK(H5Pset_driver_by_name(fapl, driver, config));
    if ((f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl)) < 0)
        die("legacy reader: H5Fopen(SWMR_READ)");
    /* vfd_swmr_reader keeps its cache (it drops it at every refresh without
     * a writer of its own); the others must refuse one. */
    H5E_BEGIN_TRY
    {
        if (vfdswmr_chunk_cache_configure(f, 1 << 20, 0, ~0ull) >= 0 &&
            (driver == NULL || strcmp(driver, VFDSWMR_READER_NAME) != 0))
            die("legacy reader: a chunk cache was configured on a file open for SWMR reading");
    }
    H5E_END_TRY
    CHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0)); /* HDF5's own: every read reaches the driver */
    CHECK(d = H5Dopen2(f, "x", dapl));
    for (int round = 0; read(3, &cmd, 1) == 1; round++) {
        hsize_t n;
        hid_t space;
        CHECK(H5Drefresh(d));
        CHECK(space = H5Dget_space(d));
        CHECK(H5Sget_simple_extent_dims(space, &n, NULL));
        H5Sclose(space);
        CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got));
        for (hsize_t i = 0; i < n; i++)
            if (got[i] != legacy_values(cmd - '0', (int)i))
                die("legacy reader, round %d: %llu elements, element %llu is %d, the file holds %d", round,
                    (unsigned long long)n, (unsigned long long)i, got[i], legacy_values(cmd - '0', (int)i));
        if (write(4, "k", 1) != 1)
            die("legacy reader: cannot answer");
    }
    H5Dclose(d);
    CHECK(H5Fclose(f));
    return 0;
}

static int
legacy(const char *self, const char *path, const char *driver, const char *config)
{
    hsize_t n = 10, maxd = H5S_UNLIMITED, ch = 100;
    hid_t f = create_file(path), sp = H5Screate_simple(1, &n, &maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    static int v[100];
    int to[2], from[2], status;
    char ans;
    pid_t pid;

    CHECK(H5Pset_chunk(dcpl, 1, &ch));
    CHECK(d = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    for (int i = 0; i < 100; i++)
        v[i] = legacy_values(0, i);
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    CHECK(H5Fstart_swmr_write(f));
    if (pipe(to) < 0 || pipe(from) < 0 || (pid = fork()) < 0)
        die("pipe/fork");
    if (pid == 0) {
        if (dup2(to[0], 3) < 0 || dup2(from[1], 4) < 0)
            _exit(1);
        close(to[1]); /* the reader must see the end of the commands */
        close(from[0]);
        if (driver)
            execl(self, self, path, "legacy-reader", driver, config, (char *)NULL);
        else
            execl(self, self, path, "legacy-reader", (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    /* round 0: as written; round 1: appended into the same chunk; round 2:
     * every element rewritten in place */
    for (int round = 0; round < 3; round++) {
        if (round == 1) {
            n = 50;
            CHECK(H5Dset_extent(d, &n));
        }
        if (round > 0) {
            for (int i = 0; i < 100; i++)
                v[i] = legacy_values(round, i);
            CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
            CHECK(H5Dflush(d));
            CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
        }
        char cmd = (char)('0' + round);
        if (write(to[1], &cmd, 1) != 1 || read(from[0], &ans, 1) != 1)
            break; /* the reader failed: its status says why */
    }
    close(to[1]);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the SWMR reader failed (status %d)", status);
    close(from[0]);
    H5Dclose(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
    CHECK(H5Fclose(f));
    printf("ok: legacy: an SWMR reader saw every append and every rewrite after H5Drefresh\n");
    return 0;
}

/* The driver's own handle (what the client library calls H5FDctl on). */
static H5FD_t *
driver_handle(hid_t file)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int marker = 0;
    void *h = NULL;

    CHECK(H5Pinsert2(fapl, VFDSWMR_HANDLE_PROPERTY, sizeof marker, &marker, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(H5Fget_vfd_handle(file, fapl, &h));
    H5Pclose(fapl);
    return h;
}

static int
ctl(const char *path)
{
    hid_t f = create_file(path), sp, d;
    H5FD_t *h = driver_handle(f);
    static const uint64_t ops[] = {VFDSWMR_CTL_END_TICK,     VFDSWMR_CTL_DISABLE_EOT,    VFDSWMR_CTL_ENABLE_EOT,
                                   VFDSWMR_CTL_REFRESH,      VFDSWMR_CTL_GET_STATUS,     VFDSWMR_CTL_CC_CONFIGURE,
                                   VFDSWMR_CTL_CC_GET_STATS, VFDSWMR_CTL_CC_RESET_STATS, VFDSWMR_CTL_CC_SET_DATASET,
                                   VFDSWMR_CTL_CC_EVICT,     VFDSWMR_CTL_CC_REGISTER};
    const vfdswmr_chunk_cache_config_t huge = {~0ull, ~0ull, ~0ull}, big = {1ull << 40, ~0ull - 1, ~0ull - 1};
    const unsigned long long odd = ~0ull - 1, wrap[2] = {~0ull - 10, 100};
    const vfdswmr_chunk_cache_chunks_t nochunks = {1, 5, NULL}, wrapping = {2, 1, wrap};
    const vfdswmr_chunk_cache_dataset_t ds = {~0ull - 1, ~0ull - 5, 1};
    void *nothing = NULL;
    int v[1000], got[1000];
    hsize_t n = 1000;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (uint64_t flags = 0; flags <= H5FD_CTL_FAIL_IF_UNKNOWN_FLAG; flags += H5FD_CTL_FAIL_IF_UNKNOWN_FLAG) {
            herr_t a = H5FDctl(h, ops[i], flags, NULL, NULL), b = H5FDctl(h, ops[i], flags, NULL, &nothing);
            if ((ops[i] == VFDSWMR_CTL_CC_CONFIGURE || ops[i] == VFDSWMR_CTL_CC_SET_DATASET ||
                 ops[i] == VFDSWMR_CTL_CC_REGISTER || ops[i] == VFDSWMR_CTL_CC_GET_STATS) &&
                (a >= 0 || b >= 0))
                die("ctl %llu without its argument succeeded", (unsigned long long)ops[i]);
        }
    if (H5FDctl(h, VFDSWMR_CTL_CC_CONFIGURE, 0, &huge, NULL) >= 0)
        die("a chunk cache of 2^64 - 1 bytes was accepted");
    if (H5FDctl(h, VFDSWMR_CTL_CC_REGISTER, 0, &nochunks, NULL) >= 0)
        die("5 chunks registered from a NULL array");
    CHECK(H5FDctl(h, VFDSWMR_CTL_CC_CONFIGURE, 0, &big, NULL)); /* 1 TiB: nothing allocated up front */
    CHECK(H5FDctl(h, VFDSWMR_CTL_CC_REGISTER, 0, &wrapping, NULL));
    CHECK(H5FDctl(h, VFDSWMR_CTL_CC_SET_DATASET, 0, &ds, NULL));
    CHECK(H5FDctl(h, VFDSWMR_CTL_CC_EVICT, 0, &odd, NULL));
    /* the file still reads what was written */
    for (int i = 0; i < 1000; i++)
        v[i] = i * 13 - 5;
    sp = H5Screate_simple(1, &n, NULL);
    CHECK(d = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got));
    if (memcmp(v, got, sizeof v))
        die("read after the ctl calls: other values");
    H5Dclose(d);
    H5Sclose(sp);
    CHECK(H5Fclose(f));
    printf("ok: ctl: NULL and absurd arguments refused or harmless\n");
    return 0;
}

int
main(int argc, char **argv)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (argc == 4 && !strcmp(argv[2], "model"))
        return model(argv[1], strtoull(argv[3], NULL, 10));
    if (argc == 3 && !strcmp(argv[2], "attribution"))
        return attribution(argv[1], false);
    if (argc == 4 && !strcmp(argv[2], "attribution") && !strcmp(argv[3], "register"))
        return attribution(argv[1], true);
    if (argc == 3 && !strcmp(argv[2], "column"))
        return column(argv[1]);
    if (argc == 4 && !strcmp(argv[2], "readahead") && (!strcmp(argv[3], "on") || !strcmp(argv[3], "off")))
        return readahead(argv[1], !strcmp(argv[3], "on"));
    if (argc == 3 && !strcmp(argv[2], "make"))
        return make(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "bigentry"))
        return bigentry(argv[1]);
    if ((argc == 3 || argc == 5) && !strcmp(argv[2], "legacy"))
        return legacy(argv[0], argv[1], argc == 5 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL);
    if ((argc == 3 || argc == 5) && !strcmp(argv[2], "legacy-reader"))
        return legacy_reader(argv[1], argc == 5 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL);
    if (argc == 3 && !strcmp(argv[2], "ctl"))
        return ctl(argv[1]);
    fprintf(stderr, "usage: cctest FILE model SEED | attribution [register] | column | make | bigentry | legacy "
                    "[DRIVER CONFIG] | ctl\n");
    return 2;
}
