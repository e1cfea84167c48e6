/* OFD locks: the writer's liveness locks and the readers' registration; see mdlock.h. */
/* F_OFD_SETLK and F_OFD_GETLK need _GNU_SOURCE, which the build defines. */
#include "mdlock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"

int
vfdswmr_mdlock_fcntl(int fd, int cmd, short type, off_t start, off_t len, struct flock *fl)
{
    memset(fl, 0, sizeof *fl); /* l_pid must be 0 for OFD locks */
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = start;
    fl->l_len = len;
    while (fcntl(fd, cmd, fl) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* Where a reader starts looking for a byte of its own. */
static unsigned
random_start(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec;
}

/* Set (or, F_UNLCK, drop) our lock on byte `where`: 0, or -1 with errno
 * (EAGAIN or EACCES: someone else's lock conflicts). */
static int
set_at(int fd, short type, off_t where)
{
    struct flock fl;

    return vfdswmr_mdlock_fcntl(fd, F_OFD_SETLK, type, where, 1, &fl);
}

/* Would a lock of `type` on [start, start + len) conflict with someone
 * else's (we never conflict with ourselves)? F_RDLCK asks for write locks,
 * F_WRLCK for any lock. 1, 0, or -1 with errno. */
static int
conflict(int fd, short type, off_t start, off_t len)
{
    struct flock fl;

    if (vfdswmr_mdlock_fcntl(fd, F_OFD_GETLK, type, start, len, &fl) < 0)
        return -1;
    return fl.l_type != F_UNLCK;
}

/* The same for byte `where`. */
static int
conflict_at(int fd, short type, off_t where)
{
    return conflict(fd, type, where, 1);
}

/* Take a lock of `type` on `where`. */
static vfdswmr_take_t
take_at_type(int fd, short type, off_t where)
{
    if (set_at(fd, type, where) == 0)
        return VFDSWMR_TAKEN;
    return errno == EAGAIN || errno == EACCES ? VFDSWMR_TAKE_BUSY : VFDSWMR_TAKE_ERROR;
}

/* Take the write lock on `where`. */
static vfdswmr_take_t
take_at(int fd, off_t where)
{
    return take_at_type(fd, F_WRLCK, where);
}

static int
held_at(int fd, off_t where)
{
    return conflict_at(fd, F_RDLCK, where); /* a write lock held elsewhere */
}

/* Does anyone but us lock byte `where`? */
static int
locked_by_other(int fd, off_t where)
{
    return conflict_at(fd, F_WRLCK, where);
}

vfdswmr_take_t
vfdswmr_mdlock_hdf5_take(int fd)
{
    return take_at(fd, VFDSWMR_WRITER_LOCK_OFFSET);
}

int
vfdswmr_mdlock_hdf5_held(int fd)
{
    return held_at(fd, VFDSWMR_WRITER_LOCK_OFFSET);
}

/* Take a byte of our own (see mdlock.h); its offset to *own. */
static int
take_own(int fd, off_t *own)
{
    /* Start at a random byte so that readers arriving together rarely meet. */
    unsigned first = (unsigned)random_start() % VFDSWMR_READER_SLOTS;

    for (unsigned i = 0; i < 16; i++) {
        off_t at = VFDSWMR_READER_SLOTS_OFFSET + (off_t)((first + i * 257u) % VFDSWMR_READER_SLOTS);
        int rc = locked_by_other(fd, at);

        if (rc < 0)
            return -1;
        if (rc)
            continue;
        if (set_at(fd, F_RDLCK, at) < 0)
            return -1;
        if ((rc = locked_by_other(fd, at)) == 0) {
            *own = at; /* ours alone: whoever comes now sees us first */
            return 0;
        }
        if (set_at(fd, F_UNLCK, at) < 0 || rc < 0)
            return -1;
    }
    *own = VFDSWMR_READER_LOCK_OFFSET;
    return set_at(fd, F_RDLCK, VFDSWMR_READER_LOCK_OFFSET);
}

int
vfdswmr_reg_join(vfdswmr_reg_t *g, int fd)
{
    *g = (vfdswmr_reg_t){.fd = fd, .own = -1, .slot = -1};
    if (take_own(fd, &g->own) < 0) {
        int e = errno;
        close(fd);
        g->fd = -1;
        errno = e;
        return -1;
    }
    return 0;
}

int
vfdswmr_reg_marked(vfdswmr_reg_t *g, unsigned slot)
{
    if (g->fd < 0 || g->slot == (long)slot)
        return 0;
    if (slot >= VFDSWMR_MARKED_SLOTS || g->slot >= 0) {
        errno = EINVAL;
        return -1;
    }
    if (set_at(g->fd, F_RDLCK, VFDSWMR_MARKED_OFFSET + (off_t)slot) < 0)
        return -1;
    g->slot = (long)slot;
    /* the shared byte may be another reader's too: dropping ours is fine */
    if (g->own >= 0 && set_at(g->fd, F_UNLCK, g->own) == 0)
        g->own = -1;
    VFDSWMR_ASSERT(g->slot >= 0 || g->own >= 0); /* always registered (mdlock.h) */
    return 0;
}

int
vfdswmr_reg_unmarked(vfdswmr_reg_t *g)
{
    if (g->fd < 0 || g->slot < 0)
        return 0;
    if (g->own < 0 && take_own(g->fd, &g->own) < 0)
        return -1;
    if (set_at(g->fd, F_UNLCK, VFDSWMR_MARKED_OFFSET + (off_t)g->slot) < 0)
        return -1;
    g->slot = -1;
    VFDSWMR_ASSERT(g->own >= 0); /* always registered (mdlock.h) */
    return 0;
}

void
vfdswmr_reg_leave(vfdswmr_reg_t *g)
{
    if (g->fd >= 0)
        close(g->fd); /* drops every lock of ours */
    *g = (vfdswmr_reg_t){.fd = -1, .own = -1, .slot = -1};
}

int
vfdswmr_mdlock_marked(int fd, unsigned slot)
{
    return locked_by_other(fd, VFDSWMR_MARKED_OFFSET + (off_t)slot);
}

/* Count the locked bytes in [lo, hi): F_OFD_GETLK reports one lock that
 * overlaps, not necessarily the first, so count it and look on both sides. */
static int
count_locked(int fd, off_t lo, off_t hi, unsigned *count)
{
    while (lo < hi) {
        struct flock fl;
        off_t end;

        if (vfdswmr_mdlock_fcntl(fd, F_OFD_GETLK, F_WRLCK, lo, hi - lo, &fl) < 0)
            return -1;
        if (fl.l_type == F_UNLCK)
            return 0;
        end = fl.l_len == 0 || fl.l_start + fl.l_len > hi ? hi : fl.l_start + fl.l_len;
        if (fl.l_start < lo)
            fl.l_start = lo;
        *count += (unsigned)(end - fl.l_start);
        if (count_locked(fd, lo, fl.l_start, count) < 0)
            return -1;
        lo = end;
    }
    return 0;
}

vfdswmr_count_t
vfdswmr_mdlock_readers(int fd, unsigned *count)
{
    int shared = locked_by_other(fd, VFDSWMR_READER_LOCK_OFFSET);

    *count = 0;
    if (shared < 0 ||
        count_locked(fd, VFDSWMR_READER_SLOTS_OFFSET, VFDSWMR_READER_SLOTS_OFFSET + VFDSWMR_READER_SLOTS, count) < 0)
        return VFDSWMR_COUNT_ERROR;
    return shared ? VFDSWMR_COUNT_SHARED : VFDSWMR_COUNTED;
}

vfdswmr_count_t
vfdswmr_mdlock_registered(int fd, unsigned *count)
{
    vfdswmr_count_t rc = vfdswmr_mdlock_readers(fd, count);

    if (rc != VFDSWMR_COUNT_ERROR &&
        count_locked(fd, VFDSWMR_MARKED_OFFSET, VFDSWMR_MARKED_OFFSET + VFDSWMR_MARKED_SLOTS, count) < 0)
        return VFDSWMR_COUNT_ERROR;
    return rc;
}

int
vfdswmr_mdlock_any_reader(int fd)
{
    /* every reader byte lies in [own bytes, shared byte]; the writer's byte is past it */
    _Static_assert(VFDSWMR_READER_SLOTS_OFFSET < VFDSWMR_MARKED_OFFSET &&
                       VFDSWMR_MARKED_OFFSET + VFDSWMR_MARKED_SLOTS <= VFDSWMR_READER_LOCK_OFFSET &&
                       VFDSWMR_READER_LOCK_OFFSET < VFDSWMR_RAW_LOCK_OFFSET &&
                       VFDSWMR_RAW_LOCK_OFFSET < VFDSWMR_RAW_GATE_OFFSET &&
                       VFDSWMR_RAW_GATE_OFFSET < VFDSWMR_WRITER_LOCK_OFFSET,
                   "reader lock bytes out of order");

    return conflict(fd, F_WRLCK, VFDSWMR_READER_SLOTS_OFFSET,
                    VFDSWMR_READER_LOCK_OFFSET + 1 - VFDSWMR_READER_SLOTS_OFFSET);
}

int
vfdswmr_mdlock_unmarked_reader(int fd)
{
    int rc = conflict(fd, F_WRLCK, VFDSWMR_READER_SLOTS_OFFSET, VFDSWMR_READER_SLOTS);

    return rc != 0 ? rc : locked_by_other(fd, VFDSWMR_READER_LOCK_OFFSET);
}

int
vfdswmr_mdlock_any_marked(int fd)
{
    return conflict(fd, F_WRLCK, VFDSWMR_MARKED_OFFSET, VFDSWMR_MARKED_SLOTS);
}

vfdswmr_take_t
vfdswmr_mdlock_take(int fd)
{
    return take_at(fd, 0);
}

int
vfdswmr_mdlock_held(int fd)
{
    /* Asking for a read lock's conflicts finds any write lock, even on a
     * descriptor opened read-only (F_OFD_GETLK does not need write access). */
    return held_at(fd, 0);
}

/* Take a lock of `type` on `where`, waiting (sleeps growing to max_nap
 * seconds) at most `timeout` seconds for another's conflicting lock to go. */
static vfdswmr_take_t
take_waiting(int fd, short type, off_t where, double timeout, double max_nap)
{
    double nap = 20e-6, until = 0;

    for (;;) {
        vfdswmr_take_t rc = take_at_type(fd, type, where);
        double now;

        if (rc != VFDSWMR_TAKE_BUSY)
            return rc;
        now = vfdswmr_now();
        if (until == 0)
            until = now + timeout;
        else if (now >= until)
            return VFDSWMR_TAKE_BUSY;
        vfdswmr_sleep(nap);
        if (nap < max_nap)
            nap *= 2;
    }
}

vfdswmr_take_t
vfdswmr_rawlock_take(int fd, short type, double timeout)
{
    return take_waiting(fd, type, VFDSWMR_RAW_LOCK_OFFSET, timeout, 200e-6); /* a raw write: microseconds */
}

void
vfdswmr_rawlock_drop(int fd)
{
    set_at(fd, F_UNLCK, VFDSWMR_RAW_LOCK_OFFSET);
}

vfdswmr_take_t
vfdswmr_rawgate_take(int fd, short type, double timeout)
{
    return take_waiting(fd, type, VFDSWMR_RAW_GATE_OFFSET, timeout, 2e-3); /* the writer's next look */
}

void
vfdswmr_rawgate_drop(int fd)
{
    set_at(fd, F_UNLCK, VFDSWMR_RAW_GATE_OFFSET);
}

int
vfdswmr_mdlock_quiet_wait(int fd)
{
    double until;

    if (vfdswmr_mdlock_unmarked_reader(fd) != 1)
        return 0;
    until = vfdswmr_now() + VFDSWMR_QUIET_WAIT_US / 1e6;
    for (double now; (now = vfdswmr_now()) < until;)
        vfdswmr_sleep(until - now);
    return 1;
}
