/* What the end of a tick costs the writing application: the latency of each
 * of its HDF5 calls that reaches the driver, while the writer publishes ticks.
 * A file with K 1-D extensible int32 datasets (chunks of 1024 elements, 4 KiB)
 * is made with sec2, then reopened through vfd_swmr_writer (tick_len=1,
 * max_lag=3, metadata file next to the HDF5 file) with HDF5's chunk cache
 * off, so every H5Dwrite of a whole chunk is a driver write. The program
 * appends one chunk to each dataset in turn and calls H5Fflush after each
 * round, so every tick publishes the metadata of a round (about K / 10
 * pages). Each H5Dset_extent + H5Dwrite pair is timed; H5Fflush is timed
 * apart (it is the application's own request to wait). A call that arrives
 * while a tick is being published waits for whatever the publish holds.
 * Rows: sec2 (no ticks), the writer, and the writer with flush_raw_data=1
 * (every publish ends with fdatasync of the metadata file).
 *   bench_stall [-s seconds] [-k datasets] FILEDIR OUTDIR   (default 5 s, 400) */
#include "bench_h5.h"

#define CHUNK 1024

struct result {
    size_t n, over1ms, flushes, ticks;
    double p50, p99, p999, max, flush_p50, flush_max, publish_p50, publish_max;
};

/* Publish times (time_us) of the ticks in the writer's log that published pages. */
static void
publish_times(const char *log, struct result *r)
{
    FILE *in = fopen(log, "r");
    if (!in)
        bdie("%s: %s (log_file_path not honoured?)", log, strerror(errno));
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof *v);
    char line[1024];
    if (!v)
        bdie("out of memory");
    while (fgets(line, sizeof line, in)) {
        const char *a = strstr(line, "end_of_tick"), *p = strstr(line, " pages="), *t = strstr(line, "time_us=");
        if (!a || !p || !t || atof(p + 7) <= 0)
            continue;
        if (n == cap && !(v = realloc(v, (cap *= 2) * sizeof *v)))
            bdie("out of memory");
        v[n++] = atof(t + 8);
    }
    fclose(in);
    r->ticks = n;
    qsort(v, n, sizeof *v, bcmp_double);
    r->publish_p50 = bquantile(v, n, 0.5) / 1e3;
    r->publish_max = n ? v[n - 1] / 1e3 : 0;
    free(v);
}

struct run_ctx {
    const char *path, *log;
    int k, durable;
    enum bcfg c;
    double seconds;
};

static void
run(void *vctx, void *out)
{
    struct run_ctx *x = vctx;
    struct result *r = out;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    char conf[4400];

    bmake_datasets(x->path, x->k, CHUNK);
    unlink(x->log);
    BCHECK(fapl);
    if (x->c == CFG_SEC2)
        BCHECK(H5Pset_fapl_sec2(fapl));
    else {
        BFMT(conf, "tick_len=1;max_lag=3;flush_raw_data=%d;log_file_path=%s", x->durable, x->log);
        BCHECK(H5Pset_driver_by_name(fapl, "vfd_swmr_writer", conf));
    }
    hid_t f = H5Fopen(x->path, H5F_ACC_RDWR, fapl), dapl = H5Pcreate(H5P_DATASET_ACCESS);
    BCHECK(f);
    BCHECK(H5Pset_chunk_cache(dapl, 0, 0, 1.0)); /* every chunk write reaches the driver */
    hid_t *d = malloc((size_t)x->k * sizeof *d);
    size_t cap = 1u << 16;
    double *lat = malloc(cap * sizeof *lat), *fl = malloc(cap * sizeof *fl);
    int *buf = malloc(CHUNK * sizeof *buf);
    if (!d || !lat || !fl || !buf)
        bdie("out of memory");
    for (int i = 0; i < x->k; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        BCHECK(d[i] = H5Dopen2(f, name, dapl));
    }
    hsize_t cnt = CHUNK;
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    *r = (struct result){0};
    double end = vfdswmr_now() + x->seconds;
    for (hsize_t round = 0; vfdswmr_now() < end; round++) {
        for (int i = 0; i < x->k; i++) {
            hsize_t n = (round + 1) * CHUNK, start = round * CHUNK;
            for (int j = 0; j < CHUNK; j++)
                buf[j] = (int)(start + (hsize_t)j) ^ i;
            double t0 = vfdswmr_now();
            BCHECK(H5Dset_extent(d[i], &n));
            hid_t fs = H5Dget_space(d[i]);
            BCHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL));
            BCHECK(H5Dwrite(d[i], H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf));
            H5Sclose(fs);
            if (r->n == cap &&
                (!(lat = realloc(lat, (cap *= 2) * sizeof *lat)) || !(fl = realloc(fl, cap * sizeof *fl))))
                bdie("out of memory");
            lat[r->n++] = (vfdswmr_now() - t0) * 1e3;
        }
        double t0 = vfdswmr_now();
        BCHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
        fl[r->flushes++] = (vfdswmr_now() - t0) * 1e3;
    }
    H5Sclose(ms);
    for (int i = 0; i < x->k; i++)
        H5Dclose(d[i]);
    H5Fclose(f);
    H5Pclose(fapl);
    H5Pclose(dapl);
    for (size_t i = 0; i < r->n; i++)
        r->over1ms += lat[i] > 1.0;
    qsort(lat, r->n, sizeof *lat, bcmp_double);
    qsort(fl, r->flushes, sizeof *fl, bcmp_double);
    r->p50 = bquantile(lat, r->n, 0.5);
    r->p99 = bquantile(lat, r->n, 0.99);
    r->p999 = bquantile(lat, r->n, 0.999);
    r->max = r->n ? lat[r->n - 1] : 0;
    r->flush_p50 = bquantile(fl, r->flushes, 0.5);
    r->flush_max = r->flushes ? fl[r->flushes - 1] : 0;
    if (x->c != CFG_SEC2)
        publish_times(x->log, r);
    unlink(x->log);
    bremove(x->path);
    free(d);
    free(lat);
    free(fl);
    free(buf);
}

