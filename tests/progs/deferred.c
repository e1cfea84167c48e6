/*
 * deferred: a writer's deferred open (vfd-swmr-writer/open.c, defer_setup),
 * for tests/integration/deferred_open.sh.
 *
 *   deferred FILE CONFIG
 *
 * 1. FILE is made through plain HDF5 (dataset "d": 100 ints, i).
 * 2. H5FDopen(FILE, RDWR) through vfd_swmr_writer (CONFIG): no metadata
 *    file yet; a fork child's call on it is refused and makes none; while
 *    plain HDF5 has the file open for writing, its H5FDlock is refused
 *    before anything is written (no seal, no metadata file); a
 *    second H5FDopen(RDWR) is refused (the first holds the
 *    writer's lock on the file) with a message saying so; closing the first
 *    unused leaves FILE byte for byte as it was and no metadata file.
 * 3. H5Fcreate(FILE, H5F_ACC_TRUNC) through the writer, watched with
 *    inotify: HDF5 opens FILE tentatively first (without TRUNC) and closes
 *    it; only the real open may create a metadata file -- exactly one
 *    appears at its name. Dataset "e" (100 ints, 7i) is written, flushed and
 *    closed, then read back through plain HDF5.
 * 4. H5FDopen(FILE, RDWR) again, then its end of file (the first call that
 *    reaches the file): the metadata file exists now; a read of the
 *    superblock's signature gives the file's bytes; H5FDclose removes the
 *    metadata file and leaves FILE as it was.
 * One "ok: ..." line per check; exit status 0, 1 on a failure (message on
 * stderr), 2 bad usage.
 *
 *   deferred hold FILE CONFIG
 *
 * H5FDopen(FILE, RDWR) through the writer: "pending"; on a line, its end
 * of file (the first call that reaches the file) and a read of the
 * superblock's signature: "set up"; on the next, closes: "closed".
 */
#include <hdf5.h>
#include <H5FDdevelop.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vfdswmr.h"

#define N 100

static const char *file, *config;
static char md[PATH_MAX + 8];

static void
ok(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "deferred: %s\n", what);
        exit(1);
    }
    printf("ok: %s\n", what);
    fflush(stdout);
}

static hid_t
writer_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

    if (fapl < 0 || vfdswmr_set_fapl_writer(fapl, config) < 0) {
        fprintf(stderr, "deferred: cannot configure vfd_swmr_writer with \"%s\"\n", config);
        exit(1);
    }
    return fapl;
}

