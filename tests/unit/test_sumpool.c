/*
 * A publish's checksums shared with helper threads (mdfile/sumpool.h): every
 * image gets the first four bytes of its SHA-256, little-endian -- computed
 * here with OpenSSL directly, not with the code under test -- for jobs
 * below and above the size that brings helpers in, from several threads at
 * once (one job uses the helpers, the others hash alone), and in a fork
 * child of a process whose helpers run (the child starts its own).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sumpool.h"

/* The format's checksum, from its definition (FORMAT.md). */
static uint32_t
expected(const void *buf, size_t len)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;

    assert_true(EVP_Digest(buf, len, d, &dl, EVP_sha256(), NULL));
    return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
}

struct set {
    vfdswmr_mdimage_t *im;
    uint8_t **buf;
    size_t n;
};

/* n images of random lengths in [1, maxlen] and random bytes. */
static struct set
make_set(size_t n, size_t maxlen, unsigned *seed)
{
    struct set s = {calloc(n ? n : 1, sizeof *s.im), calloc(n ? n : 1, sizeof *s.buf), n};

    assert_non_null(s.im);
    assert_non_null(s.buf);
    for (size_t i = 0; i < n; i++) {
        size_t len = 1 + (size_t)rand_r(seed) % maxlen;
        assert_non_null(s.buf[i] = malloc(len));
        for (size_t k = 0; k < len; k++)
            s.buf[i][k] = (uint8_t)rand_r(seed);
        s.im[i] = (vfdswmr_mdimage_t){
            .md_page = i, .hdf5_page = 1000 + i, .length = (uint32_t)len, .checksum = 0xdeadbeef, .image = s.buf[i]};
    }
    return s;
}

/* Every checksum right, and nothing else of the images changed. */
static int
check_set(const struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->im[i].checksum != expected(s->buf[i], s->im[i].length) || s->im[i].md_page != i ||
            s->im[i].hdf5_page != 1000 + i || s->im[i].image != s->buf[i])
            return -1;
    return 0;
}

static void
free_set(struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->buf[i]);
    free(s->buf);
    free(s->im);
}

/* The helpers a process on these CPUs starts (sumpool.h), counted here. */
static unsigned
want_helpers(void)
{
    cpu_set_t set;
    unsigned n;

    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    n = (unsigned)CPU_COUNT(&set) - 1;
    return n > VFDSWMR_SUMPOOL_MAX_HELPERS ? VFDSWMR_SUMPOOL_MAX_HELPERS : n;
}

static void
test_sizes(void **state)
{
    static const struct {
        size_t n, maxlen;
    } cases[] = {{0, 1},      {1, 4096},    {2, 100},     {63, 4096},  {64, 8192},   {65, 4096},
                 {640, 4096}, {1000, 4096}, {3, 1 << 20}, {5000, 300}, {2000, 12288}};
    unsigned seed = 20261129;

    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int rep = 0; rep < 3; rep++) {
            struct set s = make_set(cases[c].n, cases[c].maxlen, &seed);
            vfdswmr_sumpool_checksums(s.im, s.n);
            assert_int_equal(check_set(&s), 0);
            free_set(&s);
        }
    /* a job of 640 pages (2.6 MB) was large enough to start them */
    assert_int_equal(vfdswmr_sumpool_helpers(), want_helpers());
}

/* meanwhile: called once per job, small (hashed alone) or large (helpers),
 * while the images are still being hashed or before: it sees them intact. */
struct seen {
    const struct set *s;
    unsigned calls;
    int intact;
};

static void
meanwhile(void *ctx)
{
    struct seen *m = ctx;

    m->calls++;
    m->intact = 1;
    for (size_t i = 0; i < m->s->n; i++)
        if (m->s->im[i].image != m->s->buf[i] || m->s->im[i].md_page != i)
            m->intact = 0;
}

static void
test_meanwhile(void **state)
{
    static const size_t sizes[] = {0, 1, 5, 640, 2000};
    unsigned seed = 7;

    (void)state;
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        struct set s = make_set(sizes[c], 4096, &seed);
        struct seen m = {.s = &s};
        vfdswmr_sumpool_checksums_while(s.im, s.n, meanwhile, &m);
        assert_int_equal(m.calls, 1);
        assert_int_equal(m.intact, 1);
        assert_int_equal(check_set(&s), 0);
        free_set(&s);
    }
}

static void *
caller(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    intptr_t bad = 0;

    for (int rep = 0; rep < 20; rep++) {
        struct set s = make_set(200 + (size_t)rand_r(&seed) % 400, 4096, &seed);
        vfdswmr_sumpool_checksums(s.im, s.n);
        bad += check_set(&s) != 0;
        free_set(&s);
    }
    return (void *)bad;
}

static void
test_concurrent_callers(void **state)
{
    pthread_t t[4];
    void *bad;

    (void)state;
    for (uintptr_t k = 0; k < 4; k++)
        assert_int_equal(pthread_create(&t[k], NULL, caller, (void *)(k + 1)), 0);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(pthread_join(t[k], &bad), 0);
        assert_null(bad);
    }
}

static void
test_fork_child(void **state)
{
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer does not let a child of a threaded process start threads (die_after_fork) */
    (void)state;
    skip();
#endif
    unsigned seed = 7;
    struct set s = make_set(640, 4096, &seed);
    int status = -1;
    pid_t pid;

    (void)state;
    vfdswmr_sumpool_checksums(s.im, s.n); /* the parent's helpers run */
    assert_int_equal(check_set(&s), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* a hang fails the check below instead of the test run */
        for (size_t i = 0; i < s.n; i++)
            s.im[i].checksum = 0;
        vfdswmr_sumpool_checksums(s.im, s.n);
        _exit(check_set(&s) == 0 && vfdswmr_sumpool_helpers() == want_helpers() ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    free_set(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_meanwhile),
        cmocka_unit_test(test_concurrent_callers),
        cmocka_unit_test(test_fork_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
