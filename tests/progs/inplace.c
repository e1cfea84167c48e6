/*
 * inplace: raw data rewritten in place while a reader reads it. An ordinary
 * HDF5 program: the environment selects the driver.
 *
 *   inplace write FILE ROUNDS
 *       create FILE with a contiguous dataset /x of N int64 (one raw write
 *       each time it is written), write round 1 (every element 1), H5Fflush,
 *       print "ready", wait for a line on stdin; then rounds 2..ROUNDS, each
 *       writing every element with the round's number in place and
 *       flushing, 2 ms apart; H5Fclose, print "done ROUNDS".
 *   inplace read FILE ROUNDS
 *       open FILE read-only, print "opened"; then read /x again and again
 *       (H5Drefresh, H5Dread) until it holds ROUNDS. Every read must hold one
 *       round's value in every element: a read that mixes two rounds prints
 *       "torn: ..." and fails. At the end print "read READS times, ROUNDS
 *       distinct rounds seen, none torn" (READS, SEEN).
 *   inplace hold FILE rd|wr
 *       take the raw-data lock (mdlock.h) of FILE -- a read lock as a reader
 *       reading raw data (registered and past the raw-data gate first, as a
 *       reader is), or the writer's write lock -- print "held", wait for a
 *       line, drop it, print "dropped".
 *
 * Exit status 0 when everything succeeded, 1 otherwise (HDF5's error stack
 * on stderr), 2 on bad usage.
 */
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mdlock.h"
#include "steps.h"

#define N 16384 /* 128 KiB: above HDF5's sieve buffer, so one write and one read each time */

static int
fail(const char *what)
{
    return step_fail("inplace", what);
}

static int
write_round(hid_t f, hid_t d, int64_t *v, int64_t round)
{
    for (int i = 0; i < N; i++)
        v[i] = round;
    if (H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return fail("H5Dwrite");
    return H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ? fail("H5Fflush") : 0;
}

static int
write_file(const char *name, int64_t rounds)
{
    hsize_t n = N;
    int64_t *v = malloc(N * sizeof *v);
    hid_t f, s, d;

    if (v == NULL)
        return fail("malloc");
    if ((f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return fail("H5Fcreate");
    s = H5Screate_simple(1, &n, NULL);
    if ((d = H5Dcreate2(f, "x", H5T_NATIVE_INT64, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return fail("H5Dcreate2");
    if (write_round(f, d, v, 1))
        return 1;
    printf("ready\n");
    fflush(stdout);
    step_wait();
    for (int64_t r = 2; r <= rounds; r++) {
        if (write_round(f, d, v, r))
            return 1;
        usleep(2000); /* pacing, not synchronisation: readers get in between the rounds too */
    }
    if (H5Dclose(d) < 0 || H5Sclose(s) < 0 || H5Fclose(f) < 0)
        return fail("H5Fclose");
    free(v);
    printf("done %" PRId64 "\n", rounds);
    return 0;
}

static int
read_file(const char *name, int64_t rounds)
{
    int64_t *v = malloc(N * sizeof *v), last = 0;
    long reads = 0, seen = 0;
    hid_t f, d;

    if (v == NULL)
        return fail("malloc");
    if ((f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 || (d = H5Dopen2(f, "x", H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    printf("opened\n");
    fflush(stdout);
    while (last < rounds) {
        if (H5Drefresh(d) < 0)
            return fail("H5Drefresh");
        if (H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
            return fail("H5Dread");
        reads++;
        for (int i = 1; i < N; i++)
            if (v[i] != v[0]) {
                printf("torn: read %ld holds %" PRId64 " at 0 and %" PRId64 " at %d\n", reads, v[0], v[i], i);
                return 1;
            }
        if (v[0] < last || v[0] > rounds) {
            printf("read %ld holds round %" PRId64 " after round %" PRId64 "\n", reads, v[0], last);
            return 1;
        }
        seen += v[0] != last;
        last = v[0];
    }
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return fail("H5Fclose");
    free(v);
    printf("read %ld times, %ld distinct rounds seen, none torn\n", reads, seen);
    return 0;
}

static int
hold(const char *name, const char *how)
{
    int wr = !strcmp(how, "wr"), fd = open(name, wr ? O_RDWR : O_RDONLY);
    vfdswmr_reg_t reg = {.fd = -1, .own = -1, .slot = -1};

    if (fd < 0) {
        perror("inplace: cannot open the file");
        return 1;
    }
    /* a reader: registered, then past the gate (the writer lets it go at
     * its next look, VFDSWMR_RAW_GATE_POLL), then the lock */
    if (!wr && (vfdswmr_reg_join(&reg, open(name, O_RDONLY)) < 0 ||
                vfdswmr_rawgate_take(reg.fd, F_RDLCK, 30) != VFDSWMR_TAKEN)) {
        perror("inplace: cannot register and pass the raw-data gate");
        return 1;
    }
    if (vfdswmr_rawlock_take(fd, wr ? F_WRLCK : F_RDLCK, 0) != VFDSWMR_TAKEN) {
        perror("inplace: cannot take the raw-data lock");
        return 1;
    }
    printf("held\n");
    fflush(stdout);
    step_wait();
    vfdswmr_rawlock_drop(fd);
    close(fd);
    vfdswmr_reg_leave(&reg);
    printf("dropped\n");
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "write"))
        return write_file(argv[2], strtoll(argv[3], NULL, 10));
    if (argc == 4 && !strcmp(argv[1], "read"))
        return read_file(argv[2], strtoll(argv[3], NULL, 10));
    if (argc == 4 && !strcmp(argv[1], "hold") && (!strcmp(argv[3], "rd") || !strcmp(argv[3], "wr")))
        return hold(argv[2], argv[3]);
    fprintf(stderr, "usage: inplace write|read FILE ROUNDS | inplace hold FILE rd|wr\n");
    return 2;
}
