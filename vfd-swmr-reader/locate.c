/*
 * vfd_swmr_reader: the metadata file itself -- where it is, waiting for it,
 * whether it was removed (its writer closed) or replaced (a new writer),
 * and reading its header.
 *
 * Invariants:
 *  - md->fd, md->dev and md->ino always describe the same open file, and
 *    md->snap was loaded from it (or md->fd < 0 and md->snap is all zero).
 *  - Nothing here creates a file. The only writes and locks are the read
 *    mark's (vfdswmr_rdr_mark, unmark; reader.h): the reader's own slot in
 *    the writer's read-mark table, and the move of its registration on the
 *    HDF5 file to that slot's byte and back. A slot whose locks are gone is
 *    free whatever it holds (mdfile/marks.h), so an open that fails or a
 *    probing open by the library leaves nothing behind that the writer heeds.
 *  - Only a regular file is ever taken for the metadata file, never through
 *    a link (vfdswmr_open_md()): a FIFO, device, directory or link at its path fails
 *    the open at once, saying so, and never blocks it.
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "h5err.h"
#include "paths.h"
#include "safefile.h"
#include "sessname.h"
#include "superblock.h"

int
vfdswmr_rdr_md_init(rdr_md_t *md, const vfdswmr_config_t *cfg, const char *name)
{
    struct stat st;

    memset(md, 0, sizeof *md);
    md->fd = -1;
    md->reg = (vfdswmr_reg_t){.fd = -1, .own = -1, .slot = -1}; /* the caller registers */
    md->mark.fd = -1;
    md->succ_mark.fd = -1;
    md->cfg = cfg;
    md->max_lag = cfg->max_lag;
    md->reserved_pages = cfg->md_pages_reserved;
    md->h5_ino = stat(name, &st) == 0 ? (uint64_t)st.st_ino : 0;
    if (vfdswmr_md_path(cfg, name, md->path, sizeof md->path) < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: the metadata file path of \"%s\" is longer than %zu bytes", RDR_NAME, name,
                    sizeof md->path - 1);
        return -1;
    }
    memcpy(md->conf_path, md->path, sizeof md->conf_path);
    return 0;
}

void
vfdswmr_rdr_load_opts(const rdr_md_t *md, vfdswmr_mdr_opts_t *o)
{
    vfdswmr_mdr_opts_default(o); /* 64 KiB first read while the page size is unknown */
    if (md->snap.hdr.page_size) {
        uint64_t n = (uint64_t)md->reserved_pages * md->snap.hdr.page_size;
        o->first_read = n > RDR_MAX_FIRST_READ ? RDR_MAX_FIRST_READ : (size_t)n;
    }
}

/* Not a regular file, or a symbolic link (vfdswmr_open_md). */
static void
not_regular(const char *path)
{
    char why[8192];
    struct stat st;

    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        vfdswmr_md_link_text(path, why, sizeof why);
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: %s", RDR_NAME, why);
    }
    else
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: the metadata file %s is not a regular file (%s)", RDR_NAME, path,
                    vfdswmr_path_kind(path));
}

/* What one look at the metadata file found (try_attach): what
 * vfdswmr_rdr_md_open finds, and one more. */
typedef enum {
    MD_LOADED = RDR_MD_OPENED,           /* and a snapshot adopted */
    MD_ABSENT = RDR_MD_ABSENT,           /* no file there; with attempts: or not loadable yet */
    MD_FAILED = RDR_MD_FAILED,           /* why says why; nothing pushed */
    MD_NOT_REGULAR = RDR_MD_NOT_REGULAR, /* nothing pushed */
    MD_REFUSED = -3                      /* the reason pushed on the stack */
} md_look_t;

rdr_md_open_t
vfdswmr_rdr_md_open(const char *path, int *fd, dev_t *dev, ino_t *ino)
{
    struct stat st;

    if ((*fd = vfdswmr_open_md(path, O_RDONLY)) < 0) {
        rdr_md_open_t rc = *fd == VFDSWMR_OPEN_NOT_REGULAR || *fd == VFDSWMR_OPEN_LINK ? RDR_MD_NOT_REGULAR
                           : errno == ENOENT                                           ? RDR_MD_ABSENT
                                                                                       : RDR_MD_FAILED;
        *fd = -1;
        return rc;
    }
    if (fstat(*fd, &st) < 0) {
        int e = errno;
        close(*fd);
        *fd = -1;
        errno = e;
        return RDR_MD_FAILED;
    }
    *dev = st.st_dev;
    *ino = st.st_ino;
    return RDR_MD_OPENED;
}

