/* The shared raw-data chunk cache (docs/DESIGN.md 8a) against HDF5's own
 * per-dataset chunk cache (rdcc), side by side in one run at equal total
 * memory B (default 64 MiB):
 *
 *   rdcc default         HDF5's default, 1 MiB per dataset (N MiB for N datasets)
 *   rdcc B/N             H5Pset_chunk_cache on the DAPL: B/N bytes per dataset,
 *                        nslots the first prime >= 100 x the chunks that fit
 *   shared B + rdcc def  vfd_chunk_cache with chunk_cache_size=B, rdcc default
 *                        (B + N MiB in all)
 *   shared B, rdcc 0     the same with HDF5's chunk cache off (B in all)
 *   ... + register       vfdswmr_chunk_cache_register on the dataset: a read of
 *                        part of a chunk loads the whole chunk once
 *
 * on two kinds of storage: "local" is sec2 underneath a vfd_latency with no
 * delay (it only counts the calls; the files were just written, so reads are
 * served from the page cache: a warm local disk), "slow" is
 * vfd_latency(read_latency_us=500), and a smaller workload with 20 ms.
 * Every configuration runs in a fresh process (bisolated); medians of -r runs.
 *
 *   (a) column reads of a 2-D dataset with 2 MiB unfiltered chunks
 *   (b) 64 and 1000 datasets, one whole chunk read per operation, datasets
 *       visited round robin (uniform) or drawn Zipf(1) (skewed); plain and deflate
 *   (c) SWMR: a vfd_swmr_writer process appends every tick; a vfd_swmr_reader
 *       refreshes every tick and re-reads the most recent rows
 *   (d) controls: writer-only appends through vfd_swmr_writer, and a
 *       metadata-heavy reader, each with and without the cache
 *
 *   bench_chunk_cache [-F] [-r runs] [-B MiB] [-s sections] FILEDIR OUTDIR
 *     -F  bigger sizes; -s e.g. "ab" runs only (a) and (b)
 * Writes chunk_cache.csv (one row per run) to OUTDIR and Markdown to stdout.
 * HDF5_PLUGIN_PATH must reach vfd_chunk_cache, vfd_latency and the SWMR
 * drivers; when unset, the build tree this program lies in is used. */
#include "bench_h5.h"

#include <H5FDdevelop.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>

#include "latency.h"
#include "vfdswmr.h"

#define MIB (1024ULL * 1024ULL)

static unsigned long long budget = 64 * MIB; /* B */
static int nruns = 3;
static int big;
static FILE *csv;

/* ---- configurations ------------------------------------------------------------ */

enum rdcc { RD_DEFAULT, RD_SPLIT, RD_OFF };
struct cfg {
    const char *name;
    enum rdcc rd;
    int shared, reg;
};
enum { C_RDCC_DEF, C_RDCC_SPLIT, C_SHARED_DEF, C_SHARED_OFF, C_SHARED_DEF_REG, C_SHARED_OFF_REG, C_N };
static const struct cfg cfgs[C_N] = {
    {"rdcc default", RD_DEFAULT, 0, 0},
    {"rdcc B/N", RD_SPLIT, 0, 0},
    {"shared B + rdcc default", RD_DEFAULT, 1, 0},
    {"shared B, rdcc 0", RD_OFF, 1, 0},
    {"shared B + rdcc default + register", RD_DEFAULT, 1, 1},
    {"shared B, rdcc 0 + register", RD_OFF, 1, 1},
};

static const char *
storage_name(unsigned lat_us)
{
    static char b[32];
    if (lat_us == 0)
        return "local";
    if (lat_us % 1000 == 0)
        snprintf(b, sizeof b, "slow %u ms", lat_us / 1000);
    else
        snprintf(b, sizeof b, "slow %.1f ms", lat_us / 1000.0);
    return b;
}

/* What one run measured (copied back from its process). */
struct res {
    double sec, cpu, ops;
    vfd_latency_counts_t n;         /* calls that reached the storage during the timed phase */
    vfdswmr_chunk_cache_stats_t cc; /* the shared cache during the timed phase */
    int has_cc;
    double tick_med, tick_p90, tick_max; /* (c) */
    int ticks;
};

/* File access through the cache (shared) or not, over vfd_latency with no
 * delay yet: opening is not timed, phase_begin turns the delay on. */
static hid_t
file_fapl(int shared)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    char conf[256];

    BCHECK(fapl);
    if (shared) {
        BFMT(conf, "chunk_cache_size=%llu;under=vfd_latency(read_latency_us=0)", budget);
        BCHECK(H5Pset_driver_by_name(fapl, VFDSWMR_CHUNK_CACHE_NAME, conf));
    }
    else
        BCHECK(H5Pset_driver_by_name(fapl, VFD_LATENCY_NAME, "read_latency_us=0"));
    return fapl;
}

static int
is_prime(unsigned long n)
{
    if (n < 2)
        return 0;
    for (unsigned long d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* DAPL for rdcc mode rd: chunk_bytes the chunk's size in memory, n datasets sharing B. */
static hid_t
dapl_for(enum rdcc rd, size_t chunk_bytes, unsigned n)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);

    BCHECK(dapl);
    if (rd == RD_OFF)
        BCHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0));
    else if (rd == RD_SPLIT) {
        size_t nbytes = (size_t)(budget / n), fit = nbytes / chunk_bytes;
        unsigned long slots = 100 * (fit ? fit : 1);
        while (!is_prime(slots))
            slots++;
        BCHECK(H5Pset_chunk_cache(dapl, slots, nbytes, 0.75));
    }
    return dapl;
}

/* A ctl operation of the vfd_latency underneath file f (drivers above it pass it down). */
static void
latency_ctl(hid_t f, uint64_t op, const void *in, void *outp)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int marker = 1;
    void *h = NULL, *out = outp;

    BCHECK(H5Pinsert2(fapl, VFDSWMR_HANDLE_PROPERTY, sizeof marker, &marker, NULL, NULL, NULL, NULL, NULL, NULL));
    BCHECK(H5Fget_vfd_handle(f, fapl, &h));
    BCHECK(H5FDctl((H5FD_t *)h, op, H5FD_CTL_ROUTE_TO_TERMINAL_VFD_FLAG | H5FD_CTL_FAIL_IF_UNKNOWN_FLAG, in,
                   out ? &out : NULL));
    H5Pclose(fapl);
}

static void
lower_counts(hid_t f, vfd_latency_counts_t *n)
{
    latency_ctl(f, VFD_LATENCY_CTL_GET_COUNTS, NULL, n);
}

static void
set_latency(hid_t f, unsigned read_us)
{
    unsigned long long us[2] = {read_us, 0};
    latency_ctl(f, VFD_LATENCY_CTL_SET_LATENCY, us, NULL);
}

static void
counts_sub(vfd_latency_counts_t *a, const vfd_latency_counts_t *b)
{
    a->reads -= b->reads;
    a->read_bytes -= b->read_bytes;
    a->raw_reads -= b->raw_reads;
    a->raw_read_bytes -= b->raw_read_bytes;
    a->writes -= b->writes;
    a->write_bytes -= b->write_bytes;
}

