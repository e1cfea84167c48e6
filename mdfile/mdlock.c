/* The writer's liveness lock; see mdlock.h. */
/* F_OFD_SETLK and F_OFD_GETLK need _GNU_SOURCE, which the build defines. */
#include "mdlock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static struct flock
lock_at(short type, off_t where)
{
    struct flock fl;

    memset(&fl, 0, sizeof fl); /* l_pid must be 0 for OFD locks */
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = where;
    fl.l_len = 1;
    return fl;
}

static struct flock
lock_region(short type)
{
    return lock_at(type, 0);
}

int
vfdswmr_mdlock_reader(int fd)
{
    struct flock fl = lock_at(F_RDLCK, VFDSWMR_READER_LOCK_OFFSET);

    while (fcntl(fd, F_OFD_SETLK, &fl) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

int
vfdswmr_mdlock_readers(int fd)
{
    /* A write lock conflicts with any reader's read lock. */
    struct flock fl = lock_at(F_WRLCK, VFDSWMR_READER_LOCK_OFFSET);

    while (fcntl(fd, F_OFD_GETLK, &fl) < 0)
        if (errno != EINTR)
            return -1;
    return fl.l_type != F_UNLCK;
}

int
vfdswmr_mdlock_take(int fd)
{
    struct flock fl = lock_region(F_WRLCK);

    while (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EACCES ? 1 : -1;
    }
    return 0;
}

int
vfdswmr_mdlock_held(int fd)
{
    /* Asking for a read lock's conflicts finds any write lock, even on a
     * descriptor opened read-only (F_OFD_GETLK does not need write access). */
    struct flock fl = lock_region(F_RDLCK);

    while (fcntl(fd, F_OFD_GETLK, &fl) < 0)
        if (errno != EINTR)
            return -1;
    return fl.l_type != F_UNLCK;
}
