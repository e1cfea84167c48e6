/* One HDF5 operation repeated, through whatever driver the environment
 * names (HDF5_DRIVER, HDF5_DRIVER_CONFIG), for bench/bench_counts.sh, which
 * counts the system calls each costs (strace -c). Public HDF5 API only.
 *   bench_ops make FILE         1000 datasets of 3200 int32, chunks of 256 (bench_reader's small file)
 *   bench_ops make400 FILE      400 empty extensible int32 datasets, chunks of 1024 (bench_stall's)
 *   bench_ops read FILE N       N times: open read-only, read every dataset whole, close
 *   bench_ops cycle FILE N      N times: create (H5F_ACC_TRUNC over the file left by the previous
 *                               time, as h5py's mode "w" does), write 1000 ints, H5Fflush, close
 *   bench_ops cyclenew FILE N   the same, removing FILE first each time (bench_close's cycle)
 *   bench_ops append FILE N     open read-write (HDF5's chunk cache off), N rounds of one 4 KiB chunk
 *                               appended to each of the 400 datasets, H5Fflush after each round
 *   bench_ops idle FILE         open read-write, print "open", wait for the end of input, close */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(x)                                           \
    do {                                                   \
        if ((x) < 0) {                                     \
            fprintf(stderr, "bench_ops: %s failed\n", #x); \
            exit(1);                                       \
        }                                                  \
    } while (0)

static void
make(const char *path, int n, hsize_t len, hsize_t chunk, int extensible)
{
    static int v[3200];
    hsize_t zero = 0, max = H5S_UNLIMITED;
    hid_t f, s, p = H5Pcreate(H5P_DATASET_CREATE);
    char name[32];

    for (int i = 0; i < 3200; i++)
        v[i] = i;
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(s = extensible ? H5Screate_simple(1, &zero, &max) : H5Screate_simple(1, &len, NULL));
    CHECK(H5Pset_chunk(p, 1, &chunk));
    for (int i = 0; i < n; i++) {
        hid_t d;
        snprintf(name, sizeof name, "d%04d", i);
        CHECK(d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT));
        if (!extensible)
            CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        H5Dclose(d);
    }
    H5Sclose(s);
    H5Pclose(p);
    CHECK(H5Fclose(f));
}

static herr_t
read_one(hid_t g, const char *name, const H5L_info2_t *info, void *op)
{
    static int buf[1 << 16];
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);

    (void)info, (void)op;
    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return -1;
    return H5Dclose(d);
}

static void
cycle(const char *path, int fresh)
{
    static int v[1000];
    hsize_t n = 1000;
    hid_t f, s, d;

    if (fresh)
        unlink(path);
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(s = H5Screate_simple(1, &n, NULL));
    CHECK(d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    H5Dclose(d);
    H5Sclose(s);
    CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    CHECK(H5Fclose(f));
}

static void
append(const char *path, int rounds)
{
    static int v[1024];
    hsize_t ch = 1024, cur = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, d[400], ms;
    char name[32];

    CHECK(H5Pset_cache(fapl, 0, 0, 0, 0.0));
    CHECK(f = H5Fopen(path, H5F_ACC_RDWR, fapl));
    for (int i = 0; i < 400; i++) {
        snprintf(name, sizeof name, "d%04d", i);
        CHECK(d[i] = H5Dopen2(f, name, H5P_DEFAULT));
    }
    CHECK(ms = H5Screate_simple(1, &ch, NULL));
    for (int r = 0; r < rounds; r++, cur += ch) {
        hsize_t ext = cur + ch;
        for (int i = 0; i < 400; i++) {
            hid_t fs;
            CHECK(H5Dset_extent(d[i], &ext));
            CHECK(fs = H5Dget_space(d[i]));
            CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &cur, NULL, &ch, NULL));
            CHECK(H5Dwrite(d[i], H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v));
            H5Sclose(fs);
        }
        CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
    for (int i = 0; i < 400; i++)
        H5Dclose(d[i]);
    H5Sclose(ms);
    H5Pclose(fapl);
    CHECK(H5Fclose(f));
}

int
main(int argc, char **argv)
{
    int n = argc > 3 ? atoi(argv[3]) : 0;
    hid_t f;

    if (argc == 3 && !strcmp(argv[1], "make"))
        make(argv[2], 1000, 3200, 256, 0);
    else if (argc == 3 && !strcmp(argv[1], "make400"))
        make(argv[2], 400, 0, 1024, 1);
    else if (argc == 4 && !strcmp(argv[1], "read"))
        for (int i = 0; i < n; i++) {
            CHECK(f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT));
            CHECK(H5Literate2(f, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, read_one, NULL));
            CHECK(H5Fclose(f));
        }
    else if (argc == 4 && (!strcmp(argv[1], "cycle") || !strcmp(argv[1], "cyclenew")))
        for (int i = 0; i < n; i++)
            cycle(argv[2], !strcmp(argv[1], "cyclenew"));
    else if (argc == 4 && !strcmp(argv[1], "append"))
        append(argv[2], n);
    else if (argc == 3 && !strcmp(argv[1], "idle")) {
        char c;
        CHECK(f = H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT));
        printf("open\n");
        fflush(stdout);
        while (read(0, &c, 1) > 0)
            ;
        CHECK(H5Fclose(f));
    }
    else {
        fprintf(stderr, "usage: bench_ops make|make400 FILE | read|cycle|append FILE N | idle FILE\n");
        return 2;
    }
    return 0;
}
