/*
 * A scratch directory for a cmocka test program: `dir` is created by
 * testdir_setup() and removed with everything in it by testdir_teardown(),
 * the group setup/teardown of cmocka_run_group_tests(); and whole-file
 * helpers for the files in it (common/io.h: link common/libvfdswmr_base.la).
 * Include after <cmocka.h>.
 */
#ifndef VFDSWMR_TESTDIR_H
#define VFDSWMR_TESTDIR_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

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

/* The whole contents of path (malloc'd, one spare byte for a terminator). */
static inline uint8_t *
slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    uint8_t *buf;

    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    *len = (size_t)st.st_size;
    assert_non_null(buf = malloc(*len + 1));
    assert_int_equal(vfdswmr_pread_all(fd, buf, *len, 0), 0);
    close(fd);
    return buf;
}

/* Replace path with len bytes, in place (not atomically: a reader may see it torn). */
static inline void
spill(const char *path, const void *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, buf, len, 0), 0);
    assert_int_equal(close(fd), 0);
}

#endif
