/*
 * vfd_swmr_reader: adopting and holding snapshots, and the lag check.
 *
 * Invariants:
 *  - A snapshot is replaced only by one vfdswmr_mdr_load() accepted, and
 *    the page image cache (filled by pages.c) is emptied at that moment, so
 *    no cached byte outlives the snapshot it came from.
 *  - The writer publishes a header of epoch E before any HDF5 write or
 *    metadata file reuse that a reader at epoch E - max_lag could notice
 *    (DESIGN.md "The lag is a time"). So after a read, a header of the same
 *    session with an epoch below the snapshot's epoch + max_lag proves no
 *    byte of the read was overwritten.
 *  - A reader with no writer (md.fd < 0), or holding the final empty
 *    snapshot of a writer that closed, holds the HDF5 file as it is: tick 0
 *    (epoch 0) of any writer that starts later, which overwrites nothing
 *    before its epoch max_lag. The lag check therefore also looks for such
 *    a writer.
 */
#include "rawlog.h"
#include "reader.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "h5err.h"
#include "mdlock.h"
#include "superblock.h"

haddr_t
vfdswmr_rdr_snap_eoa(const rdr_t *r)
{
    return (haddr_t)r->md.snap.hdr.eoa;
}

int
vfdswmr_rdr_forward_eoa(rdr_t *r)
{
    haddr_t eoa = vfdswmr_rdr_snap_eoa(r);
    herr_t rc;

    if (r->lib_eoa != HADDR_UNDEF && r->lib_eoa > eoa)
        eoa = r->lib_eoa;
    if (eoa == 0)
        return 0;
    rc = VFDSWMR_GUARDED(herr_t, H5FDset_eoa(r->base.lower, H5FD_MEM_DEFAULT, eoa), _r < 0);
    if (rc < 0)
        VFDSWMR_ERR(H5E_CANTSET, "%s: the lower driver refused end of address %llu", RDR_NAME, (unsigned long long)eoa);
    return rc < 0 ? -1 : 0;
}

/* What the reader can tell of the writer of its metadata file; *tick: the
 * newest tick its header names now (0 without one). */
static int
writer_state(const rdr_t *r, unsigned long long *tick)
{
    vfdswmr_mdhdr_t h;

    *tick = 0;
    if (r->md.fd < 0)
        return VFDSWMR_WRITER_NONE;
    if (vfdswmr_mdr_read_header(r->md.fd, &h) != VFDSWMR_MD_OK)
        h = r->md.snap.hdr;
    *tick = h.tick;
    if (h.flags & VFDSWMR_MDHDR_FINAL)
        return VFDSWMR_WRITER_CLOSED;
    if (!r->base.cfg.presume_posix_semantics)
        return VFDSWMR_WRITER_UNKNOWN; /* a local copy kept by vfd_swmr_aux: nobody locks it */
    if (vfdswmr_rdr_md_unlinked(&r->md) || vfdswmr_mdlock_held(r->md.fd) == 0)
        return VFDSWMR_WRITER_DIED; /* gone without FINAL: died (perhaps recovered since) */
    return h.flags & VFDSWMR_MDHDR_FAILED ? VFDSWMR_WRITER_FAILED : VFDSWMR_WRITER_RUNNING;
}

void
vfdswmr_rdr_status(const rdr_t *r, vfdswmr_status_t *st)
{
    const vfdswmr_mdsnap_t *s = &r->md.snap;

    memset(st, 0, sizeof *st);
    st->is_writer = 0;
    st->tick = s->hdr.tick;
    st->session = s->hdr.session;
    st->eoa = s->hdr.eoa;
    st->index_entries = s->idx.nentries;
    st->writer_state = writer_state(r, &st->writer_tick);
    st->tick_len = s->hdr.tick_len;
    st->max_lag = s->hdr.max_lag;
}

/* Forget every cached page image (pages.c): they belong to the snapshot
 * being replaced. */
static void
drop_images(rdr_t *r)
{
    for (unsigned i = 0; i < RDR_CACHE_SLOTS; i++)
        r->cache[i].last_use = 0;
}

