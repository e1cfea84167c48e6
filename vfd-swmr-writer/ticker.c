/*
 * Ticks: a thread that ends every tick by publishing the latest consistency
 * point (publish.c), so readers see it within one tick even when the
 * application makes no further HDF5 call. Ticks advance even when nothing
 * changed: max_lag is counted in ticks, so delayed writes to the HDF5 file
 * and the reuse of metadata file space depend on them. The thread only
 * schedules: it holds the writer's lock except while it sleeps and while the
 * publish writes to disk.
 *
 * With publish=flush the thread starts only at the first driver call after
 * the first tick's end (vfdswmr_ticker_due, from every locked callback of
 * writer.c): a session shorter than a tick never starts one. Until then
 * nothing needs it -- every flush publishes its own consistency point before
 * it returns, delayed writes run at flushes, close ticks by itself, the
 * raw-data gate is not held (vfdswmr_writer_gate), and ticks that do not end
 * keep every reader's lag check true (docs/DESIGN.md section 6, "Ticks").
 * publish=tick starts it at open: there only ends of tick publish.
 */
#include <errno.h>
#include <string.h>
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

/* The thread, with `lock` held: it waits for the lock until the caller lets go. */
static int
launch(vfdswmr_writer_t *w)
{
    int rc;

    VFDSWMR_ASSERT_LOCKED(w);
    /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync) */
    if ((rc = pthread_create(&w->ticker, NULL, ticker_main, w)) != 0) {
        errno = rc;
        return -1;
    }
    w->ticker_running = true;
    vfdswmr_writer_gate(w);
    return 0;
}

int
vfdswmr_ticker_start(vfdswmr_writer_t *w)
{
    int rc = 0;

    w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
    if (w->base.cfg.tick_len == 0)
        return 0; /* ticks end only by explicit calls */
    if (!w->base.cfg.publish_at_tick_only) {
        w->ticker_deferred = true; /* vfdswmr_ticker_due starts it (ticker.h) */
        return 0;
    }
    vfdswmr_writer_lock(w);
    rc = launch(w);
    vfdswmr_writer_unlock(w);
    return rc;
}

void
vfdswmr_ticker_due(vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->ticker_deferred || vfdswmr_now() < w->next_tick)
        return;
    /* the tick that ended while nobody looked ends now, in the thread */
    VFDSWMR_ASSERT(!w->ticker_running && !w->closing);
    if (launch(w) == 0) {
        w->ticker_deferred = false;
        VFDSWMR_LOG(&w->log, "ticker", "started: the first tick ended (%.3f s after it was due)",
                    vfdswmr_now() - w->next_tick);
        return;
    }
    /* Nothing depends on it yet (ticker.h): try again a tick later. */
    VFDSWMR_LOG(&w->log, "warning", "cannot start the tick thread (%s): trying again in a tick", strerror(errno));
    w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
}

void
vfdswmr_ticker_stop(vfdswmr_writer_t *w)
{
    w->ticker_deferred = false;
    if (!w->ticker_running)
        return;
    vfdswmr_writer_lock(w);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    vfdswmr_writer_unlock(w);
    pthread_join(w->ticker, NULL);
    w->ticker_running = false;
}
