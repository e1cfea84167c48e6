/*
 * The clock, the seconds-to-timespec conversion and the sleep
 * (common/clock.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>

#include "clock.h"

static void
test_clock_timespec(void **state)
{
    struct timespec ts;

    (void)state;
    ts = vfdswmr_timespec(1.5);
    assert_int_equal(ts.tv_sec, 1);
    assert_int_equal(ts.tv_nsec, 500000000L);
    ts = vfdswmr_timespec(0);
    assert_int_equal(ts.tv_sec, 0);
    assert_int_equal(ts.tv_nsec, 0);
    ts = vfdswmr_timespec(-2.25);
    assert_int_equal(ts.tv_sec, 0);
    assert_int_equal(ts.tv_nsec, 0);
    /* whole microseconds come out exact */
    for (unsigned us = 1; us < 3000000; us = us * 3 + 1) {
        ts = vfdswmr_timespec(us * 1e-6);
        assert_int_equal(ts.tv_sec, us / 1000000);
        assert_int_equal(ts.tv_nsec, (long)(us % 1000000) * 1000);
    }
    /* just below a whole second rounds up into it, never to 1e9 ns */
    ts = vfdswmr_timespec(2.9999999999);
    assert_int_equal(ts.tv_sec, 3);
    assert_int_equal(ts.tv_nsec, 0);
}

static void
test_clock_now_and_sleep(void **state)
{
    double t0, t1;

    (void)state;
    t0 = vfdswmr_now();
    assert_true(t0 > 0);
    vfdswmr_sleep(0.02);
    t1 = vfdswmr_now();
    assert_true(t1 - t0 >= 0.02);
    assert_true(t1 - t0 < 5);
    t0 = vfdswmr_now();
    vfdswmr_sleep(0);
    vfdswmr_sleep(-1);
    assert_true(vfdswmr_now() - t0 < 1);
}

/* An absolute deadline on vfdswmr_now()'s clock, on a condition from
 * vfdswmr_cond_init, as the writer's ticker waits for it. */
static void
test_clock_deadline(void **state)
{
    pthread_cond_t c;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    struct timespec ts;
    double t0;
    int rc;

    (void)state;
    assert_int_equal(vfdswmr_cond_init(&c), 0);
    pthread_mutex_lock(&m);
    t0 = vfdswmr_now();
    ts = vfdswmr_timespec(t0 + 0.05);
    do
        rc = pthread_cond_timedwait(&c, &m, &ts);
    while (rc == 0);
    assert_int_equal(rc, ETIMEDOUT);
    assert_true(vfdswmr_now() - t0 >= 0.05);
    assert_true(vfdswmr_now() - t0 < 5);
    pthread_mutex_unlock(&m);
    pthread_cond_destroy(&c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_timespec),
        cmocka_unit_test(test_clock_now_and_sleep),
        cmocka_unit_test(test_clock_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