/* Start and end of a timed phase on file f. */
struct phase {
    double t0, c0;
    vfd_latency_counts_t n0;
};
static void
phase_begin(struct phase *p, hid_t f, int shared, unsigned lat_us)
{
    set_latency(f, lat_us);
    lower_counts(f, &p->n0);
    if (shared)
        BCHECK(vfdswmr_chunk_cache_reset_stats(f));
    p->c0 = bcpu();
    p->t0 = vfdswmr_now();
}
static void
phase_end(const struct phase *p, hid_t f, int shared, struct res *r)
{
    r->sec = vfdswmr_now() - p->t0;
    r->cpu = bcpu() - p->c0;
    lower_counts(f, &r->n);
    counts_sub(&r->n, &p->n0);
    set_latency(f, 0);
    r->has_cc = shared;
    if (shared)
        BCHECK(vfdswmr_chunk_cache_get_stats(f, &r->cc));
}

static void
csv_row(const char *sec, const char *workload, const char *storage, const char *config, int run, const struct res *r)
{
    fprintf(csv, "%s,\"%s\",%s,\"%s\",%d,%.6f,%.6f,%.0f,%llu,%llu,%.3f,%llu,%llu,%.3f,%.6f,%.6f\n", sec, workload,
            storage, config, run, r->sec, r->cpu, r->ops, r->n.reads, r->n.raw_reads, r->n.raw_read_bytes / (double)MIB,
            r->has_cc ? r->cc.lookups : 0, r->has_cc ? r->cc.hits : 0, r->has_cc ? r->cc.bytes_loaded / (double)MIB : 0,
            r->tick_med, r->tick_p90);
}

static uint64_t rng_state;
static uint64_t
rnd64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double
rnd01(void)
{
    return (double)(rnd64() >> 11) / 9007199254740992.0;
}

static const char *
pct(char *b, size_t n, double num, double den)
{
    if (den <= 0)
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.0f %%", 100.0 * num / den);
    return b;
}

/* Median over runs of one configuration. */
struct agg {
    double sec, reads_per_op, hit, loaded_mb;
    int has_cc;
};
static struct agg
aggregate(struct res *r, int n)
{
    double s[64], rp[64], h[64], l[64];
    struct agg a = {0, 0, 0, 0, r[0].has_cc};
    for (int i = 0; i < n; i++) {
        s[i] = r[i].sec;
        rp[i] = r[i].ops > 0 ? (double)r[i].n.raw_reads / r[i].ops : 0;
        h[i] = r[i].cc.lookups ? (double)r[i].cc.hits / (double)r[i].cc.lookups : 0;
        l[i] = r[i].cc.bytes_loaded / (double)MIB;
    }
    a.sec = bmedian(s, (size_t)n);
    a.reads_per_op = bmedian(rp, (size_t)n);
    a.hit = bmedian(h, (size_t)n);
    a.loaded_mb = bmedian(l, (size_t)n);
    return a;
}

static const char *
secs(char *b, size_t n, double s)
{
    if (s >= 10)
        snprintf(b, n, "%.1f s", s);
    else if (s >= 0.1)
        snprintf(b, n, "%.2f s", s);
    else
        snprintf(b, n, "%.1f ms", s * 1e3);
    return b;
}

/* ---- (a) column reads of big unfiltered chunks ------------------------------------ */

struct a_par {
    hsize_t rows, cols, cr, cc; /* dataset and chunk shape (int32) */
    int ncols;                  /* columns read */
    hsize_t stride, read_rows;  /* column k is k * stride; rows 0 .. read_rows - 1 of it */
};
struct a_ctx {
    const char *path;
    struct a_par p;
    const struct cfg *c;
    unsigned lat;
};

static void
a_make(void *vctx, void *vout)
{
    const struct a_ctx *x = vctx;
    hsize_t dims[2] = {x->p.rows, x->p.cols}, ch[2] = {x->p.cr, x->p.cc}, cnt[2] = {x->p.cr, x->p.cols},
            off[2] = {0, 0};
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl, d, ms;
    int *band = malloc(x->p.cr * x->p.cols * sizeof *band);

    (void)vout;
    if (!band)
        bdie("out of memory");
    BCHECK(H5Pset_fapl_sec2(fapl));
    BCHECK(f = H5Fcreate(x->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    sp = H5Screate_simple(2, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 2, ch));
    BCHECK(d = H5Dcreate2(f, "a", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    ms = H5Screate_simple(2, cnt, NULL);
    for (off[0] = 0; off[0] < x->p.rows; off[0] += x->p.cr) {
        for (hsize_t r = 0; r < x->p.cr; r++)
            for (hsize_t c = 0; c < x->p.cols; c++)
                band[r * x->p.cols + c] = (int)((off[0] + r) * x->p.cols + c);
        BCHECK(H5Sselect_hyperslab(sp, H5S_SELECT_SET, off, NULL, cnt, NULL));
        BCHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, sp, H5P_DEFAULT, band));
    }
    H5Sclose(ms);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    free(band);
}

static void
a_run(void *vctx, void *vout)
{
    const struct a_ctx *x = vctx;
    struct res *r = vout;
    hid_t fapl = file_fapl(x->c->shared), f, dapl, d, fs, ms;
    hsize_t off[2], cnt[2] = {x->p.read_rows, 1};
    int *col = malloc(x->p.read_rows * sizeof *col);
    struct phase ph;

    memset(r, 0, sizeof *r);
    BCHECK(f = H5Fopen(x->path, H5F_ACC_RDONLY, fapl));
    dapl = dapl_for(x->c->rd, x->p.cr * x->p.cc * sizeof(int), 1);
    BCHECK(d = H5Dopen2(f, "a", dapl));
    fs = H5Dget_space(d);
    ms = H5Screate_simple(1, &x->p.read_rows, NULL);
    phase_begin(&ph, f, x->c->shared, x->lat);
    if (x->c->reg) /* timed: its H5Dchunk_iter reads the chunk index */
        BCHECK(vfdswmr_chunk_cache_register(d));
    for (int k = 0; k < x->p.ncols; k++) {
        off[0] = 0;
        off[1] = (hsize_t)k * x->p.stride;
        BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL));
        BCHECK(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, col));
        for (hsize_t i = 0; i < x->p.read_rows; i += 97)
            if (col[i] != (int)(i * x->p.cols + off[1]))
                bdie("(a) column %llu row %llu: %d", (unsigned long long)off[1], (unsigned long long)i, col[i]);
    }
    phase_end(&ph, f, x->c->shared, r);
    r->ops = x->p.ncols;
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(dapl);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    free(col);
}

