/*
 * Opening a file through vfd_swmr_writer: for writing, the steps of
 * start_swmr (each its own function, in the order that makes a refused
 * writer change nothing); read-only, a pass-through -- through
 * vfd_swmr_reader when a writer runs or died (needs_reader).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "clock.h"
#include "forked.h"
#include "h5err.h"
#include "mdlock.h"
#include "paths.h"
#include "recover.h"
#include "sessname.h"
#include "superblock.h"
#include "testhook.h"
#include "safefile.h"
#include "mdreader.h"
#include "rawlog.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

void
vfdswmr_writer_free(vfdswmr_writer_t *w)
{
    vfdswmr_pb_destroy(w->pb);
    vfdswmr_writer_dk_free(w);
    vfdswmr_ccf_fini(&w->cc);
    vfdswmr_log_close(&w->log);
    free(w->rec_name);
    w->rec_name = NULL;
    free(w->pend_name);
    w->pend_name = NULL;
    if (w->hdf5_lock_fd >= 0)
        close(w->hdf5_lock_fd);
    w->hdf5_lock_fd = -1;
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
                    "readers need; the driver keeps its own page buffer, so leave HDF5's off (h5py: no page_buf_size)",
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
    int fd = w->hdf5_fd;
    vfdswmr_take_t rc;
    struct stat a, b;

    if (w->hdf5_lock_fd >= 0) {
        /* taken before the truncating open (pre_lock): of this very file? */
        if (fd < 0 ||
            (fstat(fd, &a) == 0 && fstat(w->hdf5_lock_fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
            return 0;
        close(w->hdf5_lock_fd); /* the name was given to another file meanwhile: lock that one */
        w->hdf5_lock_fd = -1;
    }
    if (fd < 0 || (rc = vfdswmr_mdlock_hdf5_take(fd)) == VFDSWMR_TAKEN)
        return 0;
    if (rc == VFDSWMR_TAKE_ERROR) { /* a file system (or descriptor) without locks: the metadata file's lock alone */
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

    vfdswmr_sessname_t rec;
    bool elsewhere = vfdswmr_sessname_elsewhere(name, w->md_path, &rec); /* ours is recorded only after this */

    vfdswmr_recover_io_lower(LOWER(w), &io);
    if (vfdswmr_recover_run(old_fd, w->md_path, &io, name, w->hdf5_id, elsewhere ? &rec : NULL, false, &rep, err,
                            sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: a writer of \"%s\" crashed and its file cannot be recovered: %s",
                    VFDSWMR_WRITER_NAME, name, err);
        return -1;
    }
    *needed = rep.needed;
    w->pred = true; /* its metadata file keeps the name until ours replaces it (go_live) */
    w->pred_session = rep.session;
    if (rep.needed)
        VFDSWMR_LOG(&w->log, "recovered", "file=%s session=%llx tick=%llu pages=%u bytes=%llu eoa=%llu", name,
                    (unsigned long long)rep.session, (unsigned long long)rep.tick, rep.pages,
                    (unsigned long long)rep.bytes, (unsigned long long)rep.eoa);
    return 0;
}

/* Step 2, when this process writes the file already. HDF5 opens again
 * before it compares (cmp) with the files it has open, then drops this
 * handle and shares the open file: a plain handle on the lower file does.
 * It is never written through. */
static int
open_again(vfdswmr_writer_t *w, const char *name, unsigned flags, haddr_t maxaddr)
{
    w->active = false;
    if (flags & H5F_ACC_TRUNC) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: \"%s\" is open in this process: it cannot be truncated", VFDSWMR_WRITER_NAME,
                    name);
        return -1;
    }
    return vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr);
}

/* How old an unlocked "<md>.<random>.tmp" must be to be taken for the
 * leftover of a writer killed while it opened (seconds): a writer that is
 * opening holds its lock from a moment after creating it. */
#define STALE_TEMP_AGE 60

static void
remove_if_stale(const char *path, void *ctx)
{
    vfdswmr_writer_t *w = ctx;
    int fd = vfdswmr_open_regular(path, O_RDONLY);
    struct stat st;
    bool stale =
        fd >= 0 && fstat(fd, &st) == 0 && st.st_mtime + STALE_TEMP_AGE < time(NULL) && vfdswmr_mdlock_held(fd) == 0;

    if (fd >= 0)
        close(fd);
    if (stale && unlink(path) == 0)
        VFDSWMR_LOG(&w->log, "removed", "%s: a temporary metadata file of a writer killed while opening", path);
}

