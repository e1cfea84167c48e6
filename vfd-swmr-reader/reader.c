/*
 * vfd_swmr_reader: the driver of the processes that read a VFD SWMR file
 * while it is written. For now it stacks on the lower driver and passes every
 * call through, after validating its configuration.
 */
#include "plugin.h"
#include "vfdswmr.h"

static H5FD_t *
reader_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    vfdswmr_file_t *f = vfdswmr_stack_open(name, flags, fapl, maxaddr, sizeof *f, VFDSWMR_READER_NAME, NULL);
    return f ? &f->pub : NULL;
}

static herr_t
reader_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, VFDSWMR_READER_NAME);
}

static const H5FD_class_t reader_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_READER_VALUE, VFDSWMR_READER_NAME),
    .open = reader_open,
    .del  = reader_delete,
};

VFDSWMR_PLUGIN_EXPORT(reader_class)
