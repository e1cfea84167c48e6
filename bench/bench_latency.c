/* Publish-to-visible latency. A writer appends CLOCK_MONOTONIC stamps (ns, int64)
 * one at a time to a 1-D extensible dataset, calling H5Fflush after each, at
 * random intervals (uniform in [I/2, 3I/2] ms); a reader process (this program
 * re-executed with --reader) opens the file through the matching reader
 * configuration, and every 0.5 ms calls H5Drefresh, reads the new elements and
 * records now - stamp. The delay thus covers H5Dwrite + H5Fflush, waiting for
 * the end of the tick, publishing, and the reader's poll. Configurations: legacy
 * SWMR, and vfd-swmr with tick_len 1, 2, 4 (md on disk) and 1 (md on /dev/shm),
 * all with max_lag=3; and h5py's SWMR idiom through vfd-swmr (libver latest,
 * H5Fstart_swmr_write after creating the dataset, H5Dflush instead of
 * H5Fflush after each stamp). Reports min/p50/p99/max in ms and in ticks.
 *   bench_latency [-s stamps] [-i interval_ms] FILEDIR OUTDIR   (defaults: 100, 30) */
#include "bench_h5.h"

#include <sys/wait.h>

#define MAXLAG 3

static int
reader_main(char **argv)
{
    enum bcfg c = (enum bcfg)atoi(argv[2]);
    int tick = atoi(argv[3]), ready = atoi(argv[6]);
    const char *path = argv[4];
    FILE *out = fopen(argv[5], "wb");
    if (!out)
        bdie("%s: %s", argv[5], strerror(errno));
    hid_t fapl = breader_fapl(c, tick, MAXLAG);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY | (c == CFG_LEGACY ? H5F_ACC_SWMR_READ : 0u), fapl);
    BCHECK(f);
    hid_t d = H5Dopen2(f, "t", H5P_DEFAULT);
    BCHECK(d);
    if (write(ready, "r", 1) != 1)
        bdie("ready pipe: %s", strerror(errno));
    close(ready);
    hsize_t seen = 0;
    long long buf[4096];
    double deadline = vfdswmr_now() + 120;
    int done = 0;
    while (!done && vfdswmr_now() < deadline) {
        BCHECK(H5Drefresh(d));
        hid_t fs = H5Dget_space(d);
        hsize_t n;
        H5Sget_simple_extent_dims(fs, &n, NULL);
        if (n > seen) {
            hsize_t cnt = n - seen > 4096 ? 4096 : n - seen;
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &seen, NULL, &cnt, NULL));
            hid_t ms = H5Screate_simple(1, &cnt, NULL);
            BCHECK(H5Dread(d, H5T_NATIVE_LLONG, ms, fs, H5P_DEFAULT, buf));
            long long now = bnow_ns();
            H5Sclose(ms);
            for (hsize_t i = 0; i < cnt; i++) {
                if (buf[i] < 0) {
                    done = 1;
                    break;
                }
                double ms_delay = (double)(now - buf[i]) / 1e6;
                fwrite(&ms_delay, sizeof ms_delay, 1, out);
            }
            seen += cnt;
        }
        H5Sclose(fs);
        vfdswmr_sleep(0.0005);
    }
    H5Dclose(d);
    H5Fclose(f);
    fclose(out);
    return done ? 0 : 2;
}

static void
append(hid_t d, hsize_t i, long long v)
{
    hsize_t n = i + 1, one = 1;
    BCHECK(H5Dset_extent(d, &n));
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &one, NULL);
    BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &i, NULL, &one, NULL));
    if (v == 0)
        v = bnow_ns();
    BCHECK(H5Dwrite(d, H5T_NATIVE_LLONG, ms, fs, H5P_DEFAULT, &v));
    H5Sclose(fs);
    H5Sclose(ms);
}

/* Flushes per second the last run's writer achieved (its append loop). */
static double flush_rate;