/* The directories this process looked through for stale temporaries, and
 * when: reading a directory costs time in proportion to its entries
 * (thousands of data files in a beamline's directory), and a temporary
 * younger than STALE_TEMP_AGE is kept anyway, so one look per directory
 * per STALE_TEMP_AGE is all a process needs -- a temporary left meanwhile
 * goes at its next look, or at the first writer open of another process. */
#define SCANNED_DIRS 8
struct scanned_dir {
    dev_t dev;
    ino_t ino;
    double at; /* vfdswmr_now(); 0: slot free */
};
static struct scanned_dir scanned[SCANNED_DIRS];
static pthread_mutex_t scanned_mu = PTHREAD_MUTEX_INITIALIZER;

/* Is it time to look through md_path's directory again? Marks it looked at. */
static bool
scan_due(const char *md_path)
{
    char *dir = vfdswmr_path_dir_dup(md_path);
    struct stat st;
    double now = vfdswmr_now();
    size_t slot = 0;
    bool due = true;

    if (dir == NULL || stat(dir, &st) < 0) {
        free(dir);
        return true;
    }
    free(dir);
    pthread_mutex_lock(&scanned_mu);
    for (size_t i = 0; i < SCANNED_DIRS; i++) {
        if (scanned[i].at > 0 && scanned[i].dev == st.st_dev && scanned[i].ino == st.st_ino) {
            due = now - scanned[i].at >= STALE_TEMP_AGE;
            slot = i;
            break;
        }
        if (scanned[i].at < scanned[slot].at)
            slot = i; /* the least recently looked at, or a free one */
    }
    if (due)
        scanned[slot] = (struct scanned_dir){st.st_dev, st.st_ino, now};
    pthread_mutex_unlock(&scanned_mu);
    return due;
}

/* Step 3: our metadata file (and its read-mark table; the raw-data log
 * comes with a reader, publish.c), created and locked under a temporary
 * name; it takes its name now unless
 * it must replace a crashed writer's (step 7). Temporaries earlier writers
 * left when killed while opening go first (not locked, older than
 * STALE_TEMP_AGE s; looked for once per directory per STALE_TEMP_AGE s). */
