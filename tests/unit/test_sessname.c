/*
 * mdfile/sessname.c: the record of a session's metadata file on the HDF5
 * file, on real files in a scratch directory (the machine's file systems
 * keep user extended attributes; a test that finds none fails, it does not
 * skip). The value's codec round-trips and refuses what it did not write;
 * the record is absolute whatever path the writer gave; a failed record
 * leaves no older one; erase removes only its own record; find follows only
 * a regular metadata file whose header names this HDF5 file (any session:
 * the recorded one, or the one that took its place over), on the recorded
 * device, and only while the HDF5 file's superblock is sealed or absent.
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
#include "superblock.h"
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

/* A metadata file at path whose header names inode ino and session (tick 42). */
static void
put_md(const char *path, uint64_t ino, uint64_t session)
{
    vfdswmr_mdhdr_t h = {.page_size = 4096,
                         .session = session,
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

/* The HDF5 file's superblock as the caller says it is (find's seal_fn). */
static int seal_state;
static int
seal_says(int fd)
{
    (void)fd;
    return seal_state;
}

static void
test_codec(void **state)
{
    vfdswmr_sessname_t r = {.dev = 0x801, .session = 0x0123456789abcdefull, .path = "/data/run 7/f.h5.md"}, d;
    char value[VFDSWMR_SESSNAME_VALUE_MAX],
        want[] = "vfdswmr-md 1 0000000000000801 0123456789abcdef /data/run 7/f.h5.md";
    size_t n;

    (void)state;
    n = vfdswmr_sessname_encode(&r, value, sizeof value);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(value, want, n);
    assert_int_equal(vfdswmr_sessname_decode(value, n, &d), 0);
    assert_int_equal(d.dev, r.dev);
    assert_int_equal(d.session, r.session);
    assert_string_equal(d.path, r.path);
    /* refused: relative, empty, only "/", too long, too small a buffer */
    static const char *const bad_paths[] = {"f.h5.md", "", "/"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        snprintf(r.path, sizeof r.path, "%s", bad_paths[i]);
        assert_int_equal(vfdswmr_sessname_encode(&r, value, sizeof value), 0);
    }
    memset(r.path, 'a', sizeof r.path);
    r.path[0] = '/';
    r.path[VFDSWMR_SESSNAME_MAX] = '\0';
    assert_int_equal(vfdswmr_sessname_encode(&r, value, sizeof value), n = sizeof value);
    assert_int_equal(vfdswmr_sessname_decode(value, n, &d), 0); /* the longest path */
    assert_int_equal(strlen(d.path), VFDSWMR_SESSNAME_MAX);
    assert_int_equal(vfdswmr_sessname_encode(&r, value, sizeof value - 1), 0);
    /* decode refuses what encode never writes, and leaves *d zero */
    static const struct {
        const char *v;
        size_t len;
    } bad[] = {
        {"vfdswmr-md 1 0000000000000801 0123456789abcdef relative", 56},
        {"vfdswmr-md 2 0000000000000801 0123456789abcdef /a", 50},
        {"vfdswmr-md 1 0000000000000801 0123456789abcdef ", 47},
        {"vfdswmr-md 1 0000000000000801 0123456789abcdef /", 48},
        {"vfdswmr-md 1 0000000000000801 0123456789abcdef /a\0b", 52},
        {"vfdswmr-md 1 0000000000000801 0123456789ABCDEF /ab", 50},
        {"vfdswmr-md 1 000000000000801 0123456789abcdef /abc", 50},
        {"vfdswmr-md 1 0000000000000801-0123456789abcdef /ab", 50},
        {"vfdswmr-md 1 /data/f.h5.md", 26},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&d, 0x55, sizeof d);
        assert_int_equal(vfdswmr_sessname_decode(bad[i].v, bad[i].len, &d), -1);
        assert_int_equal(d.dev | d.session, 0);
        assert_string_equal(d.path, "");
    }
    /* a value longer than any the encoder writes */
    memset(value, 'a', sizeof value);
    memcpy(value, want, 47);
    value[47] = '/';
    assert_int_equal(vfdswmr_sessname_decode(value, sizeof value, &d), 0);
    char big[VFDSWMR_SESSNAME_VALUE_MAX + 1];
    memcpy(big, value, sizeof value);
    big[sizeof value] = 'a';
    assert_int_equal(vfdswmr_sessname_decode(big, sizeof big, &d), -1);
}

/* The record on fd ended: the live record's bytes under the ended prefix
 * (its session's path ends in `tail`), which decodes as nothing. */
static void
assert_ended(int fd, const char *tail)
{
    char value[VFDSWMR_SESSNAME_VALUE_MAX];
    vfdswmr_sessname_t r;
    ssize_t n = fgetxattr(fd, VFDSWMR_SESSNAME_XATTR, value, sizeof value);
    size_t k = strlen(tail), plen = sizeof VFDSWMR_SESSNAME_PREFIX - 1;

    assert_true(n > (ssize_t)(plen + k));
    assert_memory_equal(value, VFDSWMR_SESSNAME_ENDED, plen);
    assert_memory_equal(value + n - (ssize_t)k, tail, k);
    assert_int_equal(vfdswmr_sessname_decode(value, (size_t)n, &r), -1);
    memcpy(value, VFDSWMR_SESSNAME_PREFIX, plen); /* the live record it was */
    assert_int_equal(vfdswmr_sessname_decode(value, (size_t)n, &r), 0);
}

static void
test_record_absolute_and_erase(void **state)
{
    char want[PATH_MAX + 16], cwd[PATH_MAX], other[sizeof dir + 16];
    vfdswmr_sessname_t r;
    struct stat st;
    int fd = open(h5, O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 0); /* nothing yet */
    /* a relative path, from the directory's parent: recorded absolute */
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(vfdswmr_sessname_record(fd, "./f.h5.md", 0xabcdef, false), 0);
    assert_int_equal(chdir(cwd), 0);
    snprintf(want, sizeof want, "%s/f.h5.md", real_dir);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 1);
    assert_string_equal(r.path, want);
    assert_int_equal(r.session, 0xabcdef);
    assert_int_equal(r.dev, (uint64_t)st.st_dev);
    /* erase leaves another session's record alone */
    snprintf(other, sizeof other, "%s/g.h5.md", dir);
    vfdswmr_sessname_erase(fd, other);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 1);
    vfdswmr_sessname_erase(fd, md);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 0);
    assert_ended(fd, want);
    /* a record that cannot be made removes the older one */
    assert_int_equal(vfdswmr_sessname_record(fd, md, 1, false), 0);
    assert_int_equal(vfdswmr_sessname_record(fd, "/nonexistent-dir-vfdswmr/f.md", 2, false), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 0);
    assert_int_equal(vfdswmr_sessname_record(fd, md, 1, false), 0);
    /* ... unless the caller keeps it (it refuses to go on) */
    assert_int_equal(vfdswmr_sessname_record(fd, "/nonexistent-dir-vfdswmr/f.md", 3, true), -1);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 1);
    assert_int_equal(r.session, 1);
    vfdswmr_sessname_clear(fd);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 0);
    assert_ended(fd, "/f.h5.md");
    vfdswmr_sessname_clear(fd); /* ended already: stays so */
    assert_ended(fd, "/f.h5.md");
    /* anything else is removed */
    assert_int_equal(fsetxattr(fd, VFDSWMR_SESSNAME_XATTR, "junk", 4, 0), 0);
    vfdswmr_sessname_clear(fd);
    assert_int_equal(fgetxattr(fd, VFDSWMR_SESSNAME_XATTR, NULL, 0), -1);
    assert_int_equal(errno, ENODATA);
    /* and a new session records over an ended one */
    assert_int_equal(vfdswmr_sessname_record(fd, md, 1, false), 0);
    vfdswmr_sessname_clear(fd);
    assert_int_equal(vfdswmr_sessname_record(fd, md, 2, false), 0);
    assert_int_equal(vfdswmr_sessname_read(h5, &r), 1);
    assert_int_equal(r.session, 2);
    close(fd);
}

