/* W2 of the VFD SWMR design's performance targets, many small datasets: create D extensible int32
 * datasets, then P passes round robin through them appending K elements to
 * each, with one H5Fflush (publish) per pass. Two variants:
 *   1-D  dims {0}, max {unlimited}, chunk {256}, K elements per append;
 *   2-D  dims {0, K}, max {unlimited, unlimited}, chunk {16, K}, one row of K per append
 *        (with libver latest this uses the v2 B-tree chunk index).
 * Every configuration of bench_h5.h runs the same code, each run in a fresh process; creation phase, append
 * phase and H5Fclose are timed with CLOCK_MONOTONIC, creation + appends also in
 * process CPU time (all threads; less disturbed by other load on a shared
 * machine); medians and best of the repetitions, ratios against sec2 on
 * creation + appends.
 *   bench_w2 [-d datasets] [-p passes] [-k elements] [-r reps] [-F] [-c config] FILEDIR OUTDIR
 *   defaults: D=1000, P=100, K=16, 9 repetitions; -F: the design's D=10000, P=10000 (hours);
 *   -c: only sec2 and that configuration (for profiling). */
#include "bench_h5.h"

struct res {
    double create, append, close, cpu; /* cpu: process CPU time of creation + appends */
};

static struct res
run(enum bcfg c, const char *path, int twod, int nd, int np, int k, const int *buf)
{
    struct res r;
    bremove(path);
    hid_t fapl = bwriter_fapl(c, 1, 3, NULL);
    double c0 = bcpu(), t0 = vfdswmr_now();
    hid_t f = H5Fcreate(path, bcreate_flags(c), H5P_DEFAULT, fapl);
    BCHECK(f);
    int rank = twod ? 2 : 1;
    hsize_t dims[2] = {0, twod ? (hsize_t)k : 0}, maxd[2] = {H5S_UNLIMITED, H5S_UNLIMITED};
    hsize_t chunk[2] = {twod ? 16 : 256, (hsize_t)k};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, rank, chunk));
    hid_t *d = malloc((size_t)nd * sizeof *d);
    if (!d)
        bdie("out of memory");
    hid_t sp = H5Screate_simple(rank, dims, maxd);
    for (int i = 0; i < nd; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        d[i] = H5Dcreate2(f, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        BCHECK(d[i]);
    }
    H5Sclose(sp);
    H5Pclose(dcpl);
    BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    double t1 = vfdswmr_now();
    hsize_t cnt[2] = {twod ? 1 : (hsize_t)k, (hsize_t)k};
    hid_t mem = H5Screate_simple(rank, cnt, NULL);
    for (int p = 0; p < np; p++) {
        for (int i = 0; i < nd; i++) {
            hsize_t ndims[2], start[2] = {0, 0};
            if (twod) {
                ndims[0] = (hsize_t)p + 1;
                ndims[1] = (hsize_t)k;
                start[0] = (hsize_t)p;
            }
            else {
                ndims[0] = (hsize_t)(p + 1) * (hsize_t)k;
                start[0] = (hsize_t)p * (hsize_t)k;
            }
            BCHECK(H5Dset_extent(d[i], ndims));
            hid_t fs = H5Dget_space(d[i]);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL));
            BCHECK(H5Dwrite(d[i], H5T_NATIVE_INT32, mem, fs, H5P_DEFAULT, buf));
            H5Sclose(fs);
        }
        BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    }
    double t2 = vfdswmr_now();
    r.cpu = bcpu() - c0;
    H5Sclose(mem);
    for (int i = 0; i < nd; i++)
        H5Dclose(d[i]);
    BCHECK(H5Fclose(f));
    double t3 = vfdswmr_now();
    H5Pclose(fapl);
    free(d);
    bremove(path);
    r.create = t1 - t0;
    r.append = t2 - t1;
    r.close = t3 - t2;
    return r;
}

struct job {
    enum bcfg c;
    const char *path;
    int twod, nd, np, k;
    const int *buf;
};

static void
job(void *ctx, void *out)
{
    struct job *j = ctx;
    *(struct res *)out = run(j->c, j->path, j->twod, j->nd, j->np, j->k, j->buf);
}

