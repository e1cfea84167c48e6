/*
 * vfd_swmr_writer: the driver of the one process that writes a VFD SWMR
 * file. Metadata writes go into the page buffer (pagebuf/); raw data goes
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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "clock.h"
#include "h5err.h"
#include "mdlock.h"
#include "paths.h"
#include "recover.h"
#include "safefile.h"
#include "mdreader.h"
#include "superblock.h"
#include "plugin.h"
#include "vfdswmr.h"
#include "writer.h"

#define W(file)  ((vfdswmr_writer_t *)(file))
#define LOWER(w) ((w)->base.lower)

/* ---- page buffer callbacks: the HDF5 file through the lower driver ---- */

static int
fill_page(void *ctx, uint64_t page, uint8_t *image)
{
    vfdswmr_writer_t *w = ctx;
    uint64_t start = page * VFDSWMR_WRITER_PAGE_SIZE;
    haddr_t eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(w), H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    memset(image, 0, VFDSWMR_WRITER_PAGE_SIZE);
    if (eoa == HADDR_UNDEF)
        return -1;
    if (start >= eoa)
        return 0;
    size_t len = eoa - start < VFDSWMR_WRITER_PAGE_SIZE ? (size_t)(eoa - start) : VFDSWMR_WRITER_PAGE_SIZE;
    if (VFDSWMR_GUARDED(herr_t, H5FDread(LOWER(w), H5FD_MEM_DEFAULT, H5P_DEFAULT, start, len, image), _r < 0) < 0)
        return -1;
    return vfdswmr_seal_incoming(w, start, len, image);
}

static int
store_page(void *ctx, uint64_t page, const uint8_t *image, size_t len)
{
    vfdswmr_writer_t *w = ctx;
    uint8_t copy[VFDSWMR_WRITER_PAGE_SIZE];
    const uint8_t *out = vfdswmr_seal_outgoing(w, page * VFDSWMR_WRITER_PAGE_SIZE, image, len, copy);

    herr_t rc = VFDSWMR_GUARDED(
        herr_t, H5FDwrite(LOWER(w), H5FD_MEM_DEFAULT, H5P_DEFAULT, page * VFDSWMR_WRITER_PAGE_SIZE, len, out), _r < 0);

    vfdswmr_ccf_written(&w->cc, page * VFDSWMR_WRITER_PAGE_SIZE, len, image, rc >= 0);
    vfdswmr_rawlog_add(w->rawlog, vfdswmr_writer_write_tick(w), page * VFDSWMR_WRITER_PAGE_SIZE, len);
    w->pages_stored++;
    if (w->closing)
        vfdswmr_test_kill_point("close");
    return rc;
}

/*
 * flush_raw_data: make everything written to the HDF5 file so far durable
 * before the consistency point that refers to it is published, so readers on
 * other hosts (NFS, updater files) never see metadata naming raw data that
 * has not arrived.
 */
static int
sync_hdf5_file(vfdswmr_writer_t *w)
{
    int fd = vfdswmr_lower_fd(LOWER(w));

    if (fd < 0 || fsync(fd) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: flush_raw_data: cannot fsync the HDF5 file: %s", VFDSWMR_WRITER_NAME,
                    strerror(errno));
        return -1;
    }
    return 0;
}

/* Report a publish failure of the ticker thread on this callback's stack. */
static int
check_error(vfdswmr_writer_t *w)
{
    if (!w->error[0])
        return 0;
    VFDSWMR_ERR(H5E_WRITEERROR,
                "%s: %s: readers are told the writer stopped publishing; everything is written to the HDF5 file "
                "at close",
                VFDSWMR_WRITER_NAME, w->error);
    return -1;
}

/* ---- open / close -------------------------------------------------------- */

static void
writer_free(vfdswmr_writer_t *w)
{
    vfdswmr_pb_destroy(w->pb);
    vfdswmr_ccf_fini(&w->cc);
    vfdswmr_log_close(&w->log);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->published);
}

/* Everything that needs only the configuration: checked before any file is
 * touched. */
