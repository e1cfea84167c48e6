/* Replacing (or deleting) a large dataset in an existing file, sec2 against
 * vfd_swmr_writer with no reader: what keeping the old bytes for the last
 * flushed snapshot costs (vfd-swmr-writer/eoa.c keep_at_alloc,
 * keepdisk.c). Each run copies a file made on sec2 holding /keep and a
 * contiguous /x of MIB MiB, then a fresh process opens it read-write and
 * either deletes /x and writes a new one of the same size ("replace", h5py's
 * `del f['x']; f['x'] = a`) or only deletes it ("delete"), and closes.
 * Reported: the median session time (open to close), the file's size after
 * it, and the process's peak resident memory, which includes the MIB MiB
 * buffer the program writes from.
 *   bench_replace [-m MIB] [-n runs] FILEDIR
 *   bench_replace --run sec2|vfd replace|delete FILE MIB     (internal) */
#include "bench_h5.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static hid_t
make_x(hid_t f, hsize_t n, const int *buf)
{
    hid_t sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;

    BCHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    BCHECK(d = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    BCHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
}

static int *
values(hsize_t n, int round)
{
    int *buf = malloc(n * sizeof *buf);

    if (buf == NULL)
        bdie("out of memory");
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (int)i * 3 + round;
    return buf;
}

static int
run_main(const char *drv, const char *what, const char *path, int mib)
{
    hsize_t n = (hsize_t)mib << 18; /* MIB MiB of ints */
    hid_t fapl = bwriter_fapl(strcmp(drv, "sec2") == 0 ? CFG_SEC2 : CFG_VFD_DISK, 1, 3, NULL), f;
    int *buf = strcmp(what, "replace") == 0 ? values(n, 2) : NULL;
    long long t0 = bnow_ns();

    BCHECK(f = H5Fopen(path, H5F_ACC_RDWR, fapl));
    BCHECK(H5Ldelete(f, "x", H5P_DEFAULT));
    if (buf)
        BCHECK(H5Dclose(make_x(f, n, buf)));
    BCHECK(H5Fclose(f));
    printf("%.6f\n", (double)(bnow_ns() - t0) / 1e9);
    free(buf);
    H5Pclose(fapl);
    return 0;
}

/* One run in a fresh process: seconds, the file's size, peak RSS in KiB. */
static void
one(const char *self, const char *drv, const char *what, const char *src, const char *path, int mib, double *secs,
    long long *size, long *rss)
{
    char cmd[4096], m[16];
    int fds[2];
    struct rusage ru;
    struct stat st;
    int status;
    pid_t pid;

    BFMT(cmd, "cp '%s' '%s'", src, path);
    if (system(cmd) != 0)
        bdie("cannot copy %s", src);
    BFMT(m, "%d", mib);
    if (pipe(fds) < 0 || (pid = fork()) < 0)
        bdie("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(fds[1], 1);
        execl(self, self, "--run", drv, what, path, m, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    if (in == NULL || fscanf(in, "%lf", secs) != 1)
        bdie("%s %s: no time reported", drv, what);
    fclose(in);
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bdie("%s %s: the run failed", drv, what);
    if (stat(path, &st) < 0)
        bdie("%s: %s", path, strerror(errno));
    *size = (long long)st.st_size;
    *rss = ru.ru_maxrss;
}

int
main(int argc, char **argv)
{
    int mib = 256, runs = 3, opt;

    if (argc == 6 && strcmp(argv[1], "--run") == 0)
        return run_main(argv[2], argv[3], argv[4], atoi(argv[5]));
    while ((opt = getopt(argc, argv, "m:n:")) != -1) {
        if (opt == 'm')
            mib = atoi(optarg);
        else if (opt == 'n')
            runs = atoi(optarg);
        else
            bdie("usage: bench_replace [-m MIB] [-n runs] FILEDIR");
    }
    if (optind + 1 != argc || mib < 1 || mib > 4096 || runs < 1 || runs > 64)
        bdie("usage: bench_replace [-m MIB] [-n runs] FILEDIR");
    const char *dir = argv[optind];
    char src[4096], path[4096];
    BFMT(src, "%s/replace-src.h5", dir);
    BFMT(path, "%s/replace.h5", dir);

    hsize_t n = (hsize_t)mib << 18, one_elem = 1;
    int *buf = values(n, 1), k = 7;
    hid_t f, sp, d;
    BCHECK(f = H5Fcreate(src, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    BCHECK(sp = H5Screate_simple(1, &one_elem, NULL));
    BCHECK(d = H5Dcreate2(f, "keep", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    BCHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &k));
    H5Dclose(d);
    H5Sclose(sp);
    BCHECK(H5Dclose(make_x(f, n, buf)));
    BCHECK(H5Fclose(f));
    free(buf);

    printf("| %d MiB dataset | driver | session (median of %d) | file size after | peak RSS |\n", mib, runs);
    printf("| --- | --- | ---: | ---: | ---: |\n");
    const char *whats[] = {"replace", "delete"}, *drvs[] = {"sec2", "vfd"};
    for (int w = 0; w < 2; w++)
        for (int v = 0; v < 2; v++) {
            double t[64];
            long long size = 0;
            long rss = 0, r;
            for (int i = 0; i < runs; i++) {
                one(argv[0], drvs[v], whats[w], src, path, mib, &t[i], &size, &r);
                rss = r > rss ? r : rss;
            }
            printf("| %s | %s | %.3f s | %lld | %.1f MiB |\n", whats[w], v ? "vfd_swmr_writer" : "sec2",
                   bmedian(t, (size_t)runs), size, rss / 1024.0);
        }
    bremove(src);
    bremove(path);
    return 0;
}
