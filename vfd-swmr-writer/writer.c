/*
 * vfd_swmr_writer, the driver of the one process that writes a VFD SWMR
 * file: its callbacks and I/O while a file is open (open.c opens it, close.c
 * closes it; writer.h maps the other files). Metadata writes go into the page buffer (pagebuf/); raw data goes
 * straight to the lower file. At each consistency point the page buffer
 * takes a snapshot, which the ticker (ticker.c) publishes at the end of the
 * tick; pages reach the HDF5 file only when no reader can still read their
 * old bytes from it (pagebuf.h).
 *
 * Consistency points -- states in which no object is half-written:
 *  - flush after truncate: H5Fflush and H5Fclose call truncate once every
 *    dirty metadata entry is written, then flush (the metadata accumulator
 *    may still drain between the two, which is part of the same state);
 *  - with H5F_ACC_SWMR_WRITE, every flush: HDF5 then orders its metadata
 *    writes so that every flushed prefix is safe (H5Dflush, H5Gflush, ...);
 *  - close: the final superblock write follows the last flush.
 * Without SWMR-write mode, an object flush alone is not one: the metadata
 * cache may have written parts of other objects since the last one.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "forked.h"
#include "h5err.h"
#include "recover.h"
#include "mdreader.h"
#include "superblock.h"
#include "plugin.h"
#include "testhook.h"
#include "writer.h"

#define W(file) ((vfdswmr_writer_t *)(file))
/* A fork child's copy of a file its parent writes: every operation refused
 * (forked.h; close only lets go of it, close.c). */
#define CHILD(w, what) ((w)->active && vfdswmr_forked((w)->base.fork_gen, VFDSWMR_WRITER_NAME, what))
#define LOWER(w)       ((w)->base.lower)
/* A live writer whose open was deferred (open.c, vfdswmr_writer_setup):
 * set up now, at the first call that reaches the file. */
#define NOT_READY(w) ((w)->active && ((w)->pending || (w)->setup_failed) && vfdswmr_writer_setup(w) < 0)

/* ---- page buffer callbacks: the HDF5 file through the lower driver ---- */

int
vfdswmr_writer_fill(vfdswmr_writer_t *w, uint64_t start, size_t size, uint8_t *buf)
{
    VFDSWMR_ASSERT_LOCKED(w);
    haddr_t eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(w), H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);
    haddr_t eof = VFDSWMR_GUARDED(haddr_t, H5FDget_eof(LOWER(w), H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    memset(buf, 0, size);
    if (eoa == HADDR_UNDEF || eof == HADDR_UNDEF)
        return -1;
    if (eof < eoa)
        eoa = eof; /* nothing but zeros past the end of the file: no read */
    if (start >= eoa)
        return 0;
    size_t len = eoa - start < size ? (size_t)(eoa - start) : size;
    if (vfdswmr_stack_read(&w->base, H5FD_MEM_DEFAULT, H5P_DEFAULT, start, len, buf) < 0)
        return -1;
    return vfdswmr_seal_incoming(w, start, len, buf);
}

int
vfdswmr_writer_fill_page(void *ctx, uint64_t page, uint8_t *image)
{
    return vfdswmr_writer_fill(ctx, page * VFDSWMR_WRITER_PAGE_SIZE, VFDSWMR_WRITER_PAGE_SIZE, image);
}

int
vfdswmr_writer_store_page(void *ctx, uint64_t page, const uint8_t *image, size_t len)
{
    vfdswmr_writer_t *w = ctx;
    uint8_t copy[VFDSWMR_WRITER_PAGE_SIZE];

    VFDSWMR_ASSERT_LOCKED(w);
    const uint8_t *out = vfdswmr_seal_outgoing(w, page * VFDSWMR_WRITER_PAGE_SIZE, image, len, copy);

    herr_t rc = VFDSWMR_GUARDED(
        herr_t, H5FDwrite(LOWER(w), H5FD_MEM_DEFAULT, H5P_DEFAULT, page * VFDSWMR_WRITER_PAGE_SIZE, len, out), _r < 0);

    vfdswmr_ccf_written(&w->cc, page * VFDSWMR_WRITER_PAGE_SIZE, len, image, rc >= 0);
    vfdswmr_writer_log_write(w, page * VFDSWMR_WRITER_PAGE_SIZE, len);
    w->pages_stored++;
    if (rc >= 0 && w->sb_addr != UINT64_MAX && w->sb_addr / VFDSWMR_WRITER_PAGE_SIZE == page)
        w->sb_shown = true;
    if (w->closing)
        vfdswmr_test_kill_point("close");
    return rc;
}

/*
 * durable=1: make everything written to the HDF5 file so far durable
 * before the consistency point that refers to it is published, so readers on
 * other hosts (NFS, updater files) never see metadata naming raw data that
 * has not arrived.
 */
int
vfdswmr_writer_sync_hdf5(vfdswmr_writer_t *w)
{
    int fd = w->hdf5_fd;

    if (fd < 0 || fsync(fd) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: durable: cannot fsync the HDF5 file: %s", VFDSWMR_WRITER_NAME,
                    strerror(errno));
        return -1;
    }
    return 0;
}