static int
prepare_swmr(vfdswmr_writer_t *w, const char *name, hid_t fapl, char *ud_base, size_t ud_len)
{
    const vfdswmr_config_t *cfg = &w->base.cfg;
    size_t pb_size = 0;
    unsigned min_meta = 0, min_raw = 0;

    if (VFDSWMR_GUARDED(herr_t, H5Pget_page_buffer_size(fapl, &pb_size, &min_meta, &min_raw), _r < 0) >= 0 &&
        pb_size > 0) {
        VFDSWMR_ERR(H5E_BADVALUE,
                    "%s: HDF5's page buffer is enabled (H5Pset_page_buffer_size): it would hold back metadata the "
                    "readers need; the driver keeps its own page buffer, so leave HDF5's off",
                    VFDSWMR_WRITER_NAME);
        return -1;
    }
    if (vfdswmr_md_path(cfg, name, w->md_path, sizeof w->md_path) < 0 ||
        vfdswmr_ud_base(cfg, name, ud_base, ud_len) < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: metadata or updater file path too long for \"%s\"", VFDSWMR_WRITER_NAME, name);
        return -1;
    }
    if (vfdswmr_log_open(&w->log, cfg->log_file_path) < 0) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open log file \"%s\": %s", VFDSWMR_WRITER_NAME, cfg->log_file_path,
                    strerror(errno));
        return -1;
    }
    if (NULL == (w->pb = vfdswmr_pb_new(VFDSWMR_WRITER_PAGE_SIZE))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", VFDSWMR_WRITER_NAME);
        return -1;
    }
    return 0;
}

/* The writer's lock on the HDF5 file itself (mdlock.h): a second writer is
 * refused even if our metadata file goes away. Lower drivers without a
 * descriptor have the metadata file's lock only. */
static int
take_hdf5_lock(vfdswmr_writer_t *w, const char *name)
{
    int fd = vfdswmr_lower_fd(LOWER(w)), rc;

    if (fd < 0 || (rc = vfdswmr_mdlock_hdf5_take(fd)) == 0)
        return 0;
    if (rc < 0) { /* a file system (or descriptor) without locks: the metadata file's lock alone */
        VFDSWMR_LOG(&w->log, "warning", "cannot lock the HDF5 file: %s", strerror(errno));
        return 0;
    }
    VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: another writer has \"%s\" open (it holds the file's writer lock)",
                VFDSWMR_WRITER_NAME, name);
    return -1;
}

/* Bring the HDF5 file back to the crashed writer's last snapshot (old_fd:
 * its metadata file, locked by us); *needed: there was something to recover. */
static int
recover_crashed(vfdswmr_writer_t *w, int old_fd, const char *name, bool *needed)
{
    vfdswmr_recover_io_t io;
    vfdswmr_recover_report_t rep;
    char err[1024];

    vfdswmr_recover_io_lower(LOWER(w), &io);
    if (vfdswmr_recover_run(old_fd, w->md_path, &io, name, w->hdf5_id, false, &rep, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: a writer of \"%s\" crashed and its file cannot be recovered: %s",
                    VFDSWMR_WRITER_NAME, name, err);
        return -1;
    }
    *needed = rep.needed;
    if (rep.needed)
        VFDSWMR_LOG(&w->log, "recovered", "file=%s session=%llx tick=%llu pages=%u bytes=%llu eoa=%llu", name,
                    (unsigned long long)rep.session, (unsigned long long)rep.tick, rep.pages,
                    (unsigned long long)rep.bytes, (unsigned long long)rep.eoa);
    return 0;
}

/*
 * Open for writing. Order matters (a refused writer changes nothing):
 *  1. configuration and paths (no file touched);
 *  2. the metadata file at its name: a live writer's is refused, a crashed
 *     writer's is locked and kept for recovery (vfdswmr_claim_md);
 *  3. our own metadata file, created and locked under a temporary name; with
 *     no metadata file there, it takes the name now, so a second writer
 *     starting at the same moment is refused before it opens the HDF5 file;
 *  4. the HDF5 file, through the lower driver, with the caller's flags;
 *  5. recovery from the crashed writer's metadata file (not when truncating);
 *  6. the seal on the superblock in the HDF5 file (seal.c): plain HDF5
 *     refuses the file from now until close or recovery;
 *  7. our metadata file replaces the crashed writer's.
 */
