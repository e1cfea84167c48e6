/*
 * The H5FD_class_t both drivers start from: every callback passes through
 * to the lower driver (stack.h) except the ones a driver names itself.
 * A driver writes e.g.
 *
 *   static const H5FD_class_t cls = {
 *       VFDSWMR_CLASS_BASE(VFDSWMR_WRITER_VALUE, VFDSWMR_WRITER_NAME),
 *       .open = writer_open, .del = writer_delete,
 *   };
 *   VFDSWMR_PLUGIN_EXPORT(cls)
 *
 * Error contract: that of stack.h (every callback a driver callback).
 */
#ifndef VFDSWMR_COMMON_PLUGIN_H
#define VFDSWMR_COMMON_PLUGIN_H

#include <H5PLextern.h>

#include "stack.h"

/* Overriding a designated initializer is intended here. */
#pragma GCC diagnostic ignored "-Woverride-init"

#define VFDSWMR_CLASS_BASE(val, nm)                                                                                   \
    .version = H5FD_CLASS_VERSION, .value = (val), .name = (nm), .maxaddr = VFDSWMR_MAXADDR,                          \
    .fc_degree = H5F_CLOSE_WEAK, .close = vfdswmr_pt_close, .cmp = vfdswmr_pt_cmp, .query = vfdswmr_pt_query,         \
    .get_eoa = vfdswmr_pt_get_eoa, .set_eoa = vfdswmr_pt_set_eoa, .get_eof = vfdswmr_pt_get_eof,                      \
    .get_handle = vfdswmr_pt_get_handle, .read = vfdswmr_pt_read, .write = vfdswmr_pt_write,                          \
    .flush = vfdswmr_pt_flush, .truncate = vfdswmr_pt_truncate, .lock = vfdswmr_pt_lock, .unlock = vfdswmr_pt_unlock, \
    .ctl = vfdswmr_pt_ctl, .fl_map = H5FD_FLMAP_DICHOTOMY

/* The two entry points HDF5's plugin loader looks for. */
#define VFDSWMR_PLUGIN_EXPORT(cls)        \
    H5PL_type_t H5PLget_plugin_type(void) \
    {                                     \
        return H5PL_TYPE_VFD;             \
    }                                     \
    const void *H5PLget_plugin_info(void) \
    {                                     \
        return &(cls);                    \
    }

#endif
