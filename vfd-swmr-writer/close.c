/*
 * Closing a file opened for writing: publish the final state, wait until no
 * reader can need an older one (or max_lag ticks), write every page to the
 * HDF5 file, clear the seal, publish FINAL and remove the metadata file.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "forked.h"
#include "h5err.h"
#include "mdlock.h"
#include "sessname.h"
#include "testhook.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

/* The HDF5 file could not be completed: keep the metadata file, whose last
 * snapshot recovery can restore. */
static void
report_incomplete(vfdswmr_writer_t *w, const char *what)
{
    VFDSWMR_ERR(H5E_WRITEERROR,
                "%s: %s; the HDF5 file's last published state is kept in the metadata file %s: run "
                "vfd_swmr_recover on the HDF5 file once the cause is fixed (opening it for writing with "
                "vfd_swmr_writer does the same)",
                VFDSWMR_WRITER_NAME, what, w->md_path);
}

/*
 * Does no reader hold a snapshot older than the one of `epoch`, which no
 * earlier snapshot has (publish_final)? Only answerable when
 * every reader is local (a metadata file, no updater files) and the lower
 * driver has a descriptor. Every reader is registered on the HDF5 file from
 * before it reads anything (mdlock.h): on a byte of its own until it holds
 * a read mark, then on its mark slot's byte. So: no reader on a byte of its
 * own, and every slot byte held by a reader whose live mark is at `tick` or
 * later (a reader registering from now on reads at least `tick`). A slot
 * byte without a live mark (a reader dying, or clearing the slot) is "not
 * yet"; a live mark without its slot byte belongs to no registered reader.
 * *registered gets the readers seen (-1: cannot tell).
 */
static bool
readers_current(vfdswmr_writer_t *w, uint64_t epoch, int *registered)
{
    unsigned own;
    int fd, held;
    bool current;

    VFDSWMR_ASSERT_LOCKED(w);
    *registered = -1;
    if (!w->base.cfg.maintain_metadata_file || w->base.cfg.generate_updater_files || (fd = w->hdf5_fd) < 0 ||
        vfdswmr_mdlock_readers(fd, &own) != VFDSWMR_COUNTED)
        return false;
    current = own == 0;
    *registered = (int)own;
    if ((held = vfdswmr_mdlock_any_marked(fd)) <= 0) { /* no slot byte held: one look, not one a slot */
        *registered = held < 0 ? -1 : *registered;
        return held == 0 && current;
    }
    for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS; i++) {
        uint64_t t;
        if ((held = vfdswmr_mdlock_marked(fd, i)) < 0) {
            *registered = -1;
            return false;
        }
        if (held) {
            (*registered)++;
            current = current && vfdswmr_marks_tick(w->marks, i, &t) == VFDSWMR_SLOT_MARKED && t >= epoch;
        }
    }
    return current;
}

/* Publish a tick; store the pages that became due. */
static int
close_tick(vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT_LOCKED(w);
    if (vfdswmr_writer_end_tick(w, false) < 0)
        return 0; /* publishing failed: handled by the caller through w->error */
    return vfdswmr_pb_store_due(w->pb, w->pub_epoch, w->lag, w->eoa, UINT64_MAX, vfdswmr_writer_store_page, w) < 0 ? -1
                                                                                                                   : 0;
}

/* Does the file end lower than the high-water mark once closed (HDF5 freed
 * space at its end)? */
static bool
shrinks(const vfdswmr_writer_t *w)
{
    return w->hdf5_closing && w->lib_eoa != 0 && w->lib_eoa < w->eoa;
}

/* The final state: the superblock was written after the last flush, so
 * this consistency point is whole; publish it in an epoch of its own (a
 * read mark at that epoch then means this snapshot: readers_current). */
static void
publish_final(vfdswmr_writer_t *w)
{
    if (vfdswmr_pb_consistency_point(w->pb, w->eoa) == 0) {
        vfdswmr_writer_cp_taken(w); /* the final state ends where HDF5 says */
        vfdswmr_writer_publish_fresh(w);
    }
    else if (!w->error[0])
        vfdswmr_writer_stop_publishing(w, "out of memory at close");
}