int
main(int argc, char **argv)
{
    int k = 400, opt;
    double seconds = 5;
    const char *usage = "usage: bench_stall [-s seconds] [-k datasets] FILEDIR OUTDIR";

    while ((opt = getopt(argc, argv, "s:k:")) != -1) {
        if (opt == 's')
            seconds = atof(optarg);
        else if (opt == 'k')
            k = atoi(optarg);
        else
            bdie("%s", usage);
    }
    if (argc - optind != 2 || k < 1 || k > 100000 || !(seconds > 0 && seconds <= 3600))
        bdie("%s", usage);
    char path[4200], log[4200];
    BFMT(path, "%s/bench_stall.h5", argv[optind]);
    BFMT(log, "%s/bench_stall.log", argv[optind]);
    FILE *csv = bcsv(argv[optind + 1], "stall.csv",
                     "config,calls,p50_ms,p99_ms,p999_ms,max_ms,over_1ms,flushes,flush_p50_ms,flush_max_ms,ticks,"
                     "publish_p50_ms,publish_max_ms");
    printf("%d datasets, one 4 KiB chunk appended to each in turn (H5Dset_extent + H5Dwrite, HDF5's chunk cache "
           "off), H5Fflush after each round, %.0f s per row; vfd-swmr: tick_len=1, max_lag=3, metadata file next "
           "to the HDF5 file. \"publish\": the writer's logged time of ticks that published pages.\n\n",
           k, seconds);
    printf("| configuration | calls | p50 ms | p99 ms | p99.9 ms | max ms | calls > 1 ms | H5Fflush p50 / max ms | "
           "ticks | publish p50 / max ms |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    struct {
        const char *name, *key;
        enum bcfg c;
        int durable;
    } rows[] = {{"sec2", "sec2", CFG_SEC2, 0},
                {"vfd-swmr", "vfd", CFG_VFD_DISK, 0},
                {"vfd-swmr, flush_raw_data=1", "vfd-durable", CFG_VFD_DISK, 1}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct run_ctx x = {path, log, k, rows[i].durable, rows[i].c, seconds};
        struct result r;
        bisolated(run, &x, &r, sizeof r);
        printf("| %s | %zu | %.3f | %.3f | %.3f | %.3f | %zu | %.2f / %.2f | %zu | ", rows[i].name, r.n, r.p50, r.p99,
               r.p999, r.max, r.over1ms, r.flush_p50, r.flush_max, r.ticks);
        if (rows[i].c == CFG_SEC2)
            printf("- |\n");
        else
            printf("%.2f / %.2f |\n", r.publish_p50, r.publish_max);
        fprintf(csv, "%s,%zu,%.4f,%.4f,%.4f,%.4f,%zu,%zu,%.4f,%.4f,%zu,%.4f,%.4f\n", rows[i].key, r.n, r.p50, r.p99,
                r.p999, r.max, r.over1ms, r.flushes, r.flush_p50, r.flush_max, r.ticks, r.publish_p50, r.publish_max);
    }
    printf("\n");
    fclose(csv);
    return 0;
}