/* Report a publish failure of the ticker thread on this callback's stack. */
int
vfdswmr_writer_check_error(vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->error[0])
        return 0;
    VFDSWMR_ERR(H5E_WRITEERROR,
                "%s: %s: readers are told the writer stopped publishing; everything is written to the HDF5 file "
                "at close",
                VFDSWMR_WRITER_NAME, w->error);
    return -1;
}

/* ---- I/O ------------------------------------------------------------------ */

static herr_t
writer_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;
    if (CHILD(w, "reading"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if (!w->active)
        return vfdswmr_ccf_read(&w->cc, &w->base, type, dxpl, addr, size, buf);
    vfdswmr_writer_lock(w);
    rc = vfdswmr_ccf_read(&w->cc, &w->base, type, dxpl, addr, size, buf);
    if (rc >= 0)
        rc = vfdswmr_seal_incoming(w, addr, size, buf);
    if (rc >= 0) {
        vfdswmr_pb_read(w->pb, addr, size, buf);
        vfdswmr_writer_eoa_saw(w, type, buf, size);
    }
    vfdswmr_writer_unlock(w);
    return rc;
}

/*
 * SWMR-write mode, however it is entered: opened with H5F_ACC_SWMR_WRITE,
 * or switched on later by H5Fstart_swmr_write (h5py's `swmr_mode = True`).
 * The driver sees no call for the latter; what it does see is the
 * superblock written with the "SWMR writer" flag set, which HDF5 does in
 * both cases before any object flush can follow (and clears in the last
 * superblock write of H5Fclose).
 */
static void
note_swmr_write(vfdswmr_writer_t *w, const void *buf, size_t size)
{
    int on = vfdswmr_sb_swmr_write(buf, size);

    if (on >= 0 && (bool)on != w->swmr_write) {
        w->swmr_write = on;
        VFDSWMR_LOG(&w->log, "swmr_write", "%s (superblock flags)", on ? "on" : "off");
    }
}

static herr_t
writer_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc = 0;
    if (CHILD(w, "writing"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if (!w->active) {
        rc = vfdswmr_pt_write(file, type, dxpl, addr, size, buf);
        vfdswmr_ccf_written(&w->cc, addr, size, buf, rc >= 0);
        return rc;
    }
    vfdswmr_writer_lock(w);
    if (type == H5FD_MEM_DRAW) /* raw data and the global heap: inplace.c */
        rc = vfdswmr_writer_raw_write(w, dxpl, addr, size, buf);
    else if (vfdswmr_pb_write(w->pb, addr, size, buf, vfdswmr_writer_fill_page, w) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot buffer a metadata write at address %llu (%zu bytes)",
                    VFDSWMR_WRITER_NAME, (unsigned long long)addr, size);
        rc = -1;
    }
    else {
        vfdswmr_seal_learn(w, addr, buf, size);
        vfdswmr_writer_eoa_saw(w, type, buf, size);
        if (type == H5FD_MEM_SUPER)
            note_swmr_write(w, buf, size);
    }
    vfdswmr_writer_unlock(w);
    return rc;
}

/*
 * pb_expansion_threshold N: has the page buffer grown past N times what it
 * held when the tick began (counting at least VFDSWMR_PB_EXPANSION_MIN_IMAGES)?
 * Then the tick ends at this consistency point instead of at its time: pages
 * become due for the HDF5 file in ticks, so earlier ticks let the buffer
 * shrink sooner.
 */
static bool
expanded(const vfdswmr_writer_t *w)
{
    vfdswmr_pb_stats_t st;
    uint64_t base = w->tick_start_images;

    if (w->base.cfg.pb_expansion_threshold == 0 || w->eot_disabled)
        return false;
    if (base < VFDSWMR_PB_EXPANSION_MIN_IMAGES)
        base = VFDSWMR_PB_EXPANSION_MIN_IMAGES;
    vfdswmr_pb_stats(w->pb, &st);
    return st.images > (uint64_t)w->base.cfg.pb_expansion_threshold * base;
}

static herr_t
writer_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc = 0;
    if (CHILD(w, "flushing"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if (!w->active) {
        herr_t prc = vfdswmr_pt_flush(file, dxpl, closing);
        if (w->read_only) /* a refresh (H5Drefresh...): see vfd_chunk_cache's flush */
            vfdswmr_ccf_invalidate_all(&w->cc);
        return prc;
    }
    vfdswmr_writer_lock(w);
    if (closing)
        w->closing_flushed = true;
    /* Before this flush publishes: a page HDF5 rewrites at every flush is
     * republished each time, and reaches the HDF5 file once a tick (its image
     * of the last tick), not once a flush. */
    if (vfdswmr_pb_store_due(w->pb, w->pub_epoch, w->lag, w->eoa, w->epoch, vfdswmr_writer_store_page, w) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write delayed metadata pages to the HDF5 file", VFDSWMR_WRITER_NAME);
        rc = -1;
    }
    /* H5Fclose's flush is no consistency point in a file with persistent
     * free-space managers: there HDF5 has marked its free-space info message
     * invalid (version 0, no manager addresses) while the file is open for
     * writing, and writes it back only after this flush (H5MF_close), so a
     * snapshot of this state is a file HDF5 refuses ("invalid file space
     * strategy") -- recovery after a crash in the rest of the close would
     * restore it. The close's own final state (close.c) is whole. */
    bool cp = w->swmr_write || w->truncated;
    if (closing && w->fsm_persistent)
        cp = false;
    if (rc >= 0 && cp) {
        if (w->base.cfg.durable && vfdswmr_writer_sync_hdf5(w) < 0)
            rc = -1;
        else if (vfdswmr_pb_consistency_point(w->pb, w->eoa) < 0) {
            /* Part of the pages may have their snapshot now: publishing that
             * would show readers half a consistency point. Stop publishing;
             * close writes every page's current bytes to the HDF5 file. */
            vfdswmr_writer_stop_publishing(w, "out of memory taking a snapshot");
            rc = -1;
        }
        else
            vfdswmr_writer_cp_taken(w);
        /* readers see the file at its full size (H5Fflush truncated it already) */
        if (rc >= 0 && !w->truncated)
            rc = vfdswmr_pt_truncate(file, dxpl, false);
        VFDSWMR_LOG(&w->log, "consistency_point", "eoa=%llu", (unsigned long long)w->eoa);
        /* A failure of either publish is in w->error: check_error below. */
        if (rc >= 0 && expanded(w)) {
            w->early_tick = true;
            w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
            vfdswmr_writer_end_tick(w, false);
        }
        else if (rc >= 0 && !w->base.cfg.publish_at_tick_only)
            vfdswmr_writer_publish_flush(w); /* visible, and restored by recovery, when the flush returns */
    }
    w->truncated = false;
    if (rc >= 0 && !w->error[0] && !closing)
        rc = vfdswmr_seal_show(w);
    if (rc >= 0 && !w->error[0])
        rc = vfdswmr_writer_eoa_flushed(w, closing);
    if (rc >= 0)
        rc = vfdswmr_pt_flush(file, dxpl, closing);
    /* Publishing stopped: every flush fails -- but H5Fclose's, since the
     * close then writes every page to the HDF5 file and its own result says
     * whether that worked (close.c). */
    if (!closing && vfdswmr_writer_check_error(w) < 0)
        rc = -1;
    vfdswmr_writer_unlock(w);
    return rc;
}

void
vfdswmr_writer_truncated(vfdswmr_writer_t *w, bool ok)
{
    haddr_t eof = ok ? vfdswmr_pt_get_eof(&w->base.pub, H5FD_MEM_DEFAULT) : 0;

    VFDSWMR_ASSERT_LOCKED(w);
    eof = eof == HADDR_UNDEF ? 0 : eof; /* bytes unknown: everything changed */
    vfdswmr_ccf_truncated(&w->cc, eof);
    vfdswmr_writer_log_write(w, eof, UINT64_MAX - eof);
}

static herr_t
writer_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;
    if (CHILD(w, "truncating"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if (!w->active) {
        rc = vfdswmr_pt_truncate(file, dxpl, closing);
        vfdswmr_ccf_truncated(&w->cc, rc < 0 ? 0 : vfdswmr_pt_get_eof(file, H5FD_MEM_DEFAULT));
        return rc;
    }
    vfdswmr_writer_lock(w);
    if (closing && w->closing_flushed)
        w->hdf5_closing = true;
    rc = vfdswmr_pt_truncate(file, dxpl, closing);
    vfdswmr_writer_truncated(w, rc >= 0);
    w->truncated = true;
    vfdswmr_writer_unlock(w);
    vfdswmr_test_kill_point("truncated"); /* before the flush's publish: the newest snapshot must still load */
    return rc;
}

/* eoa.c decides. */
static herr_t
writer_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;
    if (CHILD(w, "setting the end of allocation"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if (!w->active)
        return vfdswmr_pt_set_eoa(file, type, addr);
    vfdswmr_writer_lock(w);
    rc = vfdswmr_writer_set_eoa(w, type, addr);
    vfdswmr_writer_unlock(w);
    return rc;
}

/* eoa.c decides (holes); inactive, HDF5's own extension. */
static haddr_t
writer_alloc(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, hsize_t size)
{
    vfdswmr_writer_t *w = W(file);
    haddr_t addr;
    if (CHILD(w, "allocating"))
        return HADDR_UNDEF;
    if (NOT_READY(w))
        return HADDR_UNDEF;

    (void)dxpl;
    if (!w->active) {
        addr = vfdswmr_pt_get_eoa(file, type);
        if (addr == HADDR_UNDEF || addr + size < addr || addr + size > file->maxaddr ||
            vfdswmr_pt_set_eoa(file, type, addr + size) < 0)
            return HADDR_UNDEF;
        return addr;
    }
    vfdswmr_writer_lock(w);
    addr = vfdswmr_writer_alloc(w, file, type, size);
    vfdswmr_writer_unlock(w);
    return addr;
}

/* Read without the lock, as HDF5 calls it only from the thread that holds
 * the file (the ticker never changes these fields). */
static haddr_t
writer_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    vfdswmr_writer_t *w = (vfdswmr_writer_t *)(uintptr_t)file; /* a deferred open is set up now */

    if (!w->active)
        return vfdswmr_pt_get_eoa(file, type);
    if (w->pending && CHILD(w, "getting the end of allocation")) /* a fork child never sets up its parent's open */
        return HADDR_UNDEF;
    if (NOT_READY(w))
        return HADDR_UNDEF;
    return vfdswmr_writer_get_eoa(w, type);
}

/* The file as the writer sees it reaches at least its EOA, even while
 * metadata pages wait in memory. */
static haddr_t
writer_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    vfdswmr_writer_t *w = (vfdswmr_writer_t *)(uintptr_t)file; /* a deferred open is set up now */
    haddr_t eof;

    if (w->pending && CHILD(w, "getting the end of file")) /* a fork child never sets up its parent's open */
        return HADDR_UNDEF;
    if (NOT_READY(w))
        return HADDR_UNDEF;
    eof = vfdswmr_pt_get_eof(file, type);
    if (w->active && eof != HADDR_UNDEF && eof < w->eoa)
        eof = w->eoa;
    return eof;
}

/* HDF5's own file lock (flock in sec2): exclusive while writing, as a plain
 * writer takes it, so plain HDF5 writers and readers are refused while the
 * writer lives. vfd_swmr_reader's lock does nothing, so its readers are not.
 * A second vfd_swmr_writer is kept out by the metadata file's and the HDF5
 * file's OFD locks (mdlock.h). */
static herr_t
writer_lock(H5FD_t *file, hbool_t rw)
{
    vfdswmr_writer_t *w = W(file);

    if (CHILD(w, "locking"))
        return -1;
    /* A deferred open (open.c) takes HDF5's lock before its setup seals the
     * file: a plain HDF5 writer that got in first keeps the file unsealed. */
    if (w->active && w->pending) {
        if (vfdswmr_pt_lock(file, true) < 0)
            return -1;
        if (vfdswmr_writer_setup(w) == 0)
            return 0;
        (void)vfdswmr_pt_unlock(file);
        return -1;
    }
    if (NOT_READY(w))
        return -1;
    return vfdswmr_pt_lock(file, w->active ? true : rw);
}

/* In a fork child, flock's lock is its parent's too (one open file
 * description): refused. */
static herr_t
writer_unlock(H5FD_t *file)
{
    if (CHILD(W(file), "unlocking"))
        return -1;
    return vfdswmr_pt_unlock(file);
}

/* ---- ctl operations (include/vfdswmr.h) ----------------------------------- */

static herr_t
ctl_locked(vfdswmr_writer_t *w, uint64_t op, const void *in, void **out)
{
    vfdswmr_pb_stats_t st;

    VFDSWMR_ASSERT_LOCKED(w);
    switch (op) {
    case VFDSWMR_CTL_END_TICK:
        if (w->eot_disabled) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: end of tick is disabled (vfdswmr_disable_end_of_tick)", VFDSWMR_WRITER_NAME);
            return -1;
        }
        w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
        return vfdswmr_writer_end_tick(w, false) < 0 ? vfdswmr_writer_check_error(w) : 0;
    case VFDSWMR_CTL_DISABLE_EOT:
    case VFDSWMR_CTL_ENABLE_EOT:
        if (w->eot_disabled == (op == VFDSWMR_CTL_DISABLE_EOT)) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: end of tick is already %s", VFDSWMR_WRITER_NAME,
                        w->eot_disabled ? "disabled" : "enabled");
            return -1;
        }
        w->eot_disabled = op == VFDSWMR_CTL_DISABLE_EOT;
        if (!w->eot_disabled && w->tick_missed) {
            w->tick_missed = false;
            return vfdswmr_writer_end_tick(w, false) < 0 ? vfdswmr_writer_check_error(w) : 0;
        }
        return 0;
    case VFDSWMR_CTL_GET_STATUS: {
        vfdswmr_status_t *s = vfdswmr_status_target(in, out);
        if (s == NULL) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: GET_STATUS needs a vfdswmr_status_t to fill (output)", VFDSWMR_WRITER_NAME);
            return -1;
        }
        vfdswmr_pb_stats(w->pb, &st);
        *s = (vfdswmr_status_t){.is_writer = 1,
                                .tick = w->tick,
                                .session = vfdswmr_mdw_session(w->mdw),
                                .eoa = w->cp_eoa,
                                .index_entries = w->index_entries,
                                .pages_cached = st.images,
                                .writer_state = w->error[0] ? VFDSWMR_WRITER_FAILED : VFDSWMR_WRITER_RUNNING,
                                .tick_len = w->base.cfg.tick_len,
                                .max_lag = w->base.cfg.max_lag,
                                .writer_tick = w->tick};
        return 0;
    }
    case VFDSWMR_CTL_REFRESH:
        VFDSWMR_ERR(H5E_BADVALUE, "%s: vfdswmr_refresh is for readers; the writer's view is always current",
                    VFDSWMR_WRITER_NAME);
        return -1;
    default:
        return 1; /* not ours */
    }
}