static int
start_swmr(vfdswmr_writer_t *w, const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    const vfdswmr_config_t *cfg = &w->base.cfg;
    char ud_base[VFDSWMR_MAX_PATH + 64], err[VFDSWMR_MDW_ERRLEN];
    vfdswmr_mdw_opts_t o = {.page_size = VFDSWMR_WRITER_PAGE_SIZE,
                            .reserved_pages = cfg->md_pages_reserved,
                            .max_lag = cfg->max_lag,
                            .tick_len = cfg->tick_len,
                            .durable = cfg->flush_raw_data,
                            .defer_link = true};
    int old_fd = -1;
    bool replace = false, again = false, recovered = false;
    struct stat st;

    if (prepare_swmr(w, name, fapl, ud_base, sizeof ud_base) < 0)
        return -1;
    o.md_path = cfg->maintain_metadata_file ? w->md_path : NULL;
    o.ud_base = cfg->generate_updater_files ? ud_base : NULL;
    o.ud_keep_ticks = cfg->updater_keep_ticks ? cfg->updater_keep_ticks : cfg->max_lag + 1;
    if (o.md_path && vfdswmr_claim_md(w, name, &old_fd, &replace, &again) < 0)
        return -1;
    if (again) {
        /* This process has the file open through the writer already. HDF5
         * opens again before it compares (cmp) with the files it has open,
         * then drops this handle and shares the open file: a plain handle
         * on the lower file does. It is never written through. */
        w->active = false;
        if (flags & H5F_ACC_TRUNC) {
            VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: \"%s\" is open in this process: it cannot be truncated",
                        VFDSWMR_WRITER_NAME, name);
            return -1;
        }
        return vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr);
    }
    if (vfdswmr_mdw_open(&o, &w->mdw, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        goto fail;
    }
    w->lag = cfg->max_lag;
    /* The read-mark table exists before the metadata file has its name:
     * every reader that finds the one finds the other. Without it readers
     * keep the max_lag contract. */
    if (o.md_path && vfdswmr_marks_create(w->md_path, vfdswmr_mdw_session(w->mdw), &w->marks) < 0)
        VFDSWMR_LOG(&w->log, "warning", "no read-mark table: %s", strerror(errno));
    /* Without the raw-data write log, caching readers drop their chunk
     * cache at every snapshot. */
    if (o.md_path && vfdswmr_rawlog_create(w->md_path, vfdswmr_mdw_session(w->mdw), &w->rawlog) < 0)
        VFDSWMR_LOG(&w->log, "warning", "no raw-data write log: %s", strerror(errno));
    if (!replace && vfdswmr_mdw_link(w->mdw, false, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        goto fail;
    }
    if (vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr) < 0)
        goto fail;
    if (take_hdf5_lock(w, name) < 0)
        goto fail;
    w->hdf5_id = stat(name, &st) == 0 ? (uint64_t)st.st_ino : 0;
    vfdswmr_mdw_set_hdf5_id(w->mdw, w->hdf5_id);
    if (cfg->flush_raw_data && vfdswmr_lower_fd(LOWER(w)) < 0) {
        VFDSWMR_ERR(H5E_BADVALUE,
                    "%s: flush_raw_data=1 needs a lower driver with a POSIX file descriptor to fsync (sec2, log), "
                    "not \"%s\"",
                    VFDSWMR_WRITER_NAME, cfg->under_name);
        goto fail;
    }
    if (old_fd >= 0 && !(flags & H5F_ACC_TRUNC) && recover_crashed(w, old_fd, name, &recovered) < 0)
        goto fail;
    if (!(flags & H5F_ACC_TRUNC) && vfdswmr_seal_at_open(w, name, recovered) < 0)
        goto fail;
    if (replace && vfdswmr_mdw_link(w->mdw, true, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        goto fail;
    }
    if (vfdswmr_mdw_go_live(w->mdw, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        goto fail;
    }
    if (old_fd >= 0)
        close(old_fd); /* releases the crashed writer's file, replaced now */
    old_fd = -1;
    w->eoa = w->cp_eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(w), H5FD_MEM_DEFAULT), false);
    w->tick = vfdswmr_mdw_tick(w->mdw);
    vfdswmr_mdw_index(w->mdw, &w->index_entries);
    if (vfdswmr_ticker_start(w) < 0) {
        VFDSWMR_ERR(H5E_CANTINIT, "%s: cannot start the tick thread: %s", VFDSWMR_WRITER_NAME, strerror(errno));
        goto fail;
    }
    vfdswmr_registry_add(w, name);
    VFDSWMR_LOG(&w->log, "open", "file=%s md=%s session=%llx swmr_write=%d tick_len=%u max_lag=%u", name, w->md_path,
                (unsigned long long)vfdswmr_mdw_session(w->mdw), w->swmr_write, cfg->tick_len, cfg->max_lag);
    return 0;
fail:
    if (w->mdw)
        vfdswmr_mdw_close(w->mdw, false, err, sizeof err); /* removes our metadata file, never another's */
    w->mdw = NULL;
    vfdswmr_marks_close(w->marks);
    w->marks = NULL;
    vfdswmr_rawlog_close(w->rawlog);
    w->rawlog = NULL;
    if (old_fd >= 0)
        close(old_fd);
    return -1;
}