void
vfdswmr_rdr_md_open_error(const char *path, rdr_md_open_t rc)
{
    VFDSWMR_ASSERT(rc < 0);
    if (rc == RDR_MD_NOT_REGULAR)
        not_regular(path);
    else
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open the metadata file \"%s\": %s", RDR_NAME, path, strerror(errno));
}

_Static_assert(sizeof(((rdr_md_t *)0)->path) >= VFDSWMR_SESSNAME_MAX + 1, "a record fits md->path");

bool
vfdswmr_rdr_md_follow(rdr_md_t *md, const char *h5_name)
{
    char rec[VFDSWMR_SESSNAME_MAX + 1];
    int found = 0;

    if (!md->cfg->presume_posix_semantics) /* readers of vfd_swmr_aux's copy: never the writer's own */
        return false;
    if (h5_name)
        found = vfdswmr_sessname_find(h5_name, vfdswmr_sb_sealed_fd, rec, sizeof rec);
    else if (md->reg.fd >= 0)
        found = vfdswmr_sessname_find_fd(md->reg.fd, vfdswmr_sb_sealed_fd, rec, sizeof rec);
    if (found != 1 || strcmp(rec, md->path) == 0)
        return false;
    memcpy(md->path, rec, strlen(rec) + 1);
    md->followed = true;
    return true;
}

int
vfdswmr_rdr_md_replaced(rdr_md_t *md)
{
    struct stat st;
    /* Holding no live writer's snapshot (none, a closed writer's, or a dead
     * one's whose metadata file recovery removed): look for a writer by
     * every way -- the session the HDF5 file records first (wherever it
     * is), else our own name. */
    bool idle = md->fd < 0 || (md->snap.hdr.flags & VFDSWMR_MDHDR_FINAL) || vfdswmr_rdr_md_unlinked(md);

    if (idle && !md->no_record && !vfdswmr_rdr_md_follow(md, NULL) && md->followed && stat(md->conf_path, &st) == 0) {
        memcpy(md->path, md->conf_path, sizeof md->path);
        md->followed = false;
    }
    if (stat(md->path, &st) < 0)
        return 0;
    return md->fd < 0 || st.st_dev != md->dev || st.st_ino != md->ino;
}

int
vfdswmr_rdr_md_unlinked(const rdr_md_t *md)
{
    struct stat st;

    return md->fd >= 0 && fstat(md->fd, &st) == 0 && st.st_nlink == 0;
}

/* A setting the reader's configuration gives explicitly, unlike the writer's. */
static bool
contradicts(const rdr_md_t *md, const char *key, uint32_t mine, uint32_t writers)
{
    if (!vfdswmr_config_given(md->cfg, key) || mine == writers)
        return false;
    VFDSWMR_ERR(H5E_BADVALUE,
                "%s: %s=%u in the reader's configuration contradicts the writer's %s=%u recorded in \"%s\": leave "
                "%s out (readers adopt the writer's) or give the same value",
                RDR_NAME, key, mine, key, writers, md->path, key);
    return true;
}

int
vfdswmr_rdr_check_header(rdr_md_t *md, const vfdswmr_mdhdr_t *h)
{
    const vfdswmr_config_t *cfg = md->cfg;

    if (vfdswmr_hdf5_id_foreign(h, md->h5_ino)) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: metadata file \"%s\" belongs to another HDF5 file (inode %llu, not %llu): a stale or "
                    "foreign metadata file (two files with the same name sharing md_file_path?)",
                    RDR_NAME, md->path, (unsigned long long)h->hdf5_id, (unsigned long long)md->h5_ino);
        return -1;
    }
    if (contradicts(md, "max_lag", cfg->max_lag, h->max_lag) || contradicts(md, "tick_len", cfg->tick_len, h->tick_len))
        return -1;
    md->max_lag = h->max_lag;
    return 0;
}

/* One look: open the file if it exists, and try to load it with `attempts`
 * attempts (0: the usual retries); md_look_t says what it found. */
