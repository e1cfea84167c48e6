/*
 * tryopen: one attempt to open a file, the way an HDF5 program may, for
 * tests of an open that must be refused.
 *
 *   tryopen FILE MODE [--config STRING]
 *
 * MODE: trunc       H5Fcreate(H5F_ACC_TRUNC)
 *       excl        H5Fcreate(H5F_ACC_EXCL)
 *       trunc_swmr  H5Fcreate(H5F_ACC_TRUNC | H5F_ACC_SWMR_WRITE)
 *       rdwr        H5Fopen(H5F_ACC_RDWR)
 *       rdwr_swmr   H5Fopen(H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE)
 *       rdonly      H5Fopen(H5F_ACC_RDONLY)
 *       rdonly_swmr H5Fopen(H5F_ACC_RDONLY | H5F_ACC_SWMR_READ)
 * (the SWMR modes with the latest file format, as HDF5 requires).
 * --config selects vfd_swmr_writer with that configuration through
 * vfdswmr_set_fapl_writer; otherwise the environment selects the driver.
 *
 * Prints "opened" and closes the file at once when the open succeeded (exit
 * 0), or "refused" after HDF5's error stack on stderr (exit 1). Exit 2 on
 * bad usage.
 */
#include "rows.h"

int
main(int argc, char **argv)
{
    const char *config = argc == 5 && !strcmp(argv[3], "--config") ? argv[4] : NULL;
    hid_t fapl, file = H5I_INVALID_HID;
    const char *mode = argc >= 3 ? argv[2] : "";
    int swmr = strstr(mode, "_swmr") != NULL;

    if ((argc != 3 && config == NULL) ||
        (strcmp(mode, "trunc") && strcmp(mode, "excl") && strcmp(mode, "trunc_swmr") && strcmp(mode, "rdwr") &&
         strcmp(mode, "rdwr_swmr") && strcmp(mode, "rdonly") && strcmp(mode, "rdonly_swmr"))) {
        fprintf(stderr,
                "usage: tryopen FILE trunc|excl|trunc_swmr|rdwr|rdwr_swmr|rdonly|rdonly_swmr [--config STRING]\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if ((fapl = rows_fapl(config, 1)) < 0)
        return 1;
    if (swmr && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0) {
        rows_report("H5Pset_libver_bounds");
        return 1;
    }
    if (!strncmp(mode, "rdwr", 4))
        file = H5Fopen(argv[1], H5F_ACC_RDWR | (swmr ? H5F_ACC_SWMR_WRITE : 0), fapl);
    else if (!strncmp(mode, "rdonly", 6))
        file = H5Fopen(argv[1], H5F_ACC_RDONLY | (swmr ? H5F_ACC_SWMR_READ : 0), fapl);
    else
        file = H5Fcreate(argv[1], (mode[0] == 'e' ? H5F_ACC_EXCL : H5F_ACC_TRUNC) | (swmr ? H5F_ACC_SWMR_WRITE : 0),
                         H5P_DEFAULT, fapl);
    if (file < 0) {
        rows_report(mode); /* before any other API call: each clears the stack */
        H5Pclose(fapl);
        printf("refused\n");
        return 1;
    }
    H5Pclose(fapl);
    printf("opened\n");
    return H5Fclose(file) < 0;
}
