/*
 * Raw data writes: where readers may be reading.
 *
 * Into the versioned zone (eoa.c: space HDF5 freed at its end that a reader
 * may still read, and may now allocate again): the bytes go to the page
 * buffer as metadata does (write_versioned), so the HDF5 file keeps the old
 * bytes until no reader can read them and readers of later snapshots read
 * the new ones from their images (vfd-swmr-reader/pages.c).
 *
 * Everywhere else, straight to the HDF5 file (write_direct). HDF5 rewrites
 * raw data in place: rows appended into a partly filled chunk, an
 * overwritten plane, and -- in SWMR-write mode, where it never frees a
 * chunk's old space -- a filtered chunk whose new compressed size equals
 * its old one. A reader reading those bytes at that moment would get part
 * old, part new; for a filtered chunk, a stream its filter rejects
 * (tests/integration/inplace.sh). So such a write holds the raw-data lock
 * (mdlock.h), as every raw read of a reader of a live session does: each
 * read sees each write wholly or not at all. Which writes: those that start
 * below the end of some snapshot a reader may hold (snap_end, the highest
 * EOA of the session's snapshots, tick 0's included). Space above it is
 * referenced by no snapshot, so nobody reads it: appending new chunks takes
 * no lock.
 *
 * While no reader is registered the writer holds the raw-data gate instead
 * (mdlock.h, vfdswmr_writer_gate): a reader must get past it before its
 * first raw read, so no lock is needed per write -- two system calls saved
 * on every append into a partly filled chunk.
 *
 * Never waiting for ever: a reader stopped inside a read (a debugger,
 * SIGSTOP) must not stop the writer. After VFDSWMR_RAW_WAIT_WRITER seconds
 * the write goes ahead unlocked (that reader may then read a torn chunk,
 * which HDF5 reports as a read error or, unfiltered, as mixed values; its
 * next read is right), and until the lock is free again no later write waits.
 */
#include "h5err.h"
#include "mdlock.h"
#include "rawlog.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

/* How long a raw write waits for readers' raw reads to finish, seconds. */
#define VFDSWMR_RAW_WAIT_WRITER 1.0

/* Straight to the HDF5 file: under the raw-data lock below snap_end; the
 * chunk cache, the raw-data log and the page buffer's images follow. */
static herr_t
write_direct(vfdswmr_writer_t *w, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    int fd = addr < w->snap_end && !w->gate_held ? w->hdf5_fd : -1;
    vfdswmr_take_t lk = VFDSWMR_TAKE_ERROR;
    herr_t rc;

    if (size == 0)
        return 0;
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
    vfdswmr_ccf_written(&w->cc, addr, size, buf, rc >= 0);
    vfdswmr_writer_log_write(w, addr, size); /* even failed: bytes unknown */
    if (rc >= 0 && vfdswmr_pb_write_raw(w->pb, addr, size, buf) < 0) {
        /* A page of the publish under way cannot take the raw bytes: its
         * published image must never reach the HDF5 file. Stop publishing;
         * close writes every page's current bytes instead. */
        vfdswmr_writer_stop_publishing(w, "out of memory keeping a metadata page coherent with raw data");
        rc = vfdswmr_writer_check_error(w);
    }
    return rc;
}

/* Into the page buffer, versioned as metadata is: published at the next
 * consistency point, in the HDF5 file once no reader can read the old
 * bytes (pagebuf.h), restored by recovery (its bytes are metadata ranges). */
static herr_t
write_versioned(vfdswmr_writer_t *w, haddr_t addr, size_t size, const void *buf)
{
    if (size == 0 || vfdswmr_pb_write(w->pb, addr, size, buf, vfdswmr_writer_fill_page, w) >= 0)
        return 0;
    VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot buffer a raw data write at address %llu (%zu bytes)", VFDSWMR_WRITER_NAME,
                (unsigned long long)addr, size);
    return -1;
}

herr_t
vfdswmr_writer_raw_write(vfdswmr_writer_t *w, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    const uint8_t *b = buf;
    uint64_t end = addr + size, lo = addr > w->vz_lo ? addr : w->vz_lo, hi = end < w->vz_hi ? end : w->vz_hi;

    VFDSWMR_ASSERT_LOCKED(w);
    /* every snapshot a reader may hold ends at or below snap_end */
    VFDSWMR_ASSERT(w->cp_eoa <= w->snap_end && w->pub_eoa <= w->snap_end && w->tick0_eoa <= w->snap_end);
    if (lo >= hi) /* nothing in the versioned zone */
        return write_direct(w, dxpl, addr, size, buf);
    if (write_direct(w, dxpl, addr, (size_t)(lo - addr), b) < 0 ||
        write_versioned(w, lo, (size_t)(hi - lo), b + (lo - addr)) < 0 ||
        write_direct(w, dxpl, hi, (size_t)(end - hi), b + (hi - addr)) < 0)
        return -1;
    return 0;
}

/* Hold the raw-data gate while no reader is registered; seeing one, take
 * the raw-data lock for every raw write from now on, and only then let the
 * gate go (mdlock.h). Called at every publish and tick, and while the gate
 * is held every VFDSWMR_RAW_GATE_POLL seconds (ticker.c) -- so only with the
 * ticker running; closing, the gate goes for good. */
void
vfdswmr_writer_gate(vfdswmr_writer_t *w)
{
    int fd = w->hdf5_fd, readers;

    VFDSWMR_ASSERT_LOCKED(w);
    if (fd < 0)
        return;
    readers = w->ticker_running && !w->closing ? vfdswmr_mdlock_any_reader(fd) : 1;
    if (w->gate_held && readers != 0) {
        w->gate_held = false;     /* every raw write from now on locks ... */
        vfdswmr_rawgate_drop(fd); /* ... before a reader gets past the gate */
        VFDSWMR_LOG(&w->log, "raw_gate",
                    "open: raw writes take the raw-data lock (a reader is registered, or closing)");
    }
    else if (!w->gate_held && readers == 0 && vfdswmr_rawgate_take(fd, F_WRLCK, 0) == VFDSWMR_TAKEN) {
        w->gate_held = true;
        /* the tick thread may be waiting for its next tick, which can be an
         * hour away: it must poll for readers from now on (ticker.c) */
        pthread_cond_broadcast(&w->wake);
        VFDSWMR_LOG(&w->log, "raw_gate", "closed: no reader registered; raw writes without the raw-data lock");
    }
}
