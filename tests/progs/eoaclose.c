/*
 * eoaclose: the size a file closes at after HDF5 freed space at its end
 * (docs/HDF5-TESTS.md, "eoa_close"). An ordinary HDF5 program: the
 * environment selects the driver.
 *
 *   eoaclose write FILE [wait]
 *       create FILE with /keep (16 ints, i * 7) and dataset /d (1 MiB,
 *       allocated at once, last in the file), close it; open it again
 *       read-write, H5Fflush, print "flushed"; with `wait`, wait for a line
 *       on stdin; delete /d, H5Fclose, and print "closed SIZE" with the
 *       file's size on disk.
 *   eoaclose read FILE
 *       open FILE read-only, check /keep, print "opened", wait for a line
 *       on stdin, close, print "closed".
 *
 * Exit status 0 when everything succeeded, 1 otherwise (HDF5's error stack
 * on stderr), 2 on bad usage.
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define KEEP 16

static int
fail(const char *what)
{
    fprintf(stderr, "eoaclose: %s failed\n", what);
    H5Eprint2(H5E_DEFAULT, stderr);
    return 1;
}

static void
wait_line(void)
{
    char line[64];

    if (fgets(line, sizeof line, stdin) == NULL) /* end of input: go on */
        clearerr(stdin);
}

static int
write_file(const char *name, int wait)
{
    hsize_t big = 1 << 18, small = KEEP;
    int v[KEEP];
    struct stat st;
    hid_t f, s, dcpl, d;

    for (int i = 0; i < KEEP; i++)
        v[i] = i * 7;
    if ((f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return fail("H5Fcreate");
    s = H5Screate_simple(1, &small, NULL);
    if ((d = H5Dcreate2(f, "keep", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("creating /keep");
    H5Sclose(s);
    s = H5Screate_simple(1, &big, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        (d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 || H5Dclose(d) < 0)
        return fail("creating /d");
    H5Sclose(s);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0)
        return fail("H5Fclose after creating");
    if ((f = H5Fopen(name, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        return fail("H5Fflush");
    printf("flushed\n");
    fflush(stdout);
    if (wait)
        wait_line();
    if (H5Ldelete(f, "d", H5P_DEFAULT) < 0)
        return fail("H5Ldelete");
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    if (stat(name, &st) < 0)
        return fail("stat");
    printf("closed %lld\n", (long long)st.st_size);
    return 0;
}

static int
read_file(const char *name)
{
    int v[KEEP];
    hid_t f, d;

    if ((f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    if ((d = H5Dopen2(f, "keep", H5P_DEFAULT)) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("reading /keep");
    for (int i = 0; i < KEEP; i++)
        if (v[i] != i * 7) {
            fprintf(stderr, "eoaclose: /keep[%d] is %d, not %d\n", i, v[i], i * 7);
            return 1;
        }
    printf("opened\n");
    fflush(stdout);
    wait_line();
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    printf("closed\n");
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "write") == 0 && (argc == 3 || strcmp(argv[3], "wait") == 0))
        return write_file(argv[2], argc == 4);
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_file(argv[2]);
    fprintf(stderr, "usage: eoaclose write FILE [wait] | eoaclose read FILE\n");
    return 2;
}