int
main(int argc, char **argv)
{
    int nd = 1000, np = 100, k = 16, reps = 9, opt;
    const char *only = NULL; /* -c KEY: run only that configuration (for profiling) */
    const char *usage = "usage: bench_w2 [-d datasets] [-p passes] [-k elements] [-r reps] [-F] [-c "
                        "sec2|legacy|vfd-disk|vfd-shm] FILEDIR OUTDIR";
    while ((opt = getopt(argc, argv, "d:p:k:r:Fc:")) != -1) {
        switch (opt) {
        case 'd':
            nd = atoi(optarg);
            break;
        case 'p':
            np = atoi(optarg);
            break;
        case 'k':
            k = atoi(optarg);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'F':
            nd = 10000;
            np = 10000;
            break;
        case 'c':
            only = optarg;
            break;
        default:
            bdie("%s", usage);
        }
    }
    if (argc - optind != 2 || nd < 1 || np < 1 || k < 1 || k > 4096 || reps < 1 || reps > 100)
        bdie("%s", usage);
    char path[4096];
    BFMT(path, "%s/bench_w2.h5", argv[optind]);
    int buf[4096];
    for (int i = 0; i < 4096; i++)
        buf[i] = i;
    FILE *raw = bcsv(argv[optind + 1], "w2_runs.csv", "variant,config,rep,create_s,append_s,close_s,cpu_s");
    FILE *csv =
        bcsv(argv[optind + 1], "w2.csv",
             "variant,config,create_s,append_s,close_s,total_ratio,appends_per_s,cpu_s,cpu_ratio,best_s,best_ratio");
    printf("%d datasets, %d passes of %d int32 per dataset, one H5Fflush per pass; vfd-swmr: "
           "tick_len=1, max_lag=3; median of %d runs. Ratio: (creation + appends) / sec2.\n\n",
           nd, np, k, reps);
    printf("| variant | configuration | create s | append s | appends/s | close s | ratio to sec2 | CPU s | CPU "
           "ratio | best s | best / best sec2 |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int twod = 0; twod < 2; twod++) {
        double cr[CFG_N][100], ap[CFG_N][100], cl[CFG_N][100], cp[CFG_N][100];
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < CFG_N; i++) { /* rotate the order: no configuration always first */
                int c = (i + r) % CFG_N;
                if (only && strcmp(only, bcfg_key[c]) != 0 && c != CFG_SEC2)
                    continue;
                struct res x;
                struct job j = {(enum bcfg)c, path, twod, nd, np, k, buf};
                bisolated(job, &j, &x, sizeof x);
                cr[c][r] = x.create;
                ap[c][r] = x.append;
                cl[c][r] = x.close;
                cp[c][r] = x.cpu;
                fprintf(raw, "%s,%s,%d,%.6f,%.6f,%.6f,%.6f\n", twod ? "2-D" : "1-D", bcfg_key[c], r, x.create, x.append,
                        x.close, x.cpu);
                fflush(raw);
            }
        double m[CFG_N][5];
        for (int c = 0; c < CFG_N; c++) {
            if (only && strcmp(only, bcfg_key[c]) != 0 && c != CFG_SEC2)
                continue;
            m[c][0] = bmedian(cr[c], (size_t)reps);
            m[c][1] = bmedian(ap[c], (size_t)reps);
            m[c][2] = bmedian(cl[c], (size_t)reps);
            m[c][3] = bmedian(cp[c], (size_t)reps);
            m[c][4] = 1e30; /* best run: creation + appends */
            for (int r = 0; r < reps; r++)
                if (cr[c][r] + ap[c][r] < m[c][4])
                    m[c][4] = cr[c][r] + ap[c][r];
        }
        for (int c = 0; c < CFG_N; c++) {
            if (only && strcmp(only, bcfg_key[c]) != 0 && c != CFG_SEC2)
                continue;
            double ratio = (m[c][0] + m[c][1]) / (m[0][0] + m[0][1]), aps = (double)nd * np / m[c][1];
            printf("| %s | %s | %.3f | %.3f | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", twod ? "2-D" : "1-D",
                   bcfg_name[c], m[c][0], m[c][1], aps, m[c][2], ratio, m[c][3], m[c][3] / m[0][3], m[c][4],
                   m[c][4] / m[0][4]);
            fprintf(csv, "%s,\"%s\",%.6f,%.6f,%.6f,%.4f,%.0f,%.6f,%.4f,%.6f,%.4f\n", twod ? "2-D" : "1-D", bcfg_name[c],
                    m[c][0], m[c][1], m[c][2], ratio, aps, m[c][3], m[c][3] / m[0][3], m[c][4], m[c][4] / m[0][4]);
        }
    }
    printf("\n");
    fclose(raw);
    fclose(csv);
    return 0;
}
