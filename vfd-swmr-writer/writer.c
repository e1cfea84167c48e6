/*
 * vfd_swmr_writer: the driver of the one process that writes a VFD SWMR
 * file. For now it stacks on the lower driver and passes every call through;
 * it already validates the whole configuration, writer-only rules included,
 * before it touches any file.
 */
#include "plugin.h"
#include "vfdswmr.h"

static H5FD_t *
writer_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    vfdswmr_file_t *f = vfdswmr_stack_open(name, flags, fapl, maxaddr, sizeof *f, VFDSWMR_WRITER_NAME,
                                           vfdswmr_config_check_writer);
    return f ? &f->pub : NULL;
}

static herr_t
writer_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, VFDSWMR_WRITER_NAME);
}

static const H5FD_class_t writer_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_WRITER_VALUE, VFDSWMR_WRITER_NAME),
    .open = writer_open,
    .del  = writer_delete,
};

VFDSWMR_PLUGIN_EXPORT(writer_class)