static void
section_a(const char *dir)
{
    static const int order[] = {C_RDCC_DEF,   C_RDCC_SPLIT,     C_SHARED_DEF,
                                C_SHARED_OFF, C_SHARED_DEF_REG, C_SHARED_OFF_REG};
    struct a_par p = {4096, 8192, 512, 1024, 32, 0, 0};
    char path[4200], b1[32], b2[32];

    if (big) {
        p.rows = 8192;
        p.cols = 16384;
        p.ncols = 64;
    }
    p.stride = p.cols / (hsize_t)p.ncols;
    p.read_rows = p.rows;
    BFMT(path, "%s/cc_columns.h5", dir);
    struct a_ctx mk = {path, p, NULL, 0};
    bisolated(a_make, &mk, NULL, 0);

    size_t chunk = p.cr * p.cc * sizeof(int);
    printf("#### (a) Column reads of big unfiltered chunks\n\n");
    printf("One %llu x %llu int32 dataset (%.0f MiB) in %llu x %llu chunks of %.0f MiB, no filter. Local: "
           "%d whole columns (%llu rows), every %llu-th, so each chunk column is visited %llu times in a row "
           "and every chunk is touched. Slow storage reads less (every read call pays the delay): 0.5 ms, the "
           "first 512 rows of 4 columns of one chunk; 20 ms, the first 64 rows of 2 columns (one run). "
           "\"storage reads\": raw-data reads that reached the storage, per column. B = %.0f MiB; rdcc B/N is "
           "rdcc B here (one dataset).\n\n",
           (unsigned long long)p.rows, (unsigned long long)p.cols, p.rows * p.cols * 4.0 / MIB,
           (unsigned long long)p.cr, (unsigned long long)p.cc, chunk / (double)MIB, p.ncols, (unsigned long long)p.rows,
           (unsigned long long)p.stride, (unsigned long long)(p.cc / p.stride), budget / (double)MIB);
    printf("| storage | configuration | memory | median | speedup vs rdcc default | storage reads / column "
           "| MiB from storage / column | shared hit rate |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    unsigned lats[3] = {0, 500, 20000};
    double med[3][C_N];
    for (int s = 0; s < 3; s++) {
        struct a_par q = p;
        int runs = nruns;
        if (lats[s] == 500) {
            q.ncols = 4;
            q.stride = p.cc / 4;
            q.read_rows = p.cr;
        }
        else if (lats[s] == 20000) {
            q.ncols = 2;
            q.stride = p.cc / 2;
            q.read_rows = 64;
            runs = 1;
        }
        double base = 0;
        enum { NO = sizeof order / sizeof order[0] };
        static struct res all[NO][64];
        for (int k = 0; k < runs; k++) /* interleaved: run k of every configuration before run k + 1 */
            for (size_t i = 0; i < NO; i++) {
                struct a_ctx x = {path, q, &cfgs[order[i]], lats[s]};
                bisolated(a_run, &x, &all[i][k], sizeof all[i][k]);
                csv_row("a", "columns", storage_name(lats[s]), cfgs[order[i]].name, k, &all[i][k]);
            }
        for (size_t i = 0; i < NO; i++) {
            const struct cfg *c = &cfgs[order[i]];
            struct res *rr = all[i];
            struct agg g = aggregate(rr, runs);
            double mb[64];
            for (int k = 0; k < runs; k++)
                mb[k] = rr[k].n.raw_read_bytes / (double)MIB / rr[k].ops;
            if (i == 0)
                base = g.sec;
            med[s][order[i]] = g.sec;
            const char *mem = c->rd == RD_SPLIT ? "B" : c->shared ? (c->rd == RD_DEFAULT ? "B + 1 MiB" : "B") : "1 MiB";
            printf("| %s | %s | %s | %s | %.1fx | %.1f | %.2f | %s |\n", storage_name(lats[s]), c->name, mem,
                   secs(b1, sizeof b1, g.sec), base / g.sec, g.reads_per_op, bmedian(mb, (size_t)runs),
                   g.has_cc ? pct(b2, sizeof b2, g.hit, 1) : "-");
            fflush(stdout);
        }
    }
    printf("\n");
    /* the faster of the two registering configurations, against rdcc default and rdcc B */
    double reg[3], ra[3];
    for (int s = 0; s < 3; s++) {
        reg[s] =
            med[s][C_SHARED_DEF_REG] < med[s][C_SHARED_OFF_REG] ? med[s][C_SHARED_DEF_REG] : med[s][C_SHARED_OFF_REG];
        ra[s] = med[s][C_SHARED_DEF] < med[s][C_SHARED_OFF] ? med[s][C_SHARED_DEF] : med[s][C_SHARED_OFF];
    }
    printf("With `vfdswmr_chunk_cache_register` the shared cache read these columns %.0fx faster than HDF5's default "
           "on 0.5 ms storage and %.0fx on 20 ms storage (rdcc with the whole budget B, possible here because there "
           "is one dataset: %.0fx and %.0fx); without registration, through read-ahead (`chunk_cache_readahead`, on "
           "by default), %.0fx and %.0fx. A chunk larger than rdcc is read one row at a time (one 4-byte read per "
           "row: HDF5 uses no sieve buffer for chunks); after three such misses at one stride the cache loads a "
           "window ahead instead of the row, 64 KiB and doubling up to `chunk_cache_max_entry`, so a column "
           "costs a few growing reads per chunk and the chunk's other columns hit (DESIGN.md 8a). On the local "
           "disk (warm page cache) the registered shared cache took %.1fx of rdcc default's time, read-ahead "
           "%.1fx, rdcc B %.1fx: the page cache answers a 4-byte `pread` in well under a microsecond, so there "
           "is little to save.\n\n",
           med[1][C_RDCC_DEF] / reg[1], med[2][C_RDCC_DEF] / reg[2], med[1][C_RDCC_DEF] / med[1][C_RDCC_SPLIT],
           med[2][C_RDCC_DEF] / med[2][C_RDCC_SPLIT], med[1][C_RDCC_DEF] / ra[1], med[2][C_RDCC_DEF] / ra[2],
           reg[0] / med[0][C_RDCC_DEF], ra[0] / med[0][C_RDCC_DEF], med[0][C_RDCC_SPLIT] / med[0][C_RDCC_DEF]);
    unlink(path);
}

/* ---- (b) many datasets ------------------------------------------------------------ */

#define B_CH 65536 /* elements (int32) per chunk: 256 KiB */

/* Data of (b): a slow ramp plus 10 random bits per value (deflate: about half the size). */
static inline int
bval(unsigned d, uint64_t i)
{
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (d + 1) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (int)(((uint32_t)d << 20) + (uint32_t)(i >> 4) + (uint32_t)(h & 0x3ff));
}

struct b_par {
    unsigned n, nch; /* datasets, chunks per dataset */
    int deflate, skewed, warm, ops;
};
struct b_ctx {
    const char *path;
    struct b_par p;
    const struct cfg *c;
    unsigned lat;
};
struct b_made {
    double file_mb;
};

static void
b_make(void *vctx, void *vout)
{
    const struct b_ctx *x = vctx;
    struct b_made *m = vout;
    hsize_t len = (hsize_t)x->p.nch * B_CH, ch = B_CH;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl;
    int *v = malloc(len * sizeof *v);
    char name[32];
    struct stat st;

    if (!v)
        bdie("out of memory");
    BCHECK(H5Pset_fapl_sec2(fapl));
    BCHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
    BCHECK(f = H5Fcreate(x->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    sp = H5Screate_simple(1, &len, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 1, &ch));
    if (x->p.deflate)
        BCHECK(H5Pset_deflate(dcpl, 1));
    for (unsigned d = 0; d < x->p.n; d++) {
        for (hsize_t i = 0; i < len; i++)
            v[i] = bval(d, i);
        snprintf(name, sizeof name, "d%04u", d);
        hid_t ds = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        BCHECK(ds);
        BCHECK(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        H5Dclose(ds);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    free(v);
    m->file_mb = stat(x->path, &st) == 0 ? st.st_size / (double)MIB : 0;
}

static void
b_run(void *vctx, void *vout)
{
    const struct b_ctx *x = vctx;
    struct res *r = vout;
    hid_t fapl = file_fapl(x->c->shared), f, dapl, *ds = malloc(x->p.n * sizeof *ds), ms, fs;
    hsize_t cnt = B_CH, len = (hsize_t)x->p.nch * B_CH;
    int *buf = malloc(B_CH * sizeof *buf);
    unsigned *perm = malloc(x->p.n * sizeof *perm);
    double *cdf = malloc(x->p.n * sizeof *cdf), sum = 0;
    char name[32];
    struct phase ph;

    memset(r, 0, sizeof *r);
    if (!ds || !buf || !perm || !cdf)
        bdie("out of memory");
    BCHECK(f = H5Fopen(x->path, H5F_ACC_RDONLY, fapl));
    dapl = dapl_for(x->c->rd, B_CH * sizeof(int), x->p.n);
    for (unsigned d = 0; d < x->p.n; d++) {
        snprintf(name, sizeof name, "d%04u", d);
        BCHECK(ds[d] = H5Dopen2(f, name, dapl));
    }
    /* the same sequence of (dataset, chunk) for every configuration */
    rng_state = 0x1234567ull + x->p.n * 31 + (unsigned)x->p.skewed * 7 + (unsigned)x->p.deflate;
    for (unsigned d = 0; d < x->p.n; d++) {
        perm[d] = d;
        sum += 1.0 / (d + 1);
        cdf[d] = sum;
    }
    for (unsigned d = x->p.n - 1; d > 0; d--) {
        unsigned j = (unsigned)(rnd64() % (d + 1)), t = perm[d];
        perm[d] = perm[j];
        perm[j] = t;
    }
    fs = H5Screate_simple(1, &len, NULL);
    ms = H5Screate_simple(1, &cnt, NULL);
    for (int i = 0; i < x->p.warm + x->p.ops; i++) {
        unsigned d;
        if (i == x->p.warm) /* caches warm: the measured part, with the storage's delay */
            phase_begin(&ph, f, x->c->shared, x->lat);
        if (x->p.skewed) {
            double u = rnd01() * sum;
            unsigned lo = 0, hi = x->p.n - 1;
            while (lo < hi) {
                unsigned mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            d = perm[lo];
        }
        else
            d = (unsigned)i % x->p.n;
        hsize_t off = (rnd64() % x->p.nch) * B_CH;
        BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL));
        BCHECK(H5Dread(ds[d], H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf));
        for (hsize_t k = 0; k < B_CH; k += 4099)
            if (buf[k] != bval(d, off + k))
                bdie("(b) dataset %u element %llu: %d", d, (unsigned long long)(off + k), buf[k]);
    }
    phase_end(&ph, f, x->c->shared, r);
    r->ops = x->p.ops;
    H5Sclose(ms);
    H5Sclose(fs);
    for (unsigned d = 0; d < x->p.n; d++)
        H5Dclose(ds[d]);
    H5Pclose(dapl);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    free(ds);
    free(buf);
    free(perm);
    free(cdf);
}

static void
section_b(const char *dir)
{
    static const int order[] = {C_RDCC_DEF, C_RDCC_SPLIT, C_SHARED_DEF, C_SHARED_OFF};
    struct {
        unsigned n, nch;
    } shapes[2] = {{64, 16}, {1000, 1}};
    int ops = big ? 3000 : 500, slow_ops = big ? 500 : 150, warm = (int)(3 * budget / (2 * B_CH * sizeof(int)));
    char b[6][32];
    /* equal-memory speedups (shared B, rdcc 0 over rdcc B/N): [storage][skewed][datasets][deflate] */
    double eq[3][2][2][2] = {{{{0}}}};

    printf("#### (b) Many datasets read in turn\n\n");
    printf("Each dataset is 1-D int32 in chunks of %d KiB (64 datasets x %u chunks, 1000 datasets x %u chunk: "
           "about 256 MiB of data either way, 4 x B), latest file format; each operation reads one whole "
           "chunk. uniform: the datasets in turn (round robin), the chunk at random; skewed: the dataset drawn "
           "from a Zipf(1) popularity (over a random permutation), the chunk at random. The caches are warmed "
           "by %d operations without delay, then %d operations are timed (%d on 20 ms storage, skewed only, "
           "one run); the same sequence for every configuration. Memory: rdcc default is 1 MiB per dataset (64 MiB for "
           "64 datasets; up to 1000 MiB "
           "for 1000, of which it fills what it reads, here about 250 MiB); rdcc B/N is 1 MiB (4 chunks) per "
           "dataset for 64 and 64 KiB for 1000 datasets, less than one chunk, so HDF5 caches nothing there; "
           "the shared cache holds on-disk (compressed) chunk images. \"reads/op\": raw-data reads that "
           "reached the storage per operation, in the order of the four configurations; \"hit\": the shared "
           "cache's hit rates (with rdcc default it only sees rdcc's misses).\n\n",
           (int)(B_CH * 4 / 1024), shapes[0].nch, shapes[1].nch, warm, ops, slow_ops);
    printf("| datasets | filter | popularity | storage | rdcc default | rdcc B/N | shared B + rdcc default "
           "| shared B, rdcc 0 | equal memory: shared B, rdcc 0 vs rdcc B/N | shared B + rdcc default vs rdcc "
           "default | reads/op | hit |\n");
    printf("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int sh = 0; sh < 2; sh++)
        for (int defl = 0; defl < 2; defl++) {
            char path[4200];
            BFMT(path, "%s/cc_many_%u_%s.h5", dir, shapes[sh].n, defl ? "deflate" : "plain");
            struct b_ctx mk = {path, {shapes[sh].n, shapes[sh].nch, defl, 0, 0, 0}, NULL, 0};
            struct b_made made;
            bisolated(b_make, &mk, &made, sizeof made);
            fprintf(csv, "b,\"file %u datasets %s\",-,-,0,0,0,0,0,0,%.3f,0,0,0,0,0\n", shapes[sh].n,
                    defl ? "deflate" : "plain", made.file_mb);
            for (int skew = 0; skew < 2; skew++) {
                unsigned lats[3] = {0, 500, 20000};
                for (int s = 0; s < 3; s++) {
                    int runs = nruns, nops = ops;
                    if (lats[s] == 20000) {
                        if (!skew)
                            continue;
                        runs = 1;
                        nops = slow_ops;
                    }
                    struct agg g[4];
                    static struct res rr[4][64];
                    char wl[96];
                    snprintf(wl, sizeof wl, "%u datasets %s %s", shapes[sh].n, defl ? "deflate" : "plain",
                             skew ? "skewed" : "uniform");
                    for (int k = 0; k < runs; k++) /* interleaved, as in (a) */
                        for (int i = 0; i < 4; i++) {
                            struct b_ctx x = {
                                path, {shapes[sh].n, shapes[sh].nch, defl, skew, warm, nops}, &cfgs[order[i]], lats[s]};
                            bisolated(b_run, &x, &rr[i][k], sizeof rr[i][k]);
                            csv_row("b", wl, storage_name(lats[s]), cfgs[order[i]].name, k, &rr[i][k]);
                        }
                    for (int i = 0; i < 4; i++)
                        g[i] = aggregate(rr[i], runs);
                    eq[s][skew][sh][defl] = g[1].sec / g[3].sec;
                    printf("| %u | %s | %s | %s | %s | %s | %s | %s | %.2fx | %.2fx | %.2f / %.2f / %.2f / %.2f "
                           "| %.0f / %.0f %% |\n",
                           shapes[sh].n, defl ? "deflate" : "none", skew ? "skewed" : "uniform", storage_name(lats[s]),
                           secs(b[0], 32, g[0].sec), secs(b[1], 32, g[1].sec), secs(b[2], 32, g[2].sec),
                           secs(b[3], 32, g[3].sec), g[1].sec / g[3].sec, g[0].sec / g[2].sec, g[0].reads_per_op,
                           g[1].reads_per_op, g[2].reads_per_op, g[3].reads_per_op, 100 * g[2].hit, 100 * g[3].hit);
                    fflush(stdout);
                }
            }
            printf("| %u | %s | | *file: %.0f MiB* | | | | | | | | |\n", shapes[sh].n, defl ? "deflate" : "none",
                   made.file_mb);
            unlink(path);
        }
    printf("\n");
    printf("At equal memory (shared B, rdcc 0 against rdcc B/N), on 0.5 ms storage: skewed popularity %.2fx / %.2fx "
           "(64 datasets, plain / deflate) and %.2fx / %.2fx (1000 datasets); on 20 ms storage %.2fx / %.2fx and "
           "%.2fx / %.2fx; round robin %.2fx / %.2fx and %.2fx / %.2fx on 0.5 ms storage. Round robin over four "
           "times the budget leaves nothing for any LRU cache of size B to reuse. Where it cannot help: reads of "
           "deflated chunks from a warm local disk are decompression-bound, and with rdcc 0 every read is "
           "inflated again (%.2fx and %.2fx of rdcc B/N's speed, 64 datasets) -- the shared cache saves storage "
           "reads, not CPU; keep rdcc on for the hot chunks (shared B + rdcc default).\n\n",
           eq[1][1][0][0], eq[1][1][0][1], eq[1][1][1][0], eq[1][1][1][1], eq[2][1][0][0], eq[2][1][0][1],
           eq[2][1][1][0], eq[2][1][1][1], eq[1][0][0][0], eq[1][0][0][1], eq[1][0][1][0], eq[1][0][1][1],
           eq[0][0][0][1], eq[0][1][0][1]);
}

/* ---- (c) an SWMR reader refreshing every tick ----------------------------------------- */

#define C_COLS    512
#define C_CR      1024 /* chunk: 1024 x 512 int32 = 2 MiB */
#define C_INIT    4096
#define C_APPEND  128
#define C_WINDOW  2048 /* rows read whole */
#define C_COLWIN  512  /* rows of each column read */
#define C_NCOL    2    /* columns read */
#define C_TICK_MS 100

struct c_ctx {
    const char *path;
    unsigned lat;
    int cached, reg, columns, ticks;
};

static void
c_append(hid_t d, hsize_t *n, hsize_t rows)
{
    hsize_t dims[2] = {*n + rows, C_COLS}, off[2] = {*n, 0}, cnt[2] = {rows, C_COLS};
    int *v = malloc(rows * C_COLS * sizeof *v);

    if (!v)
        bdie("out of memory");
    for (hsize_t r = 0; r < rows; r++)
        for (hsize_t c = 0; c < C_COLS; c++)
            v[r * C_COLS + c] = (int)((*n + r) * C_COLS + c);
    BCHECK(H5Dset_extent(d, dims));
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(2, cnt, NULL);
    BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL));
    BCHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v));
    H5Sclose(fs);
    H5Sclose(ms);
    free(v);
    *n += rows;
}

