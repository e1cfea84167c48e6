/*
 * quiet: the quiet window (mdfile/mdlock.h) from both sides, for
 * tests/integration/quiet_window.sh. Each role talks one line at a time on
 * stdin/stdout (tests/integration/procs.sh).
 *
 *   quiet make FILE
 *       A plain file (sec2) whose root group has attribute "a": 64 ints, i.
 *   quiet read FILE
 *       Through vfd_swmr_reader (H5FDopen: every read reaches the driver),
 *       reads the whole file and checks it against its bytes as read
 *       before through plain POSIX: "read1 ok". Then, on each line: reads
 *       it again and answers "same" (the bytes as before, past the
 *       superblock, which a writer's seal changes), "refused: <the error's
 *       innermost message>", or "CHANGED <n> bytes, first at <offset>" --
 *       a writer's bytes read as if they were the file this reader holds.
 *   quiet write FILE
 *       Answers "ready", then, on a line: opens FILE through
 *       vfd_swmr_writer (configured by the environment), rewrites "a"
 *       (0x5a5a5a5a each) and ends 6 ticks (vfdswmr_end_tick): "done". On
 *       the next line (or end of input) closes.
 * Exit status 0, 1 on a failure (message on stderr), 2 bad usage.
 */
#include <hdf5.h>
#include <H5FDdevelop.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfdswmr.h"

#define SEAL_SPAN 64 /* bytes from the start a writer's seal may change (a superblock at 0) */

static int
make(const char *path)
{
    hsize_t n = 64;
    int v[64];
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), s = H5Screate_simple(1, &n, NULL), a;

    for (int i = 0; i < 64; i++)
        v[i] = i;
    if (f < 0 || (a = H5Acreate2(f, "a", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(a, H5T_NATIVE_INT, v) < 0 || H5Aclose(a) < 0)
        return 1;
    H5Sclose(s);
    return H5Fclose(f) < 0;
}

static herr_t
innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0)
        snprintf(data, 512, "%s", e->desc);
    return 0;
}

static int
reader(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    char line[64], why[512];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5FD_t *f;

    if (fd < 0 || fstat(fd, &st) < 0)
        return 1;
    size_t n = (size_t)st.st_size;
    unsigned char *orig = malloc(n), *buf = malloc(n);
    if (!orig || !buf || pread(fd, orig, n, 0) != (ssize_t)n)
        return 1;
    close(fd);
    if (vfdswmr_set_fapl_reader(fapl, "") < 0 || (f = H5FDopen(path, H5F_ACC_RDONLY, fapl, HADDR_UNDEF)) == NULL ||
        H5FDset_eoa(f, H5FD_MEM_OHDR, n) < 0 || H5FDread(f, H5FD_MEM_OHDR, H5P_DEFAULT, 0, n, buf) < 0 ||
        memcmp(orig, buf, n) != 0)
        return 1;
    printf("read1 ok\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        herr_t rc;
        H5E_BEGIN_TRY
        {
            rc = H5FDread(f, H5FD_MEM_OHDR, H5P_DEFAULT, 0, n, buf);
        }
        H5E_END_TRY
        if (rc < 0) {
            why[0] = '\0';
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, why);
            printf("refused: %s\n", why);
        }
        else {
            size_t changed = 0, first = 0;
            for (size_t i = SEAL_SPAN; i < n; i++)
                if (orig[i] != buf[i] && changed++ == 0)
                    first = i;
            if (changed)
                printf("CHANGED %zu bytes, first at %zu\n", changed, first);
            else
                printf("same\n");
        }
        fflush(stdout);
    }
    H5FDclose(f);
    H5Pclose(fapl);
    free(orig);
    free(buf);
    return 0;
}

static int
writer(const char *path)
{
    char line[64];
    int v[64];
    hid_t f, a;

    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 1;
    for (int i = 0; i < 64; i++)
        v[i] = 0x5a5a5a5a;
    if ((f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0 || (a = H5Aopen(f, "a", H5P_DEFAULT)) < 0 ||
        H5Awrite(a, H5T_NATIVE_INT, v) < 0 || H5Aclose(a) < 0)
        return 1;
    for (int i = 0; i < 6; i++)
        if (vfdswmr_end_tick(f) < 0)
            return 1;
    printf("done\n");
    fflush(stdout);
    (void)fgets(line, sizeof line, stdin);
    return H5Fclose(f) < 0;
}

int
main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "make"))
        return make(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "read"))
        return reader(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "write"))
        return writer(argv[2]);
    fprintf(stderr, "usage: quiet make|read|write FILE\n");
    return 2;
}
