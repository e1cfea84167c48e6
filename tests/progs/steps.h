/*
 * Helpers of the small test programs that a test drives step by step
 * (tests/integration/procs.sh): report a failed HDF5 call with HDF5's error
 * stack, and wait for the next command line.
 */
#ifndef VFDSWMR_TESTS_STEPS_H
#define VFDSWMR_TESTS_STEPS_H

#include <hdf5.h>
#include <stdio.h>

/* "PROG: WHAT failed" and HDF5's error stack on stderr; returns 1 (the
 * exit status of a failure). */
static inline int
step_fail(const char *prog, const char *what)
{
    fprintf(stderr, "%s: %s failed\n", prog, what);
    H5Eprint2(H5E_DEFAULT, stderr);
    return 1;
}

/* Wait for a line on stdin; at the end of input, go on. Returns 1 when a
 * line came, 0 at the end of input. */
static inline int
step_wait(void)
{
    char line[64];

    if (fgets(line, sizeof line, stdin) != NULL)
        return 1;
    clearerr(stdin);
    return 0;
}

#endif