/* The writer process: create, publish, say so, then append every tick until
 * its standard input (a pipe) closes. */
static void
c_writer(const char *path, int ready, int stop)
{
    hsize_t dims[2] = {0, C_COLS}, maxd[2] = {H5S_UNLIMITED, C_COLS}, ch[2] = {C_CR, C_COLS}, n = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl, d;
    struct pollfd pf = {.fd = stop, .events = POLLIN};

    BCHECK(H5Pset_driver_by_name(fapl, VFDSWMR_WRITER_NAME, "tick_len=1;max_lag=50"));
    BCHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    sp = H5Screate_simple(2, dims, maxd);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 2, ch));
    BCHECK(d = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    c_append(d, &n, C_INIT);
    BCHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    vfdswmr_sleep(0.3); /* published */
    if (write(ready, "r", 1) != 1)
        bdie("ready pipe: %s", strerror(errno));
    while (poll(&pf, 1, C_TICK_MS) == 0) {
        c_append(d, &n, C_APPEND);
        BCHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
}

static void
c_run(void *vctx, void *vout)
{
    const struct c_ctx *x = vctx;
    struct res *r = vout;
    int ready[2], stop[2];
    char conf[256], b;
    double t[512];

    memset(r, 0, sizeof *r);
    bremove(x->path);
    if (pipe(ready) < 0 || pipe(stop) < 0)
        bdie("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        bdie("fork: %s", strerror(errno));
    if (pid == 0) {
        close(ready[0]);
        close(stop[1]);
        c_writer(x->path, ready[1], stop[0]);
        _exit(0);
    }
    close(ready[1]);
    close(stop[0]);
    if (read(ready[0], &b, 1) != 1)
        bdie("(c) the writer did not start");
    close(ready[0]);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, d;
    BFMT(conf, "under=vfd_latency(read_latency_us=%u);chunk_cache_size=%llu", x->lat, x->cached ? budget : 0ULL);
    BCHECK(H5Pset_driver_by_name(fapl, VFDSWMR_READER_NAME, conf));
    BCHECK(f = H5Fopen(x->path, H5F_ACC_RDONLY, fapl));
    BCHECK(d = H5Dopen2(f, "d", H5P_DEFAULT));
    int *buf = malloc((size_t)C_WINDOW * C_COLS * sizeof *buf);
    if (!buf)
        bdie("out of memory");
    struct phase ph;
    phase_begin(&ph, f, x->cached, x->lat);
    double busy = 0;
    for (int k = 0; k < x->ticks; k++) {
        vfdswmr_sleep(C_TICK_MS * 1e-3);
        double t0 = vfdswmr_now();
        BCHECK(H5Drefresh(d));
        hid_t fs = H5Dget_space(d);
        hsize_t dims[2];
        H5Sget_simple_extent_dims(fs, dims, NULL);
        if (x->reg)
            BCHECK(vfdswmr_chunk_cache_register(d));
        if (x->columns) { /* C_NCOL columns of the last C_COLWIN rows */
            hsize_t cnt[2] = {C_COLWIN, 1}, n1 = C_COLWIN;
            hid_t ms = H5Screate_simple(1, &n1, NULL);
            for (int c = 0; c < C_NCOL; c++) {
                hsize_t off[2] = {dims[0] - C_COLWIN, (hsize_t)c * (C_COLS / C_NCOL) + 7};
                BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL));
                BCHECK(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf));
                if (buf[C_COLWIN - 1] != (int)((dims[0] - 1) * C_COLS + off[1]))
                    bdie("(c) column %llu: %d", (unsigned long long)off[1], buf[C_COLWIN - 1]);
            }
            H5Sclose(ms);
        }
        else { /* the last C_WINDOW rows, whole */
            hsize_t off[2] = {dims[0] - C_WINDOW, 0}, cnt[2] = {C_WINDOW, C_COLS};
            hid_t ms = H5Screate_simple(2, cnt, NULL);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL));
            BCHECK(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf));
            if (buf[(size_t)C_WINDOW * C_COLS - 1] != (int)(dims[0] * C_COLS - 1))
                bdie("(c) last row: %d", buf[(size_t)C_WINDOW * C_COLS - 1]);
            H5Sclose(ms);
        }
        H5Sclose(fs);
        t[k] = vfdswmr_now() - t0;
        busy += t[k];
    }
    phase_end(&ph, f, x->cached, r);
    close(stop[1]);
    H5Dclose(d);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    free(buf);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bdie("(c) the writer failed (status %d)", st);
    bremove(x->path);
    r->ops = x->ticks;
    r->ticks = x->ticks;
    r->sec = busy; /* time spent reading, not sleeping */
    qsort(t, (size_t)x->ticks, sizeof t[0], bcmp_double);
    r->tick_med = bquantile(t, (size_t)x->ticks, 0.5);
    r->tick_p90 = bquantile(t, (size_t)x->ticks, 0.9);
    r->tick_max = t[x->ticks - 1];
}