/*
 * A read-only open through the writer driver reads the HDF5 file as it is:
 * wrong while a writer runs, or after one died, since metadata reaches the
 * file max_lag ticks late. Refuse then, and say what reads it right.
 */
static int
refuse_unsafe_read(vfdswmr_writer_t *w, const char *name)
{
    char md[VFDSWMR_MAX_PATH + 64];
    vfdswmr_mdhdr_t h;
    int fd, held, closed;

    if (vfdswmr_registry_writes(name))
        return 0; /* this process writes it: HDF5 shares the open file (as on sec2) */
    if (vfdswmr_md_path(&w->base.cfg, name, md, sizeof md) < 0 || (fd = vfdswmr_open_regular(md, O_RDONLY)) < 0)
        return 0; /* no metadata file: no writer, or one that closed */
    held = vfdswmr_mdlock_held(fd);
    closed = vfdswmr_mdr_read_header(fd, &h) == VFDSWMR_MD_OK && (h.flags & VFDSWMR_MDHDR_FINAL);
    close(fd);
    if (closed)
        return 0;
    if (held > 0)
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" is being written (metadata file %s): read it through %s, which sees the "
                    "writer's published snapshots",
                    VFDSWMR_WRITER_NAME, name, md, VFDSWMR_READER_NAME);
    else
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: the writer of \"%s\" died: as it is, the file mixes its last ticks; run vfd_swmr_recover "
                    "on it (or open it for writing through %s), or read its last snapshot through %s",
                    VFDSWMR_WRITER_NAME, name, VFDSWMR_WRITER_NAME, VFDSWMR_READER_NAME);
    return -1;
}

/* The lock, the condition the tick thread waits on with timeouts on
 * CLOCK_MONOTONIC, and the one a publish's end is signalled on. 0, or an
 * error number (nothing left initialised). */