/* Empty a chunk cache below us (see drop_raw). */
static void
drop_below(rdr_t *r)
{
    (void)VFDSWMR_GUARDED(herr_t, H5FDctl(r->base.lower, VFDSWMR_CTL_CC_EVICT, 0, NULL, NULL), _r < 0);
}

/*
 * Forget every raw-data byte read so far: the chunk cache's, and a chunk
 * cache below us (under=vfd_chunk_cache(...), which hears of no writer and
 * is told through its ctl; other lower drivers ignore the operation). Raw
 * data is not versioned: the writer appends into chunks and rewrites them
 * at the same addresses.
 */
static void
drop_raw(rdr_t *r)
{
    vfdswmr_ccf_invalidate_all(&r->cc);
    drop_below(r);
}

static void
drop_range(void *ctx, uint64_t addr, uint64_t len)
{
    vfdswmr_ccf_invalidate(ctx, addr, len);
}

/* The chunk cache holds raw data read under snapshot `from` (or later):
 * drop what the writer wrote in the ticks after it, up to snapshot `to` --
 * everything when the raw-data write log cannot tell (rawlog.h), and
 * always everything a cache below us holds (it is not told ranges). */
static void
drop_raw_writes(rdr_t *r, const vfdswmr_mdhdr_t *from, const vfdswmr_mdhdr_t *to)
{
    if (vfdswmr_ccf_holds_data(&r->cc) && from->session == to->session && from->tick <= to->tick &&
        vfdswmr_rawlog_read(r->md.path, to->session, from->tick, to->tick, drop_range, &r->cc))
        drop_below(r);
    else
        drop_raw(r);
}

/* Replace the adopted snapshot by *snap, loaded from fd (a new file when
 * it differs from md.fd, which is then closed). */
static int
adopt(rdr_t *r, vfdswmr_mdsnap_t *snap, int fd, dev_t dev, ino_t ino)
{
    rdr_md_t *md = &r->md;

    if (vfdswmr_rdr_check_header(md, &snap->hdr) < 0) {
        vfdswmr_mdsnap_free(snap);
        if (fd != md->fd)
            close(fd);
        return -1;
    }
    drop_raw_writes(r, &md->snap.hdr, &snap->hdr); /* raw data may have changed at the same addresses */
    vfdswmr_mdsnap_free(&md->snap);
    md->snap = *snap;
    drop_images(r);
    if (fd != md->fd) {
        if (md->fd >= 0)
            close(md->fd);
        md->fd = fd;
        md->dev = dev;
        md->ino = ino;
    }
    vfdswmr_rdr_mark(md);
    vfdswmr_rdr_log(r, "adopted snapshot tick=%llu session=%016llx entries=%u eoa=%llu attempts=%u marked=%d",
                    (unsigned long long)snap->hdr.tick, (unsigned long long)snap->hdr.session, snap->idx.nentries,
                    (unsigned long long)snap->hdr.eoa, snap->attempts, md->marked_tick == snap->hdr.tick);
    return vfdswmr_rdr_forward_eoa(r);
}

/* Where the newest snapshot is: a file other than ours at the path (a
 * writer that started after us: *opened = 1), else our own file, even when
 * unlinked (a writer that closed left its final snapshot there). *fd < 0:
 * no writer at all. 0, or -1 with the reason on the stack. */
static int
newest_source(rdr_md_t *md, int *fd, dev_t *dev, ino_t *ino, int *opened)
{
    *fd = md->fd;
    *dev = md->dev;
    *ino = md->ino;
    *opened = vfdswmr_rdr_md_replaced(md) ? (int)vfdswmr_rdr_md_open(md->path, fd, dev, ino) : RDR_MD_ABSENT;
    if (*opened < 0) {
        vfdswmr_rdr_md_open_error(md->path, (rdr_md_open_t)*opened);
        return -1;
    }
    if (*opened == 0)
        *fd = md->fd; /* the other file vanished again: ours is still the newest */
    return 0;
}

