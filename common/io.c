/*
 * Whole-buffer positional I/O and directory durability (io.h).
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"

/* Move up to len bytes at off with pread or pwrite, going on after EINTR
 * and short transfers; stops early only at end of file (n == 0). Returns
 * the bytes moved, or -1 with errno. */
static ssize_t
transfer(int fd, void *buf, size_t len, uint64_t off, bool write)
{
    char *p = buf;
    size_t done = 0;

    while (done < len) {
        ssize_t n = write ? pwrite(fd, p + done, len - done, (off_t)(off + done))
                          : pread(fd, p + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* All of len bytes, or -1: EFBIG past INT64_MAX, ENODATA at end of file. */
static int
transfer_all(int fd, void *buf, size_t len, uint64_t off, bool write)
{
    ssize_t n;

    if (off > (uint64_t)INT64_MAX - len) {
        errno = EFBIG;
        return -1;
    }
    if ((n = transfer(fd, buf, len, off, write)) < 0)
        return -1;
    if ((size_t)n < len) { /* end of file on a read */
        errno = ENODATA;
        return -1;
    }
    return 0;
}

ssize_t
vfdswmr_pread_upto(int fd, void *buf, size_t len, uint64_t off)
{
    return transfer(fd, buf, len, off, false);
}

int
vfdswmr_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    return transfer_all(fd, buf, len, off, false);
}

int
vfdswmr_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    return transfer_all(fd, (void *)(uintptr_t)buf, len, off, true);
}

int
vfdswmr_pwritev_all(int fd, struct iovec *iov, int n, uint64_t off)
{
    uint64_t len = 0;

    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (off > (uint64_t)INT64_MAX - len) {
        errno = EFBIG;
        return -1;
    }
    while (n > 0) {
        ssize_t w = pwritev(fd, iov, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        off += (uint64_t)w;
        /* skip what was written: whole buffers, then part of the next */
        for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
            w -= (ssize_t)iov->iov_len;
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

int
vfdswmr_fsync_dir_of(const char *path)
{
    char *dir = vfdswmr_path_dir_dup(path);
    int fd, rc;

    if (dir == NULL)
        return -1;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}
