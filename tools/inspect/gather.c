/*
 * The state of one session, found without writing or locking anything; see
 * inspect.h. The writer's state follows from who holds the drivers' locks
 * (mdfile/mdlock.h) and from the metadata file's header flags, in the terms
 * of vfdswmr_status_t.writer_state (a reader looks at FINAL before the
 * lock: between a closing writer's FINAL publish and its unlock it says
 * closed where this says running):
 *   a lock held            running (failed: the header says FAILED)
 *   no lock, header FINAL  closed
 *   no lock, otherwise     died (recovery predicted, dry)
 *   no metadata file       running when the HDF5 file's writer lock is
 *                          held, died when its superblock is sealed, else none
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errtext.h"
#include "inspect.h"
#include "io.h"
#include "marks.h"
#include "mdlock.h"
#include "paths.h"
#include "rawlog.h"
#include "safefile.h"
#include "sessname.h"
#include "superblock.h"

const char *
insp_open_error(int rc)
{
    return rc == VFDSWMR_OPEN_LINK          ? "a symbolic link"
           : rc == VFDSWMR_OPEN_NOT_REGULAR ? "not a regular file"
                                            : strerror(errno);
}

/* A reason the view cannot be given: into s->message (main prints it as
 * JSON with --json) and on stderr. -1. */
static int fail(insp_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int
fail(insp_t *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->message, sizeof s->message, fmt, ap);
    va_end(ap);
    out_line(stderr, PROG ": %s", s->message);
    return -1;
}

/* Open the metadata file at path read-only: 0 (s->md_fd set, -1 when there
 * is none), or -1 with the message printed. */
static int
open_md(const char *path, insp_t *s)
{
    char why[8192];

    s->md_fd = vfdswmr_open_md(path, O_RDONLY);
    if (s->md_fd >= 0)
        return 0;
    if (s->md_fd == VFDSWMR_OPEN_FAILED && errno == ENOENT) {
        s->md_fd = -1;
        return 0;
    }
    int rc = s->md_fd, e = errno;
    s->md_fd = -1;
    if (rc == VFDSWMR_OPEN_LINK) {
        vfdswmr_md_link_text(path, why, sizeof why);
        return fail(s, "%s", why);
    }
    if (rc == VFDSWMR_OPEN_NOT_REGULAR)
        return fail(s, "metadata file %s is not a regular file (a FIFO, device or directory): no writer made it", path);
    return fail(s, "cannot open metadata file %s: %s", path, strerror(e));
}

void
insp_reload(insp_t *s)
{
    struct stat st;
    char why[512];
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&s->md_fd);
    vfdswmr_mdr_opts_t opts;

    if (s->have_snap)
        vfdswmr_mdsnap_free(&s->snap);
    s->have_hdr = s->have_snap = s->have_age = false;
    s->load_err[0] = '\0';
    if (s->md_fd < 0)
        return;
    if (fstat(s->md_fd, &st) == 0) {
        struct timespec now;
        s->md_size = (uint64_t)st.st_size;
        clock_gettime(CLOCK_REALTIME, &now);
        s->age_s = (double)(now.tv_sec - st.st_mtim.tv_sec) + (double)(now.tv_nsec - st.st_mtim.tv_nsec) * 1e-9;
        s->have_age = true;
    }
    vfdswmr_mderr_t rc = vfdswmr_mdr_read_header(s->md_fd, &s->hdr);
    if (rc != VFDSWMR_MD_OK) {
        snprintf(s->load_err, sizeof s->load_err, "header: %s%s%s", vfdswmr_mderr_str(rc),
                 rc == VFDSWMR_MD_EIO ? ": " : "", rc == VFDSWMR_MD_EIO ? strerror(errno) : "");
        return;
    }
    s->have_hdr = true;
    vfdswmr_mdr_opts_default(&opts);
    if (vfdswmr_mdr_load(&io, &opts, &s->snap, why, sizeof why) == VFDSWMR_MD_OK) {
        s->hdr = s->snap.hdr; /* the header of the snapshot loaded, which may be newer */
        s->have_snap = true;
    }
    else
        snprintf(s->load_err, sizeof s->load_err, "%s", why);
}

