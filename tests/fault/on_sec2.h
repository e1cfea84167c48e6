/*
 * What the test-only plugins (vfd_fault, vfd_latency) share: they read their
 * own configuration string and sit directly on sec2, set by its own setter
 * (a default FAPL could name the plugin itself through HDF5_DRIVER, and the
 * open would recurse). Errors are pushed on HDF5's stack (h5err.h).
 */
#ifndef VFDSWMR_TESTS_FAULT_ON_SEC2_H
#define VFDSWMR_TESTS_FAULT_ON_SEC2_H

#include <stdlib.h>

#include "h5err.h"
#include "stack.h"

/* The driver configuration string of fapl: malloc'd ("" when none), or
 * NULL with an error pushed. */
static inline char *
on_sec2_config(hid_t fapl, const char *drv)
{
    ssize_t len = VFDSWMR_GUARDED(ssize_t, H5Pget_driver_config_str(fapl, NULL, 0), _r < 0);
    char *text = len >= 0 ? calloc(1, (size_t)len + 1) : NULL;

    if (text && len > 0 &&
        VFDSWMR_GUARDED(ssize_t, H5Pget_driver_config_str(fapl, text, (size_t)len + 1), _r < 0) < 0) {
        free(text);
        text = NULL;
    }
    if (text == NULL)
        VFDSWMR_ERR(H5E_CANTGET, "%s: cannot read the driver configuration string", drv);
    return text;
}

/* A FAPL selecting sec2, or H5I_INVALID_HID with an error pushed. */
static inline hid_t
on_sec2_fapl(const char *drv)
{
    hid_t fapl = VFDSWMR_GUARDED(hid_t, H5Pcreate(H5P_FILE_ACCESS), _r < 0);

    if (fapl >= 0 && VFDSWMR_GUARDED(herr_t, H5Pset_fapl_sec2(fapl), _r < 0) >= 0)
        return fapl;
    if (fapl >= 0)
        VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
    VFDSWMR_ERR(H5E_CANTINIT, "%s: cannot set up sec2 underneath", drv);
    return H5I_INVALID_HID;
}

/* Open f->lower through sec2: 0, or -1 with an error pushed. */
static inline int
on_sec2_open(vfdswmr_file_t *f, const char *name, unsigned flags, haddr_t maxaddr)
{
    hid_t fapl = on_sec2_fapl(f->drv_name);

    if (fapl < 0)
        return -1;
    f->lower = VFDSWMR_GUARDED(H5FD_t *, H5FDopen(name, flags, fapl, maxaddr), _r == NULL);
    VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
    if (f->lower == NULL) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: sec2 cannot open \"%s\"", f->drv_name, name);
        return -1;
    }
    return 0;
}

/* The `del` callback's body: delete through sec2. */
static inline herr_t
on_sec2_delete(const char *name, const char *drv)
{
    hid_t fapl = on_sec2_fapl(drv);
    herr_t rc = fapl < 0 ? -1 : VFDSWMR_GUARDED(herr_t, H5FDdelete(name, fapl), _r < 0);

    if (fapl >= 0)
        VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
    if (rc < 0)
        VFDSWMR_ERR(H5E_CANTDELETEFILE, "%s: sec2 cannot delete \"%s\"", drv, name);
    return rc;
}

#endif
