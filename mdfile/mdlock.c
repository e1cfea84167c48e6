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


static int
take_at(int fd, off_t where)
{
    struct flock fl = lock_at(F_WRLCK, where);

    while (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EACCES ? 1 : -1;
    }
    return 0;
}

static int
held_at(int fd, off_t where)
{
    struct flock fl = lock_at(F_RDLCK, where); /* conflicts with any write lock */

    while (fcntl(fd, F_OFD_GETLK, &fl) < 0)
        if (errno != EINTR)
            return -1;
    return fl.l_type != F_UNLCK;
}

int
vfdswmr_mdlock_hdf5_take(int fd)
{
    return take_at(fd, VFDSWMR_WRITER_LOCK_OFFSET);
}

int
vfdswmr_mdlock_hdf5_held(int fd)
{
    return held_at(fd, VFDSWMR_WRITER_LOCK_OFFSET);
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
    return take_at(fd, 0);
}

int
vfdswmr_mdlock_held(int fd)
{
    /* Asking for a read lock's conflicts finds any write lock, even on a
     * descriptor opened read-only (F_OFD_GETLK does not need write access). */
    return held_at(fd, 0);
}
