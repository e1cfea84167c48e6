#include "plan.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Transfer all of len bytes at off with pread or pwrite, retrying on EINTR
 * and short transfers. */
static int
transfer_all(int fd, void *buf, size_t len, uint64_t off, bool write)
{
    char *p = buf;

    if (off > (uint64_t)INT64_MAX - len) {
        errno = EFBIG;
        return -1;
    }
    while (len > 0) {
        ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) { /* end of file on a read */
            errno = ENODATA;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

int
vfdswmr_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    return transfer_all(fd, (void *)(uintptr_t)buf, len, off, true);
}

int
vfdswmr_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    return transfer_all(fd, buf, len, off, false);
}

int
vfdswmr_mdplan_apply(int fd, const vfdswmr_mdplan_t *plan, bool durable)
{
    const uint64_t ps = plan->page_size;

    for (size_t i = 0; i < plan->nimages; i++) {
        const vfdswmr_mdimage_t *im = &plan->images[i];
        if (vfdswmr_pwrite_all(fd, im->image, im->length, im->md_page * ps) < 0)
            return -1;
    }
    if (vfdswmr_pwrite_all(fd, plan->index_image, plan->index_len, plan->index_offset) < 0)
        return -1;
    if (durable && fdatasync(fd) < 0)
        return -1;
    if (vfdswmr_pwrite_all(fd, plan->header_image, VFDSWMR_MDHDR_SIZE, 0) < 0)
        return -1;
    if (durable && fdatasync(fd) < 0)
        return -1;
    return 0;
}
