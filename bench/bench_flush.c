/* The cost of one flush. A writer appends one row of R int32 to a 2-D extensible
 * dataset (chunks of 64 rows) and calls H5Fflush after each, F times, as fast as
 * it can; each H5Fflush call is timed with CLOCK_MONOTONIC. Configurations:
 *   sec2                       H5Fflush (data in the page cache, nothing synced);
 *   sec2 + fsync               H5Fflush, then fsync of the file (what a durable
 *                              flush costs without SWMR);
 *   legacy SWMR                sec2, libver latest, H5F_ACC_SWMR_WRITE;
 *   vfd-swmr                   default: publish=flush (visible and recoverable
 *                              when H5Fflush returns);
 *   vfd-swmr durable=1         also on stable storage when it returns;
 *   vfd-swmr publish=tick      the flush only marks a consistency point.
 * vfd-swmr runs use tick_len=1, max_lag=3, the metadata file next to the HDF5
 * file. Reports per-flush p50/p99/mean in microseconds, flushes per second,
 * and the metadata file's size before close (its growth under frequent
 * flushes: superseded pages are reused once max_lag ticks have passed).
 * Each configuration runs in a fresh process; medians of the repetitions.
 *   bench_flush [-f flushes] [-r row_elements] [-n reps] FILEDIR OUTDIR
 *   defaults: 2000, 256, 3 */
#include "bench_h5.h"

#include <fcntl.h>

enum fcfg { F_SEC2, F_SEC2_FSYNC, F_LEGACY, F_VFD, F_VFD_DURABLE, F_VFD_TICK, F_N };
static const char *const fname[F_N] = {"sec2",     "sec2 + fsync",       "legacy SWMR",
                                       "vfd-swmr", "vfd-swmr durable=1", "vfd-swmr publish=tick"};
static const char *const fconf[F_N] = {NULL, NULL, NULL, "", ";durable=1", ";publish=tick"};

struct res {
    double p50, p99, mean, total; /* microseconds per flush; seconds in all */
    double md_bytes;              /* metadata file size before close, bytes */
};

struct job {
    enum fcfg c;
    const char *path;
    int nflush, row;
};

static void
job(void *ctx, void *out)
{
    struct job *j = ctx;
    struct res *r = out;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    BCHECK(fapl);
    bremove(j->path);
    if (fconf[j->c]) {
        char conf[256];
        BFMT(conf, "tick_len=1;max_lag=3%s", fconf[j->c]);
        BCHECK(H5Pset_driver_by_name(fapl, "vfd_swmr_writer", conf));
    }
    else
        BCHECK(H5Pset_fapl_sec2(fapl));
    if (j->c == F_LEGACY)
        BCHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
    hid_t f = H5Fcreate(j->path, H5F_ACC_TRUNC | (j->c == F_LEGACY ? H5F_ACC_SWMR_WRITE : 0u), H5P_DEFAULT, fapl);
    BCHECK(f);
    hsize_t dims[2] = {0, (hsize_t)j->row}, maxd[2] = {H5S_UNLIMITED, (hsize_t)j->row},
            chunk[2] = {64, (hsize_t)j->row};
    hid_t sp = H5Screate_simple(2, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 2, chunk));
    hid_t d = H5Dcreate2(f, "rows", H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    BCHECK(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
    BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    int fd = -1;
    if (j->c == F_SEC2_FSYNC) {
        void *h = NULL;
        BCHECK(H5Fget_vfd_handle(f, H5P_DEFAULT, &h));
        fd = *(int *)h;
    }
    int *row = malloc((size_t)j->row * sizeof *row);
    double *t = malloc((size_t)j->nflush * sizeof *t);
    if (!row || !t)
        bdie("out of memory");
    hsize_t one[2] = {1, (hsize_t)j->row};
    hid_t mem = H5Screate_simple(2, one, NULL);
    double t0 = vfdswmr_now();
    for (int i = 0; i < j->nflush; i++) {
        for (int k = 0; k < j->row; k++)
            row[k] = i * j->row + k;
        hsize_t n[2] = {(hsize_t)i + 1, (hsize_t)j->row}, start[2] = {(hsize_t)i, 0};
        BCHECK(H5Dset_extent(d, n));
        hid_t fs = H5Dget_space(d);
        BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL));
        BCHECK(H5Dwrite(d, H5T_NATIVE_INT32, mem, fs, H5P_DEFAULT, row));
        H5Sclose(fs);
        double a = vfdswmr_now();
        BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
        if (fd >= 0 && fsync(fd) < 0)
            bdie("fsync: %s", strerror(errno));
        t[i] = (vfdswmr_now() - a) * 1e6;
    }
    r->total = vfdswmr_now() - t0;
    char md[4200];
    struct stat sb;
    BFMT(md, "%s.md", j->path);
    r->md_bytes = fconf[j->c] && stat(md, &sb) == 0 ? (double)sb.st_size : 0;
    double sum = 0;
    for (int i = 0; i < j->nflush; i++)
        sum += t[i];
    qsort(t, (size_t)j->nflush, sizeof *t, bcmp_double);
    r->p50 = bquantile(t, (size_t)j->nflush, 0.5);
    r->p99 = bquantile(t, (size_t)j->nflush, 0.99);
    r->mean = sum / j->nflush;
    H5Sclose(mem);
    H5Dclose(d);
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    bremove(j->path);
    free(row);
    free(t);
}