static int
init_sync(vfdswmr_writer_t *w)
{
    pthread_condattr_t ca;
    int rc;

    if ((rc = pthread_mutex_init(&w->lock, NULL)) != 0)
        return rc;
    if ((rc = pthread_condattr_init(&ca)) == 0) {
        if ((rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) == 0)
            rc = pthread_cond_init(&w->wake, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (rc == 0 && (rc = pthread_cond_init(&w->published, NULL)) != 0)
        pthread_cond_destroy(&w->wake);
    if (rc != 0)
        pthread_mutex_destroy(&w->lock);
    return rc;
}

static H5FD_t *
writer_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    vfdswmr_writer_t *w =
        (vfdswmr_writer_t *)vfdswmr_stack_new(fapl, sizeof *w, VFDSWMR_WRITER_NAME, vfdswmr_config_check_writer);
    int rc;

    if (w == NULL)
        return NULL;
    if ((rc = init_sync(w)) != 0) {
        VFDSWMR_ERR(H5E_CANTINIT, "%s: cannot initialise its lock: %s", VFDSWMR_WRITER_NAME, strerror(rc));
        free(w);
        return NULL;
    }
    if (vfdswmr_ccf_init(&w->cc, &w->base.cfg, VFDSWMR_WRITER_NAME) < 0) {
        writer_free(w);
        free(w);
        return NULL;
    }
    w->sb_addr = UINT64_MAX;
    /* A read-only open through the writer driver (h5dump, probes): pass through. */
    w->active = (flags & H5F_ACC_RDWR) != 0;
    w->read_only = !w->active;
    w->swmr_write = (flags & H5F_ACC_SWMR_WRITE) != 0;
    /* As in vfd_chunk_cache: under HDF5's own SWMR another process changes
     * chunks in place, unseen here. */
    if (flags & H5F_ACC_SWMR_READ)
        vfdswmr_ccf_forbid(&w->cc, "it is open for SWMR reading (H5F_ACC_SWMR_READ), and another process writing "
                                   "it would leave cached chunks stale; read it through vfd_swmr_reader");
    if (w->active ? start_swmr(w, name, flags, fapl, maxaddr) < 0
                  : (refuse_unsafe_read(w, name) < 0 || vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr) < 0)) {
        writer_free(w);
        if (w->base.lower)
            vfdswmr_stack_close(&w->base);
        else
            free(w);
        return NULL;
    }
    return &w->base.pub;
}

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
 * Does no reader hold a snapshot older than `tick`? Only answerable when
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
readers_current(vfdswmr_writer_t *w, uint64_t tick, int *registered)
{
    unsigned own;
    int fd, held;
    bool current;

    *registered = -1;
    if (!w->base.cfg.maintain_metadata_file || w->base.cfg.generate_updater_files ||
        (fd = vfdswmr_lower_fd(LOWER(w))) < 0 || vfdswmr_mdlock_readers(fd, &own) != 0)
        return false;
    current = own == 0;
    *registered = (int)own;
    for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS; i++) {
        uint64_t t;
        if ((held = vfdswmr_mdlock_marked(fd, i)) < 0) {
            *registered = -1;
            return false;
        }
        if (held) {
            (*registered)++;
            current = current && vfdswmr_marks_tick(w->marks, i, &t) == 1 && t >= tick;
        }
    }
    return current;
}

/* Publish a tick; store the pages that became due. */
static int
close_tick(vfdswmr_writer_t *w)
{
    if (vfdswmr_writer_end_tick(w, false) < 0)
        return 0; /* publishing failed: handled by the caller through w->error */
    return vfdswmr_pb_store_due(w->pb, w->tick, w->lag, w->eoa, store_page, w) < 0 ? -1 : 0;
}

/*
 * Close: the state now is final (the superblock was written after the last
 * flush), so publish it; keep ticking until every page has been in the index
 * max_lag ticks, writing each page to the HDF5 file when due; then publish
 * the final, empty index (FINAL) and remove the metadata file.
 * If publishing had failed, every page's current bytes go to the HDF5 file
 * at once instead: the file gets everything H5Fflush ever returned success
 * for. If writing the HDF5 file fails, the metadata file stays: it holds
 * the last published state, which recovery restores.
 */
