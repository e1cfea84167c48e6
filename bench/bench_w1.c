/* W1 of the VFD SWMR design's performance targets, few large datasets: ten n x S x S int32 datasets, first
 * dimension unlimited, chunk 1 x S x S; each pass writes one plane into every
 * dataset in turn and ends with H5Fflush (the call that publishes a snapshot).
 * The same code runs under every configuration of bench_h5.h, each run in a
 * fresh process; the time from
 * H5Fcreate to the last flush ("write") and of H5Fclose are measured with
 * CLOCK_MONOTONIC, median of the repetitions, ratios against sec2.
 *   bench_w1 [-n planes] [-s side] [-r reps] [-F] FILEDIR OUTDIR
 *   defaults: n=10, S=1000, 9 repetitions after one discarded warm-up run of each
 *   configuration; -F: n=100 (4 GB per run). */
#include "bench_h5.h"

#define NDSET 10

static void
run(enum bcfg c, const char *path, int n, hsize_t s, const int *buf, double *tw, double *tc)
{
    bremove(path);
    hid_t fapl = bwriter_fapl(c, 1, 3, NULL);
    double t0 = vfdswmr_now();
    hid_t f = H5Fcreate(path, bcreate_flags(c), H5P_DEFAULT, fapl);
    BCHECK(f);
    hsize_t dims[3] = {0, s, s}, maxd[3] = {H5S_UNLIMITED, s, s}, chunk[3] = {1, s, s};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 3, chunk));
    hid_t d[NDSET];
    for (int i = 0; i < NDSET; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", i);
        hid_t sp = H5Screate_simple(3, dims, maxd);
        d[i] = H5Dcreate2(f, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        BCHECK(d[i]);
        H5Sclose(sp);
    }
    H5Pclose(dcpl);
    hid_t mem = H5Screate_simple(3, chunk, NULL);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < NDSET; i++) {
            hsize_t nd[3] = {(hsize_t)p + 1, s, s}, start[3] = {(hsize_t)p, 0, 0};
            BCHECK(H5Dset_extent(d[i], nd));
            hid_t fs = H5Dget_space(d[i]);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, chunk, NULL));
            BCHECK(H5Dwrite(d[i], H5T_NATIVE_INT32, mem, fs, H5P_DEFAULT, buf));
            H5Sclose(fs);
        }
        BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    }
    double t1 = vfdswmr_now();
    H5Sclose(mem);
    for (int i = 0; i < NDSET; i++)
        H5Dclose(d[i]);
    BCHECK(H5Fclose(f));
    double t2 = vfdswmr_now();
    H5Pclose(fapl);
    bremove(path);
    *tw = t1 - t0;
    *tc = t2 - t1;
}

struct job {
    enum bcfg c;
    const char *path;
    int n;
    hsize_t s;
    const int *buf;
};

static void
job(void *ctx, void *out)
{
    struct job *j = ctx;
    double *t = out;
    run(j->c, j->path, j->n, j->s, j->buf, &t[0], &t[1]);
}

/* One run of configuration c in a fresh process. */
static void
run1(enum bcfg c, const char *path, int n, hsize_t s, const int *buf, double *tw, double *tc)
{
    struct job j = {c, path, n, s, buf};
    double t[2];
    bisolated(job, &j, t, sizeof t);
    *tw = t[0];
    *tc = t[1];
}

int
main(int argc, char **argv)
{
    int n = 10, reps = 9, opt;
    hsize_t s = 1000;
    while ((opt = getopt(argc, argv, "n:s:r:F")) != -1) {
        switch (opt) {
        case 'n':
            n = atoi(optarg);
            break;
        case 's':
            s = (hsize_t)atoi(optarg);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'F':
            n = 100;
            s = 1000;
            break;
        default:
            bdie("usage: bench_w1 [-n planes] [-s side] [-r reps] [-F] FILEDIR OUTDIR");
        }
    }
    if (argc - optind != 2 || n < 1 || s < 1 || reps < 1 || reps > 100)
        bdie("usage: bench_w1 [-n planes] [-s side] [-r reps] [-F] FILEDIR OUTDIR");
    char path[4096];
    BFMT(path, "%s/bench_w1.h5", argv[optind]);
    int *buf = malloc((size_t)(s * s) * sizeof *buf);
    if (!buf)
        bdie("out of memory");
    for (size_t i = 0; i < (size_t)(s * s); i++)
        buf[i] = (int)(i * 2654435761u);
    double tw[CFG_N][100], tc[CFG_N][100];
    FILE *raw = bcsv(argv[optind + 1], "w1_runs.csv", "config,rep,write_s,close_s");
    for (int c = 0; c < CFG_N; c++) /* warm-up: page cache, plugin loading */
        run1((enum bcfg)c, path, n, s, buf, &tw[c][0], &tc[c][0]);
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < CFG_N; i++) { /* rotate the order: no configuration always first */
            int c = (i + r) % CFG_N;
            run1((enum bcfg)c, path, n, s, buf, &tw[c][r], &tc[c][r]);
            fprintf(raw, "%s,%d,%.6f,%.6f\n", bcfg_key[c], r, tw[c][r], tc[c][r]);
        }
    fclose(raw);
    double mb = NDSET * (double)n * (double)(s * s) * 4 / 1e6, mw[CFG_N], mc[CFG_N];
    for (int c = 0; c < CFG_N; c++) {
        mw[c] = bmedian(tw[c], (size_t)reps);
        mc[c] = bmedian(tc[c], (size_t)reps);
    }
    FILE *csv = bcsv(argv[optind + 1], "w1.csv", "config,write_s,mb_per_s,write_ratio,close_s,total_ratio");
    printf("%d datasets x %d planes of %llu x %llu int32 (%.0f MB per run), one H5Fflush per pass; "
           "vfd-swmr: tick_len=1, max_lag=3; median of %d runs.\n\n",
           NDSET, n, (unsigned long long)s, (unsigned long long)s, mb, reps);
    printf("| configuration | write s | MB/s | write / sec2 | close s | (write + close) / sec2 |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int c = 0; c < CFG_N; c++) {
        double wr = mw[c] / mw[0], tr = (mw[c] + mc[c]) / (mw[0] + mc[0]);
        printf("| %s | %.3f | %.0f | %.3f | %.3f | %.3f |\n", bcfg_name[c], mw[c], mb / mw[c], wr, mc[c], tr);
        fprintf(csv, "\"%s\",%.6f,%.1f,%.4f,%.6f,%.4f\n", bcfg_name[c], mw[c], mb / mw[c], wr, mc[c], tr);
    }
    printf("\n");
    fclose(csv);
    free(buf);
    return 0;
}
