#include "plan.h"

#include <unistd.h>

#include "io.h"

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