static herr_t
writer_close(H5FD_t *file)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc = 0;
    bool complete = false;
    char err[VFDSWMR_MDW_ERRLEN];

    if (!w->active) {
        writer_free(w);
        return vfdswmr_stack_close(&w->base);
    }
    vfdswmr_ticker_stop(w);
    vfdswmr_registry_remove(w);
    w->closing = true;
    w->eot_disabled = false;
    if (w->base.cfg.flush_raw_data && sync_hdf5_file(w) < 0)
        rc = -1;
    if (vfdswmr_pb_consistency_point(w->pb, w->eoa) == 0) {
        w->cp_eoa = w->eoa;
        vfdswmr_writer_end_tick(w, false);
    }
    else if (!w->error[0])
        vfdswmr_writer_stop_publishing(w, "out of memory at close");
    if (!w->error[0]) {
        int stored = 0;
        /* Once no reader holds a snapshot older than the one just published
         * (none registered, or all marked at it or later), only it can be in
         * use, and its pages equal what goes to the HDF5 file: every page
         * may go at once. Until then, pages go when due. */
        uint64_t t0 = w->tick, due = 0;
        int registered = -1;
        /* Ticks as usual; readers are looked at ten times a tick. */
        double slice = vfdswmr_tick_seconds(w->base.cfg.tick_len) / 10,
               next = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
        while (!w->error[0] && stored == 0) {
            if (readers_current(w, t0, &registered)) {
                due = UINT64_MAX / 2;
                break;
            }
            if (w->tick >= vfdswmr_pb_last_due_tick(w->pb, w->lag))
                break;
            vfdswmr_sleep(slice);
            if (vfdswmr_now() >= next) {
                stored = close_tick(w);
                next += vfdswmr_tick_seconds(w->base.cfg.tick_len);
            }
        }
        VFDSWMR_LOG(&w->log, "close_wait", "readers=%d all_current=%d waited_ticks=%llu", registered, due != 0,
                    (unsigned long long)(w->tick - t0));
        if (stored < 0 || vfdswmr_pb_store_due(w->pb, due ? due : w->tick, w->lag, w->eoa, store_page, w) < 0)
            report_incomplete(w, "cannot write metadata pages to the HDF5 file at close");
        else
            complete = !w->error[0];
    }
    if (w->error[0] && vfdswmr_pb_store_current(w->pb, w->eoa, store_page, w) >= 0)
        complete = true; /* publishing failed, but the HDF5 file got every page */
    else if (w->error[0])
        report_incomplete(w, "publishing failed and the HDF5 file cannot take the metadata either");
    /* Every page is in the HDF5 file (durable first with flush_raw_data):
     * only now may the seal go -- the last write, so a writer that dies
     * before leaves a file plain HDF5 refuses. */
    if (complete && ((w->base.cfg.flush_raw_data && sync_hdf5_file(w) < 0) || vfdswmr_seal_clear(w) < 0 ||
                     VFDSWMR_GUARDED(herr_t, H5FDflush(LOWER(w), H5P_DEFAULT, true), _r < 0) < 0 ||
                     (w->base.cfg.flush_raw_data && sync_hdf5_file(w) < 0))) {
        report_incomplete(w, "cannot flush the HDF5 file at close");
        complete = false;
    }
    if (complete && !w->error[0])
        vfdswmr_writer_end_tick(w, true); /* empty index, FINAL: readers read the HDF5 file only */
    if (!complete || check_error(w) < 0)
        rc = -1;
    VFDSWMR_LOG(&w->log, "close", "ticks=%llu pages_published=%llu pages_written=%llu complete=%d",
                (unsigned long long)w->tick, w->pages_published, w->pages_stored, complete);
    if (vfdswmr_mdw_close(w->mdw, w->base.cfg.keep_metadata_file || !complete, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCLOSEFILE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        rc = -1;
    }
    vfdswmr_marks_close(w->marks);
    vfdswmr_rawlog_close(w->rawlog);
    writer_free(w);
    if (vfdswmr_stack_close(&w->base) < 0)
        rc = -1;
    return rc;
}

/* ---- I/O ------------------------------------------------------------------ */

