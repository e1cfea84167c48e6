/*
 * vfd_chunk_cache: a pass-through driver that adds the shared raw-data
 * chunk cache (ccfile.h) to any file, SWMR or not:
 *
 *   HDF5_DRIVER=vfd_chunk_cache HDF5_DRIVER_CONFIG='chunk_cache_size=256M'
 *
 * Keys: chunk_cache_size, chunk_cache_max_entry, chunk_cache_dset_min,
 * chunk_cache_tag and under (include/vfdswmr.h); the SWMR keys are accepted
 * and ignored. Everything but reads, writes, truncation and the cache's
 * ctl operations passes through to the lower driver (common/stack.c).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "ccfile.h"
#include "h5err.h"
#include "plugin.h"

typedef struct {
    vfdswmr_file_t base; /* first: the pass-through callbacks work on it */
    vfdswmr_ccfile_t cc;
    bool read_only;
} ccdrv_t;

#define CCDRV(file) ((ccdrv_t *)(file))

static H5FD_t *
ccdrv_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    ccdrv_t *d = (ccdrv_t *)vfdswmr_stack_new(fapl, sizeof *d, VFDSWMR_CHUNK_CACHE_NAME, NULL);

    if (d == NULL)
        return NULL;
    if (vfdswmr_ccf_init(&d->cc, &d->base.cfg, VFDSWMR_CHUNK_CACHE_NAME) < 0) {
        vfdswmr_ccf_fini(&d->cc);
        free(d);
        return NULL;
    }
    if (vfdswmr_stack_open_lower(&d->base, name, flags, maxaddr) < 0) {
        vfdswmr_ccf_fini(&d->cc);
        free(d);
        return NULL;
    }
    /* HDF5's own SWMR: a writer elsewhere changes chunks in place and
     * appends into them, and nothing here hears of it (H5Drefresh reloads
     * metadata only), so cached chunks would go stale. */
    d->read_only = !(flags & H5F_ACC_RDWR);
    if (flags & H5F_ACC_SWMR_READ)
        vfdswmr_ccf_forbid(&d->cc, "it is open for SWMR reading (H5F_ACC_SWMR_READ), and another process writing "
                                   "it would leave cached chunks stale; read it through vfd_swmr_reader");
    return &d->base.pub;
}

static herr_t
ccdrv_close(H5FD_t *file)
{
    vfdswmr_ccf_fini(&CCDRV(file)->cc);
    return vfdswmr_stack_close(&CCDRV(file)->base);
}

static herr_t
ccdrv_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    return vfdswmr_ccf_read(&CCDRV(file)->cc, &CCDRV(file)->base, type, dxpl, addr, size, buf);
}

static herr_t
ccdrv_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    herr_t rc = vfdswmr_pt_write(file, type, dxpl, addr, size, buf);

    vfdswmr_ccf_written(&CCDRV(file)->cc, addr, size, buf, rc >= 0);
    return rc;
}

/*
 * On a file open read-only the library flushes only to refresh objects
 * (H5Drefresh, H5Grefresh, H5Orefresh), and a driver below us may then move
 * to a newer state of the file: vfd_swmr_reader adopts its writer's newest
 * snapshot (HDF5_DRIVER_CONFIG='chunk_cache_size=...;under=vfd_swmr_reader'),
 * with raw data rewritten in place since. So a refresh drops the cache, as
 * vfdswmr_refresh (VFDSWMR_CTL_REFRESH, passed down) does.
 */
static herr_t
ccdrv_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    herr_t rc = vfdswmr_pt_flush(file, dxpl, closing);

    if (CCDRV(file)->read_only)
        vfdswmr_ccf_invalidate_all(&CCDRV(file)->cc);
    return rc;
}

static herr_t
ccdrv_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    herr_t rc = vfdswmr_pt_truncate(file, dxpl, closing);
    haddr_t eof = vfdswmr_pt_get_eof(file, H5FD_MEM_DEFAULT);

    vfdswmr_ccf_truncated(&CCDRV(file)->cc, rc < 0 || eof == HADDR_UNDEF ? 0 : eof);
    return rc;
}

static herr_t
ccdrv_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out)
{
    int rc = vfdswmr_ccf_ctl(&CCDRV(file)->cc, op, in, out);

    if (rc != 1)
        return rc;
    rc = vfdswmr_pt_ctl(file, op, flags, in, out);
    if (op == VFDSWMR_CTL_REFRESH) /* a reader below moved to a newer snapshot */
        vfdswmr_ccf_invalidate_all(&CCDRV(file)->cc);
    return rc;
}

static herr_t
ccdrv_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, VFDSWMR_CHUNK_CACHE_NAME);
}

static const H5FD_class_t ccdrv_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_CHUNK_CACHE_VALUE, VFDSWMR_CHUNK_CACHE_NAME),
    .open = ccdrv_open,
    .close = ccdrv_close,
    .read = ccdrv_read,
    .write = ccdrv_write,
    .flush = ccdrv_flush,
    .truncate = ccdrv_truncate,
    .ctl = ccdrv_ctl,
    .del = ccdrv_delete,
};

VFDSWMR_PLUGIN_EXPORT(ccdrv_class)
