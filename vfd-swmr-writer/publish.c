/*
 * Publishing a tick: the latest consistency point becomes the metadata
 * file's next snapshot (mdfile/mdwriter.c): the pages of consistency points
 * since the previous publish, and the removals the page buffer decides
 * (pagebuf.h). The ticker (ticker.c) decides when; explicit ends of tick,
 * early ends (pb_expansion_threshold) and close call it directly.
 *
 * A publish has three steps, so that the disk I/O does not hold the lock
 * every HDF5 callback of the application takes:
 *   begin   (lock held)   decide what is kept for readers (read marks), hand
 *                         the page buffer's waiting images to the publish,
 *                         encode the raw-data write log;
 *   write   (lock held or not) raw-data log, page images, index, header --
 *                         everything that waits for the disk, fdatasync
 *                         included with durable=1;
 *   finish  (lock held)   page states, the published tick, counters, log;
 *                         a failure is recorded in w->error.
 * Between begin and finish the callbacks go on as if the publish had not
 * begun (pagebuf.h says what the page buffer allows meanwhile); `publishing`
 * tells them that writes now belong to the tick after the one being written.
 * Only the thread publishing touches w->mdw until finish; a second publish
 * waits for the first (`published`). So the order readers depend on is kept:
 * raw-data log, then images and index, then header -- and a consistency
 * point is published whole or not at all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "forked.h"
#include "kept.h"
#include "mdlock.h"
#include "rawlog.h"
#include "writer.h"

/* What a publish does to the epoch (writer.h). */
typedef enum epoch_step_t {
    EPOCH_KEEP,  /* a flush: in the current epoch */
    EPOCH_END,   /* an end of tick: in the current epoch, which then ends */
    EPOCH_FRESH, /* in an epoch no earlier snapshot has */
} epoch_step_t;

typedef struct publish_t {
    uint64_t tick, epoch;
    epoch_step_t step;
    bool final;
    bool early; /* ended early (pb_expansion_threshold): for the log */
    const vfdswmr_mdchange_t *changes;
    const uint64_t *removals;
    size_t nc, nr;
    uint64_t eoa, cps; /* the consistency point's EOA and number (writer.h) */
    double t0, seconds;
    int rawlog_errno; /* the raw-data log could not be written */
    bool failed;      /* the publish itself failed: why, and marked_failed */
    bool mark_failed_ok;
    char why[384]; /* fits w->error with the prefix */
    char mark_why[VFDSWMR_MDW_ERRLEN];
} publish_t;

/* The tick raw writes made now are published with: tick + 2 while tick + 1
 * is being written -- and for good once publishing failed (the error is
 * never cleared and nothing is published again), since writes made while
 * the failed publish was being written got tick + 2 already: the raw-data
 * log's ticks never go down (rawlog.h). */
uint64_t
vfdswmr_writer_write_tick(const vfdswmr_writer_t *w)
{
    return w->tick + 1 + (w->publishing || w->error[0] ? 1 : 0);
}

void
vfdswmr_writer_log_write(vfdswmr_writer_t *w, uint64_t addr, uint64_t len)
{
    uint64_t tick = vfdswmr_writer_write_tick(w);

    if (w->rawlog)
        vfdswmr_rawlog_add(w->rawlog, tick, addr, len);
    else if (len && tick > w->unlogged_tick)
        w->unlogged_tick = tick;
}

/* Wait, under the lock, until no publish is being written. */
static void
wait_idle(vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT_LOCKED(w);
    while (w->publishing)
        vfdswmr_writer_wait(w, &w->published, NULL);
}

/* Publishing stops for good: keep the first reason, and tell readers, as a
 * failed publish does, by marking the metadata file failed (they get an
 * error instead of a view that silently stops). Close then writes every
 * page's current bytes to the HDF5 file. Lock held (or at close). */
void
vfdswmr_writer_stop_publishing(vfdswmr_writer_t *w, const char *why)
{
    char err[VFDSWMR_MDW_ERRLEN];

    wait_idle(w); /* the metadata file writer is the publishing thread's until then */
    VFDSWMR_ASSERT_MDW(w);
    if (w->error[0])
        return;
    snprintf(w->error, sizeof w->error, "%s", why);
    VFDSWMR_LOG(&w->log, "error", "%s", w->error);
    if (vfdswmr_mdw_mark_failed(w->mdw, err, sizeof err) < 0)
        VFDSWMR_LOG(&w->log, "error", "cannot mark the metadata file failed: %s", err);
}

/* The raw-data log keeps the ticks of the last `lag` epochs (a reader whose
 * snapshot is older drops its whole cache), counted in ticks. */