/*
 * Every page to the HDF5 file, as early as readers allow: once no reader
 * holds a snapshot older than the final one (none registered, or all marked
 * at it or later), only it can be in use, and its pages equal what goes to
 * the HDF5 file: every page may go at once. Until then, ticks go on as usual
 * and pages go when due; readers are looked at ten times a tick. true when
 * every page reached the file. Only while publishing works.
 */
static bool
store_when_readers_allow(vfdswmr_writer_t *w)
{
    int stored = 0, registered = -1;
    uint64_t t0 = w->pub_epoch, tick0 = w->tick, due = 0;
    double slice = vfdswmr_tick_seconds(w->base.cfg.tick_len) / 10,
           next = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);

    while (!w->error[0] && stored == 0) {
        if (readers_current(w, t0, &registered)) {
            due = UINT64_MAX / 2;
            break;
        }
        /* Shrinking, a reader of an older snapshot may read above the new
         * end: the file keeps those bytes until it falls behind (its check
         * fails once the epoch reaches its own + max_lag). */
        if (w->pub_epoch >= vfdswmr_pb_last_due_tick(w->pb, w->lag) && (!shrinks(w) || w->pub_epoch >= t0 + w->lag))
            break;
        vfdswmr_sleep(slice);
        if (vfdswmr_now() >= next) {
            stored = close_tick(w);
            next += vfdswmr_tick_seconds(w->base.cfg.tick_len);
        }
    }
    VFDSWMR_LOG(&w->log, "close_wait", "readers=%d all_current=%d waited_ticks=%llu", registered, due != 0,
                (unsigned long long)(w->tick - tick0));
    if (stored < 0 || vfdswmr_pb_store_due(w->pb, due ? due : w->pub_epoch, w->lag, w->eoa, UINT64_MAX,
                                           vfdswmr_writer_store_page, w) < 0) {
        report_incomplete(w, "cannot write metadata pages to the HDF5 file at close");
        return false;
    }
    return !w->error[0];
}

/* Every page is in the HDF5 file and no reader can read above HDF5's own
 * end of allocation any more (store_when_readers_allow): the file ends
 * there, as sec2 leaves it. A failure leaves a longer file, not a wrong
 * one: logged, not fatal. */
static void
shrink_to_hdf5_eoa(vfdswmr_writer_t *w)
{
    if (!shrinks(w))
        return;
    if (VFDSWMR_GUARDED(herr_t, H5FDset_eoa(LOWER(w), H5FD_MEM_DEFAULT, w->lib_eoa), _r < 0) < 0 ||
        VFDSWMR_GUARDED(herr_t, H5FDtruncate(LOWER(w), H5P_DEFAULT, true), _r < 0) < 0) {
        VFDSWMR_LOG(&w->log, "warning", "cannot shrink the HDF5 file to %llu bytes at close",
                    (unsigned long long)w->lib_eoa);
        return;
    }
    vfdswmr_writer_truncated(w, true);
    w->eoa = w->lib_eoa;
}

/* Every page is in the HDF5 file (durable first with durable=1): only
 * now may the seal go -- the last write, so a writer that dies before leaves
 * a file plain HDF5 refuses. true when the file is whole. */
static bool
unseal(vfdswmr_writer_t *w)
{
    bool durable = w->base.cfg.durable;

    if ((durable && vfdswmr_writer_sync_hdf5(w) < 0) || vfdswmr_seal_clear(w) < 0 ||
        VFDSWMR_GUARDED(herr_t, H5FDflush(LOWER(w), H5P_DEFAULT, true), _r < 0) < 0 ||
        (durable && vfdswmr_writer_sync_hdf5(w) < 0)) {
        report_incomplete(w, "cannot flush the HDF5 file at close");
        return false;
    }
    return true;
}

/* A fork child closing its copy of a file its parent writes (forked.h; an
 * exit() closes it through HDF5's atexit handler): let go of the child's
 * descriptors -- the parent's locks stay, held by its own -- and of
 * nothing else: no publish, no store, no seal, no removal, no ticker (a
 * child has none). */
