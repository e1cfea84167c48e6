/*
 * mdfile/safefile.c and the updater files written with it, on real files:
 * temporary names are fresh and unpredictable and never follow what was
 * planted at them; FIFOs, directories and devices are refused without
 * blocking; regular files (and, for reading, links to them) open normally.
 *
 * getrandom(2) is wrapped (-Wl,--wrap=getrandom) so that a test can make
 * vfdswmr_create_temp() draw the name an attacker guessed. Every test runs
 * under alarm(): a FIFO that blocked an open would end the program instead
 * of hanging it (a guard, not a synchronisation).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "testdir.h"
#include "updater.h"

#define GUARD_S 30

/* ---- getrandom, scripted ---------------------------------------------------- */

ssize_t __real_getrandom(void *buf, size_t len, unsigned int flags);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags);

static int script[8];       /* byte value of every byte of the next calls; -1: real randomness */
static size_t nscript, pos; /* calls scripted, calls made */
static bool sticky;         /* repeat the last scripted value for ever */
static unsigned calls;

ssize_t
__wrap_getrandom(void *buf, size_t len, unsigned int flags)
{
    calls++;
    if (pos < nscript || (sticky && nscript > 0)) {
        int v = script[pos < nscript ? pos : nscript - 1];
        pos++;
        if (v >= 0) {
            memset(buf, v, len);
            return (ssize_t)len;
        }
    }
    return __real_getrandom(buf, len, flags);
}

static void
script_random(bool repeat, size_t n, ...)
{
    va_list ap;

    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        script[i] = va_arg(ap, int);
    va_end(ap);
    nscript = n;
    pos = 0;
    sticky = repeat;
    calls = 0;
}

/* ---- helpers ---------------------------------------------------------------- */

static char sub[sizeof dir + 32];

static int
setup(void **state)
{
    (void)state;
    script_random(false, 0);
    snprintf(sub, sizeof sub, "%s/d", dir);
    alarm(GUARD_S);
    return mkdir(sub, 0755);
}

static int
teardown(void **state)
{
    char cmd[sizeof sub + 16];

    (void)state;
    alarm(0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sub);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *
path(const char *name)
{
    static char bufs[4][sizeof sub + 128];
    static unsigned next;
    char *out = bufs[next++ % 4];

    snprintf(out, sizeof bufs[0], "%s/%s", sub, name);
    return out;
}

static void
put(const char *p, const char *text)
{
    spill(p, text, strlen(text));
}

/* The file at p holds exactly text. */
static void
assert_holds(const char *p, const char *text)
{
    size_t len;
    uint8_t *b = slurp(p, &len);

    assert_int_equal(len, strlen(text));
    assert_memory_equal(b, text, len);
    free(b);
}

static void
assert_is_link_to(const char *p, const char *target)
{
    char got[512];
    ssize_t n = readlink(p, got, sizeof got - 1);

    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, target);
}

/* Names in sub (no . and ..). */
static int
count_entries(void)
{
    DIR *d = opendir(sub);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ---- vfdswmr_create_temp ---------------------------------------------------- */

static void
test_temp_name_and_mode(void **state)
{
    char tmp[512];
    const char *target = path("f.h5.md");
    struct stat st;
    int fd;

    (void)state;
    fd = vfdswmr_create_temp(target, tmp, sizeof tmp, 0600);
    assert_true(fd >= 0);
    assert_int_equal(strncmp(tmp, target, strlen(target)), 0);
    assert_true(vfdswmr_is_temp_suffix(tmp + strlen(target)));
    assert_int_equal(strlen(tmp), strlen(target) + VFDSWMR_TEMP_SUFFIX_LEN);
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 07777) == 0600);
    assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    assert_holds(tmp, "x");
    assert_int_equal(access(target, F_OK), -1); /* the target itself is not created */
}