static int
create_md(vfdswmr_writer_t *w, const vfdswmr_mdw_opts_t *o, bool replace)
{
    char err[VFDSWMR_MDW_ERRLEN];

    char marks[sizeof w->md_path + 16];
    bool have_marks = o->md_path && vfdswmr_marks_name(marks, sizeof marks, w->md_path) == 0;

    if (o->md_path && scan_due(o->md_path)) {
        vfdswmr_temps_each(o->md_path, remove_if_stale, w);
        if (have_marks) /* a reader's, where the file system has no unnamed files */
            vfdswmr_temps_each(marks, remove_if_stale, w);
    }
    if (vfdswmr_mdw_open(o, &w->mdw, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        return -1;
    }
    w->lag = w->base.cfg.max_lag;
    /* The read-mark table: the first reader that needs it makes it, and
     * every publish looks for it until it is there (publish.c). An earlier
     * session's goes before the metadata file has its name, so that no
     * reader of ours finds it. */
    if (have_marks)
        vfdswmr_marks_clear(w->md_path);
    w->marks_look = have_marks;
    /* The raw-data write log comes once a reader is registered (publish.c,
     * start_rawlog); a writer keeping no metadata file has none. */
    w->rawlog_done = !o->md_path;
    if (!replace && vfdswmr_mdw_link(w->mdw, false, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        return -1;
    }
    return 0;
}

/* Before a truncating open of an existing file: the writer's lock, on a
 * descriptor of our own, so that a writer refused for another's lock has
 * truncated nothing. Checking it at step 2 is not enough: a writer whose
 * setup is deferred holds it with no metadata file at its name yet, and a
 * live writer's metadata file may have been removed by hand. */
static int
pre_lock(vfdswmr_writer_t *w, const char *name)
{
    /* through symbolic links, as the lower driver's own open goes */
    int fd = open(name, O_RDWR | O_CLOEXEC | O_NONBLOCK);
    vfdswmr_take_t rc;
    struct stat st;

    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return 0; /* not there (created now), or not a file: the lower driver says so */
    if ((rc = vfdswmr_mdlock_hdf5_take(fd)) == VFDSWMR_TAKEN) {
        w->hdf5_lock_fd = fd;
        return 0;
    }
    close(fd);
    if (rc == VFDSWMR_TAKE_ERROR) /* no locks here: as take_hdf5_lock */
        return 0;
    VFDSWMR_ERR(H5E_CANTOPENFILE,
                "%s: another writer has \"%s\" open (it holds the file's writer lock): not truncated; nothing was "
                "changed",
                VFDSWMR_WRITER_NAME, name);
    return -1;
}

/* Step 4: the HDF5 file through the lower driver, with the writer's lock on
 * it (open_lower); its inode goes into the metadata file. */
static int
open_lower(vfdswmr_writer_t *w, const char *name, unsigned flags, haddr_t maxaddr)
{
    struct stat st;

    if ((flags & H5F_ACC_TRUNC) && pre_lock(w, name) < 0)
        return -1;
    if (vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr) < 0)
        return -1;
    /* asked of HDF5 once (the ticker must not): the stack did for sec2 */
    w->hdf5_fd = w->base.on_sec2 ? w->base.sec2_fd : vfdswmr_lower_fd(LOWER(w));
    /* sec2 opens without O_CLOEXEC: a program started by this one (system(),
     * popen(), posix_spawn: no fork handler runs) would keep the writer's
     * locks on the HDF5 file (common/forked.h) */
    if (w->hdf5_fd >= 0)
        (void)fcntl(w->hdf5_fd, F_SETFD, fcntl(w->hdf5_fd, F_GETFD) | FD_CLOEXEC);
    vfdswmr_writer_kept_open(w);
    if (take_hdf5_lock(w, name) < 0)
        return -1;
    w->hdf5_id = stat(name, &st) == 0 ? (uint64_t)st.st_ino : 0;
    if (w->base.cfg.durable && w->hdf5_fd < 0) {
        VFDSWMR_ERR(H5E_BADVALUE,
                    "%s: durable=1 needs a lower driver with a POSIX file descriptor to fsync (sec2, log), "
                    "not \"%s\"",
                    VFDSWMR_WRITER_NAME, w->base.cfg.under_name);
        return -1;
    }
    return 0;
}

static int
set_hdf5_id(vfdswmr_writer_t *w)
{
    if (vfdswmr_mdw_set_hdf5_id(w->mdw, w->hdf5_id) == 0)
        return 0;
    VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write metadata file %s: %s", VFDSWMR_WRITER_NAME, w->md_path,
                strerror(errno));
    return -1;
}

static int
open_hdf5(vfdswmr_writer_t *w, const char *name, unsigned flags, haddr_t maxaddr)
{
    return open_lower(w, name, flags, maxaddr) == 0 && set_hdf5_id(w) == 0 ? 0 : -1;
}

/* Step 7: our metadata file replaces the crashed writer's (old_fd, which is
 * released then) and goes live; the tick thread starts. */