static void
section_c(const char *dir)
{
    char path[4200], b1[32], b2[32], b3[32];
    int ticks = big ? 50 : 10;
    struct {
        const char *name;
        int cached, reg;
    } modes[3] = {{"no shared cache (rdcc default)", 0, 0},
                  {"shared B + rdcc default", 1, 0},
                  {"shared B + rdcc default + register every tick", 1, 1}};

    BFMT(path, "%s/cc_swmr.h5", dir);
    printf("#### (c) An SWMR reader refreshing every tick\n\n");
    printf("A `vfd_swmr_writer` process (tick_len=1: 0.1 s ticks) appends %d rows of %d int32 every tick to a "
           "dataset of %d x %d chunks (2 MiB, unfiltered); a `vfd_swmr_reader` process, every tick for %d "
           "ticks, calls `H5Drefresh` and reads recent rows again: %d columns of the last %d rows, or the "
           "last %d rows whole (each byte of them once per tick). Reported: the reader's time per tick "
           "(refresh, registration when used, reads); one run per configuration, the statistics over its ticks. "
           "Its HDF5 file is read through vfd_latency, its metadata file directly. When the reader adopts a "
           "new snapshot it drops from its shared cache only what the writer wrote since its previous one "
           "(the raw-data write log, docs/DESIGN.md 8a), and `H5Drefresh` drops the dataset's rdcc: chunks "
           "the writer has finished with stay hits from tick to tick, the one being appended to does not.\n\n",
           C_APPEND, C_COLS, C_CR, C_COLS, ticks, C_NCOL, C_COLWIN, C_WINDOW);
    printf("| storage | reads per tick | reader | median per tick | p90 per tick | storage reads / tick | "
           "shared hit rate |\n");
    printf("| --- | --- | --- | ---: | ---: | ---: | ---: |\n");
    unsigned lats[2] = {0, 500};
    double tm[2][2][3] = {{{0}}}; /* [storage][columns][mode]: median per tick */
    for (int s = 0; s < 2; s++)
        for (int cols = 1; cols >= 0; cols--)
            for (int m = 0; m < 3; m++) {
                if (!cols && modes[m].reg)
                    continue; /* whole rows: HDF5 reads whole chunk pieces, nothing to register for */
                struct c_ctx x = {path, lats[s], modes[m].cached, modes[m].reg, cols, ticks};
                struct res r;
                bisolated(c_run, &x, &r, sizeof r);
                tm[s][cols][m] = r.tick_med;
                csv_row("c", cols ? "columns" : "whole rows", storage_name(lats[s]), modes[m].name, 0, &r);
                char wl[64];
                if (cols)
                    snprintf(wl, sizeof wl, "%d columns x %d rows", C_NCOL, C_COLWIN);
                else
                    snprintf(wl, sizeof wl, "%d rows whole", C_WINDOW);
                printf("| %s | %s | %s | %s | %s | %.0f | %s |\n", storage_name(lats[s]), wl, modes[m].name,
                       secs(b1, 32, r.tick_med), secs(b2, 32, r.tick_p90), (double)r.n.raw_reads / r.ticks,
                       r.has_cc ? pct(b3, 32, (double)r.cc.hits, (double)r.cc.lookups) : "-");
                fflush(stdout);
            }
    printf("\n");
    printf("Registered, the column reads of each tick cost one chunk load instead of one read per row: %.0fx "
           "faster per tick on 0.5 ms storage; locally they take %.1fx the time, since loading a whole 2 MiB chunk "
           "for a few KiB costs more than the rows it saves. Re-reading the recent rows whole keeps the chunks "
           "the writer no longer writes across snapshots (the hit rate above) and re-reads the one being appended "
           "to: %.1fx of the time per tick locally, %.1fx on 0.5 ms storage, against no shared cache.\n\n",
           tm[1][1][0] / tm[1][1][2], tm[0][1][2] / tm[0][1][0], tm[0][0][1] / tm[0][0][0], tm[1][0][1] / tm[1][0][0]);
}

