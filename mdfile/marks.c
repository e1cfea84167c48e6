/* Read marks; see marks.h (and docs/FORMAT.md for the table's layout). */
#include "marks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "format.h"
#include "io.h"
#include "kept.h"
#include "le.h"
#include "mdlock.h"
#include "safefile.h"

struct vfdswmr_marks {
    int fd;
    char *path;
    vfdswmr_file_id_t id;
    uint64_t release_below;
};

static off_t
slot_offset(unsigned slot)
{
    return (off_t)VFDSWMR_MARKSHDR_SIZE + (off_t)slot * VFDSWMR_MARKSLOT_SIZE;
}

/*
 * A slot's two locks (OFD, cmd F_OFD_SETLK or F_OFD_GETLK): the claim (its
 * reserved 8 bytes) makes the slot a reader's; the mark lock (its tick, 8
 * bytes) says the tick there is that reader's. A reader claims, writes 0,
 * then takes the mark lock, so a tick under a held mark lock is never what
 * an earlier owner left.
 */
enum { SLOT_MARK = 0, SLOT_CLAIM = 8 };

static int
slot_lock(int fd, int cmd, short type, unsigned slot, int part, struct flock *fl)
{
    return vfdswmr_mdlock_fcntl(fd, cmd, type, slot_offset(slot) + part, 8, fl);
}

