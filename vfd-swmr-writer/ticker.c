/*
 * Ticks: a thread that ends every tick by publishing the latest consistency
 * point (publish.c), so readers see it within one tick even when the
 * application makes no further HDF5 call. Ticks advance even when nothing
 * changed: max_lag is counted in ticks, so delayed writes to the HDF5 file
 * and the reuse of metadata file space depend on them. The thread only
 * schedules: it holds the writer's lock except while it sleeps and while the
 * publish writes to disk.
 */
#include <pthread.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <time.h>

#include "clock.h"
#include "h5err.h"
#include "mdlock.h"
#include "writer.h"

/*
 * A tick thread outlives its session: when the session ends, the thread
 * parks (at most one per process) and the next writer session of the
 * process takes it instead of starting one -- a thread's start and join
 * cost about 40 us, 8 % of a short session (HDF5's own file tests make
 * thousands). Invariants: `state` says what the one parked thread does;
 * `thread` is it while PARKED or HANDED-and-not-yet-running; a thread
 * that parks is joined by nobody but the unload (destructor below), one
 * that does not park by its session's stop. All under `mu`, which nests
 * inside a writer's lock, never around it. A fork child has no threads:
 * the fork handlers keep `mu` free across fork() and the child forgets the
 * parked thread.
 *
 * Waking a thread costs as much again (a futex wake, and on a virtual
 * machine an interrupt to the other CPU; then the stop's wake and the
 * thread's answer): so for PARK_WARM seconds after its last session the
 * parked thread looks for a session handed to it by itself, every
 * PARK_POLL seconds, and a session that starts while the next look comes
 * before its first duty does not wake it. A session that stops before the
 * thread took it is simply taken back: the thread never touched it. The
 * first duty is the first tick (next_tick) or, while the raw-data gate is
 * held, the first look for waiting readers (VFDSWMR_RAW_GATE_POLL after
 * the start; inplace.c), which the thread makes as soon as it takes the
 * session. Invariant: a HANDED session is taken no later than its first
 * duty -- `wake_at` (the parked thread's next look; INFINITY: it sleeps
 * until woken) is at or before it, or the start woke the thread.
 */
#define PARK_POLL VFDSWMR_RAW_GATE_POLL
#define PARK_WARM 1.0
enum park_state { NONE, PARKED, HANDED };
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC from park_init on (PARK_POLL) */
    enum park_state state;
    pthread_t thread;
    vfdswmr_writer_t *job; /* HANDED: the session it is to run */
    bool exiting;          /* the library is being unloaded */
    double wake_at;        /* PARKED, HANDED: when the thread looks next by itself (vfdswmr_now) */
    unsigned long handed;  /* sessions handed to a parked thread so far */
    bool cv_realtime;      /* cv has no monotonic clock: the thread waits until woken */
} park = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .wake_at = INFINITY};
static pthread_once_t park_once = PTHREAD_ONCE_INIT;

/* cv anew, its timed waits on CLOCK_MONOTONIC (common/clock.h); nobody waits
 * on it. Without that clock: a realtime condition, never waited on with a
 * timeout (park_wait). */
static void
park_cv_init(void)
{
    park.cv_realtime = vfdswmr_cond_init(&park.cv) != 0;
    if (park.cv_realtime)
        pthread_cond_init(&park.cv, NULL);
}

static void
park_prepare(void)
{
    pthread_mutex_lock(&park.mu);
}
static void
park_parent(void)
{
    pthread_mutex_unlock(&park.mu);
}
static void
park_child(void)
{
    pthread_mutex_unlock(&park.mu);
    /* the parked thread stayed with the parent, and so did its wait on cv:
     * a copy that still counts it would make a broadcast wait for ever */
    park_cv_init();
    park.state = NONE;
    park.job = NULL;
    park.wake_at = INFINITY;
}
static void
park_init(void)
{
    park_cv_init();
    (void)pthread_atfork(park_prepare, park_parent, park_child);
}

/* At unload (HDF5 closes its plugins, or the process exits): the parked
 * thread runs this library's code, so it ends before the code goes. */
__attribute__((destructor)) static void
park_fini(void)
{
    pthread_t t;
    bool join;

    pthread_mutex_lock(&park.mu);
    park.exiting = true;
    join = park.state == PARKED;
    t = park.thread;
    pthread_cond_broadcast(&park.cv);
    pthread_mutex_unlock(&park.mu);
    if (join)
        pthread_join(t, NULL);
}

/* One session's ticks, with w's lock held throughout but while waiting.
 * Returns with it held, once the session stops. */
static void
run_session(vfdswmr_writer_t *w)
{
    struct timespec ts;

    while (!w->stop) {
        double now = vfdswmr_now();
        if (now < w->next_tick) {
            /* holding the raw-data gate, look for readers waiting for it often (inplace.c) */
            double until =
                w->gate_held && now + VFDSWMR_RAW_GATE_POLL < w->next_tick ? now + VFDSWMR_RAW_GATE_POLL : w->next_tick;
            /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync) */
            ts = vfdswmr_timespec(until);
            vfdswmr_writer_wait(w, &w->wake, &ts);
            if (w->gate_held)
                vfdswmr_writer_gate(w);
            continue;
        }
        if (w->eot_disabled)
            w->tick_missed = true;
        else
            vfdswmr_writer_end_tick_unlocked_io(w);
        w->next_tick += vfdswmr_tick_seconds(w->base.cfg.tick_len);
        if (w->next_tick < now) /* fell behind (e.g. a long publish): no burst of catch-up ticks */
            w->next_tick = now + vfdswmr_tick_seconds(w->base.cfg.tick_len);
    }
}