static int
go_live(vfdswmr_writer_t *w, const char *name, bool replace, int *old_fd)
{
    char err[VFDSWMR_MDW_ERRLEN];

    if ((replace && vfdswmr_mdw_link(w->mdw, true, err, sizeof err) < 0) ||
        vfdswmr_mdw_go_live(w->mdw, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: %s", VFDSWMR_WRITER_NAME, err);
        return -1;
    }
    if (*old_fd >= 0) {
        close(*old_fd); /* releases the crashed writer's file, replaced now */
        /* and its raw-data log: ours comes with a reader (publish.c), if at
         * all, and nobody reads the dead session's (vfd_swmr_recover
         * removes it the same way) */
        char raw[sizeof w->md_path + 8];
        if (vfdswmr_rawlog_name(raw, sizeof raw, w->md_path) == 0)
            (void)unlink(raw);
    }
    *old_fd = -1;
    if (w->pred) { /* ours has the name now: the file records our session */
        w->pred = false;
        (void)vfdswmr_seal_name_session(w, name, false);
    }
    w->eoa = w->cp_eoa = w->lib_eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(w), H5FD_MEM_DEFAULT), false);
    /* what a reader adopting tick 0 reads: the file as it is now */
    w->tick0_eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eof(LOWER(w), H5FD_MEM_DEFAULT), false);
    if (w->tick0_eoa == HADDR_UNDEF)
        w->tick0_eoa = UINT64_MAX;
    if (w->tick0_eoa > w->cp_eoa)
        w->cp_eoa = w->tick0_eoa;
    w->snap_end = w->cp_eoa;
    /* The file must reach the newest snapshot's end until a later one is
     * published (recovery refuses a shorter file): tick 0 ends at the
     * file's size, which may pass HDF5's end (a file recovered at open;
     * bytes past HDF5's end), and HDF5's truncate cuts to w->eoa -- the
     * first flush's publish lets eoa_flushed cut it (eoa.c). */
    if (w->cp_eoa != UINT64_MAX && w->cp_eoa > w->eoa) {
        w->eoa = w->cp_eoa;
        if (vfdswmr_pt_set_eoa(&w->base.pub, H5FD_MEM_DEFAULT, w->eoa) < 0)
            return -1;
    }
    w->tick = vfdswmr_mdw_tick(w->mdw);
    w->epoch = 1; /* tick 0 is epoch 0 (pub_epoch, pub_eoa 0) */
    vfdswmr_mdw_index(w->mdw, &w->index_entries);
    /* readers find us now: one that holds the file as it is and looked for
     * a writer just before may read on without looking for a moment (the
     * quiet window, mdlock.h); wait that moment out before writing. A
     * lower driver without a descriptor (stdio, ...): the file by name,
     * where readers register (no such file: no reader registered on it). */
    int fd = vfdswmr_writer_name_fd(w, name);
    if (fd >= 0 && vfdswmr_mdlock_quiet_wait(fd) == 1)
        VFDSWMR_LOG(&w->log, "open", "waited %.0f ms for readers holding the file as it was to notice us",
                    VFDSWMR_QUIET_WAIT_US / 1e3);
    if (fd >= 0 && fd != w->hdf5_fd)
        close(fd);
    if (vfdswmr_ticker_start(w) < 0) {
        VFDSWMR_ERR(H5E_CANTINIT, "%s: cannot start the tick thread: %s", VFDSWMR_WRITER_NAME, strerror(errno));
        return -1;
    }
    vfdswmr_registry_add(w, name);
    VFDSWMR_LOG(&w->log, "open", "file=%s md=%s session=%llx swmr_write=%d tick_len=%u max_lag=%u", name, w->md_path,
                (unsigned long long)vfdswmr_mdw_session(w->mdw), w->swmr_write, w->base.cfg.tick_len,
                w->base.cfg.max_lag);
    return 0;
}

/* A refused writer changes nothing: the seal it set goes (the file is as
 * found, or as recovered, which the seal must not hide either), our
 * metadata file and side files go, and so does our record. */
static void
abandon(vfdswmr_writer_t *w, const char *name, int *old_fd)
{
    char err[VFDSWMR_MDW_ERRLEN];

    if (w->sb_sealed) {
        vfdswmr_writer_lock(w);
        (void)vfdswmr_seal_clear(w); /* a failure is on the error stack: the file stays refused, never wrong */
        vfdswmr_writer_unlock(w);
    }
    vfdswmr_fork_hold(); /* a fork meanwhile would find them half closed */
    if (w->mdw)
        vfdswmr_mdw_close(w->mdw, false, err, sizeof err); /* removes our metadata file, never another's */
    w->mdw = NULL;
    vfdswmr_marks_close(w->marks);
    w->marks = NULL;
    vfdswmr_rawlog_close(w->rawlog);
    w->rawlog = NULL;
    vfdswmr_fork_release();
    /* Our record goes: it names a session that never was. A crashed
     * writer's we were taking over stays recorded (its metadata file keeps
     * the name). */
    if (w->named && !w->pred) /* a crashed writer's session stays recorded */
        vfdswmr_seal_unname_session(w, name);
    free(w->rec_name);
    w->rec_name = NULL;
    if (*old_fd >= 0)
        close(*old_fd);
    *old_fd = -1;
}