static herr_t
writer_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;
    if (CHILD(w, "a ctl operation"))
        return -1;
    if (NOT_READY(w))
        return -1;

    if ((rc = vfdswmr_ccf_ctl(&w->cc, op, in, out)) != 1)
        return rc;
    if (!w->active && op >= VFDSWMR_CTL_END_TICK && op <= VFDSWMR_CTL_GET_STATUS) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: the file is open read-only; VFD SWMR is off", VFDSWMR_WRITER_NAME);
        return -1;
    }
    if (!w->active)
        return vfdswmr_pt_ctl(file, op, flags, in, out);
    vfdswmr_writer_lock(w);
    rc = ctl_locked(w, op, in, out);
    vfdswmr_writer_unlock(w);
    return rc == 1 ? vfdswmr_pt_ctl(file, op, flags, in, out) : rc;
}

static herr_t
writer_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, VFDSWMR_WRITER_NAME);
}

static const H5FD_class_t writer_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_WRITER_VALUE, VFDSWMR_WRITER_NAME),
    .open = vfdswmr_writer_open,
    .close = vfdswmr_writer_close,
    .read = writer_read,
    .write = writer_write,
    .flush = writer_flush,
    .truncate = writer_truncate,
    .get_eoa = writer_get_eoa,
    .set_eoa = writer_set_eoa,
    .alloc = writer_alloc,
    .get_eof = writer_get_eof,
    .lock = writer_lock,
    .unlock = writer_unlock,
    .ctl = writer_ctl,
    .del = writer_delete,
};

VFDSWMR_PLUGIN_EXPORT(writer_class)