/* Parked: wait for a session, looking for one every PARK_POLL seconds
 * until PARK_WARM seconds pass with none handed, then only when woken.
 * Returns the session taken, or NULL when the library is being unloaded. */
static vfdswmr_writer_t *
park_wait(void)
{
    vfdswmr_writer_t *w;
    double warm_until = vfdswmr_now() + PARK_WARM;
    unsigned long seen;

    pthread_mutex_lock(&park.mu);
    seen = park.handed;
    while (park.state != HANDED && !park.exiting) {
        double now = vfdswmr_now();
        if (park.handed != seen) { /* sessions came and went meanwhile: stay warm */
            seen = park.handed;
            warm_until = now + PARK_WARM;
        }
        if (now < warm_until && !park.cv_realtime) {
            struct timespec ts;
            park.wake_at = now + PARK_POLL;
            ts = vfdswmr_timespec(park.wake_at);
            (void)pthread_cond_timedwait(&park.cv, &park.mu, &ts);
        }
        else {
            park.wake_at = INFINITY;
            pthread_cond_wait(&park.cv, &park.mu);
        }
    }
    park.wake_at = INFINITY;
    w = park.state == HANDED ? park.job : NULL;
    if (w) {
        park.job = NULL;
        park.state = NONE;
    }
    pthread_mutex_unlock(&park.mu);
    return w;
}

static void *
ticker_main(void *arg)
{
    vfdswmr_writer_t *w = arg;

    vfdswmr_no_hdf5 = true; /* HDF5 is not thread-safe: this thread never calls it */
    for (;;) {
        bool parks;
        vfdswmr_writer_lock(w);
        /* taken at a look of its own, up to PARK_POLL after the start: the
         * first look for readers waiting at the gate is due now */
        if (w->gate_held)
            vfdswmr_writer_gate(w);
        run_session(w);
        /* Leaving w: decide now whether to park, so that the stop knows
         * whether to join; after the broadcast w is never touched again
         * (its session may free it as soon as it has its lock back). */
        pthread_mutex_lock(&park.mu);
        parks = park.state == NONE && !park.exiting;
        if (parks) {
            park.state = PARKED;
            park.thread = pthread_self();
        }
        pthread_mutex_unlock(&park.mu);
        w->ticker_parks = parks;
        w->ticker_left = true;
        pthread_cond_broadcast(&w->wake);
        vfdswmr_writer_unlock(w);
        if (!parks)
            return NULL; /* joined by the stop */
        if (!(w = park_wait()))
            return NULL; /* unloading: the destructor joins us */
    }
}

int
vfdswmr_ticker_start(vfdswmr_writer_t *w)
{
    int rc = 0;

    w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
    if (w->base.cfg.tick_len == 0)
        return 0; /* ticks end only by explicit calls */
    pthread_once(&park_once, park_init);
    w->stop = w->ticker_left = w->ticker_parks = false;
    pthread_mutex_lock(&park.mu);
    if (park.state == PARKED && !park.exiting) { /* a finished session's thread takes this one */
        park.state = HANDED;
        park.job = w;
        park.handed++;
        w->ticker = park.thread;
        /* its own next look comes before this session's first duty: no wake */
        double duty = vfdswmr_now() + VFDSWMR_RAW_GATE_POLL;
        if (park.wake_at > (w->next_tick < duty ? w->next_tick : duty))
            pthread_cond_broadcast(&park.cv);
    }
    /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync) */
    else if ((rc = pthread_create(&w->ticker, NULL, ticker_main, w)) != 0)
        errno = rc;
    pthread_mutex_unlock(&park.mu);
    if (rc != 0)
        return -1;
    w->ticker_running = true;
    vfdswmr_writer_lock(w);
    vfdswmr_writer_gate(w);
    vfdswmr_writer_unlock(w);
    return 0;
}

void
vfdswmr_ticker_stop(vfdswmr_writer_t *w)
{
    if (!w->ticker_running)
        return;
    pthread_mutex_lock(&park.mu);
    if (park.state == HANDED && park.job == w) { /* not taken yet: it never touched w */
        park.state = PARKED;
        park.job = NULL;
        pthread_mutex_unlock(&park.mu);
        w->ticker_running = false;
        return;
    }
    pthread_mutex_unlock(&park.mu);
    vfdswmr_writer_lock(w);
    w->stop = true;
    pthread_cond_broadcast(&w->wake);
    while (!w->ticker_left)
        vfdswmr_writer_wait(w, &w->wake, NULL);
    vfdswmr_writer_unlock(w);
    if (!w->ticker_parks)
        pthread_join(w->ticker, NULL);
    w->ticker_running = false;
}