static herr_t
writer_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;

    if (!w->active)
        return vfdswmr_ccf_read(&w->cc, LOWER(w), type, dxpl, addr, size, buf);
    pthread_mutex_lock(&w->lock);
    rc = vfdswmr_ccf_read(&w->cc, LOWER(w), type, dxpl, addr, size, buf);
    if (rc >= 0)
        rc = vfdswmr_seal_incoming(w, addr, size, buf);
    if (rc >= 0)
        vfdswmr_pb_read(w->pb, addr, size, buf);
    pthread_mutex_unlock(&w->lock);
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

    if (!w->active) {
        rc = vfdswmr_pt_write(file, type, dxpl, addr, size, buf);
        vfdswmr_ccf_written(&w->cc, addr, size, buf, rc >= 0);
        return rc;
    }
    pthread_mutex_lock(&w->lock);
    if (type == H5FD_MEM_DRAW) { /* raw data and the global heap: straight to the file */
        rc = vfdswmr_pt_write(file, type, dxpl, addr, size, buf);
        vfdswmr_ccf_written(&w->cc, addr, size, buf, rc >= 0);
        vfdswmr_rawlog_add(w->rawlog, vfdswmr_writer_write_tick(w), addr, size); /* even failed: bytes unknown */
        if (rc >= 0 && vfdswmr_pb_write_raw(w->pb, addr, size, buf) < 0) {
            /* A page of the publish under way cannot take the raw bytes: its
             * published image must never reach the HDF5 file. Stop publishing;
             * close writes every page's current bytes instead. */
            vfdswmr_writer_stop_publishing(w, "out of memory keeping a metadata page coherent with raw data");
            rc = check_error(w);
        }
    }
    else if (vfdswmr_pb_write(w->pb, addr, size, buf, fill_page, w) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot buffer a metadata write at address %llu (%zu bytes)",
                    VFDSWMR_WRITER_NAME, (unsigned long long)addr, size);
        rc = -1;
    }
    else {
        vfdswmr_seal_learn(w, addr, buf, size);
        if (type == H5FD_MEM_SUPER)
            note_swmr_write(w, buf, size);
    }
    pthread_mutex_unlock(&w->lock);
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

    if (!w->active) {
        herr_t prc = vfdswmr_pt_flush(file, dxpl, closing);
        if (w->read_only) /* a refresh (H5Drefresh...): see vfd_chunk_cache's flush */
            vfdswmr_ccf_invalidate_all(&w->cc);
        return prc;
    }
    pthread_mutex_lock(&w->lock);
    if (w->swmr_write || w->truncated) {
        if (w->base.cfg.flush_raw_data && sync_hdf5_file(w) < 0)
            rc = -1;
        else if (vfdswmr_pb_consistency_point(w->pb, w->eoa) < 0) {
            /* Part of the pages may have their snapshot now: publishing that
             * would show readers half a consistency point. Stop publishing;
             * close writes every page's current bytes to the HDF5 file. */
            vfdswmr_writer_stop_publishing(w, "out of memory taking a snapshot");
            rc = -1;
        }
        else
            w->cp_eoa = w->eoa;
        /* readers see the file at its full size (H5Fflush truncated it already) */
        if (rc >= 0 && !w->truncated)
            rc = vfdswmr_pt_truncate(file, dxpl, false);
        VFDSWMR_LOG(&w->log, "consistency_point", "eoa=%llu", (unsigned long long)w->eoa);
        if (rc >= 0 && expanded(w)) {
            w->early_tick = true;
            w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
            vfdswmr_writer_end_tick(w, false); /* a failure is in w->error: check_error below */
        }
    }
    w->truncated = false;
    if (rc >= 0 && vfdswmr_pb_store_due(w->pb, w->tick, w->lag, w->eoa, store_page, w) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write delayed metadata pages to the HDF5 file", VFDSWMR_WRITER_NAME);
        rc = -1;
    }
    if (rc >= 0)
        rc = vfdswmr_pt_flush(file, dxpl, closing);
    if (check_error(w) < 0)
        rc = -1;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static herr_t
writer_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;

    if (!w->active) {
        rc = vfdswmr_pt_truncate(file, dxpl, closing);
        vfdswmr_ccf_truncated(&w->cc, rc < 0 ? 0 : vfdswmr_pt_get_eof(file, H5FD_MEM_DEFAULT));
        return rc;
    }
    pthread_mutex_lock(&w->lock);
    rc = vfdswmr_pt_truncate(file, dxpl, closing);
    haddr_t eof = rc < 0 ? 0 : vfdswmr_pt_get_eof(file, H5FD_MEM_DEFAULT);
    eof = eof == HADDR_UNDEF ? 0 : eof;
    vfdswmr_ccf_truncated(&w->cc, eof);
    vfdswmr_rawlog_add(w->rawlog, vfdswmr_writer_write_tick(w), eof, UINT64_MAX - eof);
    w->truncated = true;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/*
 * The EOA never goes down while writing. HDF5 lowers it when it frees space
 * at the end of the file, and would then hand the same addresses to the next
 * allocation -- e.g. the new version of a compressed chunk that was just
 * rewritten -- while readers with an older snapshot still read the old data
 * there (raw data is not versioned by snapshots). Keeping the high-water mark
 * makes HDF5 allocate above it instead; the unused tail costs file space only.
 */
