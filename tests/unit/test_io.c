/*
 * Whole-buffer positional I/O and directory fsync (common/io.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "testdir.h"

static char path[sizeof dir + 32];

static int
fresh(void)
{
    int fd;

    snprintf(path, sizeof path, "%s/f", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    return fd;
}

/* Written at an offset, read back whole; a hole reads as zeros. */
static void
test_io_roundtrip(void **state)
{
    uint8_t in[3000], out[3000 + 100];
    int fd = fresh();

    (void)state;
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 7);
    assert_int_equal(vfdswmr_pwrite_all(fd, in, sizeof in, 100), 0);
    assert_int_equal(vfdswmr_pread_all(fd, out, sizeof out, 0), 0);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(out[i], 0);
    assert_memory_equal(out + 100, in, sizeof in);
    assert_int_equal(vfdswmr_pwrite_all(fd, in, 0, 0), 0);
    assert_int_equal(vfdswmr_pread_all(fd, out, 0, 1u << 20), 0);
    close(fd);
}

/* Several buffers in one call land one after another; past the file size
 * limit the write stops with EFBIG, what went before in place, a buffer cut
 * part way included. */
static void
test_io_pwritev(void **state)
{
    uint8_t a[3000], b[1], c[4096], out[3000 + 1 + 4096];
    struct iovec iov[3];
    struct rlimit old, lim;
    int fd = fresh();

    (void)state;
    memset(a, 'a', sizeof a);
    b[0] = 'b';
    for (size_t i = 0; i < sizeof c; i++)
        c[i] = (uint8_t)(i * 13);
    iov[0] = (struct iovec){a, sizeof a};
    iov[1] = (struct iovec){b, sizeof b};
    iov[2] = (struct iovec){c, sizeof c};
    assert_int_equal(vfdswmr_pwritev_all(fd, iov, 3, 10), 0);
    assert_int_equal(vfdswmr_pread_all(fd, out, sizeof out, 10), 0);
    assert_memory_equal(out, a, sizeof a);
    assert_int_equal(out[sizeof a], 'b');
    assert_memory_equal(out + sizeof a + 1, c, sizeof c);
    assert_int_equal(vfdswmr_pwritev_all(fd, iov, 0, 0), 0);
    errno = 0;
    iov[0] = (struct iovec){a, sizeof a};
    assert_int_equal(vfdswmr_pwritev_all(fd, iov, 1, (uint64_t)INT64_MAX - 4), -1);
    assert_int_equal(errno, EFBIG);
    close(fd);

    fd = fresh();
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 5000;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    iov[0] = (struct iovec){a, sizeof a};
    iov[1] = (struct iovec){b, sizeof b};
    iov[2] = (struct iovec){c, sizeof c};
    errno = 0;
    int rc = vfdswmr_pwritev_all(fd, iov, 3, 0);
    int err = errno;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(rc, -1);
    assert_int_equal(err, EFBIG);
    assert_int_equal(vfdswmr_pread_upto(fd, out, sizeof out, 0), 5000);
    assert_memory_equal(out, a, sizeof a);
    assert_int_equal(out[sizeof a], 'b');
    assert_memory_equal(out + sizeof a + 1, c, 5000 - sizeof a - 1);
    close(fd);
}

/* At end of file: pread_upto says how much there was, pread_all fails. */
static void
test_io_end_of_file(void **state)
{
    uint8_t buf[64];
    int fd = fresh();

    (void)state;
    assert_int_equal(vfdswmr_pwrite_all(fd, "0123456789", 10, 0), 0);
    assert_int_equal(vfdswmr_pread_upto(fd, buf, sizeof buf, 4), 6);
    assert_memory_equal(buf, "456789", 6);
    assert_int_equal(vfdswmr_pread_upto(fd, buf, sizeof buf, 10), 0);
    assert_int_equal(vfdswmr_pread_upto(fd, buf, sizeof buf, 1000), 0);
    errno = 0;
    assert_int_equal(vfdswmr_pread_all(fd, buf, 11, 0), -1);
    assert_int_equal(errno, ENODATA);
    assert_int_equal(vfdswmr_pread_all(fd, buf, 10, 0), 0);
    close(fd);
}

/* Offsets past what off_t holds, and descriptors that cannot do it. */
static void
test_io_errors(void **state)
{
    uint8_t buf[8] = {0};
    int fd = fresh(), p[2];

    (void)state;
    errno = 0;
    assert_int_equal(vfdswmr_pwrite_all(fd, buf, sizeof buf, (uint64_t)INT64_MAX - 4), -1);
    assert_int_equal(errno, EFBIG);
    errno = 0;
    assert_int_equal(vfdswmr_pread_all(fd, buf, sizeof buf, UINT64_MAX), -1);
    assert_int_equal(errno, EFBIG);
    close(fd);
    assert_int_equal(pipe(p), 0);
    errno = 0;
    assert_int_equal(vfdswmr_pread_upto(p[0], buf, sizeof buf, 0), -1);
    assert_int_equal(errno, ESPIPE);
    close(p[0]);
    close(p[1]);
    errno = 0;
    assert_int_equal(vfdswmr_pread_all(-1, buf, sizeof buf, 0), -1);
    assert_int_equal(errno, EBADF);
}

/* The directory of a path with and without a directory part. */
static void
test_io_fsync_dir_of(void **state)
{
    char missing[sizeof dir + 32];

    (void)state;
    close(fresh());
    assert_int_equal(vfdswmr_fsync_dir_of(path), 0);
    assert_int_equal(vfdswmr_fsync_dir_of("no-directory-part"), 0);
    assert_int_equal(vfdswmr_fsync_dir_of("/top-level"), 0);
    snprintf(missing, sizeof missing, "%s/none/f", dir);
    errno = 0;
    assert_int_equal(vfdswmr_fsync_dir_of(missing), -1);
    assert_int_equal(errno, ENOENT);
    snprintf(missing, sizeof missing, "%s/f/x", dir); /* f is a regular file */
    errno = 0;
    assert_int_equal(vfdswmr_fsync_dir_of(missing), -1);
    assert_int_equal(errno, ENOTDIR);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_roundtrip),    cmocka_unit_test(test_io_pwritev),
        cmocka_unit_test(test_io_end_of_file),  cmocka_unit_test(test_io_errors),
        cmocka_unit_test(test_io_fsync_dir_of),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
