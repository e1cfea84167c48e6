/*
 * bench_mdfile [DIR]: throughput of the metadata file layer.
 *  1. checksum (SHA-256, first 4 bytes) over 4 KiB, 64 KiB and 1 MiB buffers;
 *  2. publish: ticks of k dirty 4 KiB pages (k = 1 .. 4096) written to a
 *     metadata file in DIR (default: the current directory), with and without
 *     durability, against plain sequential pwrite of the same bytes to a file
 *     in the same directory in the same run.
 * Prints Markdown tables; medians of repeated runs. Not a test: it never fails
 * on a number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "clock.h"
#include "io.h"
#include "mdwriter.h"

#define PS     4096u
#define REPEAT 5

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void
bench_checksum(void)
{
    static const size_t sizes[] = {4096, 65536, 1 << 20};
    printf("### Checksum (SHA-256, first 4 bytes)\n\n| buffer | MB/s | ns per call |\n| --- | ---: | ---: |\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t len = sizes[s], total = 256u << 20, calls = total / len;
        unsigned char *buf = malloc(len);
        double t[REPEAT];
        volatile uint32_t sink = 0;
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)(i * 7);
        for (int r = 0; r < REPEAT; r++) {
            double t0 = vfdswmr_now();
            for (size_t c = 0; c < calls; c++)
                sink ^= vfdswmr_checksum(buf, len);
            t[r] = vfdswmr_now() - t0;
        }
        double m = median(t, REPEAT);
        printf("| %zu KiB | %.0f | %.0f |\n", len / 1024, (double)total / m / 1e6, m / (double)calls * 1e9);
        free(buf);
        (void)sink;
    }
    printf("\n");
}

/* Seconds per tick for `ticks` publishes of k pages each. */
static double
run_publish(const char *dir, unsigned k, int ticks, bool durable, unsigned char *pages)
{
    char path[4096];
    vfdswmr_mdw_opts_t o = {.page_size = PS, .reserved_pages = 4, .max_lag = 7, .md_path = path, .durable = durable};
    vfdswmr_mdw_t *w;
    vfdswmr_mdchange_t *c = calloc(k, sizeof *c);
    char err[512];
    double t0, dt;

    snprintf(path, sizeof path, "%s/bench_mdfile.%ld.md", dir, (long)getpid());
    if (vfdswmr_mdw_open(&o, &w, err, sizeof err) < 0) {
        fprintf(stderr, "bench_mdfile: %s\n", err);
        exit(1);
    }
    for (unsigned i = 0; i < k; i++)
        c[i] = (vfdswmr_mdchange_t){.hdf5_page = i, .length = PS, .image = pages + (size_t)i * PS};
    t0 = vfdswmr_now();
    for (int t = 0; t < ticks; t++)
        if (vfdswmr_mdw_publish(w, (uint64_t)k * PS, c, k, NULL, 0, 0, err, sizeof err) < 0) {
            fprintf(stderr, "bench_mdfile: %s\n", err);
            exit(1);
        }
    dt = (vfdswmr_now() - t0) / ticks;
    vfdswmr_mdw_close(w, false, NULL, 0);
    free(c);
    return dt;
}

/* Seconds to pwrite k pages sequentially (plus fdatasync when durable). */
static double
run_raw(const char *dir, unsigned k, int ticks, bool durable, unsigned char *pages)
{
    char path[4096];
    int fd;
    double t0, dt;

    snprintf(path, sizeof path, "%s/bench_mdfile.%ld.raw", dir, (long)getpid());
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0) {
        perror(path);
        exit(1);
    }
    t0 = vfdswmr_now();
    for (int t = 0; t < ticks; t++) {
        if (vfdswmr_pwrite_all(fd, pages, (size_t)k * PS, (uint64_t)(t % 8) * k * PS) < 0 ||
            (durable && fdatasync(fd) < 0)) {
            perror(path);
            exit(1);
        }
    }
    dt = (vfdswmr_now() - t0) / ticks;
    close(fd);
    unlink(path);
    return dt;
}

static void
bench_publish(const char *dir, bool durable)
{
    static const unsigned ks[] = {1, 16, 256, 4096};
    unsigned char *pages = malloc((size_t)4096 * PS);

    for (size_t i = 0; i < (size_t)4096 * PS; i++)
        pages[i] = (unsigned char)(i * 13 + i / PS);
    printf("### Publish, %s\n\n| dirty pages per tick | ms per tick | MB/s | raw pwrite MB/s | publish / raw |\n"
           "| ---: | ---: | ---: | ---: | ---: |\n",
           durable ? "durable (fdatasync before and after the header)" : "not durable");
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        unsigned k = ks[i];
        int ticks = k >= 256 ? 20 : durable ? 50 : 500;
        double tp[REPEAT], tr[REPEAT];
        for (int r = 0; r < REPEAT; r++) {
            tp[r] = run_publish(dir, k, ticks, durable, pages);
            tr[r] = run_raw(dir, k, ticks, durable, pages);
        }
        double p = median(tp, REPEAT), w = median(tr, REPEAT), bytes = (double)k * PS;
        printf("| %u | %.3f | %.0f | %.0f | %.2f |\n", k, p * 1e3, bytes / p / 1e6, bytes / w / 1e6, w / p);
    }
    printf("\n");
    free(pages);
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";

    bench_checksum();
    bench_publish(dir, false);
    bench_publish(dir, true);
    return 0;
}