static int
exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The whole file's bytes (malloc'd), *len its size. */
static unsigned char *
slurp(size_t *len)
{
    FILE *fp = fopen(file, "rb");
    unsigned char *buf = NULL;
    long n;

    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0 ||
        NULL == (buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        fprintf(stderr, "deferred: cannot read %s\n", file);
        exit(1);
    }
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

static void
make_plain(const char *name, int k)
{
    hsize_t n = N;
    int v[N];
    hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), s = H5Screate_simple(1, &n, NULL), d;

    for (int i = 0; i < N; i++)
        v[i] = k * i;
    if (f < 0 || (d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0 || H5Sclose(s) < 0 ||
        H5Fclose(f) < 0) {
        fprintf(stderr, "deferred: cannot make %s\n", file);
        exit(1);
    }
}

/* Dataset `name` of FILE through plain HDF5 holds k * i. */
static int
holds(const char *name, int k)
{
    int v[N], bad = 0;
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d;

    if (f < 0 || (d = H5Dopen2(f, name, H5P_DEFAULT)) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 0;
    for (int i = 0; i < N; i++)
        bad += v[i] != k * i;
    return bad == 0;
}

/* The innermost message of the default error stack. */
static herr_t
last_msg(unsigned n, const H5E_error2_t *e, void *out)
{
    (void)n;
    snprintf(out, 1024, "%s", e->desc ? e->desc : "");
    return 0;
}

/* The hold mode (above). */
static int
hold(void)
{
    char line[64], sig[8];
    hid_t fapl = writer_fapl();
    H5FD_t *h = H5FDopen(file, H5F_ACC_RDWR, fapl, HADDR_UNDEF);
    haddr_t eof;

    if (h == NULL)
        return 1;
    printf("pending\n");
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL || (eof = H5FDget_eof(h, H5FD_MEM_SUPER)) == HADDR_UNDEF ||
        H5FDset_eoa(h, H5FD_MEM_SUPER, eof) < 0 || H5FDread(h, H5FD_MEM_SUPER, H5P_DEFAULT, 0, 8, sig) < 0 ||
        memcmp(sig, "\211HDF\r\n\032\n", 8) != 0) {
        printf("setup failed\n");
        return 1;
    }
    printf("set up\n");
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL || H5FDclose(h) < 0)
        return 1;
    printf("closed\n");
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    size_t len0, len1;
    unsigned char *before, *after;
    char msg[1024] = "";
    hid_t fapl;
    H5FD_t *h, *h2;

    if (argc == 4 && !strcmp(argv[1], "hold")) {
        file = argv[2];
        config = argv[3];
        return hold();
    }
    if (argc != 3) {
        fprintf(stderr, "usage: deferred FILE CONFIG | deferred hold FILE CONFIG\n");
        return 2;
    }
    file = argv[1];
    config = argv[2];
    snprintf(md, sizeof md, "%s.md", file);

    /* 2. an open that is closed unused */
    make_plain("d", 1);
    before = slurp(&len0);
    fapl = writer_fapl();
    h = H5FDopen(file, H5F_ACC_RDWR, fapl, HADDR_UNDEF);
    ok(h != NULL, "H5FDopen(RDWR) through the writer");
    ok(!exists(md), "no metadata file before the first call that reaches the file");
    /* a fork child's copy is not set up by the child (forked.h) */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        haddr_t e;
        H5E_BEGIN_TRY
        {
            e = H5FDget_eof(h, H5FD_MEM_SUPER);
        }
        H5E_END_TRY
        _exit(e == HADDR_UNDEF && !exists(md) ? 0 : 1);
    }
    int status = -1;
    ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "a fork child's first call on the waiting open is refused, and sets nothing up");
    ok(!exists(md), "no metadata file after the child");
    /* a plain HDF5 writer that has the file (HDF5's lock): the waiting
     * writer's lock fails before its setup seals anything */
    hid_t plain = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
    herr_t locked;
    ok(plain >= 0, "plain HDF5 opens the file for writing meanwhile");
    size_t len2;
    unsigned char *opened = slurp(&len2); /* its superblock says "open for writing" now */
    H5E_BEGIN_TRY
    {
        locked = H5FDlock(h, true);
    }
    H5E_END_TRY
    after = slurp(&len1);
    ok(locked < 0 && !exists(md) && len2 == len1 && memcmp(opened, after, len2) == 0,
       "the waiting writer's HDF5 lock is refused: no metadata file, not a byte changed (no seal)");
    free(after);
    free(opened);
    ok(H5Fclose(plain) >= 0, "plain HDF5 closes it");
    H5E_BEGIN_TRY
    {
        h2 = H5FDopen(file, H5F_ACC_RDWR, fapl, HADDR_UNDEF);
    }
    H5E_END_TRY
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, last_msg, msg); /* the innermost last */
    ok(h2 == NULL, "a second writer open while the first waits is refused");
    ok(strstr(msg, "another writer") != NULL, "and told why");
    printf("   (%s)\n", msg);
    H5Eclear2(H5E_DEFAULT);
    ok(H5FDclose(h) == 0, "the unused open closes");
    after = slurp(&len1);
    ok(len0 == len1 && memcmp(before, after, len0) == 0, "the file is byte for byte as it was");
    ok(!exists(md), "no metadata file after it");
    ok(holds("d", 1), "plain HDF5 reads d");
    free(before);
    free(after);

    /* 3. H5Fcreate(TRUNC) over it: one metadata file appears, not two */
    int in = inotify_init1(IN_NONBLOCK);
    char dir[PATH_MAX], base[PATH_MAX + 8], *slash;
    snprintf(dir, sizeof dir, "%s", file);
    slash = strrchr(dir, '/');
    snprintf(base, sizeof base, "%s.md", slash ? slash + 1 : file);
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    ok(in >= 0 && inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO) >= 0, "watching the directory");
    hsize_t n = N;
    int v[N];
    for (int i = 0; i < N; i++)
        v[i] = 7 * i;
    hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), s = H5Screate_simple(1, &n, NULL), d;
    ok(f >= 0, "H5Fcreate(H5F_ACC_TRUNC) over the existing file through the writer");
    int created = 0;
    union {
        struct inotify_event e;
        char b[sizeof(struct inotify_event) + NAME_MAX + 1];
    } ev[16];
    ssize_t got;
    while ((got = read(in, ev, sizeof ev)) > 0)
        for (char *p = (char *)ev; p < (char *)ev + got;
             p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
            created += ((struct inotify_event *)p)->len && !strcmp(((struct inotify_event *)p)->name, base);
    ok(created == 1, "one metadata file appeared at its name (the tentative open made none)");
    printf("   (%d)\n", created);
    ok((d = H5Dcreate2(f, "e", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
           H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 && H5Dclose(d) >= 0 && H5Sclose(s) >= 0 &&
           H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0 && H5Fclose(f) >= 0,
       "e written, flushed, closed");
    close(in);
    ok(holds("e", 7) && !exists(md), "plain HDF5 reads e; no metadata file is left");

    /* 4. the first call that reaches the file sets the writer up */
    before = slurp(&len0);
    h = H5FDopen(file, H5F_ACC_RDWR, fapl, HADDR_UNDEF);
    ok(h != NULL && !exists(md), "H5FDopen(RDWR) again: no metadata file yet");
    unsigned char sig[8];
    haddr_t eof = H5FDget_eof(h, H5FD_MEM_SUPER); /* the first call that reaches the file */
    ok(eof == (haddr_t)len0, "its end of file is the file's size");
    ok(exists(md), "the metadata file exists from that call on");
    ok(H5FDset_eoa(h, H5FD_MEM_SUPER, eof) >= 0 && H5FDread(h, H5FD_MEM_SUPER, H5P_DEFAULT, 0, 8, sig) >= 0,
       "a read of the superblock's signature");
    ok(memcmp(sig, before, 8) == 0, "it reads the file's bytes");
    ok(H5FDclose(h) == 0 && !exists(md), "closed: the metadata file is gone");
    after = slurp(&len1);
    ok(len0 == len1 && memcmp(before, after, len0) == 0, "the file is byte for byte as it was");
    ok(holds("e", 7), "plain HDF5 still reads e");
    free(after);
    free(before);
    H5Pclose(fapl);
    return 0;
}