/*
 * The deferred open (writer.h, `pending`). HDF5 opens a file it is asked to
 * create with H5F_ACC_TRUNC first without TRUNC and CREAT, only to compare
 * it with the files it has open, and closes that handle again (H5F_open's
 * "tentative" open): done in full, a session of its own -- metadata file,
 * read-mark table, record, seal, tick thread, all made and undone -- for
 * every h5py File(name, "w") over an existing file. So an existing file
 * opened without TRUNC and CREAT, with no metadata file anywhere (nothing
 * to recover or claim), gets only step 4 now: the lower file, opened
 * without changing it, and the writer's lock on it (a lower driver
 * without a descriptor has none: the rest follows at once), which refuses
 * every other writer from here (they look for it at their step 2 and take it at
 * their step 4; such an open changes nothing either). Steps 3, 6 and 7 come
 * at the first call that reaches the file (vfdswmr_writer_setup); until
 * then nothing of the file is written, so readers read it as it is and a
 * crash leaves nothing to recover. A writer starting at the same moment
 * may have linked its metadata file meanwhile (it is refused at its step
 * 4 and removes it): then our setup fails too, as a refused writer.
 */
static int
defer_setup(vfdswmr_writer_t *w, const char *name, unsigned flags, haddr_t maxaddr, const vfdswmr_mdw_opts_t *o,
            const char *ud_base)
{
    int none = -1;

    if (NULL == (w->pend_name = strdup(name))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", VFDSWMR_WRITER_NAME);
        return -1;
    }
    w->pend_o = *o;
    snprintf(w->pend_ud_base, sizeof w->pend_ud_base, "%s", ud_base);
    w->pend_o.ud_base = o->ud_base ? w->pend_ud_base : NULL;
    if (open_lower(w, name, flags, maxaddr) < 0) {
        abandon(w, name, &none);
        return -1;
    }
    w->pending = true;
    /* a lower driver without a descriptor holds no writer's lock: only the
     * metadata file's link keeps other writers out, so it comes now */
    if (w->hdf5_fd < 0)
        return vfdswmr_writer_setup(w);
    VFDSWMR_LOG(&w->log, "open", "file=%s: setup deferred to the first call that reaches the file", name);
    return 0;
}

int
vfdswmr_writer_setup(vfdswmr_writer_t *w)
{
    int none = -1;

    if (!w->pending && w->setup_failed)
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" could not be opened for writing (the reason was reported at its "
                    "first use); close it",
                    VFDSWMR_WRITER_NAME, w->pend_name);
    if (!w->pending)
        return w->setup_failed ? -1 : 0;
    w->pending = false;
    VFDSWMR_ASSERT(!w->ticker_running && w->mdw == NULL);
    bool tainted = w->kept.tainted; /* slot bytes held at open or now: kept.c */
    vfdswmr_writer_kept_open(w);
    w->kept.tainted = w->kept.tainted || tainted;
    if (create_md(w, &w->pend_o, false) == 0 && set_hdf5_id(w) == 0 &&
        vfdswmr_seal_at_open(w, w->pend_name, false) == 0 && go_live(w, w->pend_name, false, &none) == 0)
        return 0;
    abandon(w, w->pend_name, &none);
    w->setup_failed = true;
    return -1;
}

/*
 * Open for writing. Order matters (a refused writer changes nothing):
 *  1. configuration and paths (no file touched);
 *  2. the metadata file at its name -- or, with none there, at the name the
 *     HDF5 file records (mdfile/sessname.h), which this session then uses:
 *     a live writer's is refused, a crashed writer's is locked and kept for
 *     recovery (vfdswmr_claim_md);
 *  3. our own metadata file, created and locked under a temporary name; with
 *     no metadata file there, it takes the name now, so a second writer
 *     starting at the same moment is refused before it opens the HDF5 file;
 *  4. the HDF5 file, through the lower driver, with the caller's flags;
 *  5. recovery from the crashed writer's metadata file (not when truncating);
 *  6. the HDF5 file records our metadata file's name, then the seal on its
 *     superblock (seal.c): plain HDF5 refuses the file from now until close
 *     or recovery;
 *  7. our metadata file replaces the crashed writer's.
 */
