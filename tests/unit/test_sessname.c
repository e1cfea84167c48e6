/*
 * mdfile/sessname.c: the record of a session's metadata file on the HDF5
 * file, on real files in a scratch directory (the machine's file systems
 * keep user extended attributes; a test that finds none fails, it does not
 * skip). The value's codec round-trips and refuses what it did not write;
 * the record is absolute whatever path the writer gave; erase removes only
 * its own record; find follows only a regular metadata file whose header
 * names this HDF5 file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "format.h"
#include "sessname.h"
#include "testdir.h"

static char h5[sizeof dir + 16], md[sizeof dir + 16], real_dir[PATH_MAX];

static int
setup(void **state)
{
    (void)state;
    snprintf(h5, sizeof h5, "%s/f.h5", dir);
    snprintf(md, sizeof md, "%s/f.h5.md", dir);
    spill(h5, "HDF5 stand-in", 13);
    return realpath(dir, real_dir) ? 0 : -1;
}

static int
teardown(void **state)
{
    (void)state;
    unlink(h5);
    unlink(md);
    return 0;
}

/* A metadata file at path whose header names inode ino (tick 42). */
static void
put_md(const char *path, uint64_t ino)
{
    vfdswmr_mdhdr_t h = {.page_size = 4096,
                         .session = 0x0123456789abcdefull,
                         .tick = 42,
                         .index_offset = VFDSWMR_MDHDR_SIZE,
                         .index_length = vfdswmr_mdidx_size(0, 0),
                         .eoa = 4096,
                         .tick_len = 4,
                         .max_lag = 7,
                         .hdf5_id = ino,
                         .epoch = 42};
    uint8_t b[VFDSWMR_MDHDR_SIZE];

    vfdswmr_mdhdr_encode(&h, b);
    spill(path, b, sizeof b);
}

static uint64_t
ino_of(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_ino;
}

static void
test_codec(void **state)
{
    char value[VFDSWMR_SESSNAME_VALUE_MAX], out[VFDSWMR_SESSNAME_MAX + 1], longp[VFDSWMR_SESSNAME_MAX + 2];
    size_t n;

    (void)state;
    n = vfdswmr_sessname_encode("/data/run 7/f.h5.md", value, sizeof value);
    assert_int_equal(n, strlen("vfdswmr-md 1 /data/run 7/f.h5.md"));
    assert_memory_equal(value, "vfdswmr-md 1 /data/run 7/f.h5.md", n);
    assert_int_equal(vfdswmr_sessname_decode(value, n, out, sizeof out), 0);
    assert_string_equal(out, "/data/run 7/f.h5.md");
    /* refused: relative, empty, only "/", too long, too small a buffer */
    assert_int_equal(vfdswmr_sessname_encode("f.h5.md", value, sizeof value), 0);
    assert_int_equal(vfdswmr_sessname_encode("", value, sizeof value), 0);
    assert_int_equal(vfdswmr_sessname_encode("/", value, sizeof value), 0);
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(vfdswmr_sessname_encode(longp, value, sizeof value), 0);
    assert_int_equal(vfdswmr_sessname_encode("/a/b", value, 14), 0);
    /* decode refuses what encode never writes, and leaves out empty */
    static const struct {
        const char *v;
        size_t len;
    } bad[] = {
        {"vfdswmr-md 1 relative", 21}, {"vfdswmr-md 2 /a", 15}, {"vfdswmr-md 1 ", 13}, {"vfdswmr-md 1 /", 14},
        {"vfdswmr-md 1 /a\0b", 17},    {"VFDSWMR-MD 1 /a", 15}, {"vfdswmr", 7},        {"", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(out, "x");
        assert_int_equal(vfdswmr_sessname_decode(bad[i].v, bad[i].len, out, sizeof out), -1);
        assert_string_equal(out, "");
    }
    assert_int_equal(vfdswmr_sessname_decode("vfdswmr-md 1 /abc", 17, out, 4), -1); /* "/abc" needs 5 */
    assert_int_equal(vfdswmr_sessname_decode("vfdswmr-md 1 /abc", 17, out, 5), 0);
    assert_string_equal(out, "/abc");
}

static void
test_record_absolute_and_erase(void **state)
{
    char out[VFDSWMR_SESSNAME_MAX + 1], want[PATH_MAX + 16], cwd[PATH_MAX], other[sizeof dir + 16];
    int fd = open(h5, O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_sessname_read(h5, out, sizeof out), 0); /* nothing yet */
    /* a relative path, from the directory's parent: recorded absolute */
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(vfdswmr_sessname_record(fd, "./f.h5.md"), 0);
    assert_int_equal(chdir(cwd), 0);
    snprintf(want, sizeof want, "%s/f.h5.md", real_dir);
    assert_int_equal(vfdswmr_sessname_read(h5, out, sizeof out), 1);
    assert_string_equal(out, want);
    /* erase leaves another session's record alone */
    snprintf(other, sizeof other, "%s/g.h5.md", dir);
    vfdswmr_sessname_erase(fd, other);
    assert_int_equal(vfdswmr_sessname_read(h5, out, sizeof out), 1);
    vfdswmr_sessname_erase(fd, md);
    assert_int_equal(vfdswmr_sessname_read(h5, out, sizeof out), 0);
    /* a missing directory cannot be recorded */
    assert_int_equal(vfdswmr_sessname_record(fd, "/nonexistent-dir-vfdswmr/f.md"), -1);
    assert_int_equal(errno, ENOENT);
    close(fd);
}

static void
test_find_follows_only_this_files(void **state)
{
    char out[VFDSWMR_SESSNAME_MAX + 1], link[sizeof dir + 16], want[PATH_MAX + 16];
    int fd = open(h5, O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_sessname_record(fd, md), 0);
    snprintf(want, sizeof want, "%s/f.h5.md", real_dir);
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 0); /* recorded, not there */
    assert_string_equal(out, "");
    put_md(md, ino_of(h5));
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 1);
    assert_string_equal(out, want);
    assert_int_equal(vfdswmr_sessname_find_fd(fd, out, sizeof out), 1);
    assert_string_equal(out, want);
    put_md(md, ino_of(h5) + 1); /* another file's (a copy kept the record) */
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 0);
    spill(md, "not a metadata file at all, but long enough to be read as one. not a metadata file at all", 90);
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 0);
    /* a link at the recorded name, to this file's metadata file: never followed */
    snprintf(link, sizeof link, "%s/real.md", dir);
    put_md(link, ino_of(h5));
    unlink(md);
    assert_int_equal(symlink(link, md), 0);
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 0);
    unlink(link);
    /* a value the codec refuses */
    assert_int_equal(fsetxattr(fd, VFDSWMR_SESSNAME_XATTR, "vfdswmr-md 1 relative.md", 24, 0), 0);
    assert_int_equal(vfdswmr_sessname_read(h5, out, sizeof out), 0);
    assert_int_equal(vfdswmr_sessname_find(h5, out, sizeof out), 0);
    /* no HDF5 file */
    assert_int_equal(vfdswmr_sessname_find("/nonexistent-vfdswmr.h5", out, sizeof out), 0);
    close(fd);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_codec),
        T(test_record_absolute_and_erase),
        T(test_find_follows_only_this_files),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
