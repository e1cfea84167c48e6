#include "plan.h"

#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"

/* Buffers per pwritev call (POSIX guarantees IOV_MAX >= 16; Linux has 1024). */
#define PLAN_IOV 256

int
vfdswmr_mdplan_write_images(int fd, const vfdswmr_mdimage_t *images, size_t n, uint32_t page_size)
{
    const uint64_t ps = page_size;

    /* Images that follow each other in the metadata file go in one call. */
    for (size_t i = 0; i < n;) {
        struct iovec iov[PLAN_IOV];
        uint64_t off = images[i].md_page * ps, end = off;
        int k = 0;
        for (; i < n && k < PLAN_IOV && images[i].md_page * ps == end; i++, k++) {
            iov[k] = (struct iovec){.iov_base = (void *)(uintptr_t)images[i].image, .iov_len = images[i].length};
            end += images[i].length;
        }
        if (vfdswmr_pwritev_all(fd, iov, k, off) < 0)
            return -1;
    }
    return 0;
}

int
vfdswmr_mdplan_apply(int fd, const vfdswmr_mdplan_t *plan, bool durable)
{
    if (!plan->images_written && vfdswmr_mdplan_write_images(fd, plan->images, plan->nimages, plan->page_size) < 0)
        return -1;
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
