/* End-of-tick cost through the writer driver versus dirty metadata volume.
 * A file with 1000 1-D extensible int32 datasets is made with sec2, then reopened
 * through vfd_swmr_writer (tick_len=1, max_lag=3, log_file_path set). Each round
 * appends 16 elements to K datasets, calls H5Fflush and sleeps 150 ms, so every
 * tick publishes one round's dirty metadata. The driver logs each tick as
 * "end_of_tick ... pages=P ... time_us=T"; per K the median P and T over ticks
 * with P > 0 are reported, against the sequential write bandwidth of the same
 * directory measured in the same run (64 MiB of pwrite in 1 MiB blocks into
 * the page cache). md on disk and on /dev/shm.
 *   bench_eot [-r rounds] FILEDIR OUTDIR   (default 15 rounds per K) */
#include "bench_h5.h"

#include <fcntl.h>

#define ND 1000

static double
seq_bw(const char *dir)
{
    char p[4200];
    BFMT(p, "%s/bench_eot_seq.tmp", dir);
    size_t blk = 1u << 20;
    char *b = malloc(blk);
    if (!b)
        bdie("out of memory");
    memset(b, 0x5a, blk);
    double best = 0;
    for (int r = 0; r < 3; r++) {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            bdie("%s: %s", p, strerror(errno));
        double t0 = vfdswmr_now();
        for (int i = 0; i < 64; i++)
            if (pwrite(fd, b, blk, (off_t)i * (off_t)blk) != (ssize_t)blk)
                bdie("pwrite: %s", strerror(errno));
        double t = vfdswmr_now() - t0;
        close(fd);
        unlink(p);
        if (64.0 * blk / 1e6 / t > best)
            best = 64.0 * blk / 1e6 / t;
    }
    free(b);
    return best;
}

/* Runs K datasets per round; fills median pages and time_us from the log. */
static void
run(enum bcfg c, const char *path, const char *log, int k, int rounds, double *pages, double *us, int *nticks)
{
    bmake_datasets(path, ND, 256);
    unlink(log);
    hid_t fapl = bwriter_fapl(c, 1, 3, log);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, fapl);
    BCHECK(f);
    hid_t *d = malloc(ND * sizeof *d);
    if (!d)
        bdie("out of memory");
    for (int i = 0; i < ND; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        d[i] = H5Dopen2(f, name, H5P_DEFAULT);
        BCHECK(d[i]);
    }
    int buf[16] = {0};
    hsize_t cnt = 16;
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < k; i++) {
            hsize_t n = (hsize_t)(r + 1) * 16, start = (hsize_t)r * 16;
            BCHECK(H5Dset_extent(d[i], &n));
            hid_t fs = H5Dget_space(d[i]);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL));
            BCHECK(H5Dwrite(d[i], H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf));
            H5Sclose(fs);
        }
        BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
        vfdswmr_sleep(0.15);
    }
    H5Sclose(ms);
    for (int i = 0; i < ND; i++)
        H5Dclose(d[i]);
    H5Fclose(f);
    H5Pclose(fapl);
    free(d);
    bremove(path);
    FILE *in = fopen(log, "r");
    if (!in)
        bdie("%s: %s (log_file_path not honoured?)", log, strerror(errno));
    double pv[4096], tv[4096];
    size_t n = 0;
    char line[1024];
    while (fgets(line, sizeof line, in) && n < 4096) {
        const char *a = strstr(line, "end_of_tick"), *p = strstr(line, " pages="), *t = strstr(line, "time_us=");
        if (!a || !p || !t)
            continue;
        double pg = atof(p + 7), tu = atof(t + 8);
        if (pg > 0) {
            pv[n] = pg;
            tv[n++] = tu;
        }
    }
    fclose(in);
    unlink(log);
    *pages = bmedian(pv, n);
    *us = bmedian(tv, n);
    *nticks = (int)n;
}

int
main(int argc, char **argv)
{
    int rounds = 15, opt;
    while ((opt = getopt(argc, argv, "r:")) != -1) {
        if (opt == 'r')
            rounds = atoi(optarg);
        else
            bdie("usage: bench_eot [-r rounds] FILEDIR OUTDIR");
    }
    if (argc - optind != 2 || rounds < 1 || rounds > 1000)
        bdie("usage: bench_eot [-r rounds] FILEDIR OUTDIR");
    const char *dir = argv[optind];
    char path[4200], log[4200];
    BFMT(path, "%s/bench_eot.h5", dir);
    BFMT(log, "%s/bench_eot.log", dir);
    double bw[2] = {seq_bw(dir), seq_bw("/dev/shm")};
    FILE *csv = bcsv(argv[optind + 1], "eot.csv", "config,datasets,ticks,pages,time_us,publish_mb_s,seq_mb_s,seq_us");
    printf("Sequential pwrite bandwidth in the same run: %.0f MB/s in `%s`, %.0f MB/s in /dev/shm.\n"
           "One round (16 int32 appended to K datasets, H5Fflush) per tick; tick_len=1, max_lag=3; medians over "
           "the ticks that published pages.\n\n",
           bw[0], dir, bw[1]);
    printf("| metadata file | datasets per tick | ticks | dirty pages | MB | end of tick ms | MB/s | "
           "same bytes at seq. bandwidth ms | ratio |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    const int ks[] = {1, 10, 100, 1000};
    for (int ci = 0; ci < 2; ci++) {
        enum bcfg c = ci ? CFG_VFD_SHM : CFG_VFD_DISK;
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            double pages, us;
            int nt;
            run(c, path, log, ks[i], rounds, &pages, &us, &nt);
            double mb = pages * 4096 / 1e6, seq_us = mb / bw[ci] * 1e6;
            printf("| %s | %d | %d | %.0f | %.3f | %.3f | %.0f | %.3f | %.1f |\n", ci ? "/dev/shm" : "disk", ks[i], nt,
                   pages, mb, us / 1e3, us > 0 ? mb / (us / 1e6) : 0, seq_us / 1e3, seq_us > 0 ? us / seq_us : 0);
            fprintf(csv, "%s,%d,%d,%.0f,%.1f,%.1f,%.1f,%.1f\n", ci ? "shm" : "disk", ks[i], nt, pages, us,
                    us > 0 ? mb / (us / 1e6) : 0, bw[ci], seq_us);
        }
    }
    printf("\n");
    fclose(csv);
    return 0;
}
