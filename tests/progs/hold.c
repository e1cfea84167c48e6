/*
 * hold: an ordinary HDF5 writer that keeps its file open until told to
 * close, for tests that need a live writer.
 *
 *   hold create|open FILE [unflushed]
 *                            create (or open read-write) FILE, write and
 *                            flush dataset /held (100 ints, i * 3), print
 *                            "ready" on stdout, then wait for a line on
 *                            stdin (or end of input) and close.
 *                            unflushed: first print "opened" right after
 *                            the create (open) and wait for a line before
 *                            writing anything, so a reader can try the file
 *                            before the writer's first flush.
 * Exit status 0 when everything succeeded, 1 otherwise (HDF5's error stack
 * on stderr).
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
    hsize_t n = 100;
    int v[100];
    char line[64];
    hid_t file, space, dset;

    if ((argc != 3 && (argc != 4 || strcmp(argv[3], "unflushed"))) ||
        (strcmp(argv[1], "create") && strcmp(argv[1], "open"))) {
        fprintf(stderr, "usage: hold create|open FILE [unflushed]\n");
        return 2;
    }
    for (int i = 0; i < 100; i++)
        v[i] = i * 3;
    file = strcmp(argv[1], "create") ? H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT)
                                     : H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return 1;
    if (argc == 4) {
        printf("opened\n");
        fflush(stdout);
        if (fgets(line, sizeof line, stdin) == NULL)
            return 1;
    }
    if (H5Lexists(file, "held", H5P_DEFAULT) > 0)
        dset = H5Dopen2(file, "held", H5P_DEFAULT);
    else {
        space = H5Screate_simple(1, &n, NULL);
        dset = H5Dcreate2(file, "held", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Sclose(space);
    }
    if (dset < 0 || H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ||
        H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL)
        line[0] = '\0';
    H5Dclose(dset);
    return H5Fclose(file) < 0;
}
