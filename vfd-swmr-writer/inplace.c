/*
 * Raw data written where a reader may be reading it.
 *
 * HDF5 rewrites raw data in place: rows appended into a partly filled
 * chunk, an overwritten plane, and -- in SWMR-write mode, where it never
 * frees a chunk's old space -- a filtered chunk whose new compressed size
 * equals its old one. A reader reading those bytes at that moment would get
 * part old, part new; for a filtered chunk, a stream its filter rejects
 * (tests/integration/inplace.sh). So such a write holds the raw-data lock
 * (mdlock.h), as every raw read of a reader of a live session does: each read
 * sees each write wholly or not at all.
 *
 * Which writes: those that start below the end of some snapshot a reader may
 * hold (snap_end, the highest EOA of the session's snapshots, tick 0's
 * included). Space above it is referenced by no snapshot, so nobody reads
 * it: appending new chunks takes no lock.
 *
 * Never waiting for ever: a reader stopped inside a read (a debugger,
 * SIGSTOP) must not stop the writer. After VFDSWMR_RAW_WAIT_WRITER seconds
 * the write goes ahead unlocked (that reader may then read a torn chunk,
 * which HDF5 reports as a read error or, unfiltered, as mixed values; its
 * next read is right), and until the lock is free again no later write waits.
 */
#include "h5err.h"
#include "mdlock.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

/* How long a raw write waits for readers' raw reads to finish, seconds. */
#define VFDSWMR_RAW_WAIT_WRITER 1.0

herr_t
vfdswmr_writer_raw_write(vfdswmr_writer_t *w, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    int fd = addr < w->snap_end ? vfdswmr_lower_fd(LOWER(w)) : -1;
    vfdswmr_take_t lk = VFDSWMR_TAKE_ERROR;
    herr_t rc;

    VFDSWMR_ASSERT_LOCKED(w);
    /* every snapshot a reader may hold ends at or below snap_end */
    VFDSWMR_ASSERT(w->cp_eoa <= w->snap_end && w->pub_eoa <= w->snap_end && w->tick0_eoa <= w->snap_end);
    if (fd >= 0) {
        lk = vfdswmr_rawlock_take(fd, F_WRLCK, w->raw_lock_stuck ? 0 : VFDSWMR_RAW_WAIT_WRITER);
        if (lk == VFDSWMR_TAKE_BUSY && !w->raw_lock_stuck)
            VFDSWMR_LOG(&w->log, "raw_lock_stuck",
                        "a reader held the raw-data lock for more than %.1f s: writing at %llu (%zu bytes) "
                        "without it; no waiting until it lets go",
                        VFDSWMR_RAW_WAIT_WRITER, (unsigned long long)addr, size);
        w->raw_lock_stuck = lk == VFDSWMR_TAKE_BUSY;
    }
    rc = vfdswmr_pt_write(&w->base.pub, H5FD_MEM_DRAW, dxpl, addr, size, buf);
    if (lk == VFDSWMR_TAKEN)
        vfdswmr_rawlock_drop(fd);
    return rc;
}
