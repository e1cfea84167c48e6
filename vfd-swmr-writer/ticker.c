/*
 * Ticks: a thread that ends every tick by publishing the latest consistency
 * point (publish.c), so readers see it within one tick even when the
 * application makes no further HDF5 call. Ticks advance even when nothing
 * changed: max_lag is counted in ticks, so delayed writes to the HDF5 file
 * and the reuse of metadata file space depend on them. The thread only
 * schedules: it holds the writer's lock except while it sleeps and while the
 * publish writes to disk.
 */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "h5err.h"
#include "mdlock.h"
#include "writer.h"

static void *
ticker_main(void *arg)
{
    vfdswmr_writer_t *w = arg;
    struct timespec ts;

    vfdswmr_no_hdf5 = true; /* HDF5 is not thread-safe: this thread never calls it */
    vfdswmr_writer_lock(w);
    while (!w->stop) {
        double now = vfdswmr_now();
        if (now < w->next_tick) {
            /* holding the raw-data gate, look for readers waiting for it often (inplace.c) */
            double until =
                w->gate_held && now + VFDSWMR_RAW_GATE_POLL < w->next_tick ? now + VFDSWMR_RAW_GATE_POLL : w->next_tick;
            /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync), vfdswmr_now()'s clock */
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
    vfdswmr_writer_unlock(w);
    return NULL;
}

int
vfdswmr_ticker_start(vfdswmr_writer_t *w)
{
    int rc;

    w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
    if (w->base.cfg.tick_len == 0)
        return 0; /* ticks end only by explicit calls */
    /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync) */
    if ((rc = pthread_create(&w->ticker, NULL, ticker_main, w)) != 0) {
        errno = rc;
        return -1;
    }
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
    pthread_cond_signal(&w->wake);
    vfdswmr_writer_unlock(w);
    pthread_join(w->ticker, NULL);
    w->ticker_running = false;
}
