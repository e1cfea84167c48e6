/*
 * relib FILE write|read [PLUGIN.so ...]: HDF5 closed and opened again in
 * one process (H5close, H5open), as a program that loads and unloads
 * libraries does. H5close unloads the driver plugins, and their state goes
 * with them, unless something else holds them: the PLUGIN files named are
 * opened (dlopen) first and kept, as a program that links one would.
 * The drivers keep a property list for their lower driver across opens;
 * after H5close the identifiers start again, so a list the application
 * makes then may get the number the drivers' old one had. Here the
 * application fills that range with lists of its own that select the core
 * driver without a backing store: a driver that took one of them for its
 * lower driver would write the file to memory only. Before anything, the
 * program registers a shutdown hook (H5atclose) that opens the file
 * read-only: HDF5 runs its hooks newest first, so this one runs after the
 * drivers' own, while the library is closing -- a list a driver made then
 * would outlive the library.
 *   write: H5Fcreate, /d = 0..9, close; H5close/H5open; the lists; H5Fopen
 *          RDWR, /e = 100..109, close; every list still selects core.
 *   read:  H5Fopen RDONLY, read /d; H5close/H5open; the lists; again.
 * An ordinary HDF5 program: the driver comes from HDF5_DRIVER. The caller
 * checks the file with another program. Exit 0 when everything is right.
 */
#include <dlfcn.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define NLISTS 256

static const char *file_name;
static int hook_failed;

/* The application's shutdown hook: a read of the file while HDF5 closes. */
static void
late_open(void *ctx)
{
    hid_t f = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT);

    (void)ctx;
    if (f < 0 || H5Fclose(f) < 0) {
        fprintf(stderr, "relib: the shutdown hook could not open %s\n", file_name);
        hook_failed = 1;
    }
}

static int
write_ints(hid_t file, const char *name, int base)
{
    hsize_t n = 10;
    int v[10];
    hid_t space = H5Screate_simple(1, &n, NULL), d;

    for (int i = 0; i < 10; i++)
        v[i] = base + i;
    d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(space);
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return -1;
    return 0;
}

static int
check_ints(hid_t file, const char *name, int base)
{
    int v[10];
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);

    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return -1;
    H5Dclose(d);
    for (int i = 0; i < 10; i++)
        if (v[i] != base + i) {
            fprintf(stderr, "relib: %s[%d] = %d, not %d\n", name, i, v[i], base + i);
            return -1;
        }
    return 0;
}

int
main(int argc, char **argv)
{
    hid_t lists[NLISTS], f;
    int writing, rc = 1;

    if (argc < 3 || (strcmp(argv[2], "write") && strcmp(argv[2], "read"))) {
        fprintf(stderr, "usage: relib FILE write|read [PLUGIN.so ...]\n");
        return 2;
    }
    for (int i = 3; i < argc; i++)
        if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) == NULL) {
            fprintf(stderr, "relib: %s\n", dlerror());
            return 1;
        }
    writing = !strcmp(argv[2], "write");
    file_name = argv[1];
    if (H5open() < 0 || H5atclose(late_open, NULL) < 0)
        return 1;
    if (writing) {
        if ((f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 || write_ints(f, "d", 0) < 0 ||
            H5Fclose(f) < 0)
            return 1;
    }
    else if ((f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 || check_ints(f, "d", 0) < 0 || H5Fclose(f) < 0)
        return 1;
    if (H5close() < 0 || H5open() < 0)
        return 1;
    for (int i = 0; i < NLISTS; i++)
        if ((lists[i] = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_fapl_core(lists[i], 1 << 20, 0) < 0)
            return 1;
    f = H5Fopen(argv[1], writing ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0 || check_ints(f, "d", 0) < 0 || (writing && write_ints(f, "e", 100) < 0) || H5Fclose(f) < 0)
        return 1;
    rc = hook_failed;
    for (int i = 0; i < NLISTS; i++) {
        if (H5Iis_valid(lists[i]) <= 0 || H5Pget_driver(lists[i]) != H5FD_CORE) {
            fprintf(stderr, "relib: the application's list %d was closed or changed\n", i);
            rc = 1;
        }
        H5Pclose(lists[i]);
    }
    return rc;
}