void
insp_readers(insp_t *s)
{
    vfdswmr_markshdr_t mh;
    unsigned count;
    int fd;

    vfdswmr_count_t rc = s->h5_fd >= 0 ? vfdswmr_mdlock_registered(s->h5_fd, &count) : VFDSWMR_COUNT_ERROR;

    s->registered = rc == VFDSWMR_COUNTED ? (long)count : -1;
    s->shared = rc == VFDSWMR_COUNT_SHARED;
    s->have_readers = false;
    s->nmarks = s->unmarked = 0;
    if (!s->have_hdr || (fd = vfdswmr_marks_open(s->md_path, s->hdr.session, O_RDONLY, &mh)) < 0)
        return;
    insp_mark_t *m = realloc(s->marks, (size_t)mh.nslots * sizeof *m);
    if (m == NULL) {
        close(fd);
        return;
    }
    s->marks = m;
    s->release_below = mh.release_below;
    for (unsigned slot = 0; slot < mh.nslots; slot++) {
        uint64_t epoch; /* what readers mark (vfd-swmr-reader/locate.c) */
        switch (vfdswmr_marks_slot(fd, slot, &epoch)) {
        case VFDSWMR_SLOT_MARKED:
            s->marks[s->nmarks++] = (insp_mark_t){slot, epoch};
            break;
        case VFDSWMR_SLOT_UNMARKED:
            s->unmarked++;
            break;
        case VFDSWMR_SLOT_FREE:
            break;
        }
    }
    close(fd);
    s->have_readers = true;
}

