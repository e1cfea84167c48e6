/* Shared helpers of the HDF5-level benchmarks (bench_w1, bench_w2, bench_latency,
 * bench_reader, bench_eot). Public HDF5 API only: each configuration is chosen at
 * run time on the file access property list (H5Pset_driver_by_name loads the
 * plugins from HDF5_PLUGIN_PATH), so one invocation compares all of them:
 *   sec2      plain sec2, no SWMR, default library version bounds
 *   legacy    sec2, H5F_ACC_SWMR_WRITE, libver latest (HDF5's own SWMR)
 *   vfd-disk  vfd_swmr_writer, metadata file next to the HDF5 file
 *   vfd-shm   vfd_swmr_writer, metadata file in /dev/shm
 * Header-only (static functions) so each benchmark is a single source file. */
#ifndef BENCH_H5_H
#define BENCH_H5_H

#include <errno.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "paths.h"

enum bcfg { CFG_SEC2, CFG_LEGACY, CFG_VFD_DISK, CFG_VFD_SHM, CFG_N };
static const char *const bcfg_name[CFG_N] = {"sec2", "legacy SWMR", "vfd-swmr (md on disk)",
                                             "vfd-swmr (md on /dev/shm)"};
static const char *const bcfg_key[CFG_N] = {"sec2", "legacy", "vfd-disk", "vfd-shm"};

/* CPU time of the whole process (all threads, e.g. the writer's ticker). */
static inline double
bcpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* vfdswmr_now() in nanoseconds: the stamps bench_latency's writer stores. */
static inline long long
bnow_ns(void)
{
    return (long long)(vfdswmr_now() * 1e9);
}

static inline void
bdie(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* snprintf that refuses to truncate (paths and configuration strings). */
#define BFMT(buf, ...)                                                    \
    do {                                                                  \
        if ((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) >= sizeof buf) \
            bdie("%s:%d: string too long", __FILE__, __LINE__);           \
    } while (0)

#define BCHECK(x)                                             \
    do {                                                      \
        if ((x) < 0)                                          \
            bdie("%s:%d: %s failed", __FILE__, __LINE__, #x); \
    } while (0)

static inline int
bcmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts v). */
static inline double
bmedian(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, bcmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* q-quantile (0..1) of a sorted array, nearest rank. */
static inline double
bquantile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)n + 0.999999);
    if (i < 1)
        i = 1;
    if (i > n)
        i = n;
    return sorted[i - 1];
}

/* Writer file access property list for configuration c. tick_len/max_lag
 * apply to the vfd configurations; log (may be NULL) becomes log_file_path. */
static inline hid_t
bwriter_fapl(enum bcfg c, int tick_len, int max_lag, const char *log)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    BCHECK(fapl);
    char conf[2048];
    switch (c) {
    case CFG_SEC2:
        BCHECK(H5Pset_fapl_sec2(fapl));
        break;
    case CFG_LEGACY:
        BCHECK(H5Pset_fapl_sec2(fapl));
        BCHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
        break;
    case CFG_VFD_DISK:
    case CFG_VFD_SHM:
        BFMT(conf, "tick_len=%d;max_lag=%d%s%s%s", tick_len, max_lag, c == CFG_VFD_SHM ? ";md_file_path=/dev/shm" : "",
             log ? ";log_file_path=" : "", log ? log : "");
        BCHECK(H5Pset_driver_by_name(fapl, "vfd_swmr_writer", conf));
        break;
    default:
        bdie("bad configuration");
    }
    return fapl;
}

/* Reader FAPL matching the writer configuration c. */
static inline hid_t
breader_fapl(enum bcfg c, int tick_len, int max_lag)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    BCHECK(fapl);
    char conf[256];
    if (c == CFG_VFD_DISK || c == CFG_VFD_SHM) {
        snprintf(conf, sizeof conf, "tick_len=%d;max_lag=%d%s", tick_len, max_lag,
                 c == CFG_VFD_SHM ? ";md_file_path=/dev/shm" : "");
        BCHECK(H5Pset_driver_by_name(fapl, "vfd_swmr_reader", conf));
    }
    else {
        BCHECK(H5Pset_fapl_sec2(fapl));
        if (c == CFG_LEGACY)
            BCHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
    }
    return fapl;
}

static inline unsigned
bcreate_flags(enum bcfg c)
{
    return H5F_ACC_TRUNC | (c == CFG_LEGACY ? H5F_ACC_SWMR_WRITE : 0u);
}

/* Remove a file and a metadata file a crashed earlier run may have left. */
static inline void
bremove(const char *path)
{
    char md[4200];
    unlink(path);
    BFMT(md, "%s.md", path);
    unlink(md);
    BFMT(md, "/dev/shm/%s.md", vfdswmr_path_base(path));
    unlink(md);
}

/* A new file (plain sec2) with n empty extensible 1-D int32 datasets
 * d00000, d00001, ... of chunks of `chunk` elements. */
static inline void
bmake_datasets(const char *path, int n, hsize_t chunk)
{
    bremove(path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    BCHECK(f);
    hsize_t zero = 0, unl = H5S_UNLIMITED;
    hid_t sp = H5Screate_simple(1, &zero, &unl), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, 1, &chunk));
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        BCHECK(d);
        H5Dclose(d);
    }
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Fclose(f);
}

static inline void
bmkdir(const char *d)
{
    char buf[4096];
    BFMT(buf, "%s", d);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0777);
            *p = '/';
        }
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
        bdie("mkdir %s: %s", d, strerror(errno));
}

static inline FILE *
bcsv(const char *outdir, const char *name, const char *header)
{
    char p[4096];
    bmkdir(outdir);
    BFMT(p, "%s/%s", outdir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        bdie("%s: %s", p, strerror(errno));
    fprintf(f, "%s\n", header);
    return f;
}

/* Runs fn(ctx, out) in a child process and copies its outsz-byte result back,
 * so every measured run starts from a fresh HDF5 library (one run's plugin
 * loading, free lists and caches do not slow the next). The caller must not
 * have initialized HDF5 itself. */
static inline void
bisolated(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t outsz)
{
    int p[2];
    if (pipe(p) < 0)
        bdie("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        bdie("fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        fn(ctx, out);
        if (write(p[1], out, outsz) != (ssize_t)outsz)
            _exit(3);
        exit(0);
    }
    close(p[1]);
    size_t got = 0;
    while (got < outsz) {
        ssize_t r = read(p[0], (char *)out + got, outsz - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != outsz || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bdie("benchmark child failed (status %d)", st);
}

/* Start argv[0] (with argv) with pipes on its standard input and output:
 * *to gets the end that writes to its input (closing it ends the helper
 * programs here), *from the end that reads its output. */
static inline pid_t
bspawn_piped(char *const argv[], int *to, int *from)
{
    extern char **environ;
    int in[2], out[2];
    posix_spawn_file_actions_t fa;
    pid_t pid;

    if (pipe(in) < 0 || pipe(out) < 0)
        bdie("pipe: %s", strerror(errno));
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        bdie("cannot start %s", argv[0]);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    *to = in[1];
    *from = out[0];
    return pid;
}

#endif
