#include "plan.h"

#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"

/* Buffers per pwritev call (POSIX guarantees IOV_MAX >= 16; Linux has 1024). */
#define PLAN_IOV 256

int
vfdswmr_mdplan_apply(int fd, const vfdswmr_mdplan_t *plan, bool durable)
{
    const uint64_t ps = plan->page_size;

    /* Images that follow each other in the metadata file go in one call. */
    for (size_t i = 0; i < plan->nimages;) {
        struct iovec iov[PLAN_IOV];
        uint64_t off = plan->images[i].md_page * ps, end = off;
        int n = 0;
        for (; i < plan->nimages && n < PLAN_IOV && plan->images[i].md_page * ps == end; i++, n++) {
            iov[n] =
                (struct iovec){.iov_base = (void *)(uintptr_t)plan->images[i].image, .iov_len = plan->images[i].length};
            end += plan->images[i].length;
        }
        if (vfdswmr_pwritev_all(fd, iov, n, off) < 0)
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