int
vfdswmr_rdr_refresh(rdr_t *r)
{
    rdr_md_t *md = &r->md;
    int fd, opened;
    dev_t dev;
    ino_t ino;
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdr_io_t io;
    vfdswmr_mdsnap_t snap;
    vfdswmr_mderr_t err;
    char why[256];

    if (newest_source(md, &fd, &dev, &ino, &opened) < 0)
        return -1;
    if (fd < 0) {
        /* Still no writer -- now. A whole writer session may have come and
         * gone since the last refresh, changing raw data in place: the
         * library reloads the metadata from the HDF5 file, and raw data must
         * come from there too. */
        drop_raw(r);
        return 0;
    }
    vfdswmr_rdr_load_opts(md, &o);
    if (opened)
        o.first_read = 64u << 10; /* another writer's page size is not known yet */
    io = vfdswmr_mdr_fd_io(&fd);
    if ((err = vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why)) != VFDSWMR_MD_OK) {
        if (opened)
            close(fd);
        if (opened && err == VFDSWMR_MD_ESHORT)
            return 0; /* created but not yet written: nothing to adopt */
        VFDSWMR_ERR(H5E_CANTLOAD, "%s: cannot load the metadata file \"%s\": %s", RDR_NAME, md->path, why);
        return -1;
    }
    if (!opened && snap.hdr.session == md->snap.hdr.session && snap.hdr.tick == md->snap.hdr.tick) {
        vfdswmr_mdsnap_free(&snap); /* nothing new: keep the cache */
        /* ... unless its writer is gone (closed, or died): a later writer
         * may have come and gone meanwhile, as above. */
        if ((md->snap.hdr.flags & VFDSWMR_MDHDR_FINAL) || vfdswmr_rdr_md_unlinked(md))
            drop_raw(r);
        else if (md->mark.fd < 0) /* lost its table (removed by hand): register again */
            vfdswmr_rdr_mark(md);
        return 0;
    }
    return adopt(r, &snap, fd, dev, ino);
}

/* (tick and writer_tick: epochs, the ticks max_lag counts) */
static int
lag_error(rdr_t *r, uint64_t tick, uint64_t writer_tick, uint32_t max_lag)
{
    vfdswmr_rdr_log(r, "lag error snapshot epoch=%llu writer epoch=%llu max_lag=%u", (unsigned long long)tick,
                    (unsigned long long)writer_tick, max_lag);
    VFDSWMR_ERR(H5E_READERROR,
                "%s: reader fell behind: its snapshot (tick %llu) is max_lag=%u or more ticks older than the "
                "writer's (tick %llu): refresh more often (H5Drefresh/H5Grefresh/vfdswmr_refresh), or give the "
                "writer a larger max_lag (readers adopt the writer's)",
                RDR_NAME, (unsigned long long)tick, max_lag, (unsigned long long)writer_tick);
    return -1;
}

/* Our read mark's table was removed before the writer adopted it: the
 * mark counted for nothing, and the read may have missed copies the
 * writer kept for us (mdfile/kept.h). Unmarked from now on. */
static int
orphaned_error(rdr_t *r)
{
    vfdswmr_rdr_unmark(&r->md);
    VFDSWMR_ERR(H5E_READERROR,
                "%s: the read-mark table \"%s.readers\" this reader registered in was removed before its writer "
                "found it (by hand?): this read cannot be trusted; refresh (vfdswmr_refresh, H5Drefresh) to "
                "register again",
                RDR_NAME, r->md.path);
    return -1;
}

static int
released_error(rdr_t *r, uint64_t tick, uint64_t writer_tick)
{
    vfdswmr_rdr_log(r, "released snapshot epoch=%llu writer epoch=%llu", (unsigned long long)tick,
                    (unsigned long long)writer_tick);
    VFDSWMR_ERR(H5E_READERROR,
                "%s: reader fell behind: the writer released its snapshot (tick %llu) after it stayed %u times "
                "max_lag=%u ticks behind, or max_lag ticks while the writer was closing (writer at tick %llu): "
                "refresh (H5Drefresh/H5Grefresh/vfdswmr_refresh)",
                RDR_NAME, (unsigned long long)tick, VFDSWMR_MARK_RELEASE_FACTOR, r->md.max_lag,
                (unsigned long long)writer_tick);
    return -1;
}

