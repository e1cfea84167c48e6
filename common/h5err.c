#include "h5err.h"

#include <stdarg.h>
#include <stdio.h>

#include "check.h"

_Thread_local bool vfdswmr_no_hdf5;

void
vfdswmr_err_push(const char *file, const char *func, unsigned line, hid_t minor, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    VFDSWMR_ASSERT(!vfdswmr_no_hdf5);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* H5Epush2 is bounded (H5E__push_stack drops the entry when the stack is
     * full), but it has already copied `file` and `func` then, and leaks the
     * copies (HDF5 1.14.5, H5E.c): skip what would be dropped anyway. */
    if (H5Eget_num(H5E_DEFAULT) >= VFDSWMR_H5E_SLOTS)
        return;
    H5Epush2(H5E_DEFAULT, file, func, line, H5E_ERR_CLS, H5E_VFL, minor, "%s", msg);
}

/*
 * Append `inner` to `saved` and close `inner`, keeping `saved` within
 * VFDSWMR_H5E_SLOTS entries: H5Eappend_stack writes past a full stack (see
 * h5err.h). H5Epop drops the most recently pushed entries, i.e. the outer
 * context of the inner failure, and keeps its root cause. (H5Epop on a
 * stack other than the default one clears the default stack, which is
 * empty here: the inner errors were just taken from it.)
 */
static void
append_capped(hid_t saved, hid_t inner)
{
    ssize_t have = H5Eget_num(saved), add = H5Eget_num(inner);

    if (have >= 0 && add > 0 && have < VFDSWMR_H5E_SLOTS &&
        (add <= VFDSWMR_H5E_SLOTS - have || H5Epop(inner, (size_t)(add - (VFDSWMR_H5E_SLOTS - have))) >= 0)) {
        H5Eappend_stack(saved, inner, true);
        return;
    }
    H5Eclose_stack(inner);
}

void
vfdswmr_eguard_enter(vfdswmr_eguard_t *g)
{
    VFDSWMR_ASSERT(!vfdswmr_no_hdf5);
    /* H5Eget_num, H5Eget_current_stack and H5E[gs]et_auto2 do not clear the
     * stack themselves. Taking the current stack leaves it empty. */
    g->saved = H5Eget_num(H5E_DEFAULT) > 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    g->auto_saved = H5Eget_auto2(H5E_DEFAULT, &g->auto_func, &g->auto_data) >= 0;
    if (g->auto_saved)
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    else
        H5Eclear2(H5E_DEFAULT); /* an old-style (v1) handler is installed: leave it alone */
}

void
vfdswmr_eguard_leave(vfdswmr_eguard_t *g, bool failed)
{
    if (g->auto_saved)
        H5Eset_auto2(H5E_DEFAULT, g->auto_func, g->auto_data);
    if (g->saved == H5I_INVALID_HID)
        return; /* the inner call's errors, if any, are already where they belong */
    if (failed) {
        hid_t inner = H5Eget_current_stack();
        if (inner >= 0)
            append_capped(g->saved, inner);
    }
    H5Eset_current_stack(g->saved); /* also closes g->saved */
}