/* 200 names: all different, and drawn from the whole alphabet. */
static void
test_temp_names_differ(void **state)
{
    enum { N = 200 };
    static char names[N][512];
    const char *target = path("t");
    bool seen[256] = {false};
    int distinct_chars = 0;

    (void)state;
    for (int i = 0; i < N; i++) {
        int fd = vfdswmr_create_temp(target, names[i], sizeof names[i], 0644);
        assert_true(fd >= 0);
        close(fd);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(names[i], names[j]);
        for (size_t k = 1; k <= VFDSWMR_TEMP_RANDOM_LEN; k++)
            seen[(unsigned char)names[i][strlen(target) + k]] = true;
    }
    for (int c = 0; c < 256; c++)
        distinct_chars += seen[c];
    assert_true(distinct_chars > 60); /* 2400 draws of 64 characters */
    assert_int_equal(count_entries(), N);
}

/*
 * The attacker guessed the name: links planted there -- to a file, and
 * dangling (O_CREAT through it would create the target) -- and a plain
 * file are passed over; another name is drawn; nothing planted changes.
 */
static void
test_temp_planted(void **state)
{
    char tmp[512];
    const char *target = path("f.h5.md");
    char guess[512], victim[512], absent[512];
    int fd;

    (void)state;
    snprintf(guess, sizeof guess, "%s.AAAAAAAAAAAA.tmp", target); /* bytes 0 -> 'A' */
    snprintf(victim, sizeof victim, "%s", path("victim"));
    snprintf(absent, sizeof absent, "%s", path("absent"));
    put(victim, "precious");

    for (int variant = 0; variant < 3; variant++) {
        if (variant == 0)
            assert_int_equal(symlink(victim, guess), 0);
        else if (variant == 1)
            assert_int_equal(symlink(absent, guess), 0);
        else
            put(guess, "someone's file");
        script_random(false, 2, 0, 1); /* first "AAAA...", then "BBBB..." */
        fd = vfdswmr_create_temp(target, tmp, sizeof tmp, 0644);
        assert_true(fd >= 0);
        assert_int_equal(calls, 2);
        assert_int_equal(write(fd, "new", 3), 3);
        close(fd);
        assert_string_not_equal(tmp, guess);
        assert_int_equal(strcmp(tmp + strlen(target), ".BBBBBBBBBBBB.tmp"), 0);
        assert_holds(tmp, "new");
        assert_holds(victim, "precious");
        assert_int_equal(access(absent, F_OK), -1);
        if (variant == 0)
            assert_is_link_to(guess, victim);
        else if (variant == 1)
            assert_is_link_to(guess, absent);
        else
            assert_holds(guess, "someone's file");
        assert_int_equal(unlink(guess), 0);
        assert_int_equal(unlink(tmp), 0);
    }
}

/* Every name taken: a bounded number of attempts, then EEXIST. */
static void
test_temp_bounded(void **state)
{
    char tmp[512], guess[512];
    const char *target = path("f");

    (void)state;
    snprintf(guess, sizeof guess, "%s.AAAAAAAAAAAA.tmp", target);
    put(guess, "taken");
    script_random(true, 1, 0);
    errno = 0;
    assert_int_equal(vfdswmr_create_temp(target, tmp, sizeof tmp, 0644), -1);
    assert_int_equal(errno, EEXIST);
    assert_int_equal(calls, VFDSWMR_TEMP_ATTEMPTS);
    assert_holds(guess, "taken");
    assert_int_equal(count_entries(), 1);
}