int
main(int argc, char **argv)
{
    int nflush = 2000, rowlen = 256, reps = 3, opt;
    const char *usage = "usage: bench_flush [-f flushes] [-r row_elements] [-n reps] FILEDIR OUTDIR";
    while ((opt = getopt(argc, argv, "f:r:n:")) != -1) {
        switch (opt) {
        case 'f':
            nflush = atoi(optarg);
            break;
        case 'r':
            rowlen = atoi(optarg);
            break;
        case 'n':
            reps = atoi(optarg);
            break;
        default:
            bdie("%s", usage);
        }
    }
    if (argc - optind != 2 || nflush < 1 || rowlen < 1 || reps < 1 || reps > 100)
        bdie("%s", usage);
    char path[4096];
    BFMT(path, "%s/bench_flush.h5", argv[optind]);
    bmkdir(argv[optind]);
    FILE *csv = bcsv(argv[optind + 1], "flush.csv", "config,p50_us,p99_us,mean_us,flushes_per_s,md_bytes");
    printf("%d appends of one row of %d int32, one H5Fflush after each; vfd-swmr: tick_len=1, max_lag=3; "
           "median of %d runs.\n\n",
           nflush, rowlen, reps);
    printf("| configuration | p50 µs | p99 µs | mean µs | flushes/s | mean / sec2 + fsync | metadata file KiB |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    double m[F_N][5];
    for (int c = 0; c < F_N; c++) {
        double v[5][100];
        for (int r = 0; r < reps; r++) {
            struct res x;
            struct job j = {(enum fcfg)c, path, nflush, rowlen};
            bisolated(job, &j, &x, sizeof x);
            v[0][r] = x.p50;
            v[1][r] = x.p99;
            v[2][r] = x.mean;
            v[3][r] = nflush / x.total;
            v[4][r] = x.md_bytes;
        }
        for (int k = 0; k < 5; k++)
            m[c][k] = bmedian(v[k], (size_t)reps);
    }
    for (int c = 0; c < F_N; c++) {
        char md[32] = "-";
        if (fconf[c])
            BFMT(md, "%.0f", m[c][4] / 1024);
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2f | %s |\n", fname[c], m[c][0], m[c][1], m[c][2], m[c][3],
               m[c][2] / m[F_SEC2_FSYNC][2], md);
        fprintf(csv, "\"%s\",%.1f,%.1f,%.1f,%.0f,%.0f\n", fname[c], m[c][0], m[c][1], m[c][2], m[c][3], m[c][4]);
    }
    printf("\n");
    fclose(csv);
    return 0;
}