static herr_t
close_in_child(vfdswmr_writer_t *w)
{
    char err[VFDSWMR_MDW_ERRLEN];

    vfdswmr_writer_drop_in_child(w, -1); /* done by the fork handler already, unless tracking failed */
    vfdswmr_fork_untrack(w);
    vfdswmr_registry_remove(w);
    vfdswmr_log_forget(&w->log); /* the parent's buffered lines are the parent's to write */
    /* The lock held at the fork (by the ticker, changing the page buffer)
     * or a publish under way (writing the metadata file's structures
     * without it): the copy's structures may be half changed -- kept, not
     * freed. Else free: nothing changes them, the child has no other
     * thread. */
    if (pthread_mutex_trylock(&w->lock) != 0 || w->publishing) {
        herr_t rc = VFDSWMR_GUARDED(herr_t, H5FDclose(LOWER(w)), _r < 0);
        vfdswmr_fork_keep(w);
        return rc < 0 ? -1 : 0;
    }
    (void)vfdswmr_mdw_close(w->mdw, true, err, sizeof err); /* forgotten: only frees */
    vfdswmr_marks_close(w->marks);
    vfdswmr_rawlog_close(w->rawlog);
    pthread_mutex_unlock(&w->lock);
    /* not vfdswmr_writer_free: destroying a condition the parent's ticker
     * waited on at the fork waits for that waiter for ever */
    vfdswmr_pb_destroy(w->pb);
    vfdswmr_writer_dk_free(w);
    vfdswmr_ccf_fini(&w->cc);
    free(w->rec_name);
    free(w->pend_name);
    return vfdswmr_stack_close(&w->base);
}

void
vfdswmr_writer_drop_in_child(void *obj, int devnull)
{
    vfdswmr_writer_t *w = obj;

    /* sec2 closes its descriptor itself: point it at /dev/null, which lets
     * go of the file (its flock and our writer lock byte are the parent's) */
    if (w->hdf5_fd >= 0 && devnull >= 0)
        (void)dup2(devnull, w->hdf5_fd);
    if (w->mdw)
        vfdswmr_mdw_forget(w->mdw);
    if (w->marks)
        vfdswmr_marks_forget(w->marks);
    if (w->rawlog)
        vfdswmr_rawlog_forget(w->rawlog);
    /* the parent's lock stays: its own descriptor holds the description */
    if (w->hdf5_lock_fd >= 0)
        close(w->hdf5_lock_fd);
    w->hdf5_lock_fd = -1;
}

/*
 * Close: publish the final state; keep ticking until every page has been in
 * the index max_lag ticks (or no reader can need an older snapshot), writing
 * each page to the HDF5 file when due; clear the seal; then publish the
 * final, empty index (FINAL) and remove the metadata file.
 * If publishing had failed, every page's current bytes go to the HDF5 file
 * at once instead: the file gets everything H5Fflush ever returned success
 * for. If writing the HDF5 file fails, the metadata file stays: it holds
 * the last published state, which recovery restores.
 * The tick thread is stopped first; the lock is held throughout, so every
 * "lock held" rule holds here too.
 */
