/*
 * Ticks: a thread that publishes the latest consistency point at the end of
 * every tick, so readers see it within one tick even when the application
 * makes no further HDF5 call. A publish is one tick of the metadata file
 * (mdfile/mdwriter.c): the pages of consistency points since the previous
 * one, and the removals the page buffer decides (pagebuf.h). Ticks advance
 * even when nothing changed: max_lag is counted in ticks, so delayed writes
 * to the HDF5 file and the reuse of metadata file space depend on them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "writer.h"

double
vfdswmr_tick_seconds(const vfdswmr_writer_t *w)
{
    return w->base.cfg.tick_len ? w->base.cfg.tick_len * 0.1 : 0.1;
}

int
vfdswmr_writer_end_tick(vfdswmr_writer_t *w, bool final)
{
    const vfdswmr_mdchange_t *changes;
    const uint64_t *removals;
    size_t nc, nr;
    uint64_t tick = vfdswmr_mdw_tick(w->mdw) + 1;
    double t0 = vfdswmr_now();
    char why[384]; /* fits w->error with the prefix */

    if (w->error[0])
        return -1;
    /* What local readers hold (read marks) decides what must be kept. */
    /* Closing, a stalled reader must not hold the close for long: marks
     * older than max_lag are released then. */
    w->lag = vfdswmr_marks_lag(w->marks, tick, w->base.cfg.max_lag,
                               w->closing ? w->base.cfg.max_lag : VFDSWMR_MARK_RELEASE_FACTOR * w->base.cfg.max_lag,
                               &w->marked_readers);
    vfdswmr_mdw_set_keep_lag(w->mdw, w->lag);
    /* Before the header: a reader that sees tick T finds T's writes listed. */
    if (w->rawlog && vfdswmr_rawlog_publish(w->rawlog, tick, w->lag) < 0) {
        VFDSWMR_LOG(&w->log, "warning", "cannot write the raw-data write log: %s", strerror(errno));
        vfdswmr_rawlog_close(w->rawlog); /* readers then drop their caches at every snapshot */
        w->rawlog = NULL;
    }
    if (vfdswmr_pb_prepare(w->pb, tick, w->lag, final, &changes, &nc, &removals, &nr) < 0) {
        snprintf(w->error, sizeof w->error, "out of memory preparing tick %llu", (unsigned long long)tick);
        return -1;
    }
    if (vfdswmr_mdw_publish(w->mdw, w->cp_eoa, changes, nc, removals, nr, final ? VFDSWMR_MDW_FINAL : 0, why,
                            sizeof why) < 0) {
        snprintf(w->error, sizeof w->error, "cannot publish tick %llu: %s", (unsigned long long)tick, why);
        VFDSWMR_LOG(&w->log, "error", "%s", w->error);
        /* Tell the readers (the header is rewritten in place, which needs no
         * new space): they get an error instead of a silently frozen view. */
        if (vfdswmr_mdw_mark_failed(w->mdw, why, sizeof why) < 0)
            VFDSWMR_LOG(&w->log, "error", "cannot mark the metadata file failed: %s", why);
        return -1;
    }
    vfdswmr_pb_published(w->pb, tick);
    w->publishes++;
    w->pages_published += nc;
    if (w->log.fp) {
        uint32_t n;
        vfdswmr_mdw_index(w->mdw, &n);
        VFDSWMR_LOG(&w->log,
                    "end_of_tick", "tick=%llu pages=%zu removed=%zu index=%u relocated=%d md_pages=%llu eoa=%llu "
                    "lag=%u marked_readers=%u time_us=%.0f",
                    (unsigned long long)tick, nc, nr, n, vfdswmr_mdw_index_relocated(w->mdw),
                    (unsigned long long)vfdswmr_mdw_file_pages(w->mdw), (unsigned long long)w->cp_eoa, w->lag,
                    w->marked_readers,
                    (vfdswmr_now() - t0) * 1e6);
    }
    return 0;
}

static void
abs_time(double t, struct timespec *ts)
{
    /* pthread_cond_timedwait uses CLOCK_MONOTONIC (writer.c, init_sync) */
    ts->tv_sec = (time_t)t;
    ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9);
}

static void *
ticker_main(void *arg)
{
    vfdswmr_writer_t *w = arg;
    struct timespec ts;

    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        double now = vfdswmr_now();
        if (now < w->next_tick) {
            abs_time(w->next_tick, &ts);
            pthread_cond_timedwait(&w->wake, &w->lock, &ts);
            continue;
        }
        if (w->eot_disabled)
            w->tick_missed = true;
        else
            vfdswmr_writer_end_tick(w, false);
        w->next_tick += vfdswmr_tick_seconds(w);
        if (w->next_tick < now) /* fell behind (e.g. a long publish): no burst of catch-up ticks */
            w->next_tick = now + vfdswmr_tick_seconds(w);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int
vfdswmr_ticker_start(vfdswmr_writer_t *w)
{
    int rc;

    w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w);
    if (w->base.cfg.tick_len == 0)
        return 0; /* ticks end only by explicit calls */
    /* w->wake waits on CLOCK_MONOTONIC (writer.c, init_sync) */
    if ((rc = pthread_create(&w->ticker, NULL, ticker_main, w)) != 0) {
        errno = rc;
        return -1;
    }
    w->ticker_running = true;
    return 0;
}

void
vfdswmr_ticker_stop(vfdswmr_writer_t *w)
{
    if (!w->ticker_running)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->ticker, NULL);
    w->ticker_running = false;
}