int
insp_rawlog(const insp_t *s, vfdswmr_rawloghdr_t *h, char *why, size_t whylen)
{
    char path[VFDSWMR_MAX_PATH + 128];
    size_t max = vfdswmr_rawlog_size(VFDSWMR_RAWLOG_MAX);
    vfdswmr_mderr_t rc = VFDSWMR_MD_EIO;
    uint8_t *buf;
    int fd;

    memset(h, 0, sizeof *h);
    if (vfdswmr_rawlog_name(path, sizeof path, s->md_path) < 0)
        return 0;
    if ((fd = vfdswmr_open_md(path, O_RDONLY)) < 0) {
        if (fd == VFDSWMR_OPEN_FAILED && errno == ENOENT)
            return 0;
        snprintf(why, whylen, "%s", insp_open_error(fd));
        return -1;
    }
    if ((buf = malloc(max)) == NULL) {
        close(fd);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (int attempt = 0; attempt < 20; attempt++) {
        vfdswmr_rawrange_t *r = NULL;
        ssize_t n = vfdswmr_pread_upto(fd, buf, max, 0);
        if (n < 0) {
            rc = VFDSWMR_MD_EIO;
            break;
        }
        rc = vfdswmr_rawlog_decode(buf, (size_t)n, h, &r);
        free(r);
        if (rc == VFDSWMR_MD_OK || !vfdswmr_mderr_retryable(rc))
            break;
        struct timespec ts = {0, 1000000}; /* the writer rewrites it in place: read it again */
        nanosleep(&ts, NULL);
    }
    free(buf);
    close(fd);
    if (rc == VFDSWMR_MD_OK)
        return 1;
    snprintf(why, whylen, "%s", vfdswmr_mderr_str(rc));
    return -1;
}

/* The raw-data log of the session, when it decodes. */
static void
read_rawlog(insp_t *s)
{
    char why[256];

    s->have_rawlog = s->have_hdr && insp_rawlog(s, &s->raw, why, sizeof why) == 1 && s->raw.session == s->hdr.session;
}

static void
predict_recovery(const insp_opts_t *o, insp_t *s)
{
    vfdswmr_recover_io_t io;
    vfdswmr_sessname_t recorded;
    bool elsewhere;

    s->have_recovery = true;
    s->refused[0] = '\0';
    if (s->h5_fd < 0) {
        snprintf(s->refused, sizeof s->refused, "the HDF5 file %s cannot be opened", o->file);
        return;
    }
    vfdswmr_recover_io_readonly(&s->h5_fd, &io);
    elsewhere = vfdswmr_sessname_elsewhere(o->file, s->md_path, &recorded);
    if (vfdswmr_recover_predict(s->md_fd, s->md_path, &io, o->file, s->h5_ino, elsewhere ? &recorded : NULL, &s->rep,
                                s->refused, sizeof s->refused) == 0)
        s->refused[0] = '\0';
    else if (s->refused[0] == '\0')
        snprintf(s->refused, sizeof s->refused, "recovery would fail");
}

/* Decide the writer's state (see the top of this file); predict a dead
 * writer's recovery when `predict`. */
static void
writer_state(const insp_opts_t *o, insp_t *s, bool predict)
{
    bool locked = s->h5_locked || s->md_locked;

    s->foreign = false;
    s->have_recovery = false;

    if (s->md_fd < 0) {
        int sealed = s->h5_fd >= 0 ? vfdswmr_sb_sealed_fd(s->h5_fd) : 0;
        if (locked) {
            s->state = "running";
            snprintf(s->message, sizeof s->message,
                     "a writer holds %s but has no metadata file at %s: it has not set up yet (nothing published "
                     "yet), keeps no metadata file (updater files only), or keeps it elsewhere (give its "
                     "md_file_path/md_file_name with --config)",
                     o->file, s->md_path);
        }
        else if (sealed == 1) {
            s->state = "died";
            snprintf(s->message, sizeof s->message,
                     "%s is sealed by a vfd_swmr_writer that died, but there is no metadata file at %s", o->file,
                     s->md_path);
            s->have_recovery = true;
            snprintf(s->refused, sizeof s->refused,
                     "no metadata file %s to recover from: give the writer's md_file_path/md_file_name with --config; "
                     "if its metadata file is lost, vfd_swmr_recover --force clears the seal and leaves the file as "
                     "its writer left it on disk",
                     s->md_path);
        }
        else {
            s->state = "none";
            snprintf(s->message, sizeof s->message,
                     "no writer session: no metadata file at %s and no writer holds the file", s->md_path);
        }
        return;
    }
    if (!s->have_hdr) {
        s->state = locked ? "running" : "died";
        snprintf(s->message, sizeof s->message, "metadata file %s cannot be read: %s", s->md_path, s->load_err);
        if (!locked && predict)
            predict_recovery(o, s);
        return;
    }
    if (vfdswmr_hdf5_id_foreign(&s->hdr, s->h5_ino)) {
        /* another file's -- or this file's, copied together with it from a
         * writer that died (new inodes): the seal tells the two apart */
        bool sealed = s->h5_fd >= 0 && vfdswmr_sb_sealed_fd(s->h5_fd) == 1;
        s->foreign = true;
        s->state = sealed && !locked ? "died" : "none";
        snprintf(s->message, sizeof s->message,
                 "metadata file %s belongs to another HDF5 file (inode %" PRIu64 ", but %s is inode %" PRIu64 "): %s",
                 s->md_path, s->hdr.hdf5_id, o->file, s->h5_ino,
                 sealed ? "the file is sealed by a writer that died: if the two files were copied together, "
                          "vfd_swmr_recover --force restores the snapshot; otherwise this metadata file is stale"
                        : "a stale or foreign metadata file, not this file's session");
        if (sealed && !locked && predict)
            predict_recovery(o, s); /* refused, with recovery's own words */
        return;
    }
    if (locked) {
        bool failed = s->hdr.flags & VFDSWMR_MDHDR_FAILED;
        s->state = failed ? "failed" : "running";
        snprintf(s->message, sizeof s->message, "%s",
                 failed ? "the writer runs but can no longer publish: readers keep its last snapshot; it completes "
                          "the HDF5 file at close"
                        : "a live writer holds the metadata file");
        return;
    }
    if (s->hdr.flags & VFDSWMR_MDHDR_FINAL) {
        s->state = "closed";
        snprintf(s->message, sizeof s->message, "the writer closed the file cleanly: the HDF5 file is complete");
        return;
    }
    s->state = "died";
    if (predict)
        predict_recovery(o, s);
    if (!s->have_snap)
        snprintf(s->message, sizeof s->message,
                 "the writer is gone without closing, and its metadata file %s cannot be read (%s): no snapshot to "
                 "read or recover",
                 s->md_path, s->load_err);
    else if (s->have_recovery && s->refused[0])
        snprintf(s->message, sizeof s->message,
                 "the writer is gone without closing; readers keep its last snapshot, but recovery would refuse (see "
                 "recovery)");
    else
        snprintf(s->message, sizeof s->message,
                 "the writer is gone without closing; readers keep its last snapshot; recovery (vfd_swmr_recover, or "
                 "the next writer) turns the HDF5 file into it");
}

/* Open (again) the HDF5 file read-only: 0 (s->h5_fd -1 when it does not
 * exist), or -1 with the reason. */
static int
open_h5(const insp_opts_t *o, insp_t *s)
{
    struct stat st;

    if (s->h5_fd >= 0)
        close(s->h5_fd);
    s->h5_ino = 0;
    s->h5_fd = vfdswmr_open_regular(o->file, O_RDONLY);
    if (s->h5_fd == VFDSWMR_OPEN_NOT_REGULAR) {
        s->h5_fd = -1;
        return fail(s, "%s is not a regular file", o->file);
    }
    if (s->h5_fd < 0) {
        int e = errno;
        s->h5_fd = -1;
        return e == ENOENT ? 0 : fail(s, "cannot open %s: %s", o->file, strerror(e));
    }
    if (fstat(s->h5_fd, &st) == 0)
        s->h5_ino = (uint64_t)st.st_ino;
    return 0;
}

/* The readers, then the header and index again: a reader marks only what
 * was published, so every mark read before the header is at most the
 * header's tick count, and the lags shown are never below zero (at most
 * overstated by what was published between the two reads). */
static void
readers_then_reload(insp_t *s)
{
    insp_readers(s);
    if (s->have_readers)
        insp_reload(s);
}

/* Make path (VFDSWMR_MAX_PATH + 64 bytes) absolute, as the file records
 * it, so that every view names the metadata file one way: 0, or -1 when it
 * does not fit. */
static int
absolute(char *path)
{
    char cwd[VFDSWMR_MAX_PATH + 64], out[VFDSWMR_MAX_PATH + 64];
    const char *rel = path;

    if (path[0] == '/')
        return 0;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    if (getcwd(cwd, sizeof cwd) == NULL)
        return 0; /* as given: still correct, relative */
    if ((size_t)snprintf(out, sizeof out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", rel) >= sizeof out)
        return -1;
    memcpy(path, out, strlen(out) + 1);
    return 0;
}

int
insp_gather(const insp_opts_t *o, insp_t *s)
{
    char rec[VFDSWMR_SESSNAME_MAX + 1];
    bool named = vfdswmr_config_given(&o->cfg, "md_file_path") || vfdswmr_config_given(&o->cfg, "md_file_name");

    memset(s, 0, sizeof *s);
    s->h5_fd = s->md_fd = -1;
    s->registered = -1;
    s->state = "none";
    if (vfdswmr_md_path(&o->cfg, o->file, s->md_path, sizeof s->md_path) < 0 || absolute(s->md_path) < 0)
        return fail(s, "metadata file path too long for %s", o->file);
    if (open_h5(o, s) < 0)
        return -1;
    /* As vfd_swmr_recover finds it: the one the configuration names, when
     * it names one and it is there; else the one the file records (its
     * writer's, by whatever name); else the default next to the file. */
    if (named && open_md(s->md_path, s) < 0)
        return -1;
    if (s->md_fd < 0 && s->h5_fd >= 0 && vfdswmr_sessname_find_fd(s->h5_fd, NULL, rec, sizeof rec) == 1 &&
        strcmp(rec, s->md_path) != 0) {
        if (open_md(rec, s) < 0)
            return -1;
        if (s->md_fd >= 0)
            memcpy(s->md_path, rec, strlen(rec) + 1);
    }
    if (s->md_fd < 0 && !named && open_md(s->md_path, s) < 0)
        return -1;
    if (s->h5_fd < 0 && s->md_fd < 0)
        return fail(s, "cannot open %s: %s (and there is no metadata file %s)", o->file, strerror(ENOENT), s->md_path);
    s->h5_locked = s->h5_fd >= 0 && vfdswmr_mdlock_hdf5_held(s->h5_fd) > 0;
    s->md_locked = s->md_fd >= 0 && vfdswmr_mdlock_held(s->md_fd) > 0;
    insp_reload(s);
    writer_state(o, s, true);
    readers_then_reload(s);
    read_rawlog(s);
    return 0;
}

void
insp_release(insp_t *s)
{
    if (s->have_snap)
        vfdswmr_mdsnap_free(&s->snap);
    s->have_snap = false;
    free(s->marks);
    s->marks = NULL;
    if (s->md_fd >= 0)
        close(s->md_fd);
    if (s->h5_fd >= 0)
        close(s->h5_fd);
    s->md_fd = s->h5_fd = -1;
}

void
insp_restate(const insp_opts_t *o, insp_t *s)
{
    struct stat now, have;

    if (s->h5_fd < 0 || stat(o->file, &now) < 0 || fstat(s->h5_fd, &have) < 0 || now.st_ino != have.st_ino ||
        now.st_dev != have.st_dev)
        (void)open_h5(o, s); /* removed, replaced or made anew: a new writer's file, maybe */

    if (s->md_fd >= 0 && (stat(s->md_path, &now) < 0 || fstat(s->md_fd, &have) < 0 || now.st_ino != have.st_ino ||
                          now.st_dev != have.st_dev)) {
        close(s->md_fd); /* removed or replaced (a new session): look again */
        s->md_fd = -1;
    }
    if (s->md_fd < 0 && open_md(s->md_path, s) < 0)
        s->md_fd = -1;
    s->h5_locked = s->h5_fd >= 0 && vfdswmr_mdlock_hdf5_held(s->h5_fd) > 0;
    s->md_locked = s->md_fd >= 0 && vfdswmr_mdlock_held(s->md_fd) > 0;
    insp_reload(s);
    writer_state(o, s, false);
    readers_then_reload(s);
}
