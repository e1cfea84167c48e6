/*
 * Time: the one clock of the project (CLOCK_MONOTONIC, in seconds), the one
 * conversion of seconds into a struct timespec, and the one sleep. No HDF5
 * inside.
 *
 * Invariants:
 *  - every timeout, deadline, tick, pause and log stamp is measured on
 *    CLOCK_MONOTONIC: wall-clock changes never shorten or stretch them;
 *  - a time of vfdswmr_now() and a deadline for pthread_cond_timedwait()
 *    are on the same clock, so vfdswmr_timespec(vfdswmr_now() + s) is the
 *    absolute deadline s seconds ahead, for a condition variable whose
 *    clock was set to CLOCK_MONOTONIC (pthread_condattr_setclock()).
 *
 * Error contract: nothing here fails (the clock is always there; a sleep
 * cut short by a signal sleeps the rest) but vfdswmr_cond_init, which
 * returns pthread's error number.
 */
#ifndef VFDSWMR_COMMON_CLOCK_H
#define VFDSWMR_COMMON_CLOCK_H

#include <pthread.h>
#include <time.h>

/* Seconds on the monotonic clock. */
double vfdswmr_now(void);

/* `seconds` as a struct timespec, to the nearest nanosecond; 0 for
 * seconds <= 0. A duration (nanosleep()) or, for a time on vfdswmr_now()'s
 * clock, the absolute deadline pthread_cond_timedwait() wants. */
struct timespec vfdswmr_timespec(double seconds);

/* Sleep `seconds` (nothing for seconds <= 0), all of them: after a signal,
 * sleep what remains. */
void vfdswmr_sleep(double seconds);

/* Initialise *cv for timed waits on this clock: a deadline
 * vfdswmr_timespec(vfdswmr_now() + s) is s seconds ahead. 0, or an error
 * number (nothing initialised). */
int vfdswmr_cond_init(pthread_cond_t *cv);

#endif
