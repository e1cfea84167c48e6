/*
 * lockmd: hold the writer lock of a metadata file (mdfile/mdlock.h) -- the
 * lock a live writer, and a recovery (vfd_swmr_recover, or the next writer
 * recovering a crashed writer's file), hold for as long as they work -- so
 * that a test can have "someone is recovering this file" at a known point.
 *
 *   lockmd MDFILE
 *   lockmd --hdf5 HDF5FILE
 *   lockmd --marked HDF5FILE
 *
 * With --hdf5, the writer's lock on the HDF5 file instead: what a process a
 * writer forked holds while it keeps the writer's descriptor, also after
 * the writer closed the file.
 *
 * With --marked, only count the readers registered on a read mark's slot
 * byte of HDF5FILE (mdlock.h) and answer "marked N"; exit 0.
 *
 * Opens the file read-write (it must exist) and takes the lock, then answers
 * "locked" on stdout, or "held" when another open file description holds
 * it (exit 1). Holds it until a line or end of input on stdin, then closes
 * the file, answers "released" and exits 0. Exit 1 on an error (message on
 * stderr), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "marks.h"
#include "mdlock.h"

int
main(int argc, char **argv)
{
    char line[64];
    int fd;
    vfdswmr_take_t rc;
    bool hdf5 = argc == 3 && strcmp(argv[1], "--hdf5") == 0;

    if (argc == 3 && strcmp(argv[1], "--marked") == 0) {
        unsigned n = 0;
        int held = 0;
        if ((fd = open(argv[2], O_RDONLY | O_NOFOLLOW)) < 0) {
            fprintf(stderr, "lockmd: cannot open %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS && held >= 0; i++)
            if ((held = vfdswmr_mdlock_marked(fd, i)) > 0)
                n++;
        close(fd);
        if (held < 0) {
            fprintf(stderr, "lockmd: cannot query %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        printf("marked %u\n", n);
        return 0;
    }
    if (argc != 2 && !hdf5) {
        fprintf(stderr, "usage: lockmd MDFILE | lockmd --hdf5 HDF5FILE | lockmd --marked HDF5FILE\n");
        return 2;
    }
    argv += hdf5;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((fd = open(argv[1], O_RDWR | O_NOFOLLOW)) < 0) {
        fprintf(stderr, "lockmd: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if ((rc = hdf5 ? vfdswmr_mdlock_hdf5_take(fd) : vfdswmr_mdlock_take(fd)) != VFDSWMR_TAKEN) {
        if (rc == VFDSWMR_TAKE_ERROR)
            fprintf(stderr, "lockmd: cannot lock %s: %s\n", argv[1], strerror(errno));
        else
            printf("held\n");
        close(fd);
        return 1;
    }
    printf("locked\n");
    if (fgets(line, sizeof line, stdin) == NULL && ferror(stdin))
        fprintf(stderr, "lockmd: reading stdin: %s\n", strerror(errno)); /* releases all the same */
    if (close(fd) < 0) {
        fprintf(stderr, "lockmd: closing %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    printf("released\n");
    return 0;
}
