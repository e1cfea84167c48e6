/*
 * twice FILE write|read: open the same file twice in one process, as HDF5
 * allows (it calls the driver's open again, then finds through cmp that the
 * file is open already and shares it; testhdf5 -o objects does this).
 *   write: H5Fcreate, then H5Fopen(RDWR) of the same path; a dataset
 *          written through the second identifier is read through the first;
 *          H5Fcreate(TRUNC) of the open file must fail, as on sec2.
 *   read:  H5Fopen(RDONLY) twice; /d read through both.
 * An ordinary HDF5 program: the driver comes from HDF5_DRIVER. Exit 0 when
 * every value is right.
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

static int
check(hid_t file, int base)
{
    int v[10];
    hid_t d = H5Dopen2(file, "d", H5P_DEFAULT);

    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return -1;
    H5Dclose(d);
    for (int i = 0; i < 10; i++)
        if (v[i] != base + i) {
            fprintf(stderr, "twice: d[%d] = %d, not %d\n", i, v[i], base + i);
            return -1;
        }
    return 0;
}

int
main(int argc, char **argv)
{
    hid_t f1, f2, t, space, d;
    hsize_t n = 10;
    int v[10];

    if (argc != 3 || (strcmp(argv[2], "write") && strcmp(argv[2], "read"))) {
        fprintf(stderr, "usage: twice FILE write|read\n");
        return 2;
    }
    if (!strcmp(argv[2], "read")) {
        if ((f1 = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 ||
            (f2 = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 || check(f1, 40) < 0 || check(f2, 40) < 0 ||
            H5Fclose(f2) < 0 || H5Fclose(f1) < 0)
            return 1;
        return 0;
    }
    for (int i = 0; i < 10; i++)
        v[i] = 40 + i;
    if ((f1 = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        (f2 = H5Fopen(argv[1], H5F_ACC_RDWR, H5P_DEFAULT)) < 0 || (space = H5Screate_simple(1, &n, NULL)) < 0 ||
        (d = H5Dcreate2(f2, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0 || check(f1, 40) < 0)
        return 1;
    H5E_BEGIN_TRY
    {
        t = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    }
    H5E_END_TRY
    if (t >= 0) {
        fprintf(stderr, "twice: an open file was truncated\n");
        return 1;
    }
    if (H5Fclose(f2) < 0 || check(f1, 40) < 0 || H5Fclose(f1) < 0)
        return 1;
    return 0;
}
