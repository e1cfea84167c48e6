/*
 * The clock, the seconds-to-timespec conversion and the sleep (clock.h).
 */
#include "clock.h"

#include <errno.h>

double
vfdswmr_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec
vfdswmr_timespec(double seconds)
{
    struct timespec ts = {0, 0};

    if (seconds > 0) {
        ts.tv_sec = (time_t)seconds;
        /* to the nearest nanosecond, so that a whole number of microseconds
         * (us * 1e-6) comes out exact */
        ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9 + 0.5);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
    }
    return ts;
}

int
vfdswmr_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc;

    if ((rc = pthread_condattr_init(&ca)) != 0)
        return rc;
    if ((rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) == 0)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

void
vfdswmr_sleep(double seconds)
{
    struct timespec ts = vfdswmr_timespec(seconds);

    while (seconds > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}