/* ---- (d) controls ---------------------------------------------------------------------- */

#define D_DSETS  16
#define D_PASSES 600
#define D_APPEND 2048
#define D_GROUPS 3000
#define D_ATTRS  8

struct d_ctx {
    const char *path;
    int kind; /* 0 writer-only appends; 1 metadata-heavy reader (2: also reading each small dataset) */
    const char *driver, *config;
};

static void
d_writer(void *vctx, void *vout)
{
    const struct d_ctx *x = vctx;
    struct res *r = vout;
    hsize_t zero = 0, unl = H5S_UNLIMITED, ch = 4096, n = 0, cnt = D_APPEND;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl, d[D_DSETS], ms;
    int v[D_APPEND];
    char name[32];

    memset(r, 0, sizeof *r);
    bremove(x->path);
    BCHECK(H5Pset_driver_by_name(fapl, x->driver, x->config));
    double t0 = vfdswmr_now(), c0 = bcpu();
    BCHECK(f = H5Fcreate(x->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    sp = H5Screate_simple(1, &zero, &unl);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 1, &ch));
    for (int k = 0; k < D_DSETS; k++) {
        snprintf(name, sizeof name, "d%02d", k);
        BCHECK(d[k] = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    }
    ms = H5Screate_simple(1, &cnt, NULL);
    for (int p = 0; p < D_PASSES; p++) {
        hsize_t ext = n + D_APPEND;
        for (int i = 0; i < D_APPEND; i++)
            v[i] = (int)n + i;
        for (int k = 0; k < D_DSETS; k++) {
            BCHECK(H5Dset_extent(d[k], &ext));
            hid_t fs = H5Dget_space(d[k]);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &n, NULL, &cnt, NULL));
            BCHECK(H5Dwrite(d[k], H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v));
            H5Sclose(fs);
        }
        n = ext;
        BCHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
    H5Sclose(ms);
    for (int k = 0; k < D_DSETS; k++)
        H5Dclose(d[k]);
    H5Pclose(dcpl);
    H5Sclose(sp);
    BCHECK(H5Fclose(f));
    r->sec = vfdswmr_now() - t0;
    r->cpu = bcpu() - c0;
    r->ops = D_PASSES;
    H5Pclose(fapl);
    bremove(x->path);
}