static void
test_find_follows_only_this_session(void **state)
{
    char out[VFDSWMR_SESSNAME_MAX + 1], link[sizeof dir + 16], want[PATH_MAX + 16];
    const uint64_t session = 0x1122334455667788ull;
    int fd = open(h5, O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    seal_state = 1;
    assert_int_equal(vfdswmr_sessname_record(fd, md, session, false), 0);
    snprintf(want, sizeof want, "%s/f.h5.md", real_dir);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0); /* recorded, not there */
    assert_string_equal(out, "");
    put_md(md, ino_of(h5), session);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 1);
    assert_string_equal(out, want);
    assert_int_equal(vfdswmr_sessname_find_fd(fd, seal_says, out, sizeof out), 1);
    assert_string_equal(out, want);
    seal_state = -2; /* no superblock yet: a new file before its first publish */
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 1);
    seal_state = 0; /* an unsealed superblock: closed, rewritten or recovered since */
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    assert_string_equal(out, "");
    seal_state = 1;
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, 8), 0); /* does not fit */
    put_md(md, ino_of(h5) + 1, session);                               /* another file's (a copy kept the record) */
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    put_md(md, ino_of(h5), session + 1); /* another session of this file at that place: the one that took it over */
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 1);
    put_md(md, 0, session); /* a header naming no file: never enough */
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    spill(md, "not a metadata file at all, but long enough to be read as one. not a metadata file at all", 90);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    /* a link at the recorded name, to this session's metadata file: never followed */
    snprintf(link, sizeof link, "%s/real.md", dir);
    put_md(link, ino_of(h5), session);
    unlink(md);
    assert_int_equal(symlink(link, md), 0);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    unlink(link);
    /* the HDF5 file on another device than recorded (a snapshot or clone) */
    unlink(md);
    put_md(md, ino_of(h5), session);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 1);
    {
        vfdswmr_sessname_t r = {.session = session};
        char value[VFDSWMR_SESSNAME_VALUE_MAX];
        struct stat st;
        size_t n;
        assert_int_equal(fstat(fd, &st), 0);
        r.dev = (uint64_t)st.st_dev + 1;
        assert_true(strlen(want) < sizeof r.path);
        memcpy(r.path, want, strlen(want) + 1);
        assert_true((n = vfdswmr_sessname_encode(&r, value, sizeof value)) > 0);
        assert_int_equal(fsetxattr(fd, VFDSWMR_SESSNAME_XATTR, value, n, 0), 0);
        assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    }
    /* a value the codec refuses */
    assert_int_equal(fsetxattr(fd, VFDSWMR_SESSNAME_XATTR, "vfdswmr-md 1 relative.md", 24, 0), 0);
    assert_int_equal(vfdswmr_sessname_find(h5, seal_says, out, sizeof out), 0);
    /* no HDF5 file */
    assert_int_equal(vfdswmr_sessname_find("/nonexistent-vfdswmr.h5", seal_says, out, sizeof out), 0);
    close(fd);
}

/* The seal a real file carries, through vfdswmr_sb_sealed_fd: no superblock. */
static void
test_sealed_fd_no_superblock(void **state)
{
    int fd = open(h5, O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_sb_sealed_fd(fd), -2);
    close(fd);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_codec),
        T(test_record_absolute_and_erase),
        T(test_find_follows_only_this_session),
        T(test_sealed_fd_no_superblock),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