static uint64_t
rawlog_window(const vfdswmr_writer_t *w, const publish_t *p)
{
    uint64_t first;

    if (w->lag >= VFDSWMR_EPOCH_RING || p->epoch < w->lag)
        return w->lag > p->tick ? w->lag : p->tick;
    first = w->epoch_first_tick[(p->epoch - w->lag + 1) % VFDSWMR_EPOCH_RING];
    return first && first <= p->tick ? p->tick - first + 1 : w->lag;
}

/* The raw-data write log, at the first publish that finds a reader
 * registered on the HDF5 file (every reader registers before it reads; a
 * lower driver without a descriptor: at the first publish). It lists the
 * ticks after the last one written unlogged: no earlier write is in it, and
 * a reader asking for those ticks drops its whole cache (rawlog.h). Without
 * it, caching readers drop their chunk cache at every snapshot. */
static void
start_rawlog(vfdswmr_writer_t *w, uint64_t tick)
{
    vfdswmr_rawlog_t *l;

    if (w->rawlog_done || (w->hdf5_fd >= 0 && vfdswmr_mdlock_any_reader(w->hdf5_fd) == 0))
        return;
    w->rawlog_done = true;
    /* writes made since the last publish are of this tick at most */
    VFDSWMR_ASSERT(w->unlogged_tick <= tick);
    if (vfdswmr_rawlog_create(w->md_path, vfdswmr_mdw_session(w->mdw), w->unlogged_tick + 1, &l) < 0) {
        VFDSWMR_LOG(&w->log, "warning", "no raw-data write log: %s", strerror(errno));
        return;
    }
    w->rawlog = l; /* whole before it is seen: a fork child's handler reads it without the lock (close.c) */
    VFDSWMR_LOG(&w->log, "rawlog", "created at tick %llu: lists ticks %llu on", (unsigned long long)tick,
                (unsigned long long)(w->unlogged_tick + 1));
}

int
vfdswmr_writer_marks_find(vfdswmr_writer_t *w, vfdswmr_marks_t **out)
{
    vfdswmr_file_id_t md = {0, 0};

    (void)vfdswmr_mdw_file_id(w->mdw, &md.dev, &md.ino); /* none: nothing else at the name is removed */
    return vfdswmr_marks_find(w->md_path, vfdswmr_mdw_session(w->mdw), &md, out);
}

/* Stop publishing (at a publish) or only say no (elsewhere: the next
 * publish looks again): -1 either way. */
static int
marks_trouble(vfdswmr_writer_t *w, bool publishing, const char *what, int e)
{
    char why[160];

    if (publishing) {
        snprintf(why, sizeof why, "%s%s%s", what, e ? ": " : "", e ? strerror(e) : "");
        vfdswmr_writer_stop_publishing(w, why);
    }
    return -1;
}

int
vfdswmr_writer_find_marks(vfdswmr_writer_t *w, bool publishing)
{
    uint64_t session = vfdswmr_mdw_session(w->mdw);
    vfdswmr_marks_t *m;
    int rc;

    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->marks_look)
        return 0;
    if (w->marks) {
        /* Ours until someone removes or replaces it by hand: then readers
         * make another at the name, which must be ours instead. Its marks
         * are released first (their readers' next check fails), and copies
         * listed there would be lost to their readers: publishing stops. */
        if ((rc = vfdswmr_marks_named(w->marks)) == 1)
            return 0;
        if (rc < 0)
            return marks_trouble(w, publishing, "cannot tell whether the read-mark table is still there", errno);
        if (w->kept.n > 0)
            return marks_trouble(w, publishing, "the read-mark table was removed while it listed kept old bytes", 0);
        if (vfdswmr_marks_release_all(w->marks) < 0)
            return marks_trouble(w, publishing, "cannot release the marks of a removed read-mark table", errno);
        VFDSWMR_LOG(&w->log, "warning", "the read-mark table was removed or replaced: its marks released");
        /* a fork child's handler reads w->marks without the lock (close.c) */
        vfdswmr_fork_hold();
        vfdswmr_marks_forget(w->marks); /* not ours to remove any more */
        vfdswmr_marks_close(w->marks);
        w->marks = NULL;
        vfdswmr_fork_release();
    }
    if ((rc = vfdswmr_writer_marks_find(w, &m)) < 0) /* a reader may be marked in it and count on us */
        return marks_trouble(w, publishing, "cannot read the read-mark table a reader made", errno);
    if (rc == 0)
        return 0;
    /* Adopted: say so in it (our list, empty: nothing was kept in a table
     * we did not have), which readers wait for before they trust it
     * without looking at its name (vfdswmr_mark_confirm). */
    VFDSWMR_ASSERT(w->kept.n == 0); /* copies are listed only in a table we have */
    if (vfdswmr_kept_write_list(vfdswmr_marks_fd(m), session, NULL, 0) < 0)
        VFDSWMR_LOG(&w->log, "warning", "cannot write the kept list into the read-mark table: %s", strerror(errno));
    w->kept.dirty = false;
    w->marks = m; /* whole before it is seen: a fork child's handler reads it without the lock (close.c) */
    VFDSWMR_LOG(&w->log, "marks", "a reader made the read-mark table: honoured from tick %llu on",
                (unsigned long long)(w->tick + 1));
    return 0;
}

