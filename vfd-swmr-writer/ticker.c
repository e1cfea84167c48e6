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
 */
enum park_state { NONE, PARKED, HANDED };
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum park_state state;
    pthread_t thread;
    vfdswmr_writer_t *job; /* HANDED: the session it is to run */
    bool exiting;          /* the library is being unloaded */
} park = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static pthread_once_t park_once = PTHREAD_ONCE_INIT;

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
    pthread_cond_init(&park.cv, NULL);
    park.state = NONE;
    park.job = NULL;
}
static void
park_init(void)
{
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

static void *
ticker_main(void *arg)
{
    vfdswmr_writer_t *w = arg;

    vfdswmr_no_hdf5 = true; /* HDF5 is not thread-safe: this thread never calls it */
    for (;;) {
        bool parks;
        vfdswmr_writer_lock(w);
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
        pthread_mutex_lock(&park.mu);
        while (park.state == PARKED && !park.exiting)
            pthread_cond_wait(&park.cv, &park.mu);
        if (park.state != HANDED) { /* unloading: the destructor joins us */
            pthread_mutex_unlock(&park.mu);
            return NULL;
        }
        w = park.job;
        park.job = NULL;
        park.state = NONE;
        pthread_mutex_unlock(&park.mu);
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
        w->ticker = park.thread;
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