static int
session_error(rdr_t *r)
{
    vfdswmr_rdr_log(r, "session error snapshot session=%016llx", (unsigned long long)r->md.snap.hdr.session);
    VFDSWMR_ERR(H5E_READERROR,
                "%s: the metadata file now belongs to another writer session (the writer was restarted): "
                "reopen the file",
                RDR_NAME);
    return -1;
}

/* The writer could not publish any more (disk full ...): it will write
 * everything to the HDF5 file at close, so nothing read from it now is
 * guaranteed to match the snapshot. */
static int
failed_error(rdr_t *r, const vfdswmr_mdhdr_t *h)
{
    vfdswmr_rdr_log(r, "writer failed at tick=%llu", (unsigned long long)h->tick);
    VFDSWMR_ERR(H5E_READERROR,
                "%s: the writer stopped publishing at tick %llu (it could not write the metadata file \"%s\", e.g. "
                "disk full): this view cannot advance; reopen the file once the writer has closed it (if it died "
                "instead, once vfd_swmr_recover has run)",
                RDR_NAME, (unsigned long long)h->tick, r->md.path);
    return -1;
}

static int
header_error(rdr_t *r, vfdswmr_mderr_t err)
{
    VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the header of the metadata file \"%s\": %s%s%s", RDR_NAME, r->md.path,
                vfdswmr_mderr_str(err), err == VFDSWMR_MD_EIO ? ": " : "",
                err == VFDSWMR_MD_EIO ? strerror(errno) : "");
    return -1;
}

/* We hold the file as it was before the writer of header h started (its
 * tick 0): mark tick 0 in its read-mark table, in time if its epoch is
 * still two below max_lag once the mark is there (a publish under way may
 * have taken its lag without the mark: locate.c, vfdswmr_rdr_md_mark). */
static void
mark_tick0(rdr_t *r, const vfdswmr_mdhdr_t *h)
{
    rdr_md_t *md = &r->md;
    vfdswmr_mdhdr_t now;
    int fd, rc;
    dev_t dev;
    ino_t ino;

    if (md->succ_session == h->session || !r->base.cfg.presume_posix_semantics)
        return;
    vfdswmr_mark_detach(&md->succ_mark);
    md->succ_session = 0;
    if (h->epoch + 1 >= h->max_lag || (rc = vfdswmr_rdr_md_open(md->path, &fd, &dev, &ino)) <= 0)
        return;
    if (vfdswmr_rdr_mark_attach(md, &md->succ_mark, h->session, fd) && vfdswmr_mark_set(&md->succ_mark, 0) == 0 &&
        vfdswmr_mdr_read_header(fd, &now) == VFDSWMR_MD_OK && now.session == h->session && now.epoch + 1 < now.max_lag)
        md->succ_session = h->session;
    close(fd);
    vfdswmr_rdr_assert_marks(md);
}

/* A writer that started after the state we hold was current: `at_start`
 * says whether we hold exactly its tick 0 (no writer, or the closed
 * writer's final empty snapshot). */
static int
check_successor(rdr_t *r, bool at_start, bool *none)
{
    vfdswmr_mdhdr_t h;
    vfdswmr_mderr_t err;
    dev_t dev;
    ino_t ino;
    int fd, rc;

    *none = false;
    if (!vfdswmr_rdr_md_replaced(&r->md)) {
        rc = vfdswmr_rdr_writer_unfound(r);
        *none = rc == 0;
        return rc;
    }
    if ((rc = vfdswmr_rdr_md_open(r->md.path, &fd, &dev, &ino)) <= 0) {
        if (rc < 0)
            vfdswmr_rdr_md_open_error(r->md.path, (rdr_md_open_t)rc);
        return rc < 0 ? -1 : 0;
    }
    err = vfdswmr_mdr_read_header(fd, &h);
    rc = errno; /* close must not hide why a read failed */
    close(fd);
    errno = rc;
    if (err == VFDSWMR_MD_ESHORT)
        return 0; /* created, not yet written: that writer is at tick 0 */
    if (err != VFDSWMR_MD_OK)
        return header_error(r, err);
    if (!at_start)
        return session_error(r);
    mark_tick0(r, &h);
    /* our tick-0 mark holds the file as we read it -- once its table is the
     * writer's (else as any unmarked reader: max_lag) */
    if (r->md.succ_session == h.session && vfdswmr_mark_confirm(&r->md.succ_mark, r->md.path) < 0) {
        vfdswmr_mark_detach(&r->md.succ_mark);
        r->md.succ_session = 0;
    }
    if (r->md.succ_session == h.session)
        return vfdswmr_mark_released(&r->md.succ_mark, 0) == 1 ? released_error(r, 0, h.epoch) : 0;
    return h.epoch >= h.max_lag ? lag_error(r, 0, h.epoch, h.max_lag) : 0; /* the writer's max_lag: not adopted yet */
}