static int
start_swmr(vfdswmr_writer_t *w, const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    const vfdswmr_config_t *cfg = &w->base.cfg;
    char ud_base[VFDSWMR_MAX_PATH + 64];
    vfdswmr_mdw_opts_t o = {.page_size = VFDSWMR_WRITER_PAGE_SIZE,
                            .reserved_pages = cfg->md_pages_reserved,
                            .max_lag = cfg->max_lag,
                            .tick_len = cfg->tick_len,
                            .durable = cfg->durable,
                            .defer_link = true};
    int old_fd = -1;
    vfdswmr_claim_t claim = VFDSWMR_CLAIM_FREE;
    bool replace, recovered = false, trunc = (flags & H5F_ACC_TRUNC) != 0;

    if (prepare_swmr(w, name, fapl, ud_base, sizeof ud_base) < 0)
        return -1;
    o.md_path = cfg->maintain_metadata_file ? w->md_path : NULL;
    o.ud_base = cfg->generate_updater_files ? ud_base : NULL;
    o.ud_keep_ticks = cfg->updater_keep_ticks ? cfg->updater_keep_ticks : cfg->max_lag + 1;
    if (o.md_path && (claim = vfdswmr_claim_md(w, name, &old_fd)) == VFDSWMR_CLAIM_REFUSED)
        return -1;
    if (claim == VFDSWMR_CLAIM_AGAIN)
        return open_again(w, name, flags, maxaddr);
    vfdswmr_test_kill_point("claimed"); /* found no writer: another may take the file now (deferred_open.sh) */
    replace = claim == VFDSWMR_CLAIM_CRASHED || claim == VFDSWMR_CLAIM_REPLACE;
    if (claim == VFDSWMR_CLAIM_FREE && !(flags & (H5F_ACC_TRUNC | H5F_ACC_CREAT)) && o.md_path && !w->pred && !w->named)
        return defer_setup(w, name, flags, maxaddr, &o, ud_base);
    if (create_md(w, &o, replace) == 0 && open_hdf5(w, name, flags, maxaddr) == 0 &&
        (old_fd < 0 || trunc || recover_crashed(w, old_fd, name, &recovered) == 0) &&
        (trunc ? vfdswmr_seal_name_session(w, name, true) : vfdswmr_seal_at_open(w, name, recovered)) == 0 &&
        go_live(w, name, replace, &old_fd) == 0)
        return 0;
    abandon(w, name, &old_fd);
    return -1;
}

/*
 * A read-only open through the writer driver reads the HDF5 file as it is:
 * wrong while a writer runs, or after one died, since metadata reaches the
 * file max_lag ticks late. Then it reads through vfd_swmr_reader instead,
 * which sees the writer's newest published snapshot (a dead writer's last
 * one: what its last flush left). 1: read through the reader; 0: as it is.
 */
static int
needs_reader(vfdswmr_writer_t *w, const char *name)
{
    char md[VFDSWMR_MAX_PATH + 64];
    vfdswmr_mdhdr_t h;
    int fd;
    bool closed;

    if (vfdswmr_registry_writes(name))
        return 0; /* this process writes it: HDF5 shares the open file (as on sec2) */
    if (vfdswmr_md_path(&w->base.cfg, name, md, sizeof md) < 0)
        return 0;
    if ((fd = vfdswmr_open_md(md, O_RDONLY)) == VFDSWMR_OPEN_FAILED && errno == ENOENT &&
        vfdswmr_sessname_find(name, vfdswmr_sb_sealed_fd, md, sizeof md) == 1) /* the reader finds it there too */
        fd = vfdswmr_open_md(md, O_RDONLY);
    if (fd < 0)                         /* a link: the reader refuses it, saying why */
        return fd == VFDSWMR_OPEN_LINK; /* else no metadata file: no writer, or one that closed */
    closed = vfdswmr_mdr_read_header(fd, &h) == VFDSWMR_MD_OK && (h.flags & VFDSWMR_MDHDR_FINAL);
    close(fd);
    return !closed;
}

/* Append `key=value` to out (holding n bytes) with the parser's escapes
 * (drvconfig.h). The new length, or len when it does not fit. */
static size_t
put_escaped(char *out, size_t n, size_t len, const char *key, const char *value)
{
    int k = snprintf(out + n, len - n, "%s%s=", n ? ";" : "", key);

    if (k < 0 || (size_t)k >= len - n)
        return len;
    n += (size_t)k;
    for (const char *c = value; *c; c++) {
        if (n + 2 >= len)
            return len;
        if (strchr("\\;() \t\r\n", *c))
            out[n++] = '\\';
        out[n++] = *c;
    }
    out[n] = '\0';
    return n;
}

/* Make vfd_swmr_reader the lower driver, configured to find the same
 * metadata file and to sit on the configured lower driver. */
