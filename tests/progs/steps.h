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

/* Answer `line` (one line on stdout, flushed) and wait for the next
 * command (step_wait). */
static inline void
step_answer(const char *line)
{
    printf("%s\n", line);
    fflush(stdout);
    step_wait();
}

/* H5Fclose(f), then answer "closed": 0, or step_fail's 1. */
static inline int
step_close(const char *prog, hid_t f)
{
    if (H5Fclose(f) < 0)
        return step_fail(prog, "H5Fclose");
    printf("closed\n");
    return 0;
}

#endif