int
vfdswmr_marks_name(char *out, size_t len, const char *md_path)
{
    int n = snprintf(out, len, "%s.readers", md_path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* vfdswmr_marks_open; *missing tells VFDSWMR_MARKS_NONE for "nothing at
 * the name" from the other reasons. */
static int
open_table(const char *md_path, uint64_t session, int flags, vfdswmr_markshdr_t *h, bool *missing)
{
    char path[4096 + 64];
    uint8_t b[VFDSWMR_MARKSHDR_SIZE];
    int fd, e;

    *missing = false;
    if (vfdswmr_marks_name(path, sizeof path, md_path) < 0)
        return VFDSWMR_MARKS_NONE; /* no table can have that name */
    if ((fd = vfdswmr_open_md(path, flags)) < 0) {
        *missing = fd == VFDSWMR_OPEN_FAILED && errno == ENOENT;
        return fd == VFDSWMR_OPEN_FAILED && errno != ENOENT ? -1 : VFDSWMR_MARKS_NONE;
    }
    ssize_t got = vfdswmr_pread_upto(fd, b, sizeof b, 0);
    if (got < 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (got < (ssize_t)sizeof b || vfdswmr_markshdr_decode(b, sizeof b, h) != VFDSWMR_MD_OK || h->session != session) {
        close(fd);
        return VFDSWMR_MARKS_NONE; /* not this session's table (nor a table at all) */
    }
    return fd;
}

int
vfdswmr_marks_open(const char *md_path, uint64_t session, int flags, vfdswmr_markshdr_t *h)
{
    bool missing;

    return open_table(md_path, session, flags, h, &missing);
}

/* ---- writer ---------------------------------------------------------------- */

int
vfdswmr_marks_fd(const vfdswmr_marks_t *m)
{
    return m ? m->fd : -1;
}

void
vfdswmr_marks_clear(const char *md_path)
{
    char path[4096 + 64];

    if (vfdswmr_marks_name(path, sizeof path, md_path) == 0)
        (void)unlink(path);
}

/* Adopt the table open on fd (its header h, fstat st) as the writer's. */
static int
adopt(int fd, const char *path, const vfdswmr_markshdr_t *h, const struct stat *st, vfdswmr_marks_t **out)
{
    vfdswmr_marks_t *m = calloc(1, sizeof *m);

    if (m == NULL || NULL == (m->path = strdup(path))) {
        free(m);
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    m->fd = fd;
    m->id = (vfdswmr_file_id_t){st->st_dev, st->st_ino};
    m->release_below = h->release_below;
    *out = m;
    return 1;
}

int
vfdswmr_marks_named(const vfdswmr_marks_t *m)
{
    return vfdswmr_names_file(m->path, &m->id);
}

int
vfdswmr_marks_release_all(vfdswmr_marks_t *m)
{
    uint8_t b[8];

    vfdswmr_le64_encode(b, UINT64_MAX);
    if (vfdswmr_pwrite_all(m->fd, b, sizeof b, VFDSWMR_MARKSHDR_RELEASE_OFFSET) < 0)
        return -1;
    m->release_below = UINT64_MAX;
    return 0;
}

/* Remove what is at the table's name, if it is still st's file -- and only
 * while md_id, the caller's metadata file, has md_path: else the name is
 * another session's (one that replaced ours, the HDF5 file having been
 * removed and made again while ours was still open). */
static void
remove_foreign(const char *path, const struct stat *st, const char *md_path, const vfdswmr_file_id_t *md_id)
{
    if (vfdswmr_names_file(md_path, md_id) == 1)
        vfdswmr_unlink_if_same(path, &(vfdswmr_file_id_t){st->st_dev, st->st_ino});
}

int
vfdswmr_marks_find(const char *md_path, uint64_t session, const vfdswmr_file_id_t *md_id, vfdswmr_marks_t **out)
{
    char path[4096 + 64];
    uint8_t b[VFDSWMR_MARKSHDR_SIZE];
    vfdswmr_markshdr_t h;
    struct stat st;
    int fd;

    *out = NULL;
    if (vfdswmr_marks_name(path, sizeof path, md_path) < 0)
        return 0; /* no table can have that name: no reader made one */
    if ((fd = vfdswmr_open_md(path, O_RDWR)) == VFDSWMR_OPEN_FAILED)
        return errno == ENOENT ? 0 : -1;
    if (fd < 0) { /* a link or not a regular file: no reader's table (they link regular files) */
        if (vfdswmr_names_file(md_path, md_id) == 1) /* (no reader can link a table over it meanwhile) */
            (void)unlink(path);
        return 0;
    }
    ssize_t got = vfdswmr_pread_upto(fd, b, sizeof b, 0);
    if (got < 0) { /* cannot tell whose it is */
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* a reader's table is ours (readers give it the metadata file's owner):
     * one of another owner was planted, and whoever wrote it could feed
     * readers bytes through the kept list */
    if (got == (ssize_t)sizeof b && vfdswmr_markshdr_decode(b, sizeof b, &h) == VFDSWMR_MD_OK && h.session == session &&
        st.st_uid == geteuid())
        return adopt(fd, path, &h, &st, out);
    /* another session's (a reader of an earlier writer made it late), or
     * not a table at all: nobody of this session is marked in it */
    remove_foreign(path, &st, md_path, md_id);
    close(fd);
    return 0;
}

/* A slot holds tick + 1, so that 0 means "none" and tick 0 can be marked.
 * A descriptor open read-only is enough (F_OFD_GETLK needs no write access). */
vfdswmr_slot_t
vfdswmr_marks_slot(int fd, unsigned slot, uint64_t *tick)
{
    struct flock fl;
    uint8_t b[8];
    uint64_t v;

    if (slot_lock(fd, F_OFD_GETLK, F_WRLCK, slot, SLOT_MARK, &fl) < 0 || fl.l_type == F_UNLCK ||
        vfdswmr_pread_all(fd, b, sizeof b, (uint64_t)slot_offset(slot)) < 0)
        return VFDSWMR_SLOT_FREE;
    if ((v = vfdswmr_le64_decode(b)) == 0)
        return VFDSWMR_SLOT_UNMARKED;
    *tick = v - 1;
    return VFDSWMR_SLOT_MARKED;
}

static vfdswmr_slot_t
slot_state(const vfdswmr_marks_t *m, unsigned slot, uint64_t *tick)
{
    return vfdswmr_marks_slot(m->fd, slot, tick);
}

/* Does any reader hold a lock in the slots (one call instead of one per
 * slot; most publishes have no reader)? An error answers yes: the slots are
 * then looked at one by one. */
static bool
any_slot_locked(const vfdswmr_marks_t *m)
{
    struct flock fl;

    return vfdswmr_mdlock_fcntl(m->fd, F_OFD_GETLK, F_WRLCK, slot_offset(0),
                                slot_offset(VFDSWMR_MARKS_SLOTS) - slot_offset(0), &fl) < 0 ||
           fl.l_type != F_UNLCK;
}

static bool
live_tick(const vfdswmr_marks_t *m, unsigned slot, uint64_t *tick)
{
    return slot_state(m, slot, tick) == VFDSWMR_SLOT_MARKED;
}

uint32_t
vfdswmr_marks_lag(vfdswmr_marks_t *m, uint64_t tick, uint32_t max_lag, uint32_t limit, unsigned *readers)
{
    uint64_t ticks[VFDSWMR_MARKS_SLOTS], oldest = UINT64_MAX;
    unsigned n = 0;
    uint32_t lag;

    *readers = 0;
    if (m == NULL)
        return max_lag;
    for (unsigned i = 0, any = any_slot_locked(m); any && i < VFDSWMR_MARKS_SLOTS; i++)
        if (live_tick(m, i, &ticks[n]) && ticks[n] >= m->release_below)
            n++;
    /* Release marks too old to keep: say so before acting on it. */
    if (tick + 1 > limit && tick + 1 - limit > m->release_below) {
        uint64_t below = tick + 1 - limit;
        bool any = false;
        for (unsigned i = 0; i < n; i++)
            any |= ticks[i] < below;
        if (any) {
            uint8_t b[8];
            vfdswmr_le64_encode(b, below);
            if (vfdswmr_pwrite_all(m->fd, b, sizeof b, VFDSWMR_MARKSHDR_RELEASE_OFFSET) == 0)
                m->release_below = below;
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (ticks[i] >= m->release_below) {
            (*readers)++;
            if (ticks[i] < oldest)
                oldest = ticks[i];
        }
    if (oldest == UINT64_MAX || tick - oldest + 1 <= max_lag || limit <= max_lag)
        return max_lag;
    lag = tick - oldest + 1 > limit ? limit : (uint32_t)(tick - oldest + 1);
    VFDSWMR_ASSERT(lag > max_lag && lag <= limit); /* at least max_lag, up to limit (marks.h) */
    return lag;
}

vfdswmr_slot_t
vfdswmr_marks_tick(const vfdswmr_marks_t *m, unsigned slot, uint64_t *tick)
{
    if (m == NULL || slot >= VFDSWMR_MARKS_SLOTS)
        return VFDSWMR_SLOT_FREE;
    return slot_state(m, slot, tick);
}

void
vfdswmr_marks_forget(vfdswmr_marks_t *m)
{
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
}

void
vfdswmr_marks_close(vfdswmr_marks_t *m)
{
    if (m == NULL)
        return;
    if (m->fd >= 0) { /* -1: forgotten (a fork child's copy): not ours to remove */
        vfdswmr_unlink_if_same(m->path, &m->id);
        close(m->fd);
    }
    free(m->path);
    free(m);
}

/* ---- reader ---------------------------------------------------------------- */

/*
 * Make the (empty) table of `session` at its name, unless something is
 * there already (then EEXIST): whole before it has the name, so a reader
 * or the writer that finds it finds it whole. It belongs to the metadata
 * file's owner, with the metadata file's permissions (and the owner's
 * read and write), so that its writer -- who made the metadata file --
 * can write it; a reader that cannot give it that owner makes none (EPERM).
 */
static int
create_table(const char *md_path, uint64_t session, int md_fd, vfdswmr_file_id_t *id)
{
    char path[4096 + 64];
    size_t len = VFDSWMR_MARKSHDR_SIZE + (size_t)VFDSWMR_MARKS_SLOTS * VFDSWMR_MARKSLOT_SIZE;
    uint8_t *buf;
    vfdswmr_markshdr_t h = {.session = session, .nslots = VFDSWMR_MARKS_SLOTS};
    struct stat st;
    int rc;

    if (md_fd < 0 || fstat(md_fd, &st) < 0 || vfdswmr_marks_name(path, sizeof path, md_path) < 0) {
        errno = md_fd < 0 ? EINVAL : errno;
        return -1;
    }
    if (st.st_uid != geteuid() && geteuid() != 0) {
        errno = EPERM;
        return -1;
    }
    if ((buf = calloc(1, len)) == NULL)
        return -1;
    vfdswmr_markshdr_encode(&h, buf);
    rc = vfdswmr_create_linked(path, buf, len, (st.st_mode & 0666) | 0600, st.st_uid, st.st_gid, id);
    free(buf);
    return rc;
}

/* Claim a free slot of the table open on fd (nslots slots): ATTACHED with
 * *slot, or NONE (every slot taken, no locks here; fd then closed). */
static vfdswmr_attach_t
claim(int fd, unsigned nslots, unsigned *slot)
{
    struct flock fl;

    for (unsigned i = 0; i < nslots; i++) {
        uint8_t zero[8] = {0};
        if (slot_lock(fd, F_OFD_SETLK, F_WRLCK, i, SLOT_CLAIM, &fl) < 0) {
            if (errno == EAGAIN || errno == EACCES)
                continue; /* taken */
            break;        /* no locks here */
        }
        if (vfdswmr_pwrite_all(fd, zero, sizeof zero, (uint64_t)slot_offset(i)) < 0 ||
            slot_lock(fd, F_OFD_SETLK, F_WRLCK, i, SLOT_MARK, &fl) < 0)
            break;
        *slot = i;
        return VFDSWMR_ATTACHED;
    }
    close(fd);
    return VFDSWMR_ATTACH_NONE;
}

vfdswmr_attach_t
vfdswmr_mark_attach(vfdswmr_mark_t *r, const char *md_path, uint64_t session, int md_fd)
{
    vfdswmr_markshdr_t h;
    vfdswmr_file_id_t id = {0};
    bool missing, created = false;
    struct stat st, mst;
    unsigned slot;
    int fd;

    *r = (vfdswmr_mark_t){.fd = -1};
    fd = open_table(md_path, session, O_RDWR, &h, &missing);
    /* none yet: the first reader makes it (the writer looks for it at every
     * publish); one that lost the race to another uses the winner's */
    if (fd == VFDSWMR_MARKS_NONE && missing && md_fd >= 0) {
        if (create_table(md_path, session, md_fd, &id) == 0)
            created = true;
        else if (errno != EEXIST)
            return VFDSWMR_ATTACH_NONE; /* cannot make one here: max_lag applies */
        fd = open_table(md_path, session, O_RDWR, &h, &missing);
    }
    r->created = created, r->id = id; /* also when no slot is ours: the caller checks what it made */
    /* not (yet) this session's table: unregistered, max_lag applies */
    if (fd < 0)
        return fd == -1 && errno != EACCES && errno != EROFS ? VFDSWMR_ATTACH_ERROR : VFDSWMR_ATTACH_NONE;
    /* only the metadata file's owner's (readers make it so): whoever else
     * put it there could feed us bytes through its kept list */
    if (md_fd < 0 || fstat(md_fd, &mst) < 0 || fstat(fd, &st) < 0 || st.st_uid != mst.st_uid) {
        close(fd);
        return VFDSWMR_ATTACH_NONE;
    }
    if (claim(fd, h.nslots, &slot) != VFDSWMR_ATTACHED)
        return VFDSWMR_ATTACH_NONE;
    *r = (vfdswmr_mark_t){.fd = fd, .slot = slot, .session = session, .created = created, .id = {st.st_dev, st.st_ino}};
    return VFDSWMR_ATTACHED;
}

void
vfdswmr_mark_abandon(vfdswmr_mark_t *r, const char *md_path)
{
    char path[4096 + 64];

    if (r->created && vfdswmr_marks_name(path, sizeof path, md_path) == 0)
        vfdswmr_unlink_if_same(path, &r->id);
    r->created = false;
    vfdswmr_mark_detach(r);
}

int
vfdswmr_mark_confirm(vfdswmr_mark_t *r, const char *md_path)
{
    char path[4096 + 64];
    vfdswmr_kepthdr_t h;
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];

    VFDSWMR_ASSERT(r->fd >= 0); /* asked only while registered */
    if (r->acked)
        return 1;
    /* the writer writes its list (empty at first) into the table it adopts;
     * two tries: one torn by a rewrite is looked at again next time */
    if (vfdswmr_kept_read_list_tries(r->fd, &h, e, 2) == 0 && h.session == r->session)
        return r->acked = true, 1;
    if (vfdswmr_marks_name(path, sizeof path, md_path) < 0)
        return 0;
    /* gone or replaced: -1; cannot tell: look again next time */
    return vfdswmr_names_file(path, &r->id) == 0 ? -1 : 0;
}

int
vfdswmr_mark_set(const vfdswmr_mark_t *r, uint64_t tick)
{
    uint8_t b[8];

    VFDSWMR_ASSERT(r->fd >= 0 && r->slot < VFDSWMR_MARKS_SLOTS); /* only a registered reader marks */
    vfdswmr_le64_encode(b, tick + 1);                            /* 0: no mark yet */
    return vfdswmr_pwrite_all(r->fd, b, sizeof b, (uint64_t)slot_offset(r->slot));
}

int
vfdswmr_mark_released(const vfdswmr_mark_t *r, uint64_t tick)
{
    uint8_t b[8];

    VFDSWMR_ASSERT(r->fd >= 0); /* asked only while registered */
    if (vfdswmr_pread_all(r->fd, b, sizeof b, VFDSWMR_MARKSHDR_RELEASE_OFFSET) < 0)
        return -1;
    return vfdswmr_le64_decode(b) > tick;
}

void
vfdswmr_mark_detach(vfdswmr_mark_t *r)
{
    if (r->fd >= 0)
        close(r->fd); /* drops the slot's lock */
    r->fd = -1;
}
