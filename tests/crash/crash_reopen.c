/*
 * crash_reopen: open an HDF5 file read-write and close it again -- what the next writer of
 * a crashed file does. With HDF5_DRIVER=vfd_swmr_writer the open recovers the file from a
 * crashed writer's metadata file. An ordinary HDF5 program (file access property list from
 * H5Pcreate, libver bounds (latest, latest)).
 *
 *   crash_reopen [--swmr] FILE     --swmr: H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE
 *
 * Exit 0 when open and close succeed; 1 with HDF5's error stack otherwise.
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
    unsigned flags = H5F_ACC_RDWR;
    const char *file;
    hid_t fapl, fid;

    if (argc == 3 && !strcmp(argv[1], "--swmr"))
        flags |= H5F_ACC_SWMR_WRITE;
    else if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: crash_reopen [--swmr] FILE\n");
        return 2;
    }
    file = argv[argc - 1];
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
        return 1;
    if ((fid = H5Fopen(file, flags, fapl)) < 0) {
        fprintf(stderr, "crash_reopen: cannot open %s read-write (flags 0x%x)\n", file, flags);
        return 1;
    }
    if (H5Fclose(fid) < 0) {
        fprintf(stderr, "crash_reopen: cannot close %s\n", file);
        return 1;
    }
    H5Pclose(fapl);
    printf("crash_reopen: %s opened read-write and closed\n", file);
    return 0;
}