static md_look_t
try_attach(rdr_md_t *md, unsigned attempts, char *why, size_t whylen)
{
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdr_io_t io;
    vfdswmr_mderr_t err;
    md_look_t rc;

    if (md->fd < 0 && (rc = (md_look_t)vfdswmr_rdr_md_open(md->path, &md->fd, &md->dev, &md->ino)) != MD_LOADED) {
        if (rc == MD_FAILED)
            snprintf(why, whylen, "%s", strerror(errno));
        return rc;
    }
    vfdswmr_rdr_load_opts(md, &o);
    if (attempts)
        o.max_attempts = attempts;
    io = vfdswmr_mdr_fd_io(&md->fd);
    /* A registered reader whose mark came too late for the snapshot just
     * loaded (the writer ran max_lag ticks ahead meanwhile: a slow start)
     * loads the newest one and marks again, a few times. */
    for (int again = 0; (err = vfdswmr_mdr_load(&io, &o, &md->snap, why, whylen)) == VFDSWMR_MD_OK; again++) {
        if (vfdswmr_rdr_check_header(md, &md->snap.hdr) < 0)
            break;
        vfdswmr_rdr_mark(md);
        if (md->mark.fd < 0 || md->marked_tick == md->snap.hdr.tick || again == 3)
            return MD_LOADED;
        vfdswmr_mdsnap_free(&md->snap);
    }
    if (err == VFDSWMR_MD_OK) {
        vfdswmr_rdr_md_release(md);
        return MD_REFUSED;
    }
    bool permanent = md->snap.permanent; /* the same bytes failed the same way twice */
    vfdswmr_mdsnap_free(&md->snap);
    memset(&md->snap, 0, sizeof md->snap);
    return attempts && vfdswmr_mderr_retryable(err) && !permanent ? MD_ABSENT : MD_FAILED;
}

/* A look that failed (rc < 0): the reason pushed, exactly once. -1. */
static int
attach_failed(rdr_md_t *md, md_look_t rc, const char *why)
{
    VFDSWMR_ASSERT(rc == MD_FAILED || rc == MD_NOT_REGULAR || rc == MD_REFUSED);
    if (rc == MD_NOT_REGULAR) /* at once, also when waiting: it will not turn into a metadata file */
        not_regular(md->path);
    else if (rc == MD_FAILED) /* MD_REFUSED: the reason is on the stack already */
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot load the metadata file \"%s\": %s", RDR_NAME, md->path, why);
    vfdswmr_rdr_md_release(md);
    return -1;
}

static int
wait_failed(rdr_md_t *md, unsigned timeout_ds, const char *why)
{
    if (md->fd < 0)
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: the metadata file \"%s\" did not appear within open_timeout=%u (%u.%u s): is the "
                    "writer running, with the same md_file_path/md_file_name? (presume_posix_semantics=0 "
                    "makes a reader wait for it)",
                    RDR_NAME, md->path, timeout_ds, timeout_ds / 10, timeout_ds % 10);
    else
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: the metadata file \"%s\" held no valid snapshot within open_timeout=%u (%u.%u s): %s",
                    RDR_NAME, md->path, timeout_ds, timeout_ds / 10, timeout_ds % 10, why);
    vfdswmr_rdr_md_release(md);
    return -1;
}

int
vfdswmr_rdr_md_attach(rdr_md_t *md, bool wait, unsigned timeout_ds)
{
    double deadline = vfdswmr_now() + timeout_ds * 0.1;
    char why[256] = "";
    md_look_t rc;

    if (!wait) { /* present: load it with the usual retries; absent: no writer */
        rc = try_attach(md, 0, why, sizeof why);
        /* absent: the pretend snapshot, tick 0 and no entries (reader.h) */
        VFDSWMR_ASSERT(rc != MD_ABSENT || (md->fd < 0 && md->snap.hdr.tick == 0 && md->snap.idx.nentries == 0));
        return rc < 0 ? attach_failed(md, rc, why) : 0;
    }
    for (;;) { /* one attempt per look: the deadline bounds the wait */
        if ((rc = try_attach(md, 1, why, sizeof why)) != MD_ABSENT)
            return rc < 0 ? attach_failed(md, rc, why) : 0;
        if (vfdswmr_now() >= deadline)
            return wait_failed(md, timeout_ds, why);
        vfdswmr_sleep(RDR_POLL_US * 1e-6);
    }
}