static int
begin(vfdswmr_writer_t *w, bool final, epoch_step_t step, publish_t *p)
{
    VFDSWMR_ASSERT_LOCKED(w);
    VFDSWMR_ASSERT(!w->publishing);
    /* the format's last tick (mdfile/format.h), with room for recovery's
     * republish max_lag ticks later */
    if (w->tick >= VFDSWMR_TICK_MAX - w->base.cfg.max_lag) {
        vfdswmr_writer_stop_publishing(w, "the tick count reached the format's largest tick (2^62): close the file "
                                          "and open it again to start a new session");
        return -1;
    }
    /* a table a reader made since the last publish is honoured from this
     * one on (DESIGN.md 6, "Read marks"); failing, nothing changed yet */
    if (vfdswmr_writer_find_marks(w, true) < 0)
        return -1;
    if (step == EPOCH_FRESH && w->epoch_published) {
        w->epoch++;
        w->epoch_published = false;
    }
    if (!w->epoch_published)
        w->epoch_first_tick[w->epoch % VFDSWMR_EPOCH_RING] = w->tick + 1;
    *p = (publish_t){.tick = w->tick + 1,
                     .epoch = w->epoch,
                     .step = step,
                     .final = final,
                     .eoa = w->cp_eoa,
                     .cps = w->cps,
                     .t0 = vfdswmr_now()};
    /* epochs never decrease and never pass the tick (mdfile/format.h) */
    VFDSWMR_ASSERT(p->epoch >= w->pub_epoch && p->epoch <= p->tick);
    w->inflight_eoa = p->eoa;
    p->early = w->early_tick; /* this publish's, not one a publish under way finishes first */
    w->early_tick = false;
    /* What local readers hold (read marks) decides what must be kept. */
    /* Closing, a stalled reader must not hold the close for long: marks
     * older than max_lag are released then. */
    w->lag = vfdswmr_marks_lag(w->marks, p->epoch, w->base.cfg.max_lag,
                               w->closing ? w->base.cfg.max_lag : VFDSWMR_MARK_RELEASE_FACTOR * w->base.cfg.max_lag,
                               &w->marked_readers);
    vfdswmr_mdw_set_keep_lag(w->mdw, w->lag);
    vfdswmr_mdw_set_epoch(w->mdw, p->epoch);
    if (vfdswmr_writer_dk_reserve(w) < 0 ||
        vfdswmr_pb_prepare(w->pb, p->epoch, w->lag, final, &p->changes, &p->nc, &p->removals, &p->nr) < 0) {
        vfdswmr_writer_dk_done(w, p->cps, final, false);
        vfdswmr_writer_stop_publishing(w, "out of memory preparing a tick");
        return -1;
    }
    /* the old bytes kept on disk (keepdisk.c): new entries, and those this
     * consistency point no longer reads */
    vfdswmr_writer_dk_merge(w, p->cps, final, &p->changes, &p->nc, &p->removals, &p->nr);
    start_rawlog(w, p->tick);
    if (w->rawlog)
        vfdswmr_rawlog_prepare(w->rawlog, p->tick, rawlog_window(w, p));
    return 0;
}

/* The disk I/O; touches only what begin handed over, w->rawlog's prepared
 * buffer and w->mdw. */
static void
write_out(vfdswmr_writer_t *w, publish_t *p)
{
    VFDSWMR_ASSERT_MDW(w);
    /* Before the header: a reader that sees tick T finds T's writes listed. */
    if (w->rawlog && vfdswmr_rawlog_write(w->rawlog) < 0)
        p->rawlog_errno = errno ? errno : EIO;
    if (vfdswmr_mdw_publish(w->mdw, p->eoa, p->changes, p->nc, p->removals, p->nr, p->final ? VFDSWMR_MDW_FINAL : 0,
                            p->why, sizeof p->why) < 0) {
        p->failed = true;
        /* Tell the readers (the header is rewritten in place, which needs no
         * new space): they get an error instead of a silently frozen view. */
        p->mark_failed_ok = vfdswmr_mdw_mark_failed(w->mdw, p->mark_why, sizeof p->mark_why) == 0;
    }
    p->seconds = vfdswmr_now() - p->t0;
}