/* May this reader, holding the file as it is, skip its look for a writer
 * for a while after a look that found none (mdlock.h, the quiet window)?
 * Only where a writer that starts is sure to see it and to be found by it:
 * registered on a byte of its own, on the writer's machine, on a file
 * system that keeps the writer's record. */
static bool
may_be_quiet(const rdr_md_t *md)
{
    return md->cfg->presume_posix_semantics && !md->no_record && md->reg.fd >= 0 && md->reg.own >= 0 &&
           md->reg.slot < 0 && md->succ_mark.fd < 0;
}

/* Holding the file as it is: has a writer started? (see check_successor) */
static int
look_for_writer(rdr_t *r)
{
    double now = vfdswmr_now(); /* after the read this look is for, before the look's first system call */
    bool none;
    int rc;

    if (now < r->md.quiet_until) /* the read ended inside the window of a look that found no writer */
        return 0;
    rc = check_successor(r, true, &none);
    r->md.quiet_until = rc == 0 && none && r->md.fd < 0 && may_be_quiet(&r->md) ? now + VFDSWMR_QUIET_US / 1e6 : 0;
    return rc;
}

int
vfdswmr_rdr_lag_check(rdr_t *r)
{
    const vfdswmr_mdsnap_t *s = &r->md.snap;
    vfdswmr_mdhdr_t h;
    vfdswmr_mderr_t err;
    bool none;

    vfdswmr_rdr_assert_marks(&r->md);
    if (r->md.foreign)
        return vfdswmr_rdr_writer_unfound(r); /* the file is not what this reader holds of it */
    if (r->md.fd < 0)
        return look_for_writer(r);
    r->md.quiet_until = 0; /* a window is only ever that of a look made without a writer's snapshot */
    if ((err = vfdswmr_mdr_read_header(r->md.fd, &h)) != VFDSWMR_MD_OK)
        return header_error(r, err);
    if (h.session != s->hdr.session)
        return session_error(r);
    if (h.flags & VFDSWMR_MDHDR_FAILED)
        return failed_error(r, &h);
    if (r->md.marked_tick && r->md.marked_tick == s->hdr.tick) {
        /* Our read mark holds the snapshot, unless the writer released it
         * -- or never had its table: removed from its name before the
         * writer looked, it may have listed copies for us elsewhere. (Not
         * once the session's metadata file left its name: the writer
         * closed, or a successor cleared its side files -- it died.) */
        if (vfdswmr_mark_confirm(&r->md.mark, r->md.path) < 0 && !vfdswmr_rdr_md_unlinked(&r->md))
            return orphaned_error(r);
        if (vfdswmr_mark_released(&r->md.mark, s->hdr.epoch) == 1) {
            /* every mark released: the writer let go of the table (removed
             * by hand); the next snapshot registers in a new one */
            if (vfdswmr_mark_released(&r->md.mark, UINT64_MAX - 1) == 1)
                vfdswmr_rdr_unmark(&r->md);
            return released_error(r, s->hdr.epoch, h.epoch);
        }
    }
    else if (h.epoch >= s->hdr.epoch + r->md.max_lag)
        return lag_error(r, s->hdr.epoch, h.epoch, r->md.max_lag);
    if (!vfdswmr_rdr_md_unlinked(&r->md)) /* a closed writer's kept FINAL one: a writer elsewhere? */
        return h.flags & VFDSWMR_MDHDR_FINAL ? vfdswmr_rdr_writer_unfound(r) : 0;
    /* The writer closed: its last header is final. */
    return check_successor(r, h.tick == s->hdr.tick && s->idx.nentries == 0, &none);
}
