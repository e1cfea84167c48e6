/*
 * A scratch directory for a cmocka test program: `dir` is created by
 * testdir_setup() and removed with everything in it by testdir_teardown(),
 * the group setup/teardown of cmocka_run_group_tests().
 */
#ifndef VFDSWMR_TESTDIR_H
#define VFDSWMR_TESTDIR_H

#include <stdio.h>
#include <stdlib.h>

static char dir[] = "/tmp/vfdswmr-test.XXXXXX";

static int
testdir_setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int
testdir_teardown(void **state)
{
    char cmd[sizeof dir + 16];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

#endif
