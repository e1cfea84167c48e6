/*
 * roundtrip: an ordinary HDF5 program that knows nothing of vfd-swmr. It uses
 * only H5P_DEFAULT file access, so the driver is whatever HDF5_DRIVER /
 * HDF5_DRIVER_CONFIG select.
 *
 *   roundtrip write FILE    create FILE: chunked (plain and deflate) datasets,
 *                           an attribute, a group; close; reopen read-only
 *                           and verify every element
 *   roundtrip verify FILE   open read-only and verify every element
 *   roundtrip open FILE     open read-write and close
 *   roundtrip pagebuf FILE  create FILE with the paged file space strategy
 *                           and HDF5's page buffer enabled, and close
 *
 * Exit status 0 when everything checked out; otherwise a message on stderr
 * (after HDF5's own error stack) and status 1.
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NX = 300, NY = 257, CX = 32, CY = 64 };

/* The value every element must have: a formula, not data from the code under test. */
static int32_t
expected(int i, int j)
{
    return (int32_t)((uint32_t)i * 7919u + (uint32_t)j * 104729u + 12345u) ^ (int32_t)(i << 3);
}

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            fprintf(stderr, "roundtrip: " __VA_ARGS__); \
            fputc('\n', stderr);                        \
            return 1;                                   \
        }                                               \
    } while (0)

static int
make_dataset(hid_t file, const char *name, int deflate, const int32_t *buf)
{
    hsize_t dims[2] = {NX, NY}, maxdims[2] = {H5S_UNLIMITED, NY}, chunk[2] = {CX, CY};
    hid_t space, dcpl, dset;
    herr_t rc;

    space = H5Screate_simple(2, dims, maxdims);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0, "cannot set up %s", name);
    if (deflate)
        CHECK(H5Pset_deflate(dcpl, 6) >= 0, "cannot enable deflate");
    dset = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(dset >= 0, "cannot create %s", name);
    rc = H5Dwrite(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    CHECK(rc >= 0, "cannot write %s", name);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    return 0;
}

static int
verify_dataset(hid_t file, const char *name, int32_t *buf)
{
    hsize_t dims[2];
    hid_t dset = H5Dopen2(file, name, H5P_DEFAULT), space;

    CHECK(dset >= 0, "cannot open %s", name);
    space = H5Dget_space(dset);
    CHECK(H5Sget_simple_extent_dims(space, dims, NULL) == 2, "%s is not two-dimensional", name);
    CHECK(dims[0] == NX && dims[1] == NY, "%s has shape %llux%llu, expected %dx%d", name, (unsigned long long)dims[0],
          (unsigned long long)dims[1], NX, NY);
    memset(buf, 0, sizeof(int32_t) * NX * NY);
    CHECK(H5Dread(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "cannot read %s", name);
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            CHECK(buf[i * NY + j] == expected(i, j), "%s[%d][%d] = %d, expected %d", name, i, j, buf[i * NY + j],
                  expected(i, j));
    H5Sclose(space);
    H5Dclose(dset);
    return 0;
}

static int
do_verify(const char *path, int32_t *buf)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), attr, grp;
    int rows = 0;

    CHECK(file >= 0, "cannot open %s read-only", path);
    if (verify_dataset(file, "/data", buf) || verify_dataset(file, "/deflated", buf))
        return 1;
    attr = H5Aopen_by_name(file, "/data", "rows", H5P_DEFAULT, H5P_DEFAULT);
    CHECK(attr >= 0 && H5Aread(attr, H5T_NATIVE_INT, &rows) >= 0, "cannot read attribute /data@rows");
    CHECK(rows == NX, "attribute /data@rows = %d, expected %d", rows, NX);
    H5Aclose(attr);
    grp = H5Gopen2(file, "/group", H5P_DEFAULT);
    CHECK(grp >= 0, "cannot open /group");
    H5Gclose(grp);
    CHECK(H5Fclose(file) >= 0, "cannot close %s", path);
    printf("verified %d elements in 2 datasets of %s\n", 2 * NX * NY, path);
    return 0;
}

static int
do_write(const char *path, int32_t *buf)
{
    hid_t file, attr, aspace, grp;
    int rows = NX;

    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            buf[i * NY + j] = expected(i, j);
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(file >= 0, "cannot create %s", path);
    if (make_dataset(file, "/data", 0, buf) || make_dataset(file, "/deflated", 1, buf))
        return 1;
    aspace = H5Screate(H5S_SCALAR);
    attr = H5Acreate_by_name(file, "/data", "rows", H5T_STD_I32LE, aspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT, &rows) >= 0, "cannot write attribute");
    H5Aclose(attr);
    H5Sclose(aspace);
    grp = H5Gcreate2(file, "/group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(grp >= 0, "cannot create /group");
    H5Gclose(grp);
    CHECK(H5Fclose(file) >= 0, "cannot close %s", path);
    return do_verify(path, buf);
}

int
main(int argc, char **argv)
{
    int32_t *buf;
    int rc;

    if (argc != 3) {
        fprintf(stderr, "usage: roundtrip write|verify|open|pagebuf FILE\n");
        return 2;
    }
    if (NULL == (buf = malloc(sizeof(int32_t) * NX * NY)))
        return 1;
    if (!strcmp(argv[1], "write"))
        rc = do_write(argv[2], buf);
    else if (!strcmp(argv[1], "verify"))
        rc = do_verify(argv[2], buf);
    else if (!strcmp(argv[1], "pagebuf")) {
        hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS), file;
        H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_PAGE, 0, 1);
        H5Pset_page_buffer_size(fapl, 64 * 4096, 0, 0);
        file = H5Fcreate(argv[2], H5F_ACC_TRUNC, fcpl, fapl);
        rc = file < 0 || H5Fclose(file) < 0;
        if (rc)
            fprintf(stderr, "roundtrip: cannot create %s with a page buffer\n", argv[2]);
    }
    else if (!strcmp(argv[1], "open")) {
        hid_t file = H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT);
        rc = file < 0 || H5Fclose(file) < 0;
        if (rc)
            fprintf(stderr, "roundtrip: cannot open %s read-write\n", argv[2]);
    }
    else {
        fprintf(stderr, "usage: roundtrip write|verify|open FILE\n");
        rc = 2;
    }
    free(buf);
    return rc;
}
