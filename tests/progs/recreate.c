/*
 * recreate FILE: close a file while a dataset in it stays open (HDF5 keeps
 * the file open: weak close), remove it, create a new file at the same path
 * and write it, then close the old dataset. The new file must hold /b only,
 * as on sec2. An ordinary HDF5 program: the driver comes from HDF5_DRIVER.
 */
#include <hdf5.h>
#include <stdio.h>
#include <unistd.h>

static hid_t
make(hid_t file, const char *name, int base)
{
    hsize_t n = 10;
    int v[10];
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

    for (int i = 0; i < 10; i++)
        v[i] = base + i;
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return -1;
    H5Sclose(space);
    return d;
}

int
main(int argc, char **argv)
{
    hid_t f1, f2, a, b;

    if (argc != 2) {
        fprintf(stderr, "usage: recreate FILE\n");
        return 2;
    }
    if ((f1 = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 || (a = make(f1, "a", 100)) < 0 ||
        H5Fflush(f1, H5F_SCOPE_GLOBAL) < 0 || H5Fclose(f1) < 0) /* /a stays open: so does the file */
        return 1;
    if (unlink(argv[1]) < 0) {
        perror("unlink");
        return 1;
    }
    if ((f2 = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 || (b = make(f2, "b", 200)) < 0 ||
        H5Dclose(b) < 0 || H5Fclose(f2) < 0 || H5Dclose(a) < 0)
        return 1;
    return 0;
}
