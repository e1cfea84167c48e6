/* Read marks; see marks.h (and docs/FORMAT.md for the table's layout). */
#include "marks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "format.h"
#include "io.h"
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

int
vfdswmr_marks_open(const char *md_path, uint64_t session, int flags, vfdswmr_markshdr_t *h)
{
    char path[4096 + 64];
    uint8_t b[VFDSWMR_MARKSHDR_SIZE];
    int fd, e;

    if (vfdswmr_marks_name(path, sizeof path, md_path) < 0)
        return VFDSWMR_MARKS_NONE; /* no table can have that name */
    if ((fd = vfdswmr_open_md(path, flags)) < 0)
        return fd == VFDSWMR_OPEN_FAILED && errno != ENOENT ? -1 : VFDSWMR_MARKS_NONE;
    if (vfdswmr_pread_all(fd, b, sizeof b, 0) < 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (vfdswmr_markshdr_decode(b, sizeof b, h) != VFDSWMR_MD_OK || h->session != session) {
        close(fd);
        return VFDSWMR_MARKS_NONE; /* not (yet) this session's table */
    }
    return fd;
}

/* ---- writer ---------------------------------------------------------------- */

int
vfdswmr_marks_fd(const vfdswmr_marks_t *m)
{
    return m ? m->fd : -1;
}

int
vfdswmr_marks_create(const char *md_path, uint64_t session, vfdswmr_marks_t **out)
{
    vfdswmr_marks_t *m = calloc(1, sizeof *m);
    size_t len = VFDSWMR_MARKSHDR_SIZE + (size_t)VFDSWMR_MARKS_SLOTS * VFDSWMR_MARKSLOT_SIZE;
    uint8_t *buf = calloc(1, len);
    vfdswmr_markshdr_t h = {.session = session, .nslots = VFDSWMR_MARKS_SLOTS};
    int e;

    *out = NULL;
    if (m == NULL || buf == NULL || NULL == (m->path = malloc(strlen(md_path) + 16)) ||
        vfdswmr_marks_name(m->path, strlen(md_path) + 16, md_path) < 0) {
        e = ENOMEM;
        goto fail;
    }
    vfdswmr_markshdr_encode(&h, buf);
    if ((m->fd = vfdswmr_create_named(m->path, buf, len, 0644, &m->id)) < 0) {
        e = errno;
        goto fail;
    }
    free(buf);
    *out = m;
    return 0;
fail:
    if (m)
        free(m->path);
    free(m);
    free(buf);
    errno = e;
    return -1;
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

vfdswmr_attach_t
vfdswmr_mark_attach(vfdswmr_mark_t *r, const char *md_path, uint64_t session)
{
    vfdswmr_markshdr_t h;
    struct flock fl;
    int fd;

    r->fd = -1;
    /* not (yet) this session's table: unregistered, max_lag applies */
    if ((fd = vfdswmr_marks_open(md_path, session, O_RDWR, &h)) < 0)
        return fd == -1 && errno != EACCES && errno != EROFS ? VFDSWMR_ATTACH_ERROR : VFDSWMR_ATTACH_NONE;
    for (unsigned i = 0; i < h.nslots; i++) {
        uint8_t zero[8] = {0};
        if (slot_lock(fd, F_OFD_SETLK, F_WRLCK, i, SLOT_CLAIM, &fl) < 0) {
            if (errno == EAGAIN || errno == EACCES)
                continue; /* taken */
            close(fd);
            return VFDSWMR_ATTACH_NONE; /* no locks here */
        }
        if (vfdswmr_pwrite_all(fd, zero, sizeof zero, (uint64_t)slot_offset(i)) < 0 ||
            slot_lock(fd, F_OFD_SETLK, F_WRLCK, i, SLOT_MARK, &fl) < 0) {
            close(fd);
            return VFDSWMR_ATTACH_NONE;
        }
        *r = (vfdswmr_mark_t){.fd = fd, .slot = i, .session = session};
        return VFDSWMR_ATTACHED;
    }
    close(fd);
    return VFDSWMR_ATTACH_NONE;
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