static int
lower_through_reader(vfdswmr_writer_t *w)
{
    vfdswmr_config_t *c = &w->base.cfg;
    char cfg[sizeof c->under_config];
    size_t n = 0;
    int k;

    cfg[0] = '\0';
    if (c->md_file_path[0])
        n = put_escaped(cfg, n, sizeof cfg, "md_file_path", c->md_file_path);
    if (c->md_file_name[0] && n < sizeof cfg)
        n = put_escaped(cfg, n, sizeof cfg, "md_file_name", c->md_file_name);
    if (n >= sizeof cfg ||
        (k = snprintf(cfg + n, sizeof cfg - n, "%sunder=%s%s%s%s", n ? ";" : "", c->under_name,
                      c->under_has_config ? "(" : "", c->under_has_config ? c->under_config : "",
                      c->under_has_config ? ")" : "")) < 0 ||
        (size_t)k >= sizeof cfg - n) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: the configuration is too long to read the file through %s", VFDSWMR_WRITER_NAME,
                    VFDSWMR_READER_NAME);
        return -1;
    }
    snprintf(c->under_name, sizeof c->under_name, "%s", VFDSWMR_READER_NAME);
    memcpy(c->under_config, cfg, sizeof cfg);
    c->under_has_config = true;
    return 0;
}

/* Read-only: the HDF5 file as it is, or through vfd_swmr_reader. */
static int
open_read_only(vfdswmr_writer_t *w, const char *name, unsigned flags, haddr_t maxaddr)
{
    bool via_reader = needs_reader(w, name);

    if (via_reader && lower_through_reader(w) < 0)
        return -1;
    if (vfdswmr_stack_open_lower(&w->base, name, flags, maxaddr) < 0) {
        if (via_reader)
            VFDSWMR_ERR(H5E_CANTOPENFILE,
                        "%s: \"%s\" is being written, or its writer died: a read-only open reads it through %s, which "
                        "could not open it (the reason is below; the driver must be on HDF5_PLUGIN_PATH)",
                        VFDSWMR_WRITER_NAME, name, VFDSWMR_READER_NAME);
        return -1;
    }
    return 0;
}

/* The lock, the condition the tick thread waits on with timeouts on
 * CLOCK_MONOTONIC, and the one a publish's end is signalled on. 0, or an
 * error number (nothing left initialised). */
static int
init_sync(vfdswmr_writer_t *w)
{
    int rc;

    if ((rc = pthread_mutex_init(&w->lock, NULL)) != 0)
        return rc;
    rc = vfdswmr_cond_init(&w->wake);
    if (rc == 0 && (rc = pthread_cond_init(&w->published, NULL)) != 0)
        pthread_cond_destroy(&w->wake);
    if (rc != 0)
        pthread_mutex_destroy(&w->lock);
    return rc;
}

H5FD_t *
vfdswmr_writer_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
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
        vfdswmr_writer_free(w);
        free(w);
        return NULL;
    }
    w->sb_addr = UINT64_MAX;
    w->hdf5_fd = w->hdf5_lock_fd = -1;
    /* from now until its descriptors are closed (the drop copes with any
     * state); out of memory: a fork child keeps its locks */
    (void)vfdswmr_fork_track(w, vfdswmr_writer_drop_in_child);
    /* A read-only open through the writer driver (h5dump, probes): pass through. */
    w->active = (flags & H5F_ACC_RDWR) != 0;
    w->read_only = !w->active;
    w->swmr_write = (flags & H5F_ACC_SWMR_WRITE) != 0;
    /* As in vfd_chunk_cache: under HDF5's own SWMR another process changes
     * chunks in place, unseen here. */
    if (flags & H5F_ACC_SWMR_READ)
        vfdswmr_ccf_forbid(&w->cc, "it is open for SWMR reading (H5F_ACC_SWMR_READ), and another process writing "
                                   "it would leave cached chunks stale; read it through vfd_swmr_reader");
    if (w->active ? start_swmr(w, name, flags, fapl, maxaddr) < 0 : open_read_only(w, name, flags, maxaddr) < 0) {
        vfdswmr_fork_untrack(w); /* start_swmr closed ours; the lower file is closed next */
        vfdswmr_writer_free(w);
        if (w->base.lower)
            vfdswmr_stack_close(&w->base);
        else
            free(w);
        return NULL;
    }
    return &w->base.pub;
}