static void
d_make_meta(void *vctx, void *vout)
{
    const struct d_ctx *x = vctx;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, sp, asp, d, a;
    hsize_t n = 64, na = 16;
    int v[64];
    char name[32];

    (void)vout;
    for (int i = 0; i < 64; i++)
        v[i] = i;
    BCHECK(H5Pset_fapl_sec2(fapl));
    BCHECK(f = H5Fcreate(x->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    sp = H5Screate_simple(1, &n, NULL);
    asp = H5Screate_simple(1, &na, NULL);
    for (int i = 0; i < D_GROUPS; i++) {
        snprintf(name, sizeof name, "g%04d", i);
        BCHECK(g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        for (int k = 0; k < D_ATTRS; k++) {
            snprintf(name, sizeof name, "a%d", k);
            BCHECK(a = H5Acreate2(g, name, H5T_NATIVE_INT, asp, H5P_DEFAULT, H5P_DEFAULT));
            BCHECK(H5Awrite(a, H5T_NATIVE_INT, v));
            H5Aclose(a);
        }
        BCHECK(d = H5Dcreate2(g, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        BCHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        H5Dclose(d);
        H5Gclose(g);
    }
    H5Sclose(asp);
    H5Sclose(sp);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
}

static void
d_reader(void *vctx, void *vout)
{
    const struct d_ctx *x = vctx;
    struct res *r = vout;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, d, a;
    int v[64];
    char name[32];
    long long sum = 0;

    memset(r, 0, sizeof *r);
    if (x->driver)
        BCHECK(H5Pset_driver_by_name(fapl, x->driver, x->config));
    else
        BCHECK(H5Pset_fapl_sec2(fapl));
    double t0 = vfdswmr_now(), c0 = bcpu();
    BCHECK(f = H5Fopen(x->path, H5F_ACC_RDONLY, fapl));
    for (int i = 0; i < D_GROUPS; i++) {
        snprintf(name, sizeof name, "g%04d", i);
        BCHECK(g = H5Gopen2(f, name, H5P_DEFAULT));
        for (int k = 0; k < D_ATTRS; k++) {
            snprintf(name, sizeof name, "a%d", k);
            BCHECK(a = H5Aopen(g, name, H5P_DEFAULT));
            BCHECK(H5Aread(a, H5T_NATIVE_INT, v));
            sum += v[15];
            H5Aclose(a);
        }
        BCHECK(d = H5Dopen2(g, "x", H5P_DEFAULT));
        if (x->kind == 2) {
            BCHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
            sum += v[63];
        }
        H5Dclose(d);
        H5Gclose(g);
    }
    /* what the cache did (chunk_cache.csv): not timed, a few microseconds */
    if (x->config && strstr(x->config, "64M")) {
        r->has_cc = 1;
        BCHECK(vfdswmr_chunk_cache_get_stats(f, &r->cc));
    }
    BCHECK(H5Fclose(f));
    r->sec = vfdswmr_now() - t0;
    r->cpu = bcpu() - c0;
    r->ops = D_GROUPS;
    if (sum != (long long)D_GROUPS * (15 * D_ATTRS + (x->kind == 2 ? 63 : 0)))
        bdie("(d) read %lld", sum);
    H5Pclose(fapl);
}

/* The median of the ratios on[k] / off[k] of n paired runs, and its 95 %
 * confidence interval from their order statistics (the k-th smallest and
 * largest, k = n/2 - 0.98 sqrt(n) rounded down: binomial, normal
 * approximation; 6th and 16th of 21). */
static void
paired(const struct res *on, const struct res *off, int n, double *med, double *lo, double *hi)
{
    double r[64];
    int k = (int)floor(n / 2.0 - 0.98 * sqrt((double)n)) - 1; /* 0-based */

    for (int i = 0; i < n; i++)
        r[i] = on[i].sec / off[i].sec;
    if (k < 0)
        k = 0;
    *med = bmedian(r, (size_t)n); /* (sorts r) */
    *lo = r[k];
    *hi = r[n - 1 - k];
}

static void
section_d(const char *dir)
{
    char path[4200], b1[32], b2[32], b3[32];
    int runs = nruns < 21 ? 21 : nruns;
    struct {
        const char *name;
        int kind;
        const char *driver, *config;
    } cases[] = {
        {"vfd_swmr_writer", 0, VFDSWMR_WRITER_NAME, "tick_len=1;max_lag=3"},
        {"vfd_swmr_writer, chunk_cache_size=64M", 0, VFDSWMR_WRITER_NAME, "tick_len=1;max_lag=3;chunk_cache_size=64M"},
        {"sec2", 1, NULL, NULL},
        {"vfd_chunk_cache, chunk_cache_size=0", 1, VFDSWMR_CHUNK_CACHE_NAME, "chunk_cache_size=0"},
        {"vfd_chunk_cache, chunk_cache_size=64M", 1, VFDSWMR_CHUNK_CACHE_NAME, "chunk_cache_size=64M"},
        {"vfd_swmr_reader (no writer), no cache", 1, VFDSWMR_READER_NAME, ""},
        {"vfd_swmr_reader (no writer), chunk_cache_size=64M", 1, VFDSWMR_READER_NAME, "chunk_cache_size=64M"},
        {"sec2", 2, NULL, NULL},
        {"vfd_chunk_cache, chunk_cache_size=0", 2, VFDSWMR_CHUNK_CACHE_NAME, "chunk_cache_size=0"},
        {"vfd_chunk_cache, chunk_cache_size=64M", 2, VFDSWMR_CHUNK_CACHE_NAME, "chunk_cache_size=64M"},
        {"vfd_swmr_reader (no writer), no cache", 2, VFDSWMR_READER_NAME, ""},
        {"vfd_swmr_reader (no writer), chunk_cache_size=64M", 2, VFDSWMR_READER_NAME, "chunk_cache_size=64M"},
    };
    static const char *const kinds[3] = {"writer-only appends", "metadata-heavy reader",
                                         "metadata-heavy reader + small datasets read"};
    enum { NC = sizeof cases / sizeof cases[0] };
    static struct res rr[NC][64];

    BFMT(path, "%s/cc_meta.h5", dir);
    struct d_ctx mk = {path, 1, NULL, NULL};
    bisolated(d_make_meta, &mk, NULL, 0);
    char wpath[4200];
    BFMT(wpath, "%s/cc_writer.h5", dir);
    /* interleaved: run k of every case before run k + 1 of any */
    for (int k = 0; k < runs; k++)
        for (int c = 0; c < NC; c++) {
            struct d_ctx x = {cases[c].kind ? path : wpath, cases[c].kind, cases[c].driver, cases[c].config};
            bisolated(cases[c].kind ? d_reader : d_writer, &x, &rr[c][k], sizeof rr[c][k]);
            csv_row("d", kinds[cases[c].kind], "local", cases[c].name, k, &rr[c][k]);
        }
    printf("#### (d) Controls: where the cache has nothing to do\n\n");
    printf("Writer-only: %d extensible datasets, %d passes each appending %d int32 to every dataset and "
           "calling `H5Fflush` (create to close timed). Metadata-heavy reader: open a file of %d groups, each "
           "with %d attributes (opened and read) and a 64-int contiguous dataset (opened; in the second variant "
           "also read: 256-byte raw reads the cache looks up and keeps), every object opened and closed "
           "(open to close timed). Local disk (page cache), %d runs each, interleaved; \"on / off\" compares "
           "the same driver with and without the cache, target ≤ 1.01: the median of the ratios of run k with "
           "the cache to run k without it (adjacent in time, so they share the machine's load), and the 95 %% "
           "confidence interval of that median (order statistics of the paired ratios). \"best\" is the "
           "fastest run, the least disturbed on a shared machine.\n\n",
           D_DSETS, D_PASSES, D_APPEND, D_GROUPS, D_ATTRS, runs);
    printf("| workload | driver | median | best | CPU median | on / off, paired median | 95 %% interval |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
    double med[NC], best[NC], pmed[NC] = {0}, plo[NC] = {0}, phi[NC] = {0};
    for (int c = 0; c < NC; c++) {
        double s[64], cpu[64];
        for (int k = 0; k < runs; k++) {
            s[k] = rr[c][k].sec;
            cpu[k] = rr[c][k].cpu;
        }
        med[c] = bmedian(s, (size_t)runs);
        best[c] = s[0];
        double cm = bmedian(cpu, (size_t)runs);
        int on = strstr(cases[c].name, "64M") != NULL;
        char r1[32] = "", r2[32] = "";
        if (on) {
            paired(rr[c], rr[c - 1], runs, &pmed[c], &plo[c], &phi[c]);
            snprintf(r1, sizeof r1, "%.3f", pmed[c]);
            snprintf(r2, sizeof r2, "%.3f-%.3f", plo[c], phi[c]);
        }
        printf("| %s | %s | %s | %s | %s | %s | %s |\n", kinds[cases[c].kind], cases[c].name, secs(b1, 32, med[c]),
               secs(b2, 32, best[c]), secs(b3, 32, cm), r1, r2);
    }
    printf("\n");
    printf("On / off, paired median [95 %% interval]: writer-only %.3f [%.3f, %.3f]; metadata-only reader "
           "%.3f [%.3f, %.3f] through vfd_chunk_cache and %.3f [%.3f, %.3f] through vfd_swmr_reader; with the "
           "small datasets read %.3f [%.3f, %.3f] and %.3f [%.3f, %.3f]. An interval that holds 1 means no "
           "difference this run can show. Raw reads below 1 KiB outside registered chunks are only looked up, "
           "not kept; every dataset read is a record (3000 here), all freed at close.\n\n",
           pmed[1], plo[1], phi[1], pmed[4], plo[4], phi[4], pmed[6], plo[6], phi[6], pmed[9], plo[9], phi[9], pmed[11],
           plo[11], phi[11]);
    unlink(path);
}

/* ---- main ------------------------------------------------------------------------------ */

/* The first three fields of /proc/loadavg. */
static void
loadavg(char *b, size_t n)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a[3];

    if (f && fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3)
        snprintf(b, n, "%.2f, %.2f, %.2f", a[0], a[1], a[2]);
    else
        snprintf(b, n, "unknown");
    if (f)
        fclose(f);
}

/* HDF5_PLUGIN_PATH from the build tree this program lies in (bench/ of it). */
static void
default_plugin_path(void)
{
    char exe[4096], p[4 * 4200 + 8], *s;
    ssize_t n;

    if (getenv("HDF5_PLUGIN_PATH"))
        return;
    if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) < 0)
        return;
    exe[n] = 0;
    for (int k = 0; k < 2; k++)
        if ((s = strrchr(exe, '/')) != NULL)
            *s = 0;
    if (strcmp(exe + (strlen(exe) >= 6 ? strlen(exe) - 6 : 0), "/bench") == 0) /* bench/.libs/lt-... */
        exe[strlen(exe) - 6] = 0;
    BFMT(p, "%s/vfd-swmr-writer/.libs:%s/vfd-swmr-reader/.libs:%s/chunk-cache/.libs:%s/tests/fault/.libs", exe, exe,
         exe, exe);
    setenv("HDF5_PLUGIN_PATH", p, 1);
}

int
main(int argc, char **argv)
{
    const char *sections = "abcd";
    int opt;

    while ((opt = getopt(argc, argv, "Fr:B:s:")) != -1)
        switch (opt) {
        case 'F':
            big = 1;
            break;
        case 'r':
            nruns = atoi(optarg);
            break;
        case 'B':
            budget = strtoull(optarg, NULL, 10) * MIB;
            break;
        case 's':
            sections = optarg;
            break;
        default:
            optind = argc + 1;
        }
    if (optind + 2 != argc || nruns < 1 || nruns > 64 || budget == 0)
        bdie("usage: bench_chunk_cache [-F] [-r runs (1-64)] [-B budget MiB] [-s abcd] FILEDIR OUTDIR");
    default_plugin_path();
    bmkdir(argv[optind]);
    csv = bcsv(argv[optind + 1], "chunk_cache.csv",
               "section,workload,storage,config,run,seconds,cpu_seconds,ops,storage_reads,storage_raw_reads,"
               "storage_raw_mib,cc_lookups,cc_hits,cc_loaded_mib,tick_median_s,tick_p90_s");
    printf("B = %.0f MiB. \"local\": sec2 underneath a `vfd_latency` with no delay (it only counts calls), the "
           "files just written, so reads come from the page cache (a warm local disk); \"slow\": "
           "`vfd_latency(read_latency_us=...)`, a sleep before every read call of any kind (metadata too). "
           "Every run is a fresh process; times are medians of %d runs unless said otherwise.\n\n",
           budget / (double)MIB, nruns);
    char la0[64];
    loadavg(la0, sizeof la0);
    fflush(stdout);
    if (strchr(sections, 'a'))
        section_a(argv[optind]);
    if (strchr(sections, 'b'))
        section_b(argv[optind]);
    if (strchr(sections, 'c'))
        section_c(argv[optind]);
    if (strchr(sections, 'd'))
        section_d(argv[optind]);
    char la1[64];
    loadavg(la1, sizeof la1);
    printf("Load average (1, 5, 15 min) at the start: %s; at the end: %s; %ld cores. Other work on the machine "
           "shows up as noise, in the CPU-bound rows most.\n\n",
           la0, la1, sysconf(_SC_NPROCESSORS_ONLN));
    fclose(csv);
    return 0;
}