static int
finish(vfdswmr_writer_t *w, const publish_t *p)
{
    uint32_t n;

    VFDSWMR_ASSERT_LOCKED(w);
    VFDSWMR_ASSERT_MDW(w);
    if (p->rawlog_errno) {
        VFDSWMR_LOG(&w->log, "warning", "cannot write the raw-data write log: %s", strerror(p->rawlog_errno));
        vfdswmr_rawlog_t *l = w->rawlog;
        w->rawlog = NULL; /* first: a fork child's handler reads it without the lock (close.c) */
        /* no log again this session: rawlog_done stays set */
        vfdswmr_rawlog_close(l); /* readers then drop their caches at every snapshot */
    }
    vfdswmr_writer_dk_done(w, p->cps, p->final, !p->failed);
    if (p->failed) {
        snprintf(w->error, sizeof w->error, "cannot publish tick %llu: %s", (unsigned long long)p->tick, p->why);
        VFDSWMR_LOG(&w->log, "error", "%s", w->error);
        if (!p->mark_failed_ok)
            VFDSWMR_LOG(&w->log, "error", "cannot mark the metadata file failed: %s", p->mark_why);
        return -1;
    }
    vfdswmr_pb_published(w->pb, p->epoch);
    w->tick = p->tick;
    w->pub_epoch = p->epoch;
    w->pub_eoa = p->eoa;
    w->pub_cps = p->cps;
    vfdswmr_writer_holes_published(w, p->cps, p->epoch);
    vfdswmr_writer_kept_published(w);
    w->epoch_published = true;
    if (p->step == EPOCH_END) {
        w->epoch++;
        w->epoch_published = false;
    }
    vfdswmr_mdw_index(w->mdw, &n);
    w->index_entries = n;
    w->publishes++;
    w->pages_published += p->nc;
    vfdswmr_pb_stats_t st;
    vfdswmr_pb_stats(w->pb, &st);
    w->tick_start_images = st.images;
    VFDSWMR_LOG(&w->log, "end_of_tick",
                "tick=%llu epoch=%llu%s pages=%zu removed=%zu index=%u relocated=%d md_pages=%llu eoa=%llu lag=%u "
                "marked_readers=%u early=%d time_us=%.0f",
                (unsigned long long)p->tick, (unsigned long long)p->epoch, p->step == EPOCH_KEEP ? " flush" : "", p->nc,
                p->nr, n, vfdswmr_mdw_index_relocated(w->mdw), (unsigned long long)vfdswmr_mdw_file_pages(w->mdw),
                (unsigned long long)p->eoa, w->lag, w->marked_readers, p->early, p->seconds * 1e6);
    return 0;
}

static int
end_tick(vfdswmr_writer_t *w, bool final, epoch_step_t step, bool unlock_io)
{
    publish_t p;
    int rc;

    wait_idle(w);
    if (w->error[0] || begin(w, final, step, &p) < 0)
        return -1;
    if (unlock_io) {
        vfdswmr_writer_publishing(w, true);
        vfdswmr_writer_unlock(w);
    }
    write_out(w, &p);
    if (unlock_io) {
        vfdswmr_writer_lock(w);
        vfdswmr_writer_publishing(w, false);
        pthread_cond_broadcast(&w->published);
    }
    rc = finish(w, &p);
    vfdswmr_writer_gate(w);
    return rc;
}

int
vfdswmr_writer_end_tick(vfdswmr_writer_t *w, bool final)
{
    return end_tick(w, final, EPOCH_END, false);
}

int
vfdswmr_writer_end_tick_unlocked_io(vfdswmr_writer_t *w)
{
    return end_tick(w, false, EPOCH_END, true);
}

int
vfdswmr_writer_publish_flush(vfdswmr_writer_t *w)
{
    wait_idle(w);
    if (w->error[0])
        return -1;
    if (!vfdswmr_pb_pending(w->pb) && w->cp_eoa == w->pub_eoa)
        return 0; /* the publish that was under way carried it */
    return end_tick(w, false, EPOCH_KEEP, false);
}

void
vfdswmr_writer_wait_idle(vfdswmr_writer_t *w)
{
    wait_idle(w);
}

int
vfdswmr_writer_publish_kept(vfdswmr_writer_t *w)
{
    return end_tick(w, false, EPOCH_KEEP, false);
}

int
vfdswmr_writer_publish_fresh(vfdswmr_writer_t *w)
{
    return end_tick(w, false, EPOCH_FRESH, false);
}