/* One writer run; returns the number of delays (ms) stored into *out. */
static size_t
run(enum bcfg c, int tick, bool h5py, const char *path, const char *samples, int nstamps, double ival)
{
    bremove(path);
    hid_t fapl = bwriter_fapl(c, tick, MAXLAG, NULL);
    if (h5py) /* h5py's SWMR idiom: libver='latest', then swmr_mode = True, dset.flush() per step */
        BCHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
    hid_t f = H5Fcreate(path, bcreate_flags(c), H5P_DEFAULT, fapl);
    BCHECK(f);
    hsize_t zero = 0, unl = H5S_UNLIMITED, chunk = 64;
    hid_t sp = H5Screate_simple(1, &zero, &unl), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 1, &chunk));
    hid_t d = H5Dcreate2(f, "t", H5T_NATIVE_LLONG, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    BCHECK(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
    BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    if (h5py)
        BCHECK(H5Fstart_swmr_write(f));
    if (c != CFG_LEGACY) { /* let the first snapshot appear before the reader opens */
        vfdswmr_sleep(0.15 * tick);
    }
    int p[2];
    if (pipe(p) < 0)
        bdie("pipe: %s", strerror(errno));
    char sc[16], st[16], sr[16];
    snprintf(sc, sizeof sc, "%d", (int)c);
    snprintf(st, sizeof st, "%d", tick);
    snprintf(sr, sizeof sr, "%d", p[1]);
    pid_t pid = fork();
    if (pid < 0)
        bdie("fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        char *av[] = {"bench_latency", "--reader", sc, st, (char *)path, (char *)samples, sr, NULL};
        execv("/proc/self/exe", av);
        _exit(127);
    }
    close(p[1]);
    char b;
    if (read(p[0], &b, 1) != 1)
        bdie("reader did not start (%s, tick_len %d)", bcfg_key[c], tick);
    close(p[0]);
    double t0 = vfdswmr_now();
    for (int i = 0; i < nstamps; i++) {
        vfdswmr_sleep(ival * (0.5 + (double)rand() / RAND_MAX) * 1e-3);
        append(d, (hsize_t)i, 0);
        BCHECK(h5py ? H5Dflush(d) : H5Fflush(f, H5F_SCOPE_LOCAL));
    }
    flush_rate = nstamps / (vfdswmr_now() - t0);
    append(d, (hsize_t)nstamps, -1);
    BCHECK(h5py ? H5Dflush(d) : H5Fflush(f, H5F_SCOPE_LOCAL));
    int st_;
    waitpid(pid, &st_, 0);
    if (!WIFEXITED(st_) || WEXITSTATUS(st_) != 0)
        fprintf(stderr, "bench_latency: reader (%s, tick_len %d) ended with status %d\n", bcfg_key[c], tick, st_);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    bremove(path);
    struct stat sb;
    return stat(samples, &sb) == 0 ? (size_t)sb.st_size / sizeof(double) : 0;
}

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--reader") == 0) {
        if (argc != 7)
            bdie("bad reader arguments");
        return reader_main(argv);
    }
    int nstamps = 100, opt;
    double ival = 30;
    while ((opt = getopt(argc, argv, "s:i:")) != -1) {
        switch (opt) {
        case 's':
            nstamps = atoi(optarg);
            break;
        case 'i':
            ival = atof(optarg);
            break;
        default:
            bdie("usage: bench_latency [-s stamps] [-i interval_ms] FILEDIR OUTDIR");
        }
    }
    if (argc - optind != 2 || nstamps < 1 || ival <= 0)
        bdie("usage: bench_latency [-s stamps] [-i interval_ms] FILEDIR OUTDIR");
    srand(12345);
    const char *outdir = argv[optind + 1];
    char path[4096], samples[4096];
    BFMT(path, "%s/bench_latency.h5", argv[optind]);
    BFMT(samples, "%s/latency.bin", outdir);
    bmkdir(outdir);
    struct {
        enum bcfg c;
        int tick;
        bool h5py;
        const char *label;
    } runs[] = {{CFG_LEGACY, 0, false, "legacy SWMR"},
                {CFG_VFD_DISK, 1, false, "vfd-swmr tick_len=1"},
                {CFG_VFD_DISK, 2, false, "vfd-swmr tick_len=2"},
                {CFG_VFD_DISK, 4, false, "vfd-swmr tick_len=4"},
                {CFG_VFD_SHM, 1, false, "vfd-swmr tick_len=1 (md on /dev/shm)"},
                {CFG_VFD_DISK, 1, true, "vfd-swmr tick_len=1, h5py idiom (H5Fstart_swmr_write, H5Dflush)"}};
    FILE *csv = bcsv(outdir, "latency.csv", "config,tick_ms,samples,min_ms,p50_ms,p99_ms,max_ms");
    FILE *all = bcsv(outdir, "latency_samples.csv", "# one block per configuration: its name, then ms,cdf rows");
    printf("%d stamps per configuration, one H5Fflush after each, intervals uniform in [%.3g, %.3g] ms; "
           "reader polls every 0.5 ms; max_lag=%d.\n\n",
           nstamps, ival / 2, ival * 1.5, MAXLAG);
    printf(
        "| configuration | samples | flushes/s | min ms | p50 ms | p99 ms | max ms | p50 ticks | p99 ticks | max ticks "
        "|\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        unlink(samples);
        size_t n = run(runs[r].c, runs[r].tick, runs[r].h5py, path, samples, nstamps, ival);
        double *v = malloc((n + 1) * sizeof *v);
        FILE *in = fopen(samples, "rb");
        if (!v || !in || fread(v, sizeof *v, n, in) != n)
            bdie("reading %s", samples);
        fclose(in);
        unlink(samples);
        qsort(v, n, sizeof *v, bcmp_double);
        double tms = runs[r].tick * 100.0;
        double q[4] = {n ? v[0] : 0, bquantile(v, n, 0.5), bquantile(v, n, 0.99), n ? v[n - 1] : 0};
        if (runs[r].tick)
            printf("| %s | %zu | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", runs[r].label, n,
                   flush_rate, q[0], q[1], q[2], q[3], q[1] / tms, q[2] / tms, q[3] / tms);
        else
            printf("| %s | %zu | %.0f | %.2f | %.2f | %.2f | %.2f | - | - | - |\n", runs[r].label, n, flush_rate, q[0],
                   q[1], q[2], q[3]);
        fprintf(csv, "\"%s\",%.0f,%zu,%.3f,%.3f,%.3f,%.3f\n", runs[r].label, tms, n, q[0], q[1], q[2], q[3]);
        fprintf(all, "\"%s\",ms,cdf\n", runs[r].label);
        for (size_t i = 0; i < n; i++)
            fprintf(all, "\"%s\",%.3f,%.4f\n", runs[r].label, v[i], (double)(i + 1) / (double)n);
        fprintf(all, "\n\n"); /* gnuplot data set separator */
        free(v);
    }
    printf("\n");
    fclose(csv);
    fclose(all);
    return 0;
}
