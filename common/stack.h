/*
 * Stacking a vfd-swmr driver on a lower driver, and the pass-through
 * callbacks both drivers start from.
 *
 * Invariant: every open file of a vfd-swmr driver is a vfdswmr_file_t (or a
 * larger struct that starts with one), whose `lower` is a file opened with
 * H5FDopen() through the driver named by `under=`, and every call into the
 * lower file goes through the public H5FD* API inside an error guard
 * (h5err.h), so any driver HDF5 can load works as the lower driver and the
 * HDF5 error stack keeps its whole story -- but for reads when the lower
 * driver is HDF5's own sec2 (vfdswmr_stack_read).
 *
 * Error contract (that of every driver callback): on failure a function
 * returns a negative value, NULL or HADDR_UNDEF, with the reason pushed on
 * HDF5's error stack (h5err.h).
 */
#ifndef VFDSWMR_COMMON_STACK_H
#define VFDSWMR_COMMON_STACK_H

#include <hdf5.h>
#include <H5FDdevelop.h>

#include "drvconfig.h"

/* Largest address the drivers accept: HADDR_MAX makes sec2 fail ("bogus maxaddr"). */
#define VFDSWMR_MAXADDR ((haddr_t)0x7fffffffffffffffULL)

typedef struct vfdswmr_file_t {
    H5FD_t pub;           /* first: HDF5 owns and fills these fields */
    H5FD_t *lower;        /* the file as opened by the lower driver */
    const char *drv_name; /* our driver's name, for messages */
    vfdswmr_config_t cfg; /* the parsed configuration string */
    unsigned fork_gen;    /* the fork generation it was opened in (forked.h) */
    bool on_sec2;         /* sec2 underneath (a zeroed file: no), whose descriptor ... */
    int sec2_fd;          /* ... vfdswmr_stack_read reads directly */
} vfdswmr_file_t;

/*
 * Read the driver configuration string from `fapl` and parse it into *cfg.
 * On failure pushes "<drv_name>: bad configuration (HDF5_DRIVER_CONFIG): <why>"
 * on the error stack and returns -1.
 */
int vfdswmr_config_from_fapl(hid_t fapl, const char *drv_name, vfdswmr_config_t *cfg);

/* A new file access property list that selects the lower driver of *cfg.
 * The caller closes it. Returns H5I_INVALID_HID with an error pushed. */
hid_t vfdswmr_lower_fapl(const vfdswmr_config_t *cfg, const char *drv_name);

/*
 * The open callback of every driver, in two halves, so that a driver can do
 * its own checks after the configuration is known and before any file is
 * touched (a bad configuration never creates or touches a file):
 * stack_new parses the configuration from `fapl` once, applies `check` (may
 * be NULL; returns 0 or -1 with errbuf filled) and allocates `size` (>=
 * sizeof(vfdswmr_file_t)) zeroed bytes -- NULL with the reason on the stack;
 * stack_open_lower opens f->lower (0, or -1 with the reason on the stack; f
 * is not freed).
 */
typedef int (*vfdswmr_config_check_t)(const vfdswmr_config_t *cfg, char *errbuf, size_t errlen);
vfdswmr_file_t *vfdswmr_stack_new(hid_t fapl, size_t size, const char *drv_name, vfdswmr_config_check_t check);
int vfdswmr_stack_open_lower(vfdswmr_file_t *f, const char *name, unsigned flags, haddr_t maxaddr);

/* The POSIX descriptor of a lower file (for fsync and fcntl locks), or -1
 * when its driver has none (core, ...). */
int vfdswmr_lower_fd(H5FD_t *lower);

/*
 * Read [addr, addr + size) of the lower file. With sec2 underneath, what
 * sec2's read does (H5FDsec2.c: a pread loop, zeros past the end of file)
 * on its descriptor; H5FDread would add the library's API entry (context,
 * ID lookup) and our error guard, which cost more than a small pread that
 * the page cache answers. Otherwise H5FDread.
 */
herr_t vfdswmr_stack_read(const vfdswmr_file_t *f, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf);

/* Closes the lower file and frees `f`. */
herr_t vfdswmr_stack_close(vfdswmr_file_t *f);

/* Pass-through callbacks (signatures as in H5FD_class_t). */
herr_t vfdswmr_pt_close(H5FD_t *file);
int vfdswmr_pt_cmp(const H5FD_t *f1, const H5FD_t *f2);
herr_t vfdswmr_pt_query(const H5FD_t *file, unsigned long *flags);
haddr_t vfdswmr_pt_get_eoa(const H5FD_t *file, H5FD_mem_t type);
herr_t vfdswmr_pt_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr);
haddr_t vfdswmr_pt_get_eof(const H5FD_t *file, H5FD_mem_t type);
herr_t vfdswmr_pt_get_handle(H5FD_t *file, hid_t fapl, void **handle);
herr_t vfdswmr_pt_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf);
herr_t vfdswmr_pt_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf);
herr_t vfdswmr_pt_flush(H5FD_t *file, hid_t dxpl, hbool_t closing);
herr_t vfdswmr_pt_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing);
herr_t vfdswmr_pt_lock(H5FD_t *file, hbool_t rw);
herr_t vfdswmr_pt_unlock(H5FD_t *file);
herr_t vfdswmr_pt_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out);

/* Where GET_STATUS writes: the caller's structure *out points to, or (the
 * older form) the one `in` points to; NULL when there is none. */
static inline vfdswmr_status_t *
vfdswmr_status_target(const void *in, void **out)
{
    if (out != NULL && *out != NULL)
        return (vfdswmr_status_t *)*out;
    return (vfdswmr_status_t *)(uintptr_t)in;
}

/* `del` needs the driver's name for messages; each driver wraps this. */
herr_t vfdswmr_stack_delete(const char *name, hid_t fapl, const char *drv_name);

/* The feature flags every plugin's class advertises (plugin.h): sec2's in
 * HDF5 1.14.5 (H5FD__sec2_query) but for H5FD_FEAT_POSIX_COMPAT_HANDLE --
 * get_handle passes on the lower driver's handle, a POSIX descriptor only
 * on some lower drivers (vfdswmr_lower_fd asks the lower driver) -- and
 * for H5FD_FEAT_IGNORE_DRVRINFO, which sec2 sets only for h5repart. */
#define VFDSWMR_FEATURES                                                                   \
    (H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE | \
     H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_SUPPORTS_SWMR_IO | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE)

#endif