herr_t
vfdswmr_writer_close(H5FD_t *file)
{
    vfdswmr_writer_t *w = (vfdswmr_writer_t *)file;
    herr_t rc = 0;
    bool complete = false;
    char err[VFDSWMR_MDW_ERRLEN];

    if (w->active && w->base.fork_gen != vfdswmr_fork_gen())
        return close_in_child(w);
    /* read-only; or never set up (a deferred open HDF5 closes unused, as
     * its tentative open; or one whose setup failed and was undone): the
     * lower file is all there is, and closing it drops the writer's lock */
    if (!w->active || w->pending || w->setup_failed) {
        int lock_fd = w->hdf5_lock_fd; /* released last, after the lower file */
        w->hdf5_lock_fd = -1;
        vfdswmr_fork_untrack(w);
        vfdswmr_writer_free(w);
        rc = vfdswmr_stack_close(&w->base);
        if (lock_fd >= 0)
            close(lock_fd);
        return rc;
    }
    vfdswmr_ticker_stop(w);
    vfdswmr_registry_remove(w);
    vfdswmr_writer_lock(w);
    w->closing = true;
    vfdswmr_writer_gate(w); /* nobody looks for waiting readers any more: the gate goes */
    w->eot_disabled = false;
    if (w->base.cfg.durable && vfdswmr_writer_sync_hdf5(w) < 0)
        rc = -1;
    publish_final(w);
    if (!w->error[0])
        complete = store_when_readers_allow(w);
    if (w->error[0] && vfdswmr_pb_store_current(w->pb, w->eoa, vfdswmr_writer_store_page, w) >= 0)
        complete = true; /* publishing failed, but the HDF5 file got every page */
    else if (w->error[0])
        report_incomplete(w, "publishing failed and the HDF5 file cannot take the metadata either");
    if (complete && !w->error[0])
        shrink_to_hdf5_eoa(w);
    complete = complete && unseal(w);
    vfdswmr_test_kill_point("unsealed"); /* whole and unsealed, FINAL not published: recovery finds nothing to change */
    if (complete && !w->error[0])
        vfdswmr_writer_end_tick(w, true); /* empty index, FINAL: readers read the HDF5 file only */
    /* A table a reader made since the last publish goes too (below, with
     * ours). FINAL came first, so a reader that makes one from now on sees
     * FINAL and removes it itself (vfdswmr_mark_attach). */
    if (!w->marks && w->marks_look && vfdswmr_writer_marks_find(w, &w->marks) < 0)
        VFDSWMR_LOG(&w->log, "warning", "cannot remove the read-mark table a reader made: %s", strerror(errno));
    /* The return value says whether the HDF5 file is whole: a publish that
     * failed earlier failed its own call, and the file got every page now. */
    if (!complete)
        rc = -1;
    else if (w->error[0])
        VFDSWMR_LOG(&w->log, "warning",
                    "publishing had stopped (%s); the HDF5 file got every page at close: nothing was lost", w->error);
    VFDSWMR_LOG(&w->log, "close",
                "ticks=%llu pages_published=%llu pages_written=%llu complete=%d eoa=%llu lib_eoa=%llu hot_end=%llu "
                "fsm_persistent=%d kept_old=%llu",
                (unsigned long long)w->tick, w->pages_published, w->pages_stored, complete, (unsigned long long)w->eoa,
                (unsigned long long)w->lib_eoa, (unsigned long long)w->hot_end, w->fsm_persistent, w->kept_old);
    /* Kept: the file is not whole (recovery restores the last snapshot), or
     * keep_metadata_file -- but not after a failed publish: that metadata
     * file says FAILED, not FINAL, over a file that is now newer than its
     * snapshot, and recovery would take the file back to it. */
    vfdswmr_fork_hold(); /* a fork meanwhile would find them half closed */
    if (vfdswmr_mdw_close(w->mdw, !complete || (w->base.cfg.keep_metadata_file && !w->error[0]), err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCLOSEFILE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        rc = -1;
    }
    vfdswmr_marks_close(w->marks);
    vfdswmr_rawlog_close(w->rawlog);
    w->mdw = NULL, w->marks = NULL, w->rawlog = NULL;
    /* the file is whole: no session to find any more (a file that is not
     * keeps naming the metadata file recovery needs) */
    if (complete && w->named)
        vfdswmr_seal_unname_session(w, w->rec_name);
    vfdswmr_fork_release();
    vfdswmr_writer_unlock(w);
    int lock_fd = w->hdf5_lock_fd; /* the writer's lock, if a descriptor of our own holds it: released last */
    w->hdf5_lock_fd = -1;
    vfdswmr_writer_free(w);
    vfdswmr_fork_untrack(w); /* last: sec2's descriptor, closed next, holds the locks on the HDF5 file */
    if (vfdswmr_stack_close(&w->base) < 0)
        rc = -1;
    if (lock_fd >= 0)
        close(lock_fd);
    return rc;
}