static herr_t
writer_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    vfdswmr_writer_t *w = W(file);
    herr_t rc;

    if (!w->active)
        return vfdswmr_pt_set_eoa(file, type, addr);
    pthread_mutex_lock(&w->lock);
    if (addr > w->eoa)
        w->eoa = addr;
    rc = vfdswmr_pt_set_eoa(file, type, w->eoa);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* The file as the writer sees it reaches at least its EOA, even while
 * metadata pages wait in memory. */
static haddr_t
writer_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    const vfdswmr_writer_t *w = (const vfdswmr_writer_t *)file;
    haddr_t eof = vfdswmr_pt_get_eof(file, type);

    if (w->active && eof != HADDR_UNDEF && eof < w->eoa)
        eof = w->eoa;
    return eof;
}

/* Readers open the file while the writer has it: no exclusive lock. The
 * metadata file, created atomically, keeps a second writer out. */
/* HDF5's own file lock: shared while writing, so plain readers (which take
 * it shared) can open the file, but a plain writer (exclusive) cannot. */
static herr_t
writer_lock(H5FD_t *file, hbool_t rw)
{
    return vfdswmr_pt_lock(file, W(file)->active ? true : rw);
}

static herr_t
writer_unlock(H5FD_t *file)
{
    return vfdswmr_pt_unlock(file);
}

/* ---- ctl operations (include/vfdswmr.h) ----------------------------------- */

static herr_t
ctl_locked(vfdswmr_writer_t *w, uint64_t op, const void *in, void **out)
{
    vfdswmr_pb_stats_t st;

    switch (op) {
    case VFDSWMR_CTL_END_TICK:
        if (w->eot_disabled) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: end of tick is disabled (vfdswmr_disable_end_of_tick)", VFDSWMR_WRITER_NAME);
            return -1;
        }
        w->next_tick = vfdswmr_now() + vfdswmr_tick_seconds(w->base.cfg.tick_len);
        return vfdswmr_writer_end_tick(w, false) < 0 ? check_error(w) : 0;
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
            return vfdswmr_writer_end_tick(w, false) < 0 ? check_error(w) : 0;
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

    if ((rc = vfdswmr_ccf_ctl(&w->cc, op, in, out)) != 1)
        return rc;
    if (!w->active && op >= VFDSWMR_CTL_END_TICK && op <= VFDSWMR_CTL_GET_STATUS) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: the file is open read-only; VFD SWMR is off", VFDSWMR_WRITER_NAME);
        return -1;
    }
    if (!w->active)
        return vfdswmr_pt_ctl(file, op, flags, in, out);
    pthread_mutex_lock(&w->lock);
    rc = ctl_locked(w, op, in, out);
    pthread_mutex_unlock(&w->lock);
    return rc == 1 ? vfdswmr_pt_ctl(file, op, flags, in, out) : rc;
}

static herr_t
writer_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, VFDSWMR_WRITER_NAME);
}

static const H5FD_class_t writer_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_WRITER_VALUE, VFDSWMR_WRITER_NAME),
    .open = writer_open,
    .close = writer_close,
    .read = writer_read,
    .write = writer_write,
    .flush = writer_flush,
    .truncate = writer_truncate,
    .set_eoa = writer_set_eoa,
    .get_eof = writer_get_eof,
    .lock = writer_lock,
    .unlock = writer_unlock,
    .ctl = writer_ctl,
    .del = writer_delete,
};

VFDSWMR_PLUGIN_EXPORT(writer_class)