static void
test_temp_errors(void **state)
{
    char tmp[512];
    const char *target = path("f.h5.md");

    (void)state;
    errno = 0;
    assert_int_equal(vfdswmr_create_temp(target, tmp, strlen(target) + VFDSWMR_TEMP_SUFFIX_LEN, 0644), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    errno = 0;
    assert_int_equal(vfdswmr_create_temp(path("nodir/f"), tmp, sizeof tmp, 0644), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(count_entries(), 0);
}

static void
test_temp_suffix(void **state)
{
    static const struct {
        const char *s;
        bool ok;
    } cases[] = {
        {".AAAAAAAAAAAA.tmp", true},
        {".az09-_Zq8x7w.tmp", true},
        {".AAAAAAAAAAA.tmp", false},
        {".AAAAAAAAAAAAA.tmp", false},
        {".AAAAAAAAAAA..tmp", false},
        {".AAAAAAAAAAA/.tmp", false},
        {".AAAAAAAAAAAA.tmpx", false},
        {"AAAAAAAAAAAAA.tmp", false},
        {".AAAAAAAAAAAA.TMP", false},
        {".tmp", false},
        {"", false},
        {".AAAAAA AAAAA.tmp", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (vfdswmr_is_temp_suffix(cases[i].s) != cases[i].ok)
            fail_msg("\"%s\": expected %d", cases[i].s, cases[i].ok);
}

/* ---- vfdswmr_open_regular ----------------------------------------------------- */

static const int MODES[] = {O_RDONLY, O_WRONLY, O_RDWR};

static void
test_open_regular_file(void **state)
{
    const char *p = path("f");
    char buf[8] = "";

    (void)state;
    put(p, "data");
    for (size_t i = 0; i < 3; i++) {
        int fd = vfdswmr_open_regular(p, MODES[i]);
        assert_true(fd >= 0);
        assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), MODES[i]);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        if (MODES[i] != O_WRONLY) {
            assert_int_equal(pread(fd, buf, sizeof buf, 0), 4);
            assert_memory_equal(buf, "data", 4);
        }
        close(fd);
    }
    assert_holds(p, "data");
}

/* A FIFO without a writer or reader: refused at once, in every mode, also through a link. */
static void
test_open_regular_fifo(void **state)
{
    const char *p = path("fifo"), *link = path("link");

    (void)state;
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(symlink(p, link), 0);
    for (size_t i = 0; i < 3; i++) {
        errno = 0;
        assert_int_equal(vfdswmr_open_regular(p, MODES[i]), VFDSWMR_OPEN_NOT_REGULAR);
        assert_int_equal(errno, EINVAL);
        assert_int_equal(vfdswmr_open_regular(link, MODES[i]), VFDSWMR_OPEN_NOT_REGULAR);
        assert_int_equal(vfdswmr_open_regular(p, MODES[i] | O_CREAT), VFDSWMR_OPEN_NOT_REGULAR);
    }
    assert_string_equal(vfdswmr_path_kind(p), "a FIFO");
    assert_string_equal(vfdswmr_path_kind(link), "a FIFO");
}

static void
test_open_regular_dir_dev(void **state)
{
    const char *d = path("dir");

    (void)state;
    assert_int_equal(mkdir(d, 0755), 0);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(vfdswmr_open_regular(d, MODES[i]), VFDSWMR_OPEN_NOT_REGULAR);
        assert_int_equal(vfdswmr_open_regular("/dev/null", MODES[i]), VFDSWMR_OPEN_NOT_REGULAR);
    }
    assert_string_equal(vfdswmr_path_kind(d), "a directory");
    assert_string_equal(vfdswmr_path_kind("/dev/null"), "a character device");
}

/* Links: followed to read a regular file; never to write, create or truncate one. */
static void
test_open_regular_links(void **state)
{
    const char *victim = path("victim"), *link = path("link"), *dangling = path("dangling"), *absent = path("absent");
    struct stat a, b;
    int fd;

    (void)state;
    put(victim, "precious");
    assert_int_equal(symlink(victim, link), 0);
    assert_int_equal(symlink(absent, dangling), 0);
    fd = vfdswmr_open_regular(link, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(stat(victim, &b), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    close(fd);
    static const int wflags[] = {O_WRONLY, O_RDWR, O_WRONLY | O_CREAT, O_WRONLY | O_CREAT | O_TRUNC, O_RDWR | O_TRUNC};
    for (size_t i = 0; i < sizeof wflags / sizeof wflags[0]; i++) {
        errno = 0;
        assert_int_equal(vfdswmr_open_regular(link, wflags[i]), -1);
        assert_int_equal(errno, ELOOP);
        errno = 0;
        assert_int_equal(vfdswmr_open_regular(dangling, wflags[i]), -1);
        assert_int_equal(errno, ELOOP);
    }
    assert_holds(victim, "precious");
    assert_int_equal(access(absent, F_OK), -1);
    assert_is_link_to(link, victim);
    assert_string_equal(vfdswmr_path_kind(dangling), "a symbolic link");
    assert_string_equal(vfdswmr_path_kind(link), "a regular file");
}

/* Metadata files: never through a link, to read or to write; the message
 * names the link's target as md_file_path and md_file_name. */
static void
test_open_md_links(void **state)
{
    const char *md = path("real.md"), *link = path("f.h5.md"), *rel = path("rel.md");
    static const int flags[] = {O_RDONLY, O_RDWR, O_WRONLY};
    char why[8192], want[8192];
    int fd;

    (void)state;
    put(md, "header");
    assert_int_equal(symlink(md, link), 0);
    assert_int_equal(symlink("real.md", rel), 0);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        errno = 0;
        assert_int_equal(vfdswmr_open_md(link, flags[i]), VFDSWMR_OPEN_LINK);
        assert_int_equal(errno, ELOOP);
        assert_true((fd = vfdswmr_open_md(md, flags[i])) >= 0);
        close(fd);
    }
    assert_holds(md, "header");
    vfdswmr_md_link_text(link, why, sizeof why);
    snprintf(want, sizeof want, "metadata file %s is a symbolic link (to %s): ", link, md);
    assert_memory_equal(why, want, strlen(want));
    snprintf(want, sizeof want, "(md_file_path=%.*s;md_file_name=real.md)", (int)(strrchr(md, '/') - md), md);
    assert_non_null(strstr(why, want));
    vfdswmr_md_link_text(rel, why, sizeof why); /* relative: from the link's directory */
    assert_non_null(strstr(why, want));
    /* a loop of links among the directories on the way: an open that fails
     * (ELOOP), not a link at the metadata file's name */
    const char *loop = path("loop");
    char inside[sizeof sub + 160];
    assert_int_equal(symlink(loop, loop), 0);
    snprintf(inside, sizeof inside, "%s/f.h5.md", loop);
    errno = 0;
    assert_int_equal(vfdswmr_open_md(inside, O_RDWR), VFDSWMR_OPEN_FAILED);
    assert_int_equal(errno, ELOOP);
    /* nothing there: ENOENT (a probe's usual answer, one lstat), a
     * dangling link still a link */
    const char *none = path("none.md"), *dangling = path("dangling.md");
    assert_int_equal(symlink(none, dangling), 0);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        errno = 0;
        assert_int_equal(vfdswmr_open_md(none, flags[i]), VFDSWMR_OPEN_FAILED);
        assert_int_equal(errno, ENOENT);
        assert_int_equal(vfdswmr_open_md(dangling, flags[i]), VFDSWMR_OPEN_LINK);
    }
    assert_int_equal(access(none, F_OK), -1);
}

static void
test_open_regular_missing_create(void **state)
{
    const char *p = path("new");
    struct stat st;
    mode_t um = umask(022);
    int fd;

    (void)state;
    errno = 0;
    assert_int_equal(vfdswmr_open_regular(p, O_RDONLY), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(vfdswmr_open_regular(p, O_RDWR), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(vfdswmr_path_kind(p), "missing");
    fd = vfdswmr_open_regular(p, O_WRONLY | O_CREAT);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
    close(fd);
    umask(um);
}

/* A side file made whole under a temporary name, then named; removed only
 * while the name is still its own. */
static void
test_create_named(void **state)
{
    const char *p = path("side");
    vfdswmr_file_id_t id, id2;
    char buf[16] = "";
    int fd, fd2;

    (void)state;
    fd = vfdswmr_create_named(p, "side file", 9, 0644, &id);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, buf, sizeof buf, 0), 9);
    assert_memory_equal(buf, "side file", 9);
    assert_int_equal(count_entries(), 1); /* no temporary left */
    /* another one replaces it: the first one's removal leaves it alone */
    fd2 = vfdswmr_create_named(p, "second", 6, 0644, &id2);
    assert_true(fd2 >= 0);
    vfdswmr_unlink_if_same(p, &id);
    assert_string_equal(vfdswmr_path_kind(p), "a regular file");
    vfdswmr_unlink_if_same(p, &id2);
    assert_string_equal(vfdswmr_path_kind(p), "missing");
    close(fd);
    close(fd2);
    errno = 0;
    assert_int_equal(vfdswmr_create_named(path("no/such/dir"), "x", 1, 0644, &id), -1);
    assert_int_equal(errno, ENOENT);
}

/* ---- updater files ------------------------------------------------------------- */

/*
 * Links planted at the updater's old, predictable temporary name and at its
 * final name: the temporary is elsewhere, the final name's link is replaced
 * (not followed), both targets stay byte for byte as they were.
 */
static void
test_updater_write_planted(void **state)
{
    const char *base = path("f.h5.ud"), *v1 = path("victim1"), *v2 = path("victim2");
    char tmp[512], fin[512];
    struct stat st;

    (void)state;
    put(v1, "precious one");
    put(v2, "precious two");
    snprintf(tmp, sizeof tmp, "%s.3.tmp", base);
    snprintf(fin, sizeof fin, "%s.3", base);
    assert_int_equal(symlink(v1, tmp), 0);
    assert_int_equal(symlink(v2, fin), 0);
    assert_int_equal(vfdswmr_updater_write(base, 3, (const uint8_t *)"UPDATER", 7, true), 0);
    assert_int_equal(lstat(fin, &st), 0);
    assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1);
    assert_holds(fin, "UPDATER");
    assert_is_link_to(tmp, v1);
    assert_holds(v1, "precious one");
    assert_holds(v2, "precious two");
    assert_int_equal(count_entries(), 4); /* no temporary file left */
    /* and again, not durable, over the regular file it made */
    assert_int_equal(vfdswmr_updater_write(base, 3, (const uint8_t *)"AGAIN", 5, false), 0);
    assert_holds(fin, "AGAIN");
    assert_int_equal(count_entries(), 4);
}

/* The rename fails (a directory has the final name): -1, errno, the temporary removed. */
static void
test_updater_write_fails(void **state)
{
    const char *base = path("f.h5.ud");
    char fin[512], inner[600];

    (void)state;
    snprintf(fin, sizeof fin, "%s.4", base);
    snprintf(inner, sizeof inner, "%s/x", fin);
    assert_int_equal(mkdir(fin, 0755), 0);
    put(inner, "x");
    errno = 0;
    assert_int_equal(vfdswmr_updater_write(base, 4, (const uint8_t *)"UPDATER", 7, true), -1);
    assert_int_equal(errno, EISDIR);
    assert_int_equal(count_entries(), 1);
    assert_holds(inner, "x");
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_temp_name_and_mode),    T(test_temp_names_differ),   T(test_temp_planted),
        T(test_temp_bounded),          T(test_temp_errors),         T(test_temp_suffix),
        T(test_open_regular_file),     T(test_open_regular_fifo),   T(test_open_regular_dir_dev),
        T(test_open_regular_links),    T(test_open_md_links),       T(test_open_regular_missing_create),
        T(test_updater_write_planted), T(test_updater_write_fails), T(test_create_named),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