void
vfdswmr_rdr_unmark(rdr_md_t *md)
{
    md->marked_tick = 0;
    if (vfdswmr_reg_unmarked(&md->reg) == 0)
        vfdswmr_mark_detach(&md->mark);
}

bool
vfdswmr_rdr_mark_attach(rdr_md_t *md, vfdswmr_mark_t *m, uint64_t session, int md_fd)
{
    vfdswmr_mdhdr_t h;
    vfdswmr_attach_t rc = vfdswmr_mark_attach(m, md->path, session, md_fd);

    if (!m->created)
        return rc == VFDSWMR_ATTACHED;
    /* We made it: the writer removes it at close after FINAL, and a table
     * linked after that removal sees FINAL here; a failed writer publishes
     * no more, a dead one never looks again. Only such evidence removes it
     * (a header we cannot read now is no evidence): the writer's, else. */
    if (vfdswmr_mdr_read_header(md_fd, &h) == VFDSWMR_MD_OK &&
        (h.session != session || (h.flags & (VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED)) ||
         vfdswmr_mdlock_held(md_fd) == 0)) {
        vfdswmr_mark_abandon(m, md->path);
        return false;
    }
    m->created = false; /* the writer's now: it finds it at its next publish, or at close */
    return rc == VFDSWMR_ATTACHED;
}

void
vfdswmr_rdr_mark(rdr_md_t *md)
{
    const vfdswmr_mdhdr_t *s = &md->snap.hdr;
    vfdswmr_mdhdr_t h;

    md->marked_tick = 0;
    vfdswmr_mark_detach(&md->succ_mark); /* a snapshot of its own now */
    md->succ_session = 0;
    if (md->fd < 0 || !md->cfg->presume_posix_semantics) /* a copy kept by vfd_swmr_aux: no writer here */
        return;
    if (md->mark.fd >= 0 && md->mark.session != s->session)
        vfdswmr_rdr_unmark(md); /* another writer session: its own table */
    if (md->mark.fd >= 0 && md->mark.session != s->session)
        return; /* could not: registered on the old slot's byte, the new writer waits for us */
    /* a closed or failed writer keeps nothing for anyone: no table made for it */
    if (md->mark.fd < 0 && (s->flags & (VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED)))
        return;
    if (md->mark.fd < 0 && !vfdswmr_rdr_mark_attach(md, &md->mark, s->session, md->fd))
        return;
    if (vfdswmr_mark_set(&md->mark, s->epoch) < 0)
        return;
    /* The mark holds our snapshot's epoch: register on its slot (mdlock.h). */
    vfdswmr_reg_marked(&md->reg, md->mark.slot);
    /* In time when the writer had not gone max_lag epochs past the snapshot
     * once the mark was there: from then on it honours it at every publish
     * -- every publish that begins after it; one under way now may have
     * taken its lag without it, and be publishing the next epoch: so the
     * header's epoch must be two below (VFDSWMR_MIN_MAX_LAG is 3). */
    if (vfdswmr_mdr_read_header(md->fd, &h) == VFDSWMR_MD_OK && h.session == s->session &&
        h.epoch + 1 < s->epoch + md->max_lag)
        md->marked_tick = s->tick;
    vfdswmr_rdr_assert_marks(md);
}

void
vfdswmr_rdr_md_forget(rdr_md_t *md)
{
    int *fds[] = {&md->fd, &md->mark.fd, &md->succ_mark.fd, &md->reg.fd};

    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

void
vfdswmr_rdr_md_release(rdr_md_t *md)
{
    vfdswmr_mark_detach(&md->succ_mark);
    md->succ_session = 0;
    vfdswmr_rdr_unmark(md);
    vfdswmr_mark_detach(&md->mark); /* also when unmark could not: we are going */
    md->marked_tick = 0;
    VFDSWMR_ASSERT(md->mark.fd < 0 && md->succ_mark.fd < 0); /* nothing of ours left in a table */
    if (md->fd >= 0)
        close(md->fd);
    md->fd = -1;
    vfdswmr_mdsnap_free(&md->snap);
    memset(&md->snap, 0, sizeof md->snap);
}
